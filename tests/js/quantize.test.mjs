// SPDX-License-Identifier: MIT
// quantize() of the package (and of weightstream/worker) against llama-quantize's own output: every run of the
// shared recipes corpus (../shared/testdata/recipes, 47 llama-quantize commands over 3 models) gives a stream
// whose bytes hash to the file llama-quantize wrote; the core quantizer in wasm gives ggml's bytes for every
// corpus tensor of tests/data/ggml; overrides as RegExps pick the types; bad input fails with the core's codes;
// a signal aborts the stream.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";

import { WeightstreamError, open, quantize, quantizeFileTypes, quantizePlan } from "weightstream";
import { WeightstreamWorker } from "weightstream/worker";

import { loadWasm } from "../../wasm/js/wasm.js";
import { writeGguf } from "./gguf-writer.mjs";
import { quantizeCorpus } from "./quantize-corpus.mjs";
import { requireSetup, sha256, sharedTestData, testData } from "./helpers.mjs";

const recipes = path.join(sharedTestData, "recipes");
const manifest = existsSync(path.join(recipes, "manifest.json"))
    ? JSON.parse(readFileSync(path.join(recipes, "manifest.json"), "utf8"))
    : null;

// quantize()'s options for a llama-quantize command line of the manifest.
function optionsOf(run) {
    const options = { type: run.ftype };
    const args = run.options;
    for (let i = 0; i < args.length; ++i) {
        if (args[i] === "--pure") options.pure = true;
        else if (args[i] === "--leave-output-tensor") options.leaveOutputTensor = true;
        else if (args[i] === "--tensor-type") (options.overrides ??= []).push(args[++i]);
        else if (args[i] === "--output-tensor-type") options.outputTensorType = args[++i];
        else if (args[i] === "--token-embedding-type") options.tokenEmbeddingType = args[++i];
        else if (args[i] === "--imatrix")
            ++i; // run.imatrix names it
        else throw new Error(`unknown llama-quantize option ${args[i]}`);
    }
    // Named as typed on llama-quantize's command line: quantize.imatrix.file records it.
    if (run.imatrix) options.imatrix = { name: run.imatrix, source: path.join(recipes, run.imatrix) };
    return options;
}

async function digest(stream) {
    const hash = createHash("sha256");
    let size = 0;
    for await (const chunk of stream) {
        assert.ok(chunk instanceof Uint8Array);
        hash.update(chunk);
        size += chunk.length;
    }
    return { sha256: hash.digest("hex"), size };
}

async function collect(stream) {
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    return Buffer.concat(chunks);
}

requireSetup(!manifest && "the shared recipes corpus is not next to the checkout (../shared/testdata/recipes)");

describe("quantize() reproduces llama-quantize byte for byte", () => {
    for (const run of manifest?.runs ?? []) {
        test(run.command, async () => {
            const got = await digest(quantize(path.join(recipes, run.model), optionsOf(run)));
            assert.equal(got.size, run.size);
            assert.equal(got.sha256, run.sha256);
        });
    }
});

describe("quantizePlan() gives llama-quantize's layout before quantizing", () => {
    for (const run of manifest?.runs ?? []) {
        test(run.command, async () => {
            const { type, ...options } = optionsOf(run);
            const plan = await quantizePlan(path.join(recipes, run.model), { type, ...options });
            assert.equal(plan.fileSize, run.size);
            assert.equal(plan.headerSize, run.header.data_offset);
            assert.deepEqual(
                plan.tensors.map((t) => [t.name, t.type, t.offset - plan.headerSize, t.nbytes]),
                run.tensors.map((t) => [t.name, t.type, t.offset, t.nbytes]),
            );
            // The core's bits per weight of the output: what llama-quantize printed ("quant size = ... (B BPW)",
            // two decimals), and tensor bytes over parameters (not the file size, which counts the header).
            const weights = plan.tensors.reduce((n, t) => n + t.shape.reduce((m, d) => m * d, 1), 0);
            const bytes = plan.tensors.reduce((n, t) => n + t.nbytes, 0);
            assert.equal(plan.bitsPerWeight, (bytes * 8) / weights);
            assert.equal(plan.bitsPerWeight.toFixed(2), run.quant_bpw.toFixed(2));
        });
    }
});

