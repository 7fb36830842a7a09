// SPDX-License-Identifier: MIT
// The twin check: every GGUF and safetensors file of the corpus, opened through every kind of local source,
// describes itself exactly as the native CLI's `info --json` does (or, before the CLI is built, as the
// corpus manifest says) and decodes every tensor bit for bit: its float32 sha256 equals `weightstream hash
// --json` and its floats equal ggml's reference output.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { before, describe, test } from "node:test";

import { open } from "weightstream";

import {
    bytesOf,
    cliHashes,
    cliInfo,
    cliPath,
    corpus,
    expectedFromRaw,
    fileSize,
    sameFloatsNaNAgnostic,
    sha256,
    sourceKinds,
} from "./helpers.mjs";

const models = corpus();

const MANIFEST_TYPES = {
    u8: "uint8",
    i8: "int8",
    u16: "uint16",
    i16: "int16",
    u32: "uint32",
    i32: "int32",
    u64: "uint64",
    i64: "int64",
    f32: "float32",
    f64: "float64",
    bool: "bool",
    str: "string",
    arr: "array",
};

function f64Bits(x) {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(x);
    return b.readBigUInt64LE();
}

function f32Bits(x) {
    const b = Buffer.alloc(4);
    b.writeFloatLE(x);
    return b.readUInt32LE();
}

function sameScalar(type, actual, expected, bits) {
    if (type === "f32" || type === "f64") {
        if (bits) {
            const want = BigInt(bits);
            const got = actual === null ? null : type === "f32" ? BigInt(f32Bits(actual)) : f64Bits(actual);
            return actual === null ? expected === null : got === want;
        }
        // The manifest prints array items with just enough digits to identify the float32.
        return Object.is(actual, type === "f32" && expected !== null ? Math.fround(expected) : expected);
    }
    if (typeof actual === "bigint") return actual === BigInt(expected);
    return actual === expected;
}

// The bytes a GGUF array holds after its (type, count) header, rebuilt from the values JavaScript got.
function arrayPayload(itemType, values) {
    const parts = [];
    for (const v of values) {
        let b;
        switch (itemType) {
            case "str": {
                const s = Buffer.from(v, "utf8");
                b = Buffer.alloc(8 + s.length);
                b.writeBigUInt64LE(BigInt(s.length));
                s.copy(b, 8);
                break;
            }
            case "u8":
                b = Buffer.from([v]);
                break;
            case "i8":
                b = Buffer.alloc(1);
                b.writeInt8(v);
                break;
            case "bool":
                b = Buffer.from([v ? 1 : 0]);
                break;
            case "u16":
                b = Buffer.alloc(2);
                b.writeUInt16LE(v);
                break;
            case "i16":
                b = Buffer.alloc(2);
                b.writeInt16LE(v);
                break;
            case "u32":
                b = Buffer.alloc(4);
                b.writeUInt32LE(v);
                break;
            case "i32":
                b = Buffer.alloc(4);
                b.writeInt32LE(v);
                break;
            case "f32":
                b = Buffer.alloc(4);
                b.writeFloatLE(v === null ? NaN : v);
                break;
            case "u64":
                b = Buffer.alloc(8);
                b.writeBigUInt64LE(BigInt(v));
                break;
            case "i64":
                b = Buffer.alloc(8);
                b.writeBigInt64LE(BigInt(v));
                break;
            case "f64":
                b = Buffer.alloc(8);
                b.writeDoubleLE(v === null ? NaN : v);
                break;
            default:
                throw new Error(`no payload rule for ${itemType}`);
        }
        parts.push(b);
    }
    return Buffer.concat(parts);
}

// Without the native CLI: the header against what ggml's reader (or the Python reader) reported.
function checkAgainstManifest(model, entry, format) {
    if (format === "gguf") {
        assert.equal(model.version, entry.gguf_version);
        assert.equal(model.info.alignment, entry.alignment);
        assert.equal(model.info.data_offset, entry.data_offset);
        assert.equal(model.metadata.length, entry.n_kv);
        entry.kv.forEach((kv, i) => {
            const m = model.metadata[i];
            assert.equal(m.key, kv.key);
            assert.equal(m.type, MANIFEST_TYPES[kv.type], kv.key);
            if (kv.type !== "arr") {
                assert.ok(
                    sameScalar(kv.type, m.value, kv.value, kv.value_bits),
                    `${kv.key}: ${m.value} != ${kv.value}`,
                );
                return;
            }
            assert.equal(m.item_type, MANIFEST_TYPES[kv.array_type], kv.key);
            assert.equal(Number(m.length), kv.length, kv.key);
            assert.equal(m.value.length, kv.length, kv.key);
            kv.values.forEach((v, j) => assert.ok(sameScalar(kv.array_type, m.value[j], v), `${kv.key}[${j}]`));
            assert.equal(sha256(arrayPayload(kv.array_type, m.value)), kv.payload_sha256, `${kv.key} payload`);
        });
        assert.equal(model.tensors.length, entry.n_tensors);
        entry.tensors.forEach((t, i) => {
            const m = model.tensors[i];
            assert.equal(m.name, t.name);
            assert.equal(m.dtype, t.ggml_type.toUpperCase());
            assert.deepEqual(m.ne, t.ne);
            assert.deepEqual(m.shape, [...t.ne].reverse());
            assert.equal(m.offset, t.absolute_offset);
            assert.equal(m.nbytes, t.size_bytes);
            assert.equal(m.n_elements, t.n_elements);
        });
        return;
    }
    assert.equal(model.version, null);
    assert.equal(model.info.data_offset, entry.data_start);
    const metadata = entry.metadata ?? {};
    assert.deepEqual(
        model.metadata,
        Object.entries(metadata).map(([key, value]) => ({ key, type: "string", value })),
    );
    const inDataOrder = [...entry.tensors].sort((a, b) => a.data_offsets[0] - b.data_offsets[0]);
    assert.deepEqual(
        model.tensors.map((t) => [t.name, t.dtype, t.shape, t.offset, t.nbytes, t.n_elements]),
        inDataOrder.map((t) => [t.name, t.dtype, t.shape, t.absolute_offsets[0], t.n_bytes, t.n_elements]),
    );
}

