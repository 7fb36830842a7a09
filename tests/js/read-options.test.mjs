// SPDX-License-Identifier: MIT
// model.read and model.stream options: `into` (a reused caller's buffer), N-D slices (against the
// full read cut here; over nginx, only the rows' blocks fetched), results carrying `shape`, `as: "native"` (exact
// integers and stored floats against the file's bytes), and stream() coalescing neighbouring tensors over HTTP.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { open } from "weightstream";

import { bytesOf, corpus, requireSetup, testData } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";

const typesFile = path.join(testData, "ggml/ggml-types.gguf");
const sampleFile = path.join(testData, "safetensors/sample_overall.safetensors");
const HEADERS_ALLOWANCE = 1024;

// The C-order index of every element of `shape` inside the slice `ranges` (outermost first; missing: whole).
function sliceIndices(shape, ranges) {
    const lo = shape.map((n, d) => (ranges[d] ? ranges[d][0] : 0));
    const hi = shape.map((n, d) => (ranges[d] ? ranges[d][1] : n));
    const out = [];
    const walk = (d, base) => {
        if (d === shape.length) {
            out.push(base);
            return;
        }
        for (let i = lo[d]; i < hi[d]; ++i) walk(d + 1, base * shape[d] + i);
    };
    walk(0, 0);
    return { indices: out, shape: shape.map((_, d) => hi[d] - lo[d]) };
}

// The same elements as bits (NaN payloads included), whatever the typed array.
function bitsOf(array) {
    const size = array.BYTES_PER_ELEMENT;
    const Bits = size === 8 ? BigUint64Array : size === 4 ? Uint32Array : size === 2 ? Uint16Array : Uint8Array;
    return new Bits(array.buffer, array.byteOffset, array.length);
}

function cut(full, indices) {
    const bits = bitsOf(full);
    return indices.map((i) => bits[i]);
}

// A deterministic choice of slices of a tensor: a middle window per dimension, the innermost cut inside blocks.
function slicesOf(shape) {
    const mid = (n, k) => (n <= 1 ? [0, n] : [Math.floor((n * k) / 5), Math.max(Math.floor((n * k) / 5) + 1, n - 1)]);
    return [
        [],
        shape.map((n) => mid(n, 1)),
        shape.map((n, d) => (d === shape.length - 1 ? mid(n, 2) : [0, n])),
        shape.map((n, d) => (d === 0 ? mid(n, 2) : null)),
        shape.map(() => [0, 0]),
    ].filter((s) => s.length <= shape.length);
}

test("into: a Float32Array reused across reads and stream(); wrong types and short buffers are refused", async () => {
    const model = await open(typesFile);
    try {
        const biggest = Math.max(...model.tensors.map((t) => Number(t.n_elements)));
        const into = new Float32Array(biggest + 7);
        for (const name of ["q4_k.weight", "iq2_xxs.weight", "f32.3d", "bf16.special"]) {
            const fresh = await model.read(name);
            const got = await model.read(name, { into });
            assert.equal(got.buffer, into.buffer, `${name}: written into the caller's buffer`);
            assert.equal(got.byteOffset, 0);
            assert.equal(got.length, fresh.length);
            assert.deepEqual(got.shape, fresh.shape);
            assert.ok(bytesOf(got).equals(bytesOf(fresh)), name);
        }
        const rows = await model.read("q4_k.weight", { rows: [2, 3], into });
        assert.equal(rows.buffer, into.buffer);
        assert.deepEqual(rows.shape, [3, 512]);

        const half = new Uint16Array(biggest);
        const h = await model.read("q6_k.weight", { as: "f16", into: half });
        assert.equal(h.buffer, half.buffer);
        assert.ok(bytesOf(h).equals(bytesOf(await model.read("q6_k.weight", { as: "f16" }))));

        await assert.rejects(model.read("q4_k.weight", { into: new Float64Array(biggest) }), TypeError);
        await assert.rejects(model.read("q4_k.weight", { into: [] }), TypeError);
        await assert.rejects(model.read("q4_k.weight", { as: "f16", into }), TypeError);
        await assert.rejects(model.read("q4_k.weight", { into: new Float32Array(4095) }), {
            name: "RangeError",
            message: /needs 4096 elements/,
        });

        let n = 0;
        for await (const { tensor, data } of model.stream({ into })) {
            assert.equal(data.buffer, into.buffer, tensor.name);
            const fresh = await model.read(tensor.name);
            assert.ok(bytesOf(data).equals(bytesOf(fresh)), `${tensor.name}: stream into`);
            ++n;
        }
        assert.equal(n, model.tensors.length);
        const small = new Float32Array(16);
        await assert.rejects(async () => {
            for await (const _ of model.stream({ into: small })) {
                // the first tensor is larger than 16 values
            }
        }, RangeError);
    } finally {
        await model.close();
    }
});

