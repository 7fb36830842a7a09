// SPDX-License-Identifier: MIT
// convert() of the package (and of weightstream/worker) against `weightstream convert`: for the same input and
// options the stream's bytes hash to the file the CLI wrote — the shared Hugging Face checkpoints
// (../shared/testdata/convert) to GGUF in four dtypes, given as a path (config.json beside it) and as named files
// (config.json and the tokenizer among them); a sharded checkpoint (path and named files) and one served by nginx
// (URLs); the Mixture-of-Experts checkpoints of tests/data/convert_moe (experts stacked); GGUF <-> safetensors; a split GGUF and a sharded safetensors model; the cases of
// tests/cli_convert_test.cpp (dtype and file type, requantizing, no config.json, an unknown family). Refusals carry
// the core's code and the CLI's words; bad options are TypeErrors; a signal aborts the stream.
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
import { after, before, describe, test } from "node:test";

import { WeightstreamError, convert } from "weightstream";
import { WeightstreamWorker } from "weightstream/worker";

import { cliPath, requireSetup, sharedTestData, testData } from "./helpers.mjs";
import { writeSafetensors } from "./safetensors-writer.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";
import { writeShards } from "./split-fixtures.mjs";

const checkpoints = path.join(sharedTestData, "convert");
const recipes = path.join(sharedTestData, "recipes");
const CHECKPOINTS = ["tiny-llama-spm", "tiny-gemma", "tiny-phi3"];
const DTYPES = ["f32", "f16", "bf16", "q8_0"];
const F16_GGUF = path.join(recipes, "ref-llama-gqa8-f16.gguf");

requireSetup(
    (!cliPath && "build/bin/weightstream (the CLI the bytes are compared with)") ||
        (!existsSync(path.join(checkpoints, "tiny-llama-spm")) &&
            "the shared convert corpus is not next to the checkout (../shared/testdata/convert)") ||
        (!nginxPath && "nginx not installed"),
);

