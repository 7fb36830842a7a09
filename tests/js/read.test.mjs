// SPDX-License-Identifier: MIT
// model.read options (rows, f16, raw), chunking, progress, abort, close, and the errors of misuse.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { WeightstreamError, dtypes, open } from "weightstream";

import { bytesOf, randomChunkStream, sourceKinds, testData } from "./helpers.mjs";

const typesFile = path.join(testData, "ggml/ggml-types.gguf");
const manifest = JSON.parse(readFileSync(path.join(testData, "ggml/manifest.json"), "utf8")).files.find(
    (f) => f.file === "ggml-types.gguf",
);
const ref = (name) => {
    const t = manifest.tensors.find((x) => x.name === name);
    const b = readFileSync(path.join(testData, "ggml", t.reference.file));
    return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
};
const fileBytes = new Uint8Array(readFileSync(typesFile));

// ggml_fp32_to_fp16 (round to nearest even, overflow to Inf, subnormals kept, NaN -> 0x7e00 | sign), written
// from the IEEE definitions, independently of the core.
function fp32ToFp16(x) {
    const u = new Uint32Array(new Float32Array([x]).buffer)[0];
    const sign = (u >>> 16) & 0x8000;
    const abs = u & 0x7fffffff;
    if (abs > 0x7f800000) return sign | 0x7e00;
    if (abs >= 0x477ff000) return sign | 0x7c00; // rounds to >= 65520: Inf
    if (abs < 0x38800000) {
        // f16 subnormal (or zero): the value in units of 2^-24, rounded to nearest even
        const v = Math.abs(x) * 2 ** 24;
        let q = Math.floor(v);
        const rest = v - q;
        if (rest > 0.5 || (rest === 0.5 && q % 2 === 1)) ++q;
        return sign | q;
    }
    const exp = (abs >>> 23) - 127 + 15;
    let mant = abs & 0x7fffff;
    let h = (exp << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1)) ++h;
    return sign | h;
}

test("rows [start, count] read exactly those rows of the reference", async () => {
    const model = await open(typesFile);
    try {
        for (const name of ["q4_k.weight", "iq2_xxs.weight", "q8_0.odd", "f16.3d", "iq4_xs.3d", "bf16.special"]) {
            const t = model.tensor(name);
            const rowLength = t.ne[0];
            const rows = Number(t.n_elements) / rowLength;
            const expected = ref(name);
            for (const [start, count] of [
                [0, 1],
                [1, rows - 1],
                [rows - 1, 1],
                [0, rows],
                [Math.floor(rows / 2), 0],
            ]) {
                const data = await model.read(name, { rows: [start, count] });
                assert.equal(data.length, count * rowLength, `${name} rows ${start}+${count}`);
                const want = expected.subarray(start * rowLength, (start + count) * rowLength);
                assert.ok(bytesOf(data).equals(bytesOf(want)), `${name} rows ${start}+${count}`);
                const raw = await model.read(name, { rows: [start, count], as: "raw" });
                const rowBytes = Number(t.nbytes) / rows;
                const off = Number(t.offset) + start * rowBytes;
                assert.ok(Buffer.from(raw).equals(Buffer.from(fileBytes.subarray(off, off + count * rowBytes))));
            }
        }
        await assert.rejects(model.read("q4_k.weight", { rows: [7, 2] }), { code: "bad_offset" });
        await assert.rejects(model.read("q4_k.weight", { rows: [9, 0] }), { code: "bad_offset" });
        await assert.rejects(model.read("q4_k.weight", { rows: [-1, 2] }), TypeError);
        await assert.rejects(model.read("q4_k.weight", { rows: [0.5, 1] }), TypeError);
    } finally {
        await model.close();
    }
});

test('as: "f16" rounds the f32 decode as ggml does; F16 tensors come back as stored', async () => {
    const model = await open(typesFile);
    try {
        for (const name of [
            "q4_0.weight",
            "q6_k.weight",
            "f32.special",
            "bf16.special",
            "f32.weight",
            "iq1_m.weight",
        ]) {
            const half = await model.read(name, { as: "f16" });
            const bits = new Uint16Array(half.buffer, half.byteOffset, half.length);
            const expected = ref(name);
            assert.equal(bits.length, expected.length);
            for (let i = 0; i < bits.length; ++i) {
                assert.equal(bits[i], fp32ToFp16(expected[i]), `${name}[${i}] = ${expected[i]}`);
            }
        }
        const t = model.tensor("f16.special");
        const half = await model.read("f16.special", { as: "f16" });
        const off = Number(t.offset);
        assert.ok(
            Buffer.from(half.buffer, half.byteOffset, half.byteLength).equals(
                Buffer.from(fileBytes.subarray(off, off + Number(t.nbytes))),
            ),
        );
    } finally {
        await model.close();
    }
});