async function isDecodable(model, tensor) {
    return model.read(tensor.name, { rows: [0, 0] }).then(
        () => true,
        () => false,
    );
}

test("slices equal the full read cut in JavaScript, for every dtype of the corpus, with their shape", async () => {
    const perType = new Map();
    for (const item of corpus()) {
        const model = await open(item.file);
        try {
            for (const t of model.tensors) {
                const seen = perType.get(t.dtype) ?? 0;
                if (seen >= 3 || Number(t.n_elements) === 0 || Number(t.n_elements) > 1 << 20) continue;
                let full;
                try {
                    full = await model.read(t.name);
                } catch (e) {
                    if (e.code === "unsupported") continue;
                    throw e;
                }
                perType.set(t.dtype, seen + 1);
                const shape = t.shape.map(Number);
                assert.deepEqual(full.shape, shape, `${t.name}: shape of the full read`);
                for (const ranges of slicesOf(shape)) {
                    const got = await model.read(t.name, { slice: ranges });
                    const want = sliceIndices(shape, ranges);
                    const label = `${item.label} ${t.name} (${t.dtype}) slice ${JSON.stringify(ranges)}`;
                    assert.deepEqual(got.shape, want.shape, label);
                    assert.deepEqual([...bitsOf(got)], cut(full, want.indices), label);
                    if (t.dtype !== "C64") {
                        const half = await model.read(t.name, { slice: ranges, as: "f16" });
                        const fullHalf = await model.read(t.name, { as: "f16" });
                        assert.deepEqual([...bitsOf(half)], cut(fullHalf, want.indices), `${label} f16`);
                    }
                }
            }
        } finally {
            await model.close();
        }
    }
    for (const dtype of ["Q4_K", "Q8_0", "IQ2_XXS", "F16", "BF16", "F32", "I8", "I32", "I64", "F64", "U8", "MXFP4"]) {
        assert.ok(perType.has(dtype), `the corpus has no ${dtype} tensor`);
    }
});

test("slices of a 3-D tensor and misuse", async () => {
    const model = await open(typesFile);
    try {
        for (const name of ["iq4_xs.3d", "q8_0.3d", "f16.3d"]) {
            const t = model.tensor(name);
            const shape = t.shape.map(Number);
            const full = await model.read(name);
            const ranges = [
                [0, 2],
                [1, 3],
                [40, 200],
            ];
            const got = await model.read(name, { slice: ranges });
            const want = sliceIndices(shape, ranges);
            assert.deepEqual(got.shape, [2, 2, 160]);
            assert.ok(
                got.some((x) => x !== 0),
                `${name}: a slice of zeros proves little`,
            );
            assert.deepEqual([...bitsOf(got)], cut(full, want.indices), name);
            const into = new Float32Array(full.length);
            const again = await model.read(name, { slice: ranges, into });
            assert.equal(again.buffer, into.buffer);
            assert.deepEqual([...bitsOf(again)], cut(full, want.indices));
        }
        const t = model.tensor("iq4_xs.3d");
        const shape = t.shape.map(Number);

        await assert.rejects(
            model.read(t.name, {
                slice: [
                    [0, 1],
                    [0, 1],
                    [0, 1],
                    [0, 1],
                ],
            }),
            TypeError,
        );
        await assert.rejects(model.read(t.name, { slice: [[1, 0]] }), RangeError);
        await assert.rejects(model.read(t.name, { slice: [[0, shape[0] + 1]] }), RangeError);
        await assert.rejects(model.read(t.name, { slice: [[-1, 1]] }), TypeError);
        await assert.rejects(model.read(t.name, { slice: [[0, 1]], rows: [0, 1] }), TypeError);
        await assert.rejects(model.read(t.name, { slice: [[0, 1]], as: "raw" }), TypeError);
    } finally {
        await model.close();
    }
});