test("quantizeFileTypes() lists every file type once, by the names quantize() takes", async () => {
    const list = await quantizeFileTypes();
    assert.equal(list.length, 33);
    assert.deepEqual(list.slice(0, 3), [
        { name: "Q4_0", id: 2, defaultType: "Q4_0" },
        { name: "Q4_1", id: 3, defaultType: "Q4_1" },
        { name: "MXFP4_MOE", id: 38, defaultType: "MXFP4" },
    ]);
    assert.deepEqual(
        list.find((f) => f.name === "Q4_K_M"),
        { name: "Q4_K_M", id: 15, defaultType: "Q4_K" },
    );
    assert.equal(new Set(list.map((f) => f.id)).size, list.length);
    for (const f of ["Q4_K", "Q3_K", "Q5_K"]) assert.ok(!list.some((t) => t.name === f), f);
    const worker = new WeightstreamWorker();
    try {
        assert.deepEqual(await worker.quantizeFileTypes(), list);
    } finally {
        await worker.terminate();
    }
});

test("the recipes cover every option quantize() maps to a llama-quantize flag", () => {
    assert.equal(manifest.runs.length, 47);
    const flags = new Set(manifest.runs.flatMap((r) => r.options.filter((o) => o.startsWith("--"))));
    for (const f of ["--pure", "--tensor-type", "--leave-output-tensor", "--output-tensor-type", "--imatrix"])
        assert.ok(flags.has(f), f);
});

describe("weightstream/worker quantize()", () => {
    test("gives the same bytes, chunks transferred, from a path, bytes and a File", async () => {
        const worker = new WeightstreamWorker();
        try {
            const picks = [
                manifest.runs.find((r) => r.model.includes("moe") && r.ftype === "IQ2_XXS" && !r.options.length),
                manifest.runs.find((r) => r.options.includes("--tensor-type")),
                manifest.runs.find((r) => r.model.includes("odd") && r.ftype === "Q4_K_M" && !r.options.length),
            ];
            for (const [k, run] of picks.entries()) {
                const options = optionsOf(run);
                const file = path.join(recipes, run.model);
                const bytes = new Uint8Array(readFileSync(file));
                const source = k === 0 ? file : k === 1 ? bytes : new File([bytes], run.model);
                if (options.imatrix) {
                    const im = new Uint8Array(readFileSync(options.imatrix.source));
                    options.imatrix = { name: options.imatrix.name, source: im };
                }
                let progress = null;
                const got = await digest(worker.quantize(source, { ...options, onProgress: (p) => (progress = p) }));
                assert.equal(got.sha256, run.sha256, run.command);
                assert.equal(progress.tensor, progress.tensors);
                assert.equal(progress.written, run.size);
                // The bytes given were cloned, not taken.
                assert.equal(bytes.length, readFileSync(file).length);
            }
        } finally {
            await worker.terminate();
        }
    });
});

// ---- the core's quantizer in wasm -----------------------------------------------------------------------------

test("quantizeRows in wasm gives ggml's bytes for every corpus tensor, whole and row by row", async () => {
    const ggml = path.join(testData, "ggml");
    const r = await quantizeCorpus(await loadWasm(), (file) => new Uint8Array(readFileSync(path.join(ggml, file))));
    assert.deepEqual(r.mismatches, []);
    // Every tensor ggml quantized (all but the five integer ones), five of them with an importance matrix.
    assert.equal(r.checked, 47);
    assert.equal(r.withImatrix, 5);
    assert.deepEqual(r.refusal, { status: "unsupported", what: "imatrix" });
});

// ---- a small generated model ---------------------------------------------------------------------------------

const F32 = 0;
const N = 256;