test("tiny chunk sizes (block carry across every boundary) give the same values", async () => {
    for (const chunkSize of [1, 7, 13, 211]) {
        const model = await open(new Blob([fileBytes]), { chunkSize });
        try {
            for (const name of ["q4_k.weight", "q6_k.weight", "iq3_s.weight", "q5_1.odd", "mxfp4.odd", "f32.3d"]) {
                const data = await model.read(name);
                assert.ok(bytesOf(data).equals(bytesOf(ref(name))), `${name} chunkSize ${chunkSize}`);
            }
        } finally {
            await model.close();
        }
    }
});

test("every chunking of a stream parses to the same model", async () => {
    const whole = await open(fileBytes);
    try {
        for (let seed = 1; seed <= 5; ++seed) {
            const model = await open(randomChunkStream(fileBytes, seed));
            assert.deepEqual(model.metadata, whole.metadata);
            assert.deepEqual(model.tensors, whole.tensors);
            await model.close();
        }
    } finally {
        await whole.close();
    }
});

test("onProgress reports bytes up to the total", async () => {
    const headerProgress = [];
    const model = await open(typesFile, { onProgress: (p) => headerProgress.push(p) });
    try {
        assert.ok(headerProgress.length > 0);
        assert.equal(headerProgress.at(-1).total, fileBytes.length);
        const seen = [];
        const t = model.tensor("q4_k.weight");
        await model.read("q4_k.weight", { onProgress: (p) => seen.push(p) });
        assert.deepEqual(seen.at(-1), { loaded: Number(t.nbytes), total: Number(t.nbytes) });
        assert.ok(seen.every((p, i) => i === 0 || p.loaded >= seen[i - 1].loaded));
    } finally {
        await model.close();
    }
});

test("stream() reports progress over all tensors; parallel reads of a stream run in call order", async () => {
    const model = await open(sourceKinds.stream(typesFile, 9));
    try {
        const seen = [];
        let count = 0;
        for await (const { tensor } of model.stream({ as: "raw", onProgress: (p) => seen.push(p) })) {
            assert.ok(tensor.name);
            ++count;
        }
        assert.equal(count, model.tensors.length);
        const total = model.tensors.reduce((s, t) => s + Number(t.nbytes), 0);
        assert.deepEqual(seen.at(-1), { loaded: total, total });
    } finally {
        await model.close();
    }
    const streamed = await open(sourceKinds.stream(typesFile, 10));
    try {
        const names = streamed.tensors.slice(0, 8).map((t) => t.name);
        const results = await Promise.all(names.map((name) => streamed.read(name)));
        names.forEach((name, i) => assert.ok(bytesOf(results[i]).equals(bytesOf(ref(name))), name));
    } finally {
        await streamed.close();
    }
});

test("an aborted signal rejects open() and read() with its reason", async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(open(typesFile, { signal: controller.signal }), { name: "AbortError" });
    const model = await open(typesFile);
    try {
        await assert.rejects(model.read("f32.weight", { signal: controller.signal }), { name: "AbortError" });
        const reason = new Error("stop");
        await assert.rejects(model.read("f32.weight", { signal: AbortSignal.abort(reason) }), (e) => e === reason);
    } finally {
        await model.close();
    }
});

test("close() frees the model; later reads reject with code closed", async () => {
    const model = await open(typesFile);
    await model.close();
    assert.equal(model.closed, true);
    await assert.rejects(model.read("f32.weight"), (e) => e instanceof WeightstreamError && e.code === "closed");
    await model.close(); // twice is fine
});

