// SPDX-License-Identifier: MIT
// Runs in Chromium (a page or a Web Worker; served by nginx at /tests/), never in Node: opens a model with the
// package's open() (passed in, so this file needs no import map) and describes it as the Node side of
// browser.test.mjs compares it with the native CLI: the info object and, per tensor, the sha256 of its float32
// decode and of its stored bytes.

async function sha256(view) {
    const digest = await crypto.subtle.digest("SHA-256", view);
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * {info, hashes: {name: {f32, raw}}, kinds: {name: constructor name}}. mode "read": every tensor by
 * model.read() (f32, then raw); "stream": one model.stream() pass (f32), raw hashes left out.
 */
export async function describeModel(open, source, { mode = "read", options = {} } = {}) {
    const model = await open(source, options);
    try {
        const hashes = {};
        const kinds = {};
        if (mode === "stream") {
            for await (const { tensor, data } of model.stream()) {
                hashes[tensor.name] = { f32: await sha256(data) };
                kinds[tensor.name] = data.constructor.name;
            }
        } else {
            for (const tensor of model.tensors) {
                const data = await model.read(tensor.name);
                const raw = await model.read(tensor.name, { as: "raw" });
                hashes[tensor.name] = { f32: await sha256(data), raw: await sha256(raw) };
                kinds[tensor.name] = data.constructor.name;
            }
        }
        return { info: model.info, hashes, kinds };
    } finally {
        await model.close();
    }
}

/** An error as plain data: what crossed from the page to the test. */
export function errorRecord(e) {
    return { name: e?.name, code: e?.code, message: String(e?.message ?? e), offset: e?.offset, file: e?.file };
}

/**
 * Reads each of `reads` ({name, rows?}) from an open model (the package's, or weightstream/worker's) with
 * {as: "f16"} and checks it here against the model's other reads, so that only small records cross to the
 * test: the array must be the runtime's Float16Array, each of its values (bits, any NaN matching any NaN) the
 * Math.f16round of the float32 read (whole tensor, sliced to the window: rows are checked too), and an F16
 * tensor's bits its stored bytes. `specials` counts what the values exercise.
 */
export async function checkHalves(model, reads) {
    const Float16 = globalThis.Float16Array;
    const hex = (n) => `0x${n.toString(16).padStart(4, "0")}`;
    const results = [];
    for (const { name, rows } of reads) {
        const tensor = model.tensor(name);
        const rowLength = Number(tensor.ne[0]);
        const f32 = await model.read(name);
        const [start, count] = rows ?? [0, f32.length / rowLength];
        const wanted = f32.subarray(start * rowLength, (start + count) * rowLength);
        const half = await model.read(name, rows ? { as: "f16", rows } : { as: "f16" });
        const result = {
            name,
            rows: rows ?? null,
            dtype: tensor.dtype,
            kind: half.constructor.name,
            float16: Boolean(Float16) && half instanceof Float16,
            length: half.length,
            expectedLength: wanted.length,
            mismatches: 0,
            first: [],
            specials: { nan: 0, infinity: 0, subnormal: 0, negativeZero: 0, rounded: 0 },
            rawEqual: null,
        };
        results.push(result);
        if (!result.float16 || half.length !== wanted.length) continue;
        const bits = new Uint16Array(half.buffer, half.byteOffset, half.length);
        const cell = new Float16(1);
        const cellBits = new Uint16Array(cell.buffer);
        const s = result.specials;
        for (let i = 0; i < wanted.length; ++i) {
            const expected = Math.f16round(wanted[i]);
            let same;
            if (Number.isNaN(expected)) {
                same = Number.isNaN(half[i]);
                ++s.nan;
            } else {
                cell[0] = expected;
                same = bits[i] === cellBits[0] && Object.is(half[i], expected);
                if (!Number.isFinite(expected)) ++s.infinity;
                else if (expected !== 0 && Math.abs(expected) < 2 ** -14) ++s.subnormal;
                else if (Object.is(expected, -0)) ++s.negativeZero;
                if (!Object.is(expected, wanted[i])) ++s.rounded;
            }
            if (!same && ++result.mismatches <= 8) {
                result.first.push({
                    index: i,
                    f32: Object.is(wanted[i], -0) ? "-0" : String(wanted[i]),
                    got: hex(bits[i]),
                    expected: Number.isNaN(expected) ? "NaN" : hex(cellBits[0]),
                });
            }
        }
        if (tensor.dtype === "F16") {
            const raw = await model.read(name, rows ? { as: "raw", rows } : { as: "raw" });
            const bytes = new Uint8Array(half.buffer, half.byteOffset, half.byteLength);
            result.rawEqual = raw.length === bytes.length && raw.every((b, i) => b === bytes[i]);
        }
    }
    return results;
}