// The file's bytes of a tensor as the typed array as: "native" must give (little-endian files).
function nativeExpected(bytes, t) {
    const start = Number(t.offset);
    const raw = bytes.slice(start, start + Number(t.nbytes));
    const types = {
        I8: Int8Array,
        I16: Int16Array,
        I32: Int32Array,
        I64: BigInt64Array,
        U8: Uint8Array,
        BOOL: Uint8Array,
        U16: Uint16Array,
        U32: Uint32Array,
        U64: BigUint64Array,
        F32: Float32Array,
        F64: Float64Array,
        BF16: Uint16Array,
        F16: globalThis.Float16Array ?? Uint16Array,
    };
    const T = types[t.dtype];
    return T && new T(raw.buffer, 0, raw.length / T.BYTES_PER_ELEMENT);
}

test('as: "native" gives the stored values exactly, in their own typed array; quantized types refuse', async () => {
    const kinds = new Set();
    for (const file of [typesFile, sampleFile, path.join(testData, "safetensors/mlx_lora_adapters.safetensors")]) {
        const bytes = new Uint8Array(readFileSync(file));
        const model = await open(file);
        try {
            for (const t of model.tensors) {
                const want = nativeExpected(bytes, t);
                if (!want) {
                    if (/^(Q|IQ|TQ|MXFP)/.test(t.dtype)) {
                        await assert.rejects(model.read(t.name, { as: "native" }), { code: "unsupported" });
                    }
                    continue;
                }
                const got = await model.read(t.name, { as: "native" });
                if (t.shape.length >= 2) {
                    const rows = await model.read(t.name, { as: "native", rows: [1, 1] });
                    assert.deepEqual(rows.shape, [1, Number(t.shape.at(-1))], `${t.name}: rows shape`);
                }
                assert.equal(got.constructor, want.constructor, `${t.name} (${t.dtype})`);
                assert.deepEqual([...bitsOf(got)], [...bitsOf(want)], `${t.name} (${t.dtype})`);
                assert.deepEqual(got.shape, t.shape.map(Number));
                kinds.add(t.dtype);
                const shape = t.shape.map(Number);
                const ranges = shape.map((n) => [Math.floor(n / 3), n]);
                const part = await model.read(t.name, { as: "native", slice: ranges });
                assert.deepEqual([...bitsOf(part)], cut(want, sliceIndices(shape, ranges).indices), `${t.name} slice`);
            }
            const i32 = model.tensors.find((t) => t.dtype === "I32");
            if (i32) {
                const into = new Int32Array(Number(i32.n_elements) + 3);
                const got = await model.read(i32.name, { as: "native", into });
                assert.equal(got.buffer, into.buffer);
                await assert.rejects(
                    model.read(i32.name, { as: "native", into: new Float32Array(Number(i32.n_elements)) }),
                    TypeError,
                );
            }
        } finally {
            await model.close();
        }
    }
    for (const dtype of ["I8", "I16", "I32", "I64", "U8", "U16", "U32", "F32", "F16", "BF16", "F64"]) {
        assert.ok(kinds.has(dtype), `no ${dtype} tensor was read as native`);
    }
});

requireSetup(!nginxPath && "nginx not installed");

