// SPDX-License-Identifier: MIT
// convert() and convertPlan() of a Hugging Face checkpoint given by URL (issue 22 item 7), served by the tests'
// nginx: the URL of model.safetensors or of model.safetensors.index.json brings config.json from beside it and the
// shards the index names; the bytes equal `weightstream convert`'s for the same checkpoint on disk, and the plan is
// the layout of that file. A 404 for config.json means there is none (as a missing file for the CLI); another HTTP
// error is an error; an index naming a file outside its folder is refused before anything of it is fetched.
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

import { WeightstreamError, convert, convertPlan } from "weightstream";
import { WeightstreamWorker } from "weightstream/worker";

import { cliPath, requireSetup, sharedTestData } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";
import { writeSafetensors } from "./safetensors-writer.mjs";

const checkpoint = path.join(sharedTestData, "convert", "tiny-llama-spm");

requireSetup(
    (!cliPath && "build/bin/weightstream (the CLI the bytes are compared with)") ||
        (!existsSync(checkpoint) &&
            "the shared convert corpus is not next to the checkout (../shared/testdata/convert)") ||
        (!nginxPath && "nginx not installed"),
);

const tmp = mkdtempSync(path.join(os.tmpdir(), "ws-convert-url-"));
let outputs = 0;

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

// `weightstream convert IN OUT.gguf ...args`: {sha256, size, json} of the file it wrote (json: convert --json).
function cliConvert(input, args) {
    const file = path.join(tmp, `out-${++outputs}.gguf`);
    const r = spawnSync(cliPath, ["convert", input, file, ...args, "--json"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const bytes = readFileSync(file);
    return { sha256: sha256(bytes), size: bytes.length, json: JSON.parse(r.stdout) };
}

async function digest(stream) {
    const hash = createHash("sha256");
    let size = 0;
    for await (const chunk of stream) {
        hash.update(chunk);
        size += chunk.length;
    }
    return { sha256: hash.digest("hex"), size };
}

async function rejection(promise) {
    try {
        await promise;
    } catch (e) {
        return e;
    }
    assert.fail("it did not fail");
}

// The checkpoint in `dir` as two shards with their index (weight_map from `shardName(k)` of each half), its other
// files (config.json, the tokenizer) beside them unless `withConfig` is false. Returns the index's path.
function writeSharded(dir, { withConfig = true, shardName = (k) => `model-0000${k + 1}-of-00002.safetensors` } = {}) {
    mkdirSync(dir, { recursive: true });
    const bytes = readFileSync(path.join(checkpoint, "model.safetensors"));
    const headerSize = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + headerSize).toString("utf8"));
    const names = Object.keys(header).filter((k) => k !== "__metadata__");
    const weightMap = {};
    [names.slice(0, names.length >> 1), names.slice(names.length >> 1)].forEach((part, k) => {
        const file = `model-0000${k + 1}-of-00002.safetensors`;
        const tensors = part.map((t) => {
            const [begin, end] = header[t].data_offsets;
            weightMap[t] = shardName(k);
            const data = bytes.subarray(8 + headerSize + begin, 8 + headerSize + end);
            return { name: t, dtype: header[t].dtype, shape: header[t].shape, data };
        });
        writeFileSync(path.join(dir, file), writeSafetensors({ tensors, metadata: { format: "pt" } }));
    });
    writeFileSync(path.join(dir, "model.safetensors.index.json"), JSON.stringify({ weight_map: weightMap }));
    for (const f of readdirSync(checkpoint)) {
        if (f === "model.safetensors" || (f === "config.json" && !withConfig)) continue;
        copyFileSync(path.join(checkpoint, f), path.join(dir, f));
    }
    return path.join(dir, "model.safetensors.index.json");
}

let server;
let base; // the URL of the generated folder
before(async () => {
    server = await startNginx();
    base = `${server.rangeBase}/generated`;
    // The checkpoint as it is, at /generated/single/.
    const single = path.join(server.generatedDir, "single");
    mkdirSync(single);
    for (const f of readdirSync(checkpoint)) copyFileSync(path.join(checkpoint, f), path.join(single, f));
});
after(async () => {
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
});

