// SPDX-License-Identifier: MIT
// quantize() and quantizePlan() of the package from a Hugging Face checkpoint (the one pass) against `weightstream
// quantize CHECKPOINT OUT` (tests/cli_onepass_test.cpp: equal to convert to the checkpoint's float type then
// quantize): the stream's bytes hash to the CLI's file for the three reference checkpoints of
// ../shared/testdata/convert at Q4_K_M and Q8_0, with llama-quantize's options (overrides, the output tensor's type,
// --pure), given as a path and as named files, and for the Mixture-of-Experts checkpoints of tests/data/convert_moe
// (experts stacked, a sharded one); the plan is the CLI's (every tensor's name, type and size, the file's size,
// general.name); refusals carry the core's code and the CLI's words; bad options are TypeErrors.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
    copyFileSync,
    existsSync,
    mkdirSync,
    mkdtempSync,
    readFileSync,
    readdirSync,
    rmSync,
    writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";

import { WeightstreamError, convertPlan, open, quantize, quantizePlan } from "weightstream";
import { WeightstreamWorker } from "weightstream/worker";

import { cliPath, requireSetup, sharedTestData, testData } from "./helpers.mjs";

const checkpoints = path.join(sharedTestData, "convert");
const moe = path.join(testData, "convert_moe");
const CHECKPOINTS = ["tiny-llama-spm", "tiny-gemma", "tiny-phi3"];

requireSetup(
    (!cliPath && "build/bin/weightstream (the CLI the bytes are compared with)") ||
        (!existsSync(path.join(checkpoints, "tiny-llama-spm")) &&
            "the shared convert corpus is not next to the checkout (../shared/testdata/convert)"),
);

