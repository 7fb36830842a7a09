// SPDX-License-Identifier: MIT
// edit() of the package: the stream's bytes equal `weightstream edit`'s output for the same changes (the header
// comes from the one core module both use), the result reads back with the new values and the same tensor
// bytes, and bad changes fail with TypeError or the core's codes.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";

import { WeightstreamError, edit, open } from "weightstream";
import { WeightstreamWorker } from "weightstream/worker";

import { cliHashes, cliPath, sha256, testData } from "./helpers.mjs";

const model = path.join(testData, "ggml/ggml-types.gguf");
const tmp = mkdtempSync(path.join(os.tmpdir(), "ws-edit-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

async function collect(stream) {
    const chunks = [];
    for await (const chunk of stream) {
        assert.ok(chunk instanceof Uint8Array);
        chunks.push(chunk);
    }
    return Buffer.concat(chunks);
}

function cli(args) {
    const r = spawnSync(cliPath, args, { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return r;
}

const template = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}";

describe("edit()", () => {
    test("writes the bytes `weightstream edit` writes for the same changes", async () => {
        const templateFile = path.join(tmp, "t.jinja");
        writeFileSync(templateFile, template);
        const out = path.join(tmp, "cli.gguf");
        cli([
            "edit",
            model,
            out,
            "--set",
            "general.name=renamed",
            "--set",
            "llama.context_length=8192",
            "--set",
            "new.ids=[1,2,3]:i16",
            "--set",
            "new.big=5000000000",
            "--set",
            'new.words=["a","b"]',
            "--set",
            "new.f=0.25:f64",
            "--set",
            "new.flag=true",
            "--set",
            "new.u64=18446744073709551615:u64",
            "--delete",
            "general.description",
            "--set-chat-template",
            templateFile,
        ]);
        const bytes = await collect(
            edit(model, {
                set: {
                    "general.name": "renamed",
                    "llama.context_length": 8192,
                    "new.ids": { value: [1, 2, 3], type: "i16" },
                    "new.big": 5000000000n,
                    "new.words": ["a", "b"],
                    "new.f": { value: 0.25, type: "f64" },
                    "new.flag": true,
                    "new.u64": { value: 18446744073709551615n, type: "u64" },
                },
                delete: ["general.description"],
                chatTemplate: template,
            }),
        );
        assert.equal(sha256(bytes), sha256(readFileSync(out)));

        // Read back: the new values, the same tensors byte for byte.
        const m = await open(bytes);
        try {
            const meta = new Map(m.info.metadata.map((e) => [e.key, e]));
            assert.equal(meta.get("general.name").value, "renamed");
            assert.equal(meta.get("llama.context_length").type, "uint32");
            assert.equal(meta.get("llama.context_length").value, 8192);
            assert.equal(meta.get("new.ids").item_type, "int16");
            assert.equal(meta.get("new.big").type, "int64");
            assert.equal(meta.get("new.f").type, "float64");
            assert.equal(meta.get("tokenizer.chat_template").value, template);
            assert.equal(meta.has("general.description"), false);
        } finally {
            await m.close();
        }
        const hashes = (file) => new Map([...cliHashes(file)].map(([name, t]) => [name, t.raw_sha256]));
        assert.deepEqual(hashes(out), hashes(model));
    });

    test("fails with the core's codes and TypeErrors", async () => {
        const code = async (changes, source = model) => {
            try {
                await collect(edit(source, changes));
            } catch (e) {
                return e instanceof WeightstreamError ? `${e.code}:${e.what}` : e.constructor.name;
            }
            return "ok";
        };
        assert.equal(await code({ set: { "llama.block_count": "abc" } }), "bad_type:type");
        assert.equal(await code({ set: { x: { value: 300, type: "u8" } } }), "bad_type:type");
        assert.equal(await code({ set: { x: [1, "a"] } }), "bad_type:type");
        assert.equal(await code({ delete: ["no.such.key"] }), "bad_key:delete");
        assert.equal(await code({ set: { "general.alignment": 64 } }), "bad_key:general.alignment");
        assert.equal(await code({ set: { x: { value: 1, type: "u128" } } }), "TypeError");
        assert.equal(await code({ set: { x: {} } }), "TypeError");
        assert.equal(await code({ set: { x: NaN } }), "TypeError");
        assert.equal(await code({ delete: "x" }), "TypeError");
        assert.equal(await code(null), "TypeError");
        const st = path.join(testData, "safetensors/sample_overall.safetensors");
        assert.equal(await code({ set: { x: 1 } }, st), "unsupported:format");
        // The message names the key.
        await assert.rejects(collect(edit(model, { delete: ["no.such.key"] })), /key "no\.such\.key"/);
    });
});

describe("WeightstreamWorker.edit()", () => {
    test("writes the same bytes as edit()", async () => {
        const changes = { set: { "general.name": "in a worker", "new.n": { value: -7, type: "i64" } } };
        const direct = await collect(edit(model, changes));
        const worker = new WeightstreamWorker();
        try {
            const viaWorker = await collect(worker.edit(model, changes));
            assert.equal(sha256(viaWorker), sha256(direct));
            await assert.rejects(collect(worker.edit(model, { delete: ["no.such.key"] })), { code: "bad_key" });
        } finally {
            await worker.terminate();
        }
    });
});