// A llama with one layer of 256-wide F32 weights (values from a fixed LCG); `poison(name, values)` may edit them.
function tinyModel(poison = () => {}) {
    let s = 12345;
    const weight = (name, ne) => {
        const values = new Float32Array(ne[0] * ne[1]);
        for (let i = 0; i < values.length; ++i) {
            s = (s * 1103515245 + 12345) >>> 0;
            values[i] = (s / 2 ** 32 - 0.5) * 0.1;
        }
        poison(name, values);
        return { name, type: F32, ne, data: new Uint8Array(values.buffer) };
    };
    const norm = (name) => ({ name, type: F32, ne: [N], data: new Uint8Array(new Float32Array(N).fill(1).buffer) });
    return writeGguf({
        kv: [
            { key: "general.architecture", type: "string", value: "llama" },
            { key: "llama.block_count", type: "uint32", value: 1 },
            { key: "llama.embedding_length", type: "uint32", value: N },
            { key: "llama.attention.head_count", type: "uint32", value: 4 },
            { key: "llama.attention.head_count_kv", type: "uint32", value: 4 },
        ],
        tensors: [
            weight("token_embd.weight", [N, 64]),
            norm("blk.0.attn_norm.weight"),
            weight("blk.0.attn_q.weight", [N, N]),
            weight("blk.0.attn_k.weight", [N, N]),
            weight("blk.0.attn_v.weight", [N, N]),
            weight("blk.0.attn_output.weight", [N, N]),
            weight("blk.0.ffn_up.weight", [N, N]),
            norm("output_norm.weight"),
            weight("output.weight", [N, 64]),
        ],
    });
}

// llama-imatrix's legacy .dat: one entry per [name, values].
function legacyImatrix(entries) {
    const parts = [];
    const i32 = (v) => {
        const b = Buffer.alloc(4);
        b.writeInt32LE(v);
        parts.push(b);
    };
    i32(entries.length);
    for (const [name, values] of entries) {
        i32(Buffer.byteLength(name));
        parts.push(Buffer.from(name));
        i32(1); // ncall
        i32(values.length);
        parts.push(Buffer.from(new Float32Array(values).buffer));
    }
    return new Uint8Array(Buffer.concat(parts));
}

async function rejection(stream) {
    try {
        await collect(stream);
    } catch (e) {
        return e;
    }
    assert.fail("the stream did not fail");
}

test("overrides as RegExps and NAME=TYPE strings pick the types; the output opens and decodes", async () => {
    const model = tinyModel();
    const out = await collect(
        quantize(model, {
            type: "Q8_0",
            overrides: [{ pattern: /ATTN_[qk]/i, type: "q4_0" }, "FFN_UP=q5_0"],
            tokenEmbeddingType: "q4_k",
        }),
    );
    const q = await open(new Uint8Array(out));
    try {
        const types = Object.fromEntries(q.tensors.map((t) => [t.name, t.dtype]));
        assert.equal(types["blk.0.attn_q.weight"], "Q4_0");
        assert.equal(types["blk.0.attn_k.weight"], "Q4_0");
        assert.equal(types["blk.0.attn_v.weight"], "Q8_0");
        assert.equal(types["blk.0.ffn_up.weight"], "Q5_0");
        assert.equal(types["token_embd.weight"], "Q4_K");
        assert.equal(types["blk.0.attn_norm.weight"], "F32");
        const fileType = q.metadata.find((m) => m.key === "general.file_type");
        assert.equal(fileType.value, 7);
        // The Q8_0 decode is within half a step of the source.
        const here = await open(model);
        const a = await q.read("blk.0.attn_v.weight");
        const b = await here.read("blk.0.attn_v.weight");
        let worst = 0;
        for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]));
        assert.ok(worst > 0 && worst < 0.05 / 127 + 1e-6, `${worst}`);
        await here.close();
    } finally {
        await q.close();
    }
});

