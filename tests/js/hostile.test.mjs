// SPDX-License-Identifier: MIT
// Hostile files through the package: truncated prefixes, a bad magic, and seeded corruptions of header bytes.
// Each must reject with a WeightstreamError carrying the same code (and byte offset) as the native CLI
// reports for the same file, or open exactly when the CLI does; never a bare number, a crash or a hang.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";

import { WeightstreamError, open } from "weightstream";

import { writeGguf } from "./gguf-writer.mjs";
import { cliError, cliPath, randomChunkStream, rng, testData } from "./helpers.mjs";

const dir = mkdtempSync(path.join(tmpdir(), "ws-hostile-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// The codes open() may give for an invalid file: the core's error names.
const CORE_CODES = new Set([
    "bad_magic",
    "unsupported_version",
    "truncated",
    "too_large",
    "overflow",
    "bad_type",
    "bad_shape",
    "bad_alignment",
    "bad_offset",
    "duplicate_name",
    "bad_json",
    "bad_key",
    "trailing_data",
    "unsupported",
    "bad_split",
]);

const fixtures = [
    "ggml/ggml-types.gguf",
    "ggml/ggml-types-ext.gguf",
    "ggml/vocab/ggml-vocab-bert-bge.gguf",
    "safetensors/sample_overall.safetensors",
    "safetensors/mlx_lora_adapters.safetensors",
    "safetensors/mel_filters.safetensors",
].map((f) => path.join(testData, f));

let counter = 0;
function writeCase(bytes) {
    const file = path.join(dir, `case-${++counter}.bin`);
    writeFileSync(file, bytes);
    return file;
}

// Opens `bytes` as a Uint8Array and as a file path; both must agree with each other and with the CLI.
async function checkCase(bytes, label) {
    const file = writeCase(bytes);
    const outcomes = [];
    for (const source of [bytes, file]) {
        try {
            const model = await open(source);
            await model.close();
            outcomes.push({ ok: true });
        } catch (e) {
            assert.ok(e instanceof WeightstreamError, `${label}: ${e}`);
            assert.ok(CORE_CODES.has(e.code), `${label}: unexpected code ${e.code}`);
            assert.equal(typeof e.offset, "number", label);
            outcomes.push({ ok: false, code: e.code, offset: e.offset });
        }
    }
    assert.deepEqual(outcomes[0], outcomes[1], `${label}: Uint8Array and path disagree`);
    if (cliPath) {
        const cli = cliError(file);
        if (outcomes[0].ok) {
            assert.equal(cli.status, 0, `${label}: the CLI rejects (${cli.stderr.trim()}) what open() accepts`);
        } else {
            assert.equal(cli.status, 1, `${label}: the CLI accepts what open() rejects with ${outcomes[0].code}`);
            assert.deepEqual(
                { code: outcomes[0].code, offset: outcomes[0].offset },
                { code: cli.code, offset: cli.offset },
                label,
            );
        }
    }
    // Without a length the parser cannot check ranges against the file, but it still must not crash.
    try {
        const model = await open(randomChunkStream(bytes, counter));
        await model.close();
    } catch (e) {
        assert.ok(e instanceof WeightstreamError && typeof e.code === "string", `${label} (stream): ${e}`);
    }
    return outcomes[0];
}

test("truncated prefixes reject like the CLI", async () => {
    for (const fixture of fixtures) {
        const bytes = new Uint8Array(readFileSync(fixture));
        const model = await open(bytes);
        const dataOffset = Number(model.info.data_offset);
        await model.close();
        const cuts = new Set([
            0,
            1,
            3,
            4,
            8,
            9,
            12,
            24,
            100,
            dataOffset >> 1,
            dataOffset - 1,
            dataOffset + 1,
            bytes.length - 1,
        ]);
        for (const cut of cuts) {
            if (cut < 0 || cut >= bytes.length) continue;
            const outcome = await checkCase(bytes.subarray(0, cut), `${path.basename(fixture)}[0:${cut}]`);
            if (cut < dataOffset) assert.equal(outcome.ok, false, `${path.basename(fixture)}[0:${cut}] opened`);
        }
    }
});

test("a bad magic rejects with bad_magic at byte 0", async () => {
    for (const head of ["GGUX", "PK\u0003\u0004", "\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000[", '{"a": 1}']) {
        const bytes = new Uint8Array(64);
        bytes.set(Buffer.from(head, "latin1"));
        const outcome = await checkCase(bytes, JSON.stringify(head));
        assert.deepEqual(outcome, { ok: false, code: "bad_magic", offset: 0 });
    }
});

test("seeded corruptions of header bytes agree with the CLI", async () => {
    for (const fixture of fixtures) {
        const original = new Uint8Array(readFileSync(fixture));
        const model = await open(original);
        const headerEnd = Math.min(Number(model.info.data_offset), original.length);
        await model.close();
        const random = rng(headerEnd);
        for (let i = 0; i < 25; ++i) {
            const bytes = original.slice();
            const flips = 1 + Math.floor(random() * 3);
            for (let k = 0; k < flips; ++k) {
                const at = Math.floor(random() * headerEnd);
                bytes[at] = random() < 0.5 ? bytes[at] ^ (1 << Math.floor(random() * 8)) : Math.floor(random() * 256);
            }
            await checkCase(bytes, `${path.basename(fixture)} corruption ${i}`);
        }
    }
});

test("hostile counts and lengths are refused before anything is allocated", async () => {
    const u64 = (v) => {
        const b = Buffer.alloc(8);
        b.writeBigUInt64LE(v);
        return b;
    };
    const cases = {
        // 2^60 tensors and KVs claimed by a 24-byte file
        "huge counts": Buffer.concat([Buffer.from("GGUF"), Buffer.from([3, 0, 0, 0]), u64(1n << 60n), u64(1n << 60n)]),
        // a key whose length is 2^63
        "huge string": Buffer.concat([
            Buffer.from("GGUF"),
            Buffer.from([3, 0, 0, 0]),
            u64(0n),
            u64(1n),
            u64(1n << 63n),
        ]),
        // a safetensors header length beyond the reference crate's cap
        "huge json": Buffer.concat([u64(1n << 40n), Buffer.from("{}")]),
        // a tensor whose data runs past the end of the file
        "tensor past the end": Buffer.from(
            writeGguf({ tensors: [{ name: "t", type: 0, ne: [64, 64], data: new Uint8Array(64) }] }),
        ),
    };
    for (const [label, bytes] of Object.entries(cases)) {
        const outcome = await checkCase(new Uint8Array(bytes), label);
        assert.equal(outcome.ok, false, `${label} opened`);
    }
});