describe("a checkpoint by URL: the CLI's bytes", () => {
    test("model.safetensors.index.json: config.json and both shards fetched beside it; the plan is the file's layout", async () => {
        const index = writeSharded(path.join(server.generatedDir, "org/repo/resolve/main"));
        const expected = cliConvert(index, ["--dtype", "f16"]);
        assert.equal(expected.json.tensors[0].name, "token_embd.weight"); // converted as a llama checkpoint
        const url = `${base}/org/repo/resolve/main/model.safetensors.index.json`;
        const t = server.tracker();
        t.op();
        // The package names a Hugging Face URL's model by its repository ("Repo"); the CLI, given the folder, by
        // the folder's name.
        const converted = convert(url, { to: "gguf", dtype: "f16", fetch: t.fetch, modelName: "main" });
        assert.deepEqual(await digest(converted), {
            sha256: expected.sha256,
            size: expected.size,
        });
        const fetched = new Set(t.urls.map((u) => new URL(u).pathname.split("/").pop()));
        for (const name of [
            "model.safetensors.index.json",
            "config.json",
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors",
        ])
            assert.ok(fetched.has(name), `${name} fetched`);

        const plan = await convertPlan(url, { to: "gguf", dtype: "f16" });
        assert.equal(plan.fileSize, expected.size);
        assert.deepEqual(
            plan.tensors.map((p) => [p.name, p.type, p.shape, p.nbytes, p.inType, p.action]),
            expected.json.tensors.map((p) => [p.name, p.dtype, p.shape, p.bytes, p.source_dtype, p.action]),
        );
        // Laid out one after another as the file has them.
        const ends = plan.tensors.map((p) => p.offset + p.nbytes);
        assert.ok(plan.tensors.slice(1).every((p, i) => p.offset >= ends[i]));
        assert.ok(ends.at(-1) <= plan.fileSize);

        // The same through the worker.
        const worker = new WeightstreamWorker();
        try {
            const inWorker = await worker.convertPlan(url, { to: "gguf", dtype: "f16" });
            assert.deepEqual(inWorker, plan);
            const fromWorker = worker.convert(url, { to: "gguf", dtype: "f16", modelName: "main" });
            assert.equal((await digest(fromWorker)).sha256, expected.sha256);
        } finally {
            await worker.terminate();
        }
    });

    test("model.safetensors: config.json beside it; without one (a 404) the CLI's output without it", async () => {
        const dir = path.join(server.generatedDir, "single");
        const expected = cliConvert(path.join(dir, "model.safetensors"), ["--dtype", "q8_0"]);
        const url = `${base}/single/model.safetensors`;
        assert.equal((await digest(convert(url, { to: "gguf", dtype: "q8_0" }))).sha256, expected.sha256);

        const bare = path.dirname(writeSharded(path.join(server.generatedDir, "bare"), { withConfig: false }));
        const without = cliConvert(path.join(bare, "model.safetensors.index.json"), ["--dtype", "f16"]);
        assert.notEqual(without.sha256, cliConvert(path.join(dir, "model.safetensors"), ["--dtype", "f16"]).sha256);
        assert.equal(without.json.tensors[0].name, "model.embed_tokens.weight"); // names kept: no family known
        const got = await digest(convert(`${base}/bare/model.safetensors.index.json`, { to: "gguf", dtype: "f16" }));
        assert.deepEqual(got, { sha256: without.sha256, size: without.size });
    });
});

describe("a checkpoint by URL: errors", () => {
    test("config.json answered with another HTTP error than 404 is an error (code http, its status)", async () => {
        const url = `${base}/single/model.safetensors`;
        for (const status of [401, 500]) {
            // 500 is retried by the package; with retries: 0 it is final at once.
            const failing = async (input, init) => {
                const href = input instanceof Request ? input.url : String(input);
                if (href.endsWith("/config.json")) return new Response("no", { status, statusText: "Refused" });
                return fetch(input, init);
            };
            for (const run of [
                () => convertPlan(url, { to: "gguf", dtype: "f16", fetch: failing, retries: 0 }),
                () => digest(convert(url, { to: "gguf", dtype: "f16", fetch: failing, retries: 0 })),
            ]) {
                const e = await rejection(run());
                assert.ok(e instanceof WeightstreamError, String(e));
                assert.equal(e.code, "http");
                assert.equal(e.status, status);
                assert.match(e.message, /config\.json/);
            }
        }
    });

    test("an index naming a file outside its folder is refused; nothing outside is fetched", async () => {
        writeFileSync(path.join(server.generatedDir, "secret.safetensors"), "secret");
        for (const [folder, outside] of [
            ["dotdot", "../secret.safetensors"],
            ["absolute", `${base}/secret.safetensors`],
            ["rooted", "/generated/secret.safetensors"],
        ]) {
            writeSharded(path.join(server.generatedDir, folder), {
                shardName: (k) => (k === 0 ? outside : `model-00002-of-00002.safetensors`),
            });
            const url = `${base}/${folder}/model.safetensors.index.json`;
            const t = server.tracker();
            t.op();
            for (const run of [
                () => convertPlan(url, { to: "gguf", fetch: t.fetch }),
                () => digest(convert(url, { to: "gguf", dtype: "f16", fetch: t.fetch })),
            ]) {
                const e = await rejection(run());
                assert.ok(e instanceof WeightstreamError, String(e));
                assert.equal(e.code, "bad_json", e.message);
                assert.equal(e.what, "weight_map");
            }
            assert.ok(t.urls.length > 0);
            assert.deepEqual(
                t.urls.filter((u) => u.includes("secret")),
                [],
                `${outside}: nothing outside the folder fetched`,
            );
        }
    });
});