function checkHeader(model, item, expected, kind) {
    assert.equal(model.format, item.format);
    assert.equal(model.info.metadata, model.metadata);
    assert.equal(model.info.tensors, model.tensors);
    if (kind === "stream") {
        // A stream's length is known only when the header read reached its end.
        assert.ok([null, fileSize(item.file)].includes(model.info.file_size), `file_size ${model.info.file_size}`);
    } else {
        assert.equal(model.info.file_size, fileSize(item.file));
    }
    if (expected) {
        assert.deepEqual({ ...model.info, file_size: expected.file_size }, expected);
    } else if (item.manifest) {
        checkAgainstManifest(model, item.manifest, item.format);
    }
}

// Every float of the decode against the native CLI's fingerprint and the corpus's reference.
function checkValues(item, tensor, data, hashes) {
    assert.ok(data instanceof Float32Array, `${tensor.name}: a Float32Array`);
    assert.equal(data.length, Number(tensor.n_elements) * (tensor.dtype === "C64" ? 2 : 1), tensor.name);
    if (hashes) assert.equal(sha256(bytesOf(data)), hashes.get(tensor.name).f32_sha256, `${tensor.name}: f32_sha256`);
    const entry = item.manifest?.tensors.find((t) => t.name === tensor.name);
    if (!entry) return;
    if (item.format === "gguf") {
        const ref = readFileSync(path.join(item.dir, entry.reference.file));
        if (entry.reference.format === "f32le") {
            assert.ok(bytesOf(data).equals(ref), `${tensor.name}: f32 decode differs from ${entry.reference.file}`);
        } else {
            const why = sameFloatsNaNAgnostic(data, expectedFromRaw(tensor.dtype, ref));
            assert.equal(why, null, `${tensor.name}: ${why}`);
        }
        return;
    }
    entry.first_values.forEach((v, i) =>
        assert.ok(Object.is(data[i], Math.fround(v)), `${tensor.name}[${i}]: ${data[i]} != ${v}`),
    );
}

for (const item of models) {
    describe(item.label, () => {
        let expected = null;
        let hashes = null;
        before(() => {
            if (cliPath) expected = cliInfo(item.file);
            hashes = cliHashes(item.file);
        });

        for (const [kind, make] of Object.entries(sourceKinds)) {
            const reference = cliPath ? "weightstream info --json / hash --json" : "the manifest";
            test(`${kind}: header and every tensor's decode equal ${reference}`, async () => {
                const model = await open(make(item.file, item.label.length));
                try {
                    checkHeader(model, item, expected, kind);
                    if (kind === "stream") {
                        const seen = [];
                        for await (const { tensor, data } of model.stream()) {
                            checkValues(item, tensor, data, hashes);
                            seen.push(tensor.name);
                        }
                        assert.deepEqual(seen.sort(), model.tensors.map((t) => t.name).sort());
                    } else {
                        for (const tensor of model.tensors)
                            checkValues(item, tensor, await model.read(tensor.name), hashes);
                    }
                } finally {
                    await model.close();
                }
            });
        }

        test("raw bytes of every tensor match the CLI's raw_sha256 and the manifest", async () => {
            const model = await open(item.file);
            try {
                for (const tensor of model.tensors) {
                    const raw = await model.read(tensor.name, { as: "raw" });
                    assert.ok(raw instanceof Uint8Array);
                    assert.equal(raw.length, Number(tensor.nbytes));
                    if (hashes)
                        assert.equal(sha256(raw), hashes.get(tensor.name).raw_sha256, `${tensor.name}: raw_sha256`);
                    const entry = item.manifest?.tensors.find((t) => t.name === tensor.name);
                    if (entry) assert.equal(sha256(raw), entry.raw_sha256 ?? entry.sha256, tensor.name);
                }
            } finally {
                await model.close();
            }
        });
    });
}