describe("nginx", () => {
    let server;
    before(async () => {
        server = await startNginx();
    });
    after(async () => {
        await server?.stop();
    });

    async function served(tracker, op) {
        const lines = await server.served(op, tracker.requests.get(op));
        return { lines, body: lines.reduce((s, l) => s + l.bodyBytesSent, 0) };
    }

    test("a slice fetches only the blocks of its rows", async () => {
        const tracker = server.tracker();
        tracker.op();
        const model = await open(server.rangeBase + server.urlPath(typesFile), { fetch: tracker.fetch });
        const local = await open(typesFile);
        try {
            for (const [name, ranges] of [
                [
                    "q4_k.weight",
                    [
                        [2, 5],
                        [256, 512],
                    ],
                ], // 3 rows, the second of 2 blocks each
                [
                    "q8_0.weight",
                    [
                        [1, 7],
                        [40, 70],
                    ],
                ], // 6 rows, blocks 1..2 of 16 each
                ["q4_k.weight", [[3, 6]]], // whole rows
                [
                    "f32.weight",
                    [
                        [0, 8],
                        [100, 103],
                    ],
                ],
            ]) {
                const t = model.tensor(name);
                const op = tracker.op();
                const got = await model.read(name, { slice: ranges });
                const want = await local.read(name, { slice: ranges });
                assert.ok(bytesOf(got).equals(bytesOf(want)), name);
                const { block, bytes: blockBytes } = {
                    Q4_K: { block: 256, bytes: 144 },
                    Q8_0: { block: 32, bytes: 34 },
                    F32: { block: 1, bytes: 4 },
                }[t.dtype];
                const rows = ranges[0][1] - ranges[0][0];
                const [c0, c1] = ranges[1] ?? [0, Number(t.ne[0])];
                const pieceBytes = (Math.ceil(c1 / block) - Math.floor(c0 / block)) * blockBytes;
                const rowBytes = (Number(t.ne[0]) / block) * blockBytes;
                // Neighbouring rows' blocks come in one request when at most 4 KiB lies between them.
                const gaps = rowBytes - pieceBytes <= 4096 ? (rows - 1) * (rowBytes - pieceBytes) : 0;
                const s = await served(tracker, op);
                assert.ok(
                    s.body <= rows * pieceBytes + gaps,
                    `${name} ${JSON.stringify(ranges)}: ${s.body} body bytes, the rows' blocks are ${rows * pieceBytes}`,
                );
                assert.ok(s.body >= rows * pieceBytes, `${name}: ${s.body} body bytes`);
                assert.ok(s.body < Number(t.nbytes) || ranges.length === 1, name);
            }
        } finally {
            await model.close();
            await local.close();
        }
    });

    test("stream() reads neighbouring tensors in fewer requests, with the same results", async () => {
        for (const file of [typesFile, sampleFile]) {
            const tracker = server.tracker();
            tracker.op();
            const model = await open(server.rangeBase + server.urlPath(file), { fetch: tracker.fetch });
            const local = await open(file);
            try {
                const op = tracker.op();
                const names = [];
                for await (const { tensor, data } of model.stream({ as: "raw" })) {
                    names.push(tensor.name);
                    const want = await local.read(tensor.name, { as: "raw" });
                    assert.ok(Buffer.from(data).equals(Buffer.from(want)), `${tensor.name}: stream over HTTP`);
                }
                const order = [...local.tensors].sort((a, b) => Number(a.offset) - Number(b.offset)).map((t) => t.name);
                assert.deepEqual(names, order);
                const s = await served(tracker, op);
                // Every tensor of these small files lies within 16 MiB of the first: one request.
                assert.equal(s.lines.length, 1, `${file}: ${s.lines.length} requests for ${names.length} tensors`);
                const last = local.tensors.reduce((m, t) => Math.max(m, Number(t.offset) + Number(t.nbytes)), 0);
                const first = local.tensors.reduce((m, t) => Math.min(m, Number(t.offset)), Infinity);
                assert.ok(s.body <= last - first, `${s.body} body bytes`);

                // Decoded values too, and a consumer that stops early.
                const op2 = tracker.op();
                let n = 0;
                for await (const { tensor, data } of model.stream()) {
                    if (!(await isDecodable(local, tensor))) continue;
                    assert.ok(bytesOf(data).equals(bytesOf(await local.read(tensor.name))), tensor.name);
                    if (++n === 3) break;
                }
                assert.equal((await served(tracker, op2)).lines.length, 1);
            } finally {
                await model.close();
                await local.close();
            }
        }
    });
});