test("misuse: unknown tensor, bad as, going back in a stream", async () => {
    const model = await open(typesFile);
    try {
        await assert.rejects(model.read("nope"), { code: "no_such_tensor" });
        await assert.rejects(model.read("f32.weight", { as: "f64" }), TypeError);
    } finally {
        await model.close();
    }
    const streamed = await open(sourceKinds.stream(typesFile, 3));
    try {
        const second = streamed.tensors[1].name;
        const first = streamed.tensors[0].name;
        assert.ok(bytesOf(await streamed.read(second)).equals(bytesOf(ref(second))));
        await assert.rejects(streamed.read(first), { code: "not_seekable" });
    } finally {
        await streamed.close();
    }
    await assert.rejects(open(42), TypeError);
});

test("raw reads of integer tensors equal their stored bytes", async () => {
    const model = await open(typesFile);
    try {
        for (const name of ["i8.weight", "i16.weight", "i32.weight", "i64.weight", "f64.weight"]) {
            const raw = await model.read(name, { as: "raw" });
            assert.ok(Buffer.from(raw).equals(readFileSync(path.join(testData, "ggml/ref", `${name}.raw`))), name);
        }
    } finally {
        await model.close();
    }
});

test("dtypes() lists every type with its block layout", async () => {
    const list = await dtypes();
    const byName = new Map(list.map((d) => [d.name, d]));
    assert.deepEqual(
        { ...byName.get("Q4_K") },
        {
            id: 12,
            name: "Q4_K",
            kind: "quantized",
            blockElements: 256,
            blockBytes: 144,
            floatsPerElement: 1,
            decodable: true,
        },
    );
    assert.equal(byName.get("F8_E4M3").kind, "float");
    assert.equal(byName.get("Q8_K").decodable, true); // ggml's dequantize_row_q8_K
    assert.equal(byName.get("Q8_1").decodable, true);
    for (const t of manifest.tensors) assert.ok(byName.has(t.ggml_type.toUpperCase()), t.ggml_type);
});

test("ArrayBuffer and DataView sources", async () => {
    for (const source of [fileBytes.buffer.slice(0), new DataView(fileBytes.buffer.slice(0))]) {
        const model = await open(source);
        assert.equal(model.tensors.length, manifest.n_tensors);
        assert.ok(bytesOf(await model.read("q2_k.weight")).equals(bytesOf(ref("q2_k.weight"))));
        await model.close();
    }
});

test("a big-endian GGUF (data swapped as gguf-py swaps it) reads the same values as the little-endian one", async () => {
    // One Q4_K and one F16 tensor of the corpus; the header written big-endian by hand, the data swapped per
    // gguf_convert_endian.py (Q4_K: d and dmin of each 144-byte block; F16: every element).
    const pick = (name) => manifest.tensors.find((t) => t.name === name);
    const tensors = [pick("q4_k.weight"), pick("f16.weight")];
    const stored = (t) => fileBytes.slice(t.absolute_offset, t.absolute_offset + t.size_bytes);
    const swapped = (t) => {
        const b = stored(t);
        const [block, fields] = t.ggml_type_id === 12 ? [144, [0, 2]] : [2, [0]];
        for (let at = 0; at < b.length; at += block) {
            for (const f of fields) [b[at + f], b[at + f + 1]] = [b[at + f + 1], b[at + f]];
        }
        return b;
    };
    const be = [];
    const u32 = (v) => be.push(...[24, 16, 8, 0].map((s) => (v >>> s) & 0xff));
    const u64 = (v) => (u32(Math.floor(v / 2 ** 32)), u32(v >>> 0));
    be.push(...Buffer.from("GGUF"));
    u32(3);
    u64(tensors.length);
    u64(0);
    let offset = 0;
    for (const t of tensors) {
        u64(t.name.length);
        be.push(...Buffer.from(t.name));
        u32(t.ne.length);
        t.ne.forEach(u64);
        u32(t.ggml_type_id);
        u64(offset);
        offset += Math.ceil(t.size_bytes / 32) * 32;
    }
    while (be.length % 32) be.push(0);
    for (const t of tensors) {
        be.push(...swapped(t));
        while (be.length % 32) be.push(0);
    }
    const model = await open(new Uint8Array(be));
    try {
        assert.equal(model.info.endian, "big");
        for (const t of tensors) {
            assert.deepEqual(bytesOf(await model.read(t.name)), bytesOf(ref(t.name)), t.name);
        }
    } finally {
        model.close();
    }
});