test("bad input fails with the core's codes", async () => {
    const model = tinyModel();
    // A type that needs an importance matrix, without one.
    let e = await rejection(quantize(model, { type: "IQ2_XXS" }));
    assert.ok(e instanceof WeightstreamError);
    assert.deepEqual([e.code, e.what], ["unsupported", "imatrix.required"]);
    // An importance matrix entry of the wrong length.
    const short = legacyImatrix([["blk.0.attn_q.weight", new Array(N / 2).fill(1)]]);
    e = await rejection(quantize(model, { type: "Q4_K_M", imatrix: short }));
    assert.deepEqual([e.code, e.what], ["bad_shape", "imatrix.size"]);
    assert.match(e.message, /blk\.0\.attn_q\.weight/);
    // An importance matrix that is not one.
    e = await rejection(quantize(model, { type: "Q4_K_M", imatrix: new Uint8Array([1, 0, 0]) }));
    assert.equal(e.code, "truncated");
    // A NaN in a source tensor: llama-quantize refuses it, so does quantize().
    const nan = tinyModel((name, v) => name === "blk.0.attn_v.weight" && (v[1000] = NaN));
    e = await rejection(quantize(nan, { type: "Q4_0" }));
    assert.deepEqual([e.code, e.what], ["bad_shape", "tensor.data"]);
    assert.match(e.message, /blk\.0\.attn_v\.weight/);
    // Bad options.
    e = await rejection(quantize(model, { type: "Q9_X" }));
    assert.ok(e instanceof TypeError);
    e = await rejection(quantize(model, { type: "Q4_0", overrides: ["attn_q=q9"] }));
    assert.ok(e instanceof TypeError);
    // Patterns are the core's (as --tensor-type): a look-behind is refused in the CLI's words.
    e = await rejection(
        quantize(model, { type: "Q4_0", overrides: ["ffn_up=q8_0", { pattern: "(?<=attn)_q", type: "q8_0" }] }),
    );
    assert.ok(e instanceof TypeError);
    assert.match(e.message, /^overrides: bad regular expression '\(\?<=attn\)_q': .* at byte \d+$/);
    assert.throws(() => quantize(model), TypeError);
    // A file that is not a model.
    e = await rejection(quantize(new Uint8Array(64), { type: "Q4_0" }));
    assert.equal(e.code, "bad_magic");
});

test("an importance matrix of the right length changes the bytes, and is recorded", async () => {
    const model = tinyModel();
    const im = legacyImatrix([["blk.0.attn_q.weight", Array.from({ length: N }, (_, i) => 1 + (i % 7))]]);
    const plain = await collect(quantize(model, { type: "Q4_K_M" }));
    const weighted = await collect(quantize(model, { type: "Q4_K_M", imatrix: { name: "my.imatrix", source: im } }));
    assert.notEqual(sha256(plain), sha256(weighted));
    const q = await open(new Uint8Array(weighted));
    try {
        assert.equal(q.metadata.find((m) => m.key === "quantize.imatrix.file").value, "my.imatrix");
        assert.equal(q.metadata.find((m) => m.key === "quantize.imatrix.entries_count").value, 1);
    } finally {
        await q.close();
    }
});

test("a signal aborts the stream; cancelling it stops the work", async () => {
    const model = tinyModel();
    const controller = new AbortController();
    const reader = quantize(model, { type: "Q4_K_M", signal: controller.signal }).getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    assert.equal(Buffer.from(first.value.subarray(0, 4)).toString(), "GGUF");
    controller.abort(new Error("stop"));
    await assert.rejects(reader.read(), /stop/);
    // Aborted before the first read.
    const aborted = new AbortController();
    aborted.abort();
    const e = await rejection(quantize(model, { type: "Q4_0", signal: aborted.signal }));
    assert.equal(e.name, "AbortError");
    // A cancelled stream ends quietly.
    const stream = quantize(model, { type: "Q4_0" });
    const r2 = stream.getReader();
    await r2.read();
    await r2.cancel();
    assert.deepEqual(await r2.read(), { done: true, value: undefined });
});