const tmp = mkdtempSync(path.join(os.tmpdir(), "ws-convert-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let outputs = 0;

function sha256(bytes) {
    return createHash("sha256").update(bytes).digest("hex");
}

// `weightstream convert IN OUT.<to> ...args`: {sha256, size, file, stderr} of the file it wrote.
function cliConvert(input, to, args = []) {
    const file = path.join(tmp, `out-${++outputs}.${to}`);
    const r = spawnSync(cliPath, ["convert", input, file, ...args], { encoding: "utf8" });
    assert.equal(r.status, 0, `weightstream convert ${input} ${file} ${args.join(" ")}: ${r.stderr}`);
    const bytes = readFileSync(file);
    return { sha256: sha256(bytes), size: bytes.length, file, stderr: r.stderr };
}

// A failing `weightstream convert`: {status, stderr}.
function cliFailure(input, to, args = []) {
    const r = spawnSync(cliPath, ["convert", input, path.join(tmp, `fail.${to}`), ...args], { encoding: "utf8" });
    assert.notEqual(r.status, 0);
    return { status: r.status, stderr: r.stderr };
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

async function rejection(stream) {
    try {
        await digest(stream);
    } catch (e) {
        return e;
    }
    assert.fail("the stream did not fail");
}

// The checkpoint's folder as named files, as a dropped folder gives them (config.json and the tokenizer among them).
function namedFiles(dir) {
    return readdirSync(dir).map((name) => ({ name, source: new Uint8Array(readFileSync(path.join(dir, name))) }));
}

// convert()'s options for the CLI's arguments.
function optionsOf(to, args) {
    const options = { to };
    for (let i = 0; i < args.length; ++i) {
        if (args[i] === "--dtype") options.dtype = args[++i];
        else if (args[i] === "--allow-requantize") options.allowRequantize = true;
        else throw new Error(`unknown convert option ${args[i]}`);
    }
    return options;
}

// The package's bytes for (input, to, args) equal the CLI's for (cliInput, to, args); returns the CLI's run.
async function sameAsCli(input, to, args = [], cliInput = input) {
    const expected = cliConvert(cliInput, to, args);
    let progress = null;
    const got = await digest(convert(input, { ...optionsOf(to, args), onProgress: (p) => (progress = p) }));
    assert.deepEqual(got, { sha256: expected.sha256, size: expected.size });
    assert.equal(progress.tensor, progress.tensors);
    assert.equal(progress.loaded, progress.total);
    assert.equal(progress.written, expected.size);
    assert.equal(progress.outputSize, expected.size);
    return { ...expected, warnings: progress.warnings };
}

describe("Hugging Face checkpoints to GGUF: the CLI's bytes, convert_hf_to_gguf.py's bytes", () => {
    const manifest = JSON.parse(readFileSync(path.join(checkpoints, "manifest.json"), "utf8"));
    const reference = new Map(manifest.references.map((r) => [r.file, r.sha256]));
    for (const name of CHECKPOINTS) {
        for (const dtype of DTYPES) {
            test(`${name} --dtype ${dtype}`, async () => {
                const dir = path.join(checkpoints, name);
                const model = path.join(dir, "model.safetensors");
                const expected = await sameAsCli(model, "gguf", ["--dtype", dtype]);
                // The converter's own file (tokenizer, general.*, tensors), byte for byte.
                assert.equal(expected.sha256, reference.get(`ref/${name}-${dtype}.gguf`));
                // The same checkpoint as named files: config.json and the tokenizer among them; the folder's name
                // (general.name comes from it) given, since named files do not say it.
                const got = await digest(convert(namedFiles(dir), { to: "gguf", dtype, modelName: name }));
                assert.equal(got.sha256, expected.sha256);
            });
        }
    }

    test("the written tokenizer is checked against the source's: a warning, strictTokenizer an error", async () => {
        const files = namedFiles(path.join(checkpoints, "tiny-llama-spm")).filter((f) => f.name !== "tokenizer.json");
        // Another tokenizer.json beside the tokenizer.model: it is the source tokenizer (transformers prefers it).
        const llama2 = readFileSync(
            path.join(testData, "..", "..", "node_modules", "@lenml", "tokenizer-llama2", "models", "tokenizer.json"),
        );
        files.push({ name: "tokenizer.json", source: new Uint8Array(llama2) });
        let progress = null;
        await digest(convert(files, { to: "gguf", dtype: "f16", modelName: "x", onProgress: (p) => (progress = p) }));
        assert.ok(progress.warnings.some((w) => w.startsWith("the written tokenizer and the source's differ")));
        const e = await rejection(convert(files, { to: "gguf", dtype: "f16", modelName: "x", strictTokenizer: true }));
        assert.ok(e instanceof WeightstreamError);
        assert.match(e.message, /differ on the check text at token \d+/);
        assert.throws(() => convert(files, { to: "gguf", strictTokenizer: 1 }), TypeError);
        assert.throws(() => convert(files, { to: "gguf", modelName: 1 }), TypeError);
    });

    test("malformed tokenizer files are refused before anything is written, with the CLI's code", async () => {
        const files = namedFiles(path.join(checkpoints, "tiny-phi3")).filter((f) => f.name !== "added_tokens.json");
        files.push({ name: "added_tokens.json", source: new TextEncoder().encode('{"<x>": -5}') });
        const e = await rejection(convert(files, { to: "gguf", dtype: "f16", modelName: "tiny-phi3" }));
        assert.ok(e instanceof WeightstreamError);
        assert.equal(e.code, "bad_key");
        assert.equal(e.what, "added_tokens.json");
    });
});

describe("Mixture-of-Experts checkpoints (tests/data/convert_moe): the CLI's bytes", () => {
    const moe = path.join(testData, "convert_moe");
    for (const dtype of ["f16", "q8_0"]) {
        test(`tiny-mixtral and the sharded tiny-qwen2moe --dtype ${dtype}, as paths and as named files`, async () => {
            for (const [name, file] of [
                ["tiny-mixtral", "model.safetensors"],
                ["tiny-qwen2moe", "model.safetensors.index.json"],
            ]) {
                const dir = path.join(moe, name);
                const expected = await sameAsCli(path.join(dir, file), "gguf", ["--dtype", dtype]);
                // Named files carry no folder: general.name is given, as the CLI takes it from the folder.
                const got = await digest(convert(namedFiles(dir), { to: "gguf", dtype, modelName: name }));
                assert.equal(got.sha256, expected.sha256);
            }
        });
    }
});

describe("GGUF and safetensors: the CLI's bytes", () => {
    test("GGUF -> safetensors, as stored and --dtype bf16", async () => {
        await sameAsCli(F16_GGUF, "safetensors");
        await sameAsCli(F16_GGUF, "safetensors", ["--dtype", "bf16"]);
    });

    test("safetensors -> GGUF --dtype q4_k, from a path and from bytes", async () => {
        const file = path.join(testData, "safetensors/mlx_lora_adapters.safetensors");
        const expected = await sameAsCli(file, "gguf", ["--dtype", "q4_k"]);
        const got = await digest(convert(new Uint8Array(readFileSync(file)), { to: "gguf", dtype: "Q4_K" }));
        assert.equal(got.sha256, expected.sha256);
    });

    test("--dtype over a GGUF: every dtype of cli_convert_test, and a copy that keeps the file type", async () => {
        for (const dtype of ["q8_0", "q4_0", "f16", "bf16", "f32"])
            await sameAsCli(F16_GGUF, "gguf", ["--dtype", dtype]);
        await sameAsCli(F16_GGUF, "gguf");
    });

    test("a split GGUF (its parts as paths, and the first part alone) and a sharded safetensors model", async () => {
        const split = path.join(sharedTestData, "split");
        const parts = readdirSync(split)
            .filter((f) => /^gqa8-1m-0000\d-of-00003\.gguf$/.test(f))
            .map((f) => path.join(split, f));
        assert.equal(parts.length, 3);
        const expected = await sameAsCli(parts[0], "safetensors");
        assert.equal((await digest(convert(parts, { to: "safetensors" }))).sha256, expected.sha256);
        await sameAsCli(parts[0], "gguf", ["--dtype", "q8_0"]);
        const shards = path.join(tmp, "shards");
        mkdirSync(shards);
        const { index } = writeShards(shards);
        await sameAsCli(index, "gguf");
        await sameAsCli(index, "safetensors", ["--dtype", "f16"]);
    });
});

// The checkpoint `name` as Hugging Face shards it: its tensors in two model-0000K-of-00002.safetensors files, their
// model.safetensors.index.json, its config.json and tokenizer, in a folder of its own. Returns the index's path.
function shardedCheckpoint(name) {
    const from = path.join(checkpoints, name);
    const dir = path.join(tmp, `sharded-${name}`);
    mkdirSync(dir);
    const bytes = readFileSync(path.join(from, "model.safetensors"));
    const headerSize = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + headerSize).toString("utf8"));
    const names = Object.keys(header).filter((k) => k !== "__metadata__");
    const weightMap = {};
    [names.slice(0, names.length >> 1), names.slice(names.length >> 1)].forEach((part, k) => {
        const file = `model-0000${k + 1}-of-00002.safetensors`;
        const tensors = part.map((t) => {
            const [begin, end] = header[t].data_offsets;
            weightMap[t] = file;
            const data = bytes.subarray(8 + headerSize + begin, 8 + headerSize + end);
            return { name: t, dtype: header[t].dtype, shape: header[t].shape, data };
        });
        writeFileSync(path.join(dir, file), writeSafetensors({ tensors, metadata: { format: "pt" } }));
    });
    writeFileSync(path.join(dir, "model.safetensors.index.json"), JSON.stringify({ weight_map: weightMap }));
    for (const f of readdirSync(from))
        if (f !== "model.safetensors") copyFileSync(path.join(from, f), path.join(dir, f));
    return path.join(dir, "model.safetensors.index.json");
}

describe("a sharded checkpoint, and one served by nginx", () => {
    let server;
    before(async () => {
        server = await startNginx();
    });
    after(async () => {
        await server?.stop();
    });

    test("shards with their index: as a path, and as named files", async () => {
        const index = shardedCheckpoint("tiny-llama-spm");
        const expected = await sameAsCli(index, "gguf", ["--dtype", "q8_0"]);
        assert.doesNotMatch(expected.stderr, /config\.json/);
        const modelName = path.basename(path.dirname(index)); // general.name's source, as the CLI finds it
        const got = await digest(convert(namedFiles(path.dirname(index)), { to: "gguf", dtype: "q8_0", modelName }));
        assert.equal(got.sha256, expected.sha256);
    });

    test("URLs: config.json read beside the first", async () => {
        const expected = cliConvert(path.join(checkpoints, "tiny-phi3/model.safetensors"), "gguf", ["--dtype", "f16"]);
        const url = `${server.rangeBase}/shared/convert/tiny-phi3/model.safetensors`;
        assert.equal((await digest(convert(url, { to: "gguf", dtype: "f16" }))).sha256, expected.sha256);
        assert.equal((await digest(convert(new URL(url), { to: "gguf", dtype: "f16" }))).sha256, expected.sha256);
    });
});

describe("cli_convert_test's cases", () => {
    test("no requantizing without allowRequantize; with it, requantized", async () => {
        const q8 = cliConvert(F16_GGUF, "gguf", ["--dtype", "q8_0"]).file;
        const kept = await sameAsCli(q8, "gguf", ["--dtype", "q4_0"]);
        assert.ok(
            kept.warnings.some((w) => w.startsWith("tensors already of type Q8_0 kept as they are, not Q4_0")),
            kept.warnings.join("\n"),
        );
        const requantized = await sameAsCli(q8, "gguf", ["--dtype", "q4_0", "--allow-requantize"]);
        assert.notEqual(requantized.sha256, kept.sha256);
        assert.ok(requantized.warnings.some((w) => w.startsWith("requantizing from Q8_0")));
    });

    test("without config.json, or of a family the converter does not know: names kept, as the CLI", async () => {
        const llama = path.join(checkpoints, "tiny-llama-spm");
        const bare = path.join(tmp, "bare");
        mkdirSync(bare);
        copyFileSync(path.join(llama, "model.safetensors"), path.join(bare, "model.safetensors"));
        const expected = await sameAsCli(path.join(bare, "model.safetensors"), "gguf");
        assert.match(expected.stderr, /warning: no .*config\.json: Hugging Face tensor names kept/);
        assert.ok(
            expected.warnings.includes(
                "no config.json: Hugging Face tensor names kept, no hyperparameters written; llama.cpp will not load the file",
            ),
            expected.warnings.join("\n"),
        );
        // Bytes have no folder: no config.json either.
        const bytes = new Uint8Array(readFileSync(path.join(llama, "model.safetensors")));
        assert.equal((await digest(convert(bytes, { to: "gguf" }))).sha256, expected.sha256);

        const mamba = path.join(tmp, "mamba");
        mkdirSync(mamba);
        copyFileSync(path.join(llama, "model.safetensors"), path.join(mamba, "model.safetensors"));
        const config = JSON.parse(readFileSync(path.join(llama, "config.json"), "utf8"));
        writeFileSync(path.join(mamba, "config.json"), JSON.stringify({ ...config, model_type: "mamba" }));
        const unknown = await sameAsCli(path.join(mamba, "model.safetensors"), "gguf");
        assert.match(unknown.stderr, /model_type 'mamba' is not a family this converter knows/);
        assert.ok(unknown.warnings.some((w) => w.startsWith("config.json: model_type 'mamba' is not a family")));
        // An unusable config.json is ignored, with the CLI's reason.
        writeFileSync(path.join(mamba, "config.json"), "[1, 2]");
        const unusable = await sameAsCli(path.join(mamba, "model.safetensors"), "gguf");
        assert.match(unusable.stderr, /config\.json is not a JSON object; ignored/);
        assert.ok(
            unusable.warnings.includes("config.json is not a JSON object; ignored"),
            unusable.warnings.join("\n"),
        );
        assert.equal(unusable.sha256, expected.sha256);
        assert.equal(unknown.sha256, expected.sha256);
    });
});

// A safetensors file with a U64 tensor, which GGUF has no type for.
function u64Model() {
    const file = path.join(tmp, "u64.safetensors");
    const f32 = new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer);
    writeFileSync(
        file,
        writeSafetensors({
            tensors: [
                { name: "w", dtype: "F32", shape: [4], data: f32 },
                { name: "ids", dtype: "U64", shape: [2], data: new Uint8Array(16) },
            ],
        }),
    );
    return file;
}