const tmp = mkdtempSync(path.join(os.tmpdir(), "ws-quantize-checkpoint-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let outputs = 0;

function sha256(bytes) {
    return createHash("sha256").update(bytes).digest("hex");
}

// `weightstream quantize IN OUT ...args --json`: {sha256, size, file, json} of the file it wrote.
function cliQuantize(input, args) {
    const file = path.join(tmp, `out-${++outputs}.gguf`);
    const r = spawnSync(cliPath, ["quantize", input, file, ...args, "--json"], { encoding: "utf8" });
    assert.equal(r.status, 0, `weightstream quantize ${input} ${file} ${args.join(" ")}: ${r.stderr}`);
    const bytes = readFileSync(file);
    return { sha256: sha256(bytes), size: bytes.length, file, json: JSON.parse(r.stdout), stderr: r.stderr };
}

// A failing `weightstream quantize`: {status, stderr}.
function cliFailure(input, args) {
    const r = spawnSync(cliPath, ["quantize", input, path.join(tmp, "fail.gguf"), ...args], { encoding: "utf8" });
    assert.notEqual(r.status, 0);
    return { status: r.status, stderr: r.stderr };
}

// quantize()'s options for the CLI's arguments.
function optionsOf(args) {
    const options = {};
    for (let i = 0; i < args.length; ++i) {
        if (args[i] === "--type") options.type = args[++i];
        else if (args[i] === "--pure") options.pure = true;
        else if (args[i] === "--leave-output-tensor") options.leaveOutputTensor = true;
        else if (args[i] === "--tensor-type") (options.overrides ??= []).push(args[++i]);
        else if (args[i] === "--output-tensor-type") options.outputTensorType = args[++i];
        else throw new Error(`unknown quantize option ${args[i]}`);
    }
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

async function rejection(promiseOrStream) {
    try {
        if (promiseOrStream instanceof ReadableStream) await digest(promiseOrStream);
        else await promiseOrStream;
    } catch (e) {
        return e;
    }
    assert.fail("no failure");
}

// The checkpoint's folder as named files, as a dropped folder gives them.
function namedFiles(dir) {
    return readdirSync(dir).map((name) => ({ name, source: new Uint8Array(readFileSync(path.join(dir, name))) }));
}

// The package's bytes for (input, args) equal the CLI's for (cliInput, args); the plan is the CLI's. Returns the
// CLI's run.
async function sameAsCli(input, args, cliInput = input) {
    const expected = cliQuantize(cliInput, args);
    const options = optionsOf(args);
    const plan = await quantizePlan(input, options);
    assert.equal(plan.fileSize, expected.size);
    assert.deepEqual(
        plan.tensors.map((t) => [t.name, t.type, t.shape, t.nbytes, t.inType, t.quantize]),
        expected.json.tensors.map((t) => [t.name, t.dtype, t.shape, t.bytes, t.source_dtype, t.quantized]),
    );
    assert.equal(plan.fallbacks, expected.json.totals.fallbacks);
    // The conversion's warnings, then the quantization's: those the CLI prints.
    const printed = [...expected.stderr.matchAll(/^weightstream: warning: (.*)$/gm)].map((m) => m[1]);
    assert.deepEqual(plan.warnings, printed);
    assert.deepEqual(plan.warnings.slice(plan.warnings.length - expected.json.warnings.length), expected.json.warnings);
    const written = await open(expected.file);
    assert.equal(plan.modelName, written.metadataMap.get("general.name")?.value ?? null);
    await written.close();
    let progress = null;
    const got = await digest(quantize(input, { ...options, onProgress: (p) => (progress = p) }));
    assert.deepEqual(got, { sha256: expected.sha256, size: expected.size });
    assert.equal(progress.tensor, progress.tensors);
    assert.equal(progress.loaded, progress.total);
    assert.equal(plan.inputSize, progress.total);
    assert.equal(progress.written, expected.size);
    return { ...expected, plan };
}

describe("the reference checkpoints in one pass: the CLI's bytes (convert --dtype f16, then quantize)", () => {
    for (const name of CHECKPOINTS) {
        const dir = path.join(checkpoints, name);
        for (const type of ["Q4_K_M", "Q8_0"]) {
            test(`${name} ${type}`, async () => {
                const expected = await sameAsCli(path.join(dir, "model.safetensors"), ["--type", type], dir);
                // The names the CLI's plan gives beside the checkpoint's: GGUF names, made from HF ones.
                const embd = expected.plan.tensors.find((t) => t.name === "token_embd.weight");
                assert.equal(embd.inName, "model.embed_tokens.weight");
                assert.equal(embd.inType, "F16"); // quantized from the conversion's F16
                assert.ok(expected.plan.inputSize > 0);
                // As named files (config.json and the tokenizer among them), with the folder's name given.
                const got = await digest(quantize(namedFiles(dir), { type, modelName: name }));
                assert.equal(got.sha256, expected.sha256);
            });
        }
        test(`${name} with llama-quantize's options: overrides, the output's type; --pure`, async () => {
            const model = path.join(dir, "model.safetensors");
            await sameAsCli(model, [
                "--type",
                "Q5_K_M",
                "--tensor-type",
                "attn_q=f16",
                "--tensor-type",
                "ffn_down=q8_0",
                "--output-tensor-type",
                "q4_0",
            ]);
            await sameAsCli(model, ["--type", "Q4_0", "--pure", "--leave-output-tensor"]);
        });
    }

    test("general.name is the one the conversion writes, in convertPlan() too", async () => {
        const dir = path.join(checkpoints, "tiny-llama-spm");
        const plan = await quantizePlan(path.join(dir, "model.safetensors"), { type: "Q8_0" });
        assert.equal(plan.modelName, "Tiny Llama Spm");
        const converted = await convertPlan(path.join(dir, "model.safetensors"), { to: "gguf", dtype: "f16" });
        assert.equal(converted.modelName, "Tiny Llama Spm");
        // Named files say no folder: the one given names it.
        const named = await quantizePlan(namedFiles(dir), { type: "Q8_0", modelName: "my-model" });
        assert.equal(named.modelName, "My Model");
    });
});

describe("Mixture-of-Experts checkpoints (tests/data/convert_moe): the CLI's bytes", () => {
    test("mixtral (experts stacked) and a sharded qwen2-moe, Q4_K_M", async () => {
        await sameAsCli(path.join(moe, "tiny-mixtral", "model.safetensors"), ["--type", "Q4_K_M"]);
        const index = path.join(moe, "tiny-qwen2moe", "model.safetensors.index.json");
        const expected = await sameAsCli(index, ["--type", "Q4_K_M"]);
        // The shards as named files, with their index.
        const got = await digest(
            quantize(namedFiles(path.join(moe, "tiny-qwen2moe")), { type: "Q4_K_M", modelName: "tiny-qwen2moe" }),
        );
        assert.equal(got.sha256, expected.sha256);
    });
});

describe("refusals and bad options", () => {
    const llama = path.join(checkpoints, "tiny-llama-spm");

    test("a checkpoint of an unknown architecture, or without config.json: the core's code, the CLI's words", async () => {
        const dir = path.join(tmp, "fancy");
        mkdirSync(dir);
        copyFileSync(path.join(llama, "model.safetensors"), path.join(dir, "model.safetensors"));
        const model = path.join(dir, "model.safetensors");
        writeFileSync(
            path.join(dir, "config.json"),
            JSON.stringify({ architectures: ["FancyForCausalLM"], model_type: "fancy" }),
        );
        let cli = cliFailure(model, ["--type", "Q8_0"]);
        let e = await rejection(quantize(model, { type: "Q8_0" }));
        assert.ok(e instanceof WeightstreamError, e);
        assert.deepEqual([e.code, e.what], ["unsupported", "config.model_type"]);
        assert.match(e.message, /^config\.json: model_type 'fancy': not an architecture this converter knows \(/);
        // The CLI names config.json by its path.
        assert.equal(cli.status, 1);
        assert.equal(cli.stderr, `weightstream: error: ${path.join(dir, e.message)}\n`);
        assert.equal((await rejection(quantizePlan(model, { type: "Q8_0" }))).what, "config.model_type");

        rmSync(path.join(dir, "config.json"));
        cli = cliFailure(model, ["--type", "Q8_0"]);
        e = await rejection(quantize(model, { type: "Q8_0" }));
        assert.deepEqual([e.code, e.what], ["unsupported", "config.json"]);
        assert.match(
            e.message,
            /^config\.json: missing: a Hugging Face checkpoint is quantized through its conversion/,
        );
        assert.equal(cli.stderr, `weightstream: error: ${path.join(dir, e.message)}\n`);
        // Bytes have no folder: no config.json either.
        e = await rejection(quantize(new Uint8Array(readFileSync(model)), { type: "Q8_0" }));
        assert.deepEqual([e.code, e.what], ["unsupported", "config.json"]);
    });

    test("a conversion refused: the core's code, the CLI's words", async () => {
        const dir = path.join(tmp, "headless");
        mkdirSync(dir);
        copyFileSync(path.join(llama, "model.safetensors"), path.join(dir, "model.safetensors"));
        const { num_attention_heads, ...config } = JSON.parse(readFileSync(path.join(llama, "config.json"), "utf8"));
        assert.ok(num_attention_heads > 0);
        writeFileSync(path.join(dir, "config.json"), JSON.stringify(config));
        const model = path.join(dir, "model.safetensors");
        const cli = cliFailure(model, ["--type", "Q4_K_M"]);
        const e = await rejection(quantize(model, { type: "Q4_K_M" }));
        assert.ok(e instanceof WeightstreamError, e);
        assert.deepEqual([e.code, e.what], ["bad_key", "config.num_attention_heads"]);
        assert.equal(cli.stderr, `weightstream: error: ${e.message}\n`);
    });

    test("bad options are TypeErrors, as the CLI's usage errors", async () => {
        const model = path.join(llama, "model.safetensors");
        let e = await rejection(quantize(model, { type: "Q9_Z" }));
        assert.ok(e instanceof TypeError, e);
        assert.match(e.message, /^type: expected a llama-quantize file type/);
        assert.equal(cliFailure(model, ["--type", "Q9_Z"]).status, 2);
        e = await rejection(quantize(model, { type: "Q8_0", modelName: 3 }));
        assert.ok(e instanceof TypeError, e);
        e = await rejection(quantize(model, { type: "Q8_0", strictTokenizer: "yes" }));
        assert.ok(e instanceof TypeError, e);
        e = await rejection(quantizePlan(model, { type: "Q8_0", overrides: ["attn_q=q9_z"] }));
        assert.ok(e instanceof TypeError, e);
    });
});

describe("weightstream/worker quantize() from a checkpoint", () => {
    test("the CLI's bytes from a path and from named files; the plan with its general.name", async () => {
        const dir = path.join(checkpoints, "tiny-gemma");
        const expected = cliQuantize(dir, ["--type", "Q4_K_M"]);
        const worker = new WeightstreamWorker();
        try {
            const plan = await worker.quantizePlan(path.join(dir, "model.safetensors"), { type: "Q4_K_M" });
            assert.equal(plan.fileSize, expected.size);
            assert.equal(plan.modelName, "Tiny Gemma");
            const got = await digest(worker.quantize(path.join(dir, "model.safetensors"), { type: "Q4_K_M" }));
            assert.equal(got.sha256, expected.sha256);
            const named = await digest(worker.quantize(namedFiles(dir), { type: "Q4_K_M", modelName: "tiny-gemma" }));
            assert.equal(named.sha256, expected.sha256);
        } finally {
            worker.terminate();
        }
    });
});
