// SPDX-License-Identifier: MIT
// model.read(name, {transform, heads}): a Hugging Face tensor's values as llama.cpp's convert_hf_to_gguf.py writes
// them, by the core's transforms (include/weightstream/hf_checkpoint.h). Against the converter's own outputs for the
// tiny checkpoints of ../shared/testdata/convert (the permuted q/k and Gemma's norms + 1, bit for bit, whole and a
// head at a time, the rows and heads taken from compare()'s report), against an F16 Gemma checkpoint whose + 1 the
// converter rounds to F16, and the option's errors.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";

import { WeightstreamError, compare, open } from "weightstream";

import { gemmaF16Checkpoint } from "./compare-fixtures.mjs";
import { requireSetup, sharedTestData } from "./helpers.mjs";

const convert = path.join(sharedTestData, "convert");
const bits = (a) => new Uint32Array(a.buffer, a.byteOffset, a.length);

describe("read({transform}) writes what convert_hf_to_gguf.py wrote", () => {
    requireSetup(!existsSync(path.join(convert, "manifest.json")) && "no ../shared/testdata/convert");
    for (const name of ["tiny-llama-spm", "tiny-gemma"]) {
        test(name, async () => {
            const hfPath = path.join(convert, name, "model.safetensors");
            const ggufPath = path.join(convert, "ref", `${name}-f32.gguf`);
            const report = await compare(hfPath, ggufPath, { tensors: /norm|attn_q|attn_k|q_proj|k_proj/ });
            const rows = report.tensors.filter((r) => r.transform !== null);
            assert.equal(rows.length, name === "tiny-gemma" ? 5 : 4);
            const [hf, gguf] = await Promise.all([open(hfPath), open(ggufPath)]);
            try {
                for (const row of rows) {
                    const expected = await gguf.read(row.b);
                    const whole = await hf.read(row.a, { transform: row.transform, heads: row.heads ?? undefined });
                    assert.deepEqual(bits(whole), bits(expected), `${row.a}: ${row.transform}`);
                    // Without the transform the values differ: the read is what changes them.
                    assert.notDeepEqual(bits(await hf.read(row.a)), bits(expected));
                    if (row.heads) {
                        const headRows = row.shape_a[0] / row.heads;
                        const cols = row.shape_a[1];
                        for (let r = 0; r < row.shape_a[0]; r += headRows) {
                            const part = await hf.read(row.a, {
                                rows: [r, headRows],
                                transform: row.transform,
                                heads: row.heads,
                            });
                            assert.deepEqual(bits(part), bits(expected.subarray(r * cols, (r + headRows) * cols)));
                        }
                    }
                }
            } finally {
                hf.close();
                gguf.close();
            }
        });
    }
});

describe("read({transform: 'plus_one'}) of an F16 tensor rounds the sum to F16, as the converter adds", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ws-hf-read-"));
    after(() => rmSync(dir, { recursive: true, force: true }));
    test("Gemma norms", async () => {
        const checkpoint = gemmaF16Checkpoint();
        for (const [file, bytes] of Object.entries(checkpoint.files)) writeFileSync(path.join(dir, file), bytes);
        const model = await open(path.join(dir, "model.safetensors"));
        try {
            for (const { name, values } of checkpoint.norms) {
                const read = await model.read(name, { transform: "plus_one" });
                // 1 + v in [1, 2) on F16's grid of 2^-10, ties to even; the float32 sum alone is off the grid.
                const expected = Float32Array.from(values, (v) => {
                    const scaled = (1 + v) * 1024;
                    const floor = Math.floor(scaled);
                    const up = scaled - floor > 0.5 || (scaled - floor === 0.5 && floor % 2 === 1);
                    return (floor + (up ? 1 : 0)) / 1024;
                });
                assert.deepEqual(Array.from(read), Array.from(expected), name);
                assert.ok(
                    values.some((v, i) => Math.fround(1 + v) !== expected[i]),
                    "the rounding matters here",
                );
            }
        } finally {
            model.close();
        }
    });
});

test("read({transform}) refuses what it cannot do, before reading", async () => {
    const convertReady = existsSync(path.join(convert, "manifest.json"));
    requireSetup(!convertReady && "no ../shared/testdata/convert");
    const model = await open(path.join(convert, "tiny-llama-spm", "model.safetensors"));
    try {
        const q = "model.layers.0.self_attn.q_proj.weight";
        await assert.rejects(model.read(q, { transform: "permute_q" }), TypeError); // no heads
        await assert.rejects(model.read(q, { transform: "permute_q", heads: 4, as: "f16" }), TypeError);
        await assert.rejects(model.read(q, { transform: "permute_q", heads: 4, slice: [[0, 2]] }), TypeError);
        await assert.rejects(model.read(q, { transform: "reverse" }), TypeError);
        // 64 rows by 4 heads: a head is 16 rows; a window of 8 is not whole heads, 3 heads do not divide 64 rows.
        await assert.rejects(model.read(q, { transform: "permute_q", heads: 4, rows: [0, 8] }), (e) => {
            assert.ok(e instanceof WeightstreamError);
            assert.equal(e.code, "bad_shape");
            return true;
        });
        await assert.rejects(model.read(q, { transform: "permute_q", heads: 3 }), (e) => e.code === "bad_shape");
        // A transform that only selects rows leaves the values as stored.
        assert.deepEqual(bits(await model.read(q, { transform: "split_q" })), bits(await model.read(q)));
    } finally {
        model.close();
    }
});