describe("refusals and bad options", () => {
    test("a tensor the target cannot hold: the core's code, the CLI's words", async () => {
        const file = u64Model();
        const cli = cliFailure(file, "gguf");
        const e = await rejection(convert(file, { to: "gguf" }));
        assert.ok(e instanceof WeightstreamError);
        assert.deepEqual([e.code, e.what], ["unsupported", "tensor.type"]);
        const why = "cannot convert tensor ids: type U64 has no GGUF counterpart";
        assert.equal(e.message, `tensor "ids": unsupported: tensor.type (byte ${e.offset}): ${why}`);
        // The CLI prints the same status (with the code's description) and reason after the file's path.
        assert.ok(
            cli.stderr.includes(`unsupported: ${e.description}: tensor.type (byte ${e.offset}): ${why}`),
            cli.stderr,
        );
    });

    test("a config.json without what the checkpoint needs: the core's code, the CLI's words", async () => {
        const llama = path.join(checkpoints, "tiny-llama-spm");
        const dir = path.join(tmp, "headless");
        mkdirSync(dir);
        copyFileSync(path.join(llama, "model.safetensors"), path.join(dir, "model.safetensors"));
        const { num_attention_heads, ...config } = JSON.parse(readFileSync(path.join(llama, "config.json"), "utf8"));
        assert.ok(num_attention_heads > 0);
        writeFileSync(path.join(dir, "config.json"), JSON.stringify(config));
        const cli = cliFailure(path.join(dir, "model.safetensors"), "gguf");
        const e = await rejection(convert(path.join(dir, "model.safetensors"), { to: "gguf" }));
        assert.ok(e instanceof WeightstreamError);
        assert.deepEqual([e.code, e.what], ["bad_key", "config.num_attention_heads"]);
        assert.equal(cli.stderr, `weightstream: error: ${e.message}\n`);
    });

    test("bad options are TypeErrors, as the CLI's usage errors", async () => {
        assert.throws(() => convert(F16_GGUF), TypeError);
        assert.throws(() => convert(F16_GGUF, {}), /to: expected "gguf" or "safetensors"/);
        assert.throws(() => convert(F16_GGUF, { to: "onnx" }), TypeError);
        assert.throws(() => convert(F16_GGUF, { to: "gguf", dtype: 1 }), TypeError);
        assert.throws(() => convert(F16_GGUF, { to: "gguf", allowRequantize: "yes" }), TypeError);
        let e = await rejection(convert(F16_GGUF, { to: "gguf", dtype: "q9_x" }));
        assert.ok(e instanceof TypeError, e);
        // Names of the table the core cannot encode as, and a GGUF type for safetensors (usage errors of the CLI).
        e = await rejection(convert(F16_GGUF, { to: "gguf", dtype: "i32" }));
        assert.ok(e instanceof TypeError, e);
        assert.equal(cliFailure(F16_GGUF, "gguf", ["--dtype", "i32"]).status, 2);
        e = await rejection(convert(F16_GGUF, { to: "safetensors", dtype: "q4_k" }));
        assert.ok(e instanceof TypeError, e);
        assert.match(e.message, /dtype: cannot encode tensors as Q4_K in safetensors/);
        assert.equal(cliFailure(F16_GGUF, "safetensors", ["--dtype", "q4_k"]).status, 2);
        // A file that is not a model.
        e = await rejection(convert(new Uint8Array(64), { to: "gguf" }));
        assert.equal(e.code, "bad_magic");
    });

    test("a signal aborts the stream; cancelling it stops the work", async () => {
        const controller = new AbortController();
        const reader = convert(F16_GGUF, { to: "gguf", dtype: "q8_0", signal: controller.signal }).getReader();
        const first = await reader.read();
        assert.equal(Buffer.from(first.value.subarray(0, 4)).toString(), "GGUF");
        controller.abort(new Error("stop"));
        await assert.rejects(reader.read(), /stop/);
        const aborted = new AbortController();
        aborted.abort();
        const e = await rejection(convert(F16_GGUF, { to: "gguf", signal: aborted.signal }));
        assert.equal(e.name, "AbortError");
        const r2 = convert(F16_GGUF, { to: "safetensors" }).getReader();
        await r2.read();
        await r2.cancel();
        assert.deepEqual(await r2.read(), { done: true, value: undefined });
    });
});

