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

import { writeGguf } from "./gguf-writer.mjs";
import { cliHashes, cliPath, sha256, sourceKinds, testData } from "./helpers.mjs";

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

function runCli(args) {
    return spawnSync(cliPath, args, { encoding: "utf8" });
}

function cli(args) {
    const r = runCli(args);
    assert.equal(r.status, 0, r.stderr);
    return r;
}

// A GGUF aligned to 64 whose first tensor is more than one of the job's copy pieces (16 MiB), then two that need
// padding.
function twoPieceModel() {
    const big = new Uint8Array((16 << 20) + 4000);
    for (let i = 0; i < big.length; ++i) big[i] = (i * 7 + (i >>> 8)) & 0xff;
    return writeGguf({
        alignment: 64,
        kv: [
            { key: "general.name", type: "string", value: "pieces" },
            { key: "general.alignment", type: "uint32", value: 64 },
            { key: "general.url", type: "string", value: "https://example.com/a/long/enough/url" },
        ],
        tensors: [
            { name: "big", type: 0, ne: [big.length / 4], data: big },
            { name: "small", type: 1, ne: [5, 3], data: new Uint8Array(30).fill(2) },
            { name: "odd", type: 0, ne: [7], data: new Uint8Array(28).fill(3) },
        ],
    });
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
            "--set",
            "new.typed_f32=[0.1,-2.5,0,3e-39]:f32",
            "--set",
            "new.typed_i64=[-9223372036854775808,7]:i64",
            "--set",
            "new.typed_u8=[0,7,255]:u8",
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
                    // Typed arrays: written by join(), as the CLI reads the same numbers.
                    "new.typed_f32": { value: new Float64Array([0.1, -2.5, -0, 3e-39]), type: "f32" },
                    "new.typed_i64": { value: new BigInt64Array([-(2n ** 63n), 7n]), type: "i64" },
                    "new.typed_u8": { value: new Uint8Array([0, 7, 255]), type: "u8" },
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
        // A number its type cannot hold is refused, never stored as another (1e39 as f32 was Infinity, 2^64 a float).
        assert.equal(await code({ set: { x: { value: 300, type: "u8" } } }), "bad_type:value.range");
        assert.equal(await code({ set: { x: { value: 1e39, type: "f32" } } }), "bad_type:value.range");
        assert.equal(await code({ set: { x: 1e39 } }), "bad_type:value.range");
        assert.equal(await code({ set: { x: { value: 2n ** 64n, type: "u64" } } }), "RangeError");
        assert.equal(await code({ set: { x: [1n, -(2n ** 63n) - 1n] } }), "RangeError");
        assert.equal(
            await code({ set: { x: { value: "18446744073709551616", type: "u64" } } }),
            "bad_type:value.range",
        );
        assert.equal(await code({ set: { x: [1, "a"] } }), "bad_type:type");
        assert.equal(await code({ delete: ["no.such.key"] }), "bad_key:delete");
        assert.equal(await code({ set: { "general.alignment": 64 } }), "bad_key:general.alignment");
        assert.equal(await code({ set: { x: { value: 1, type: "u128" } } }), "TypeError");
        assert.equal(await code({ set: { x: {} } }), "TypeError");
        assert.equal(await code({ set: { x: NaN } }), "TypeError");
        assert.equal(await code({ set: { x: new Float32Array([1, Infinity]) } }), "TypeError");
        assert.equal(await code({ set: { x: new Float64Array([NaN]) } }), "TypeError");
        assert.equal(await code({ set: { x: new DataView(new ArrayBuffer(4)) } }), "TypeError");
        assert.equal(await code({ delete: "x" }), "TypeError");
        assert.equal(await code(null), "TypeError");
        const st = path.join(testData, "safetensors/sample_overall.safetensors");
        assert.equal(await code({ set: { x: 1 } }, st), "unsupported:format");
        // The message names the key.
        await assert.rejects(collect(edit(model, { delete: ["no.such.key"] })), /key "no\.such\.key"/);
    });
});

describe("edit() of a huge array (issue 24, item 16)", () => {
    test("40 million items are written in memory in proportion to them (once a trap at 3.3 GB, 'internal')", async () => {
        const n = 40_000_000;
        const out = await collect(
            edit(model, { set: { "big.items": { value: new Uint8Array(n).fill(7), type: "u8" } } }),
        );
        const edited = await open(out);
        try {
            const entry = edited.metadata.find((e) => e.key === "big.items");
            assert.equal(entry.item_type, "uint8");
            assert.equal(entry.value.length, n);
            assert.equal(entry.value[n - 1], 7);
        } finally {
            await edited.close();
        }
    });
});

describe("edit() runs the core's EditJob, as `weightstream edit` does", () => {
    const file = path.join(tmp, "pieces.gguf");
    writeFileSync(file, twoPieceModel());
    const changes = { set: { "general.name": "a new and somewhat longer name" }, delete: ["general.url"] };
    const args = ["--set", "general.name=a new and somewhat longer name", "--delete", "general.url"];

    test("a tensor copied in pieces, a smaller header, from every kind of source: the CLI's bytes", async () => {
        const out = path.join(tmp, "pieces-cli.gguf");
        cli(["edit", file, out, ...args]);
        const expected = sha256(readFileSync(out));
        for (const [kind, source] of Object.entries(sourceKinds)) {
            assert.equal(sha256(await collect(edit(source(file), changes))), expected, kind);
        }
    });

    test("a truncated file: the CLI's error; from a stream of unknown size, the job's, naming the tensor", async () => {
        const cut = path.join(tmp, "cut.gguf");
        const bytes = readFileSync(file);
        writeFileSync(cut, bytes.subarray(0, bytes.length - 1000)); // inside "big"
        // A file of known size is refused when opened, by both.
        const r = runCli(["edit", cut, path.join(tmp, "cut-out.gguf"), ...args]);
        assert.equal(r.status, 1);
        const m = /: truncated: .*: tensor\.data \(byte (\d+)\)\s*$/s.exec(r.stderr);
        assert.ok(m, r.stderr);
        const refused = { code: "truncated", what: "tensor.data", offset: Number(m[1]) };
        await assert.rejects(collect(edit(cut, changes)), refused);
        // A stream's end is found by the job, at the tensor that runs past it.
        const m2 = await open(file);
        const bigOffset = Number(m2.tensors[0].offset);
        await m2.close();
        await assert.rejects(collect(edit(sourceKinds.stream(cut), changes)), (e) => {
            assert.ok(e instanceof WeightstreamError);
            assert.deepEqual([e.code, e.what, e.offset], ["truncated", "tensor.data", bigOffset]);
            assert.match(e.message, /tensor "big"/);
            return true;
        });
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