describe("weightstream/worker convert()", () => {
    test("the CLI's bytes from a path, named files, bytes; refusals and bad options as here", async () => {
        const worker = new WeightstreamWorker();
        try {
            const llama = path.join(checkpoints, "tiny-gemma");
            const model = path.join(llama, "model.safetensors");
            for (const dtype of DTYPES) {
                const expected = cliConvert(model, "gguf", ["--dtype", dtype]);
                assert.equal((await digest(worker.convert(model, { to: "gguf", dtype }))).sha256, expected.sha256);
                const files = namedFiles(llama);
                let progress = null;
                const got = await digest(
                    worker.convert(files, {
                        to: "gguf",
                        dtype,
                        modelName: "tiny-gemma",
                        onProgress: (p) => (progress = p),
                    }),
                );
                assert.equal(got.sha256, expected.sha256);
                assert.equal(progress.written, expected.size);
                // The bytes given were cloned, not taken.
                assert.ok(files.every((f) => f.source.length > 0));
            }
            const st = cliConvert(F16_GGUF, "safetensors", ["--dtype", "bf16"]);
            const bytes = new Uint8Array(readFileSync(F16_GGUF));
            assert.equal((await digest(worker.convert(bytes, { to: "safetensors", dtype: "bf16" }))).sha256, st.sha256);
            const q8 = cliConvert(F16_GGUF, "gguf", ["--dtype", "q8_0"]).file;
            for (const args of [
                ["--dtype", "q4_0"],
                ["--dtype", "q4_0", "--allow-requantize"],
            ]) {
                const expected = cliConvert(q8, "gguf", args);
                assert.equal((await digest(worker.convert(q8, optionsOf("gguf", args)))).sha256, expected.sha256);
            }
            let e = await rejection(worker.convert(u64Model(), { to: "gguf" }));
            assert.ok(e instanceof WeightstreamError);
            assert.deepEqual([e.code, e.what], ["unsupported", "tensor.type"]);
            e = await rejection(worker.convert(F16_GGUF, { to: "onnx" }));
            assert.ok(e instanceof TypeError, e);
            assert.throws(() => worker.convert(F16_GGUF, null), TypeError);
        } finally {
            await worker.terminate();
        }
    });
});
