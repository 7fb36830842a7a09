// SPDX-License-Identifier: MIT
// Metadata the corpus does not have, in a GGUF written by the test: 64-bit extremes (BigInt), NaN and
// infinities (their names as strings, as the CLI's JSON prints them), invalid UTF-8 (U+FFFD as the CLI's JSON
// has it, and the bytes in hex beside it), control and
// astral characters, empty and nested arrays. What open() exposes must equal `weightstream info --json`.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";

import { open } from "weightstream";

import { writeGguf } from "./gguf-writer.mjs";
import { cliInfo, cliPath, randomChunkStream, requireSetup } from "./helpers.mjs";

const dir = mkdtempSync(path.join(tmpdir(), "ws-metadata-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const invalidUtf8 = new Uint8Array([0x61, 0xff, 0x62, 0xe2, 0x82, 0x63, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98]);
const tokens = [];
for (let i = 0; i < 3000; ++i)
    tokens.push(i % 7 === 0 ? `\u00e9t\u00e9 ${i}` : i % 11 === 0 ? `\ud83e\udd99${i}` : `tok${i}`);

const kv = [
    { key: "u64.max", type: "uint64", value: 18446744073709551615n },
    { key: "u64.safe", type: "uint64", value: 9007199254740991n },
    { key: "u64.unsafe", type: "uint64", value: 9007199254740993n },
    { key: "i64.min", type: "int64", value: -9223372036854775808n },
    { key: "f32.nan", type: "float32", value: NaN },
    { key: "f64.negzero", type: "float64", value: -0 },
    { key: "f64.inf", type: "float64", value: -Infinity },
    { key: "str.invalid", type: "string", value: invalidUtf8 },
    { key: "str.controls", type: "string", value: 'quote " backslash \\ nul \u0000 tab \t bell \u0007' },
    { key: "str.astral", type: "string", value: "\ud83e\udd99 \u65e5\u672c" },
    { key: "arr.tokens", type: "array", itemType: "string", value: tokens },
    {
        key: "arr.strings.invalid",
        type: "array",
        itemType: "string",
        value: ["ok", invalidUtf8, "", "\u0000x", invalidUtf8.subarray(0, 3)],
    },
    {
        key: "arr.u64",
        type: "array",
        itemType: "uint64",
        value: [0n, 9007199254740991n, 9007199254740992n, 18446744073709551615n],
    },
    { key: "arr.i64", type: "array", itemType: "int64", value: [-9223372036854775808n, -1n, 5n, 9223372036854775807n] },
    {
        key: "arr.f32",
        type: "array",
        itemType: "float32",
        value: [1.5, NaN, Infinity, -Infinity, -0, 1e-45, 3.4028234663852886e38],
    },
    { key: "arr.f64", type: "array", itemType: "float64", value: [Math.PI, NaN, -0, 5e-324] },
    { key: "arr.bool", type: "array", itemType: "bool", value: [true, false, true] },
    { key: "arr.i8", type: "array", itemType: "int8", value: [-128, 127, 0] },
    { key: "arr.u16", type: "array", itemType: "uint16", value: [65535, 0] },
    { key: "arr.i16", type: "array", itemType: "int16", value: [-32768, 32767] },
    { key: "arr.u32", type: "array", itemType: "uint32", value: [4294967295, 1] },
    { key: "arr.i32.empty", type: "array", itemType: "int32", value: [] },
    { key: "arr.str.empty", type: "array", itemType: "string", value: [] },
    { key: "arr.nested", type: "array", itemType: { type: "array", items: "int32" }, value: [[1, 2], [], [-3]] },
    {
        key: "arr.nested.str",
        type: "array",
        itemType: { type: "array", items: "string" },
        value: [["a", "b"], ["\u00e9"]],
    },
];
const file = path.join(dir, "metadata.gguf");
const bytes = writeGguf({ kv, tensors: [{ name: "t", type: 0, ne: [4], data: new Uint8Array(16) }] });
writeFileSync(file, bytes);

function entry(model, key) {
    return model.metadata.find((m) => m.key === key);
}

for (const kind of ["path", "stream"]) {
    test(`${kind}: unusual metadata values come out exactly`, async () => {
        const model = await open(kind === "path" ? file : randomChunkStream(bytes, 7));
        try {
            assert.equal(entry(model, "u64.max").value, 18446744073709551615n);
            assert.equal(entry(model, "u64.safe").value, 9007199254740991);
            assert.equal(entry(model, "u64.unsafe").value, 9007199254740993n);
            assert.equal(entry(model, "i64.min").value, -9223372036854775808n);
            assert.equal(entry(model, "f32.nan").value, "NaN");
            assert.equal(entry(model, "f32.nan").type, "float32");
            assert.ok(Object.is(entry(model, "f64.negzero").value, -0));
            assert.equal(entry(model, "f64.inf").value, "-Infinity");
            assert.ok(entry(model, "str.invalid").value.includes("\ufffd"));
            assert.equal(entry(model, "str.invalid").bytes_hex, Buffer.from(invalidUtf8).toString("hex"));
            assert.deepEqual(entry(model, "arr.strings.invalid").invalid_items, [
                { index: 1, bytes_hex: Buffer.from(invalidUtf8).toString("hex") },
                { index: 4, bytes_hex: Buffer.from(invalidUtf8.subarray(0, 3)).toString("hex") },
            ]);
            assert.equal(entry(model, "str.controls").value, kv[8].value);
            assert.equal(entry(model, "str.astral").value, kv[9].value);
            assert.deepEqual(entry(model, "arr.tokens").value, tokens);
            assert.equal(entry(model, "arr.tokens").length, tokens.length);
            assert.equal(entry(model, "arr.strings.invalid").value[0], "ok");
            assert.equal(entry(model, "arr.strings.invalid").value[3], "\u0000x");
            assert.deepEqual(entry(model, "arr.u64").value, [
                0,
                9007199254740991,
                9007199254740992n,
                18446744073709551615n,
            ]);
            assert.deepEqual(entry(model, "arr.i64").value, [-9223372036854775808n, -1, 5, 9223372036854775807n]);
            assert.deepEqual(entry(model, "arr.f32").value, [
                1.5,
                "NaN",
                "Infinity",
                "-Infinity",
                -0,
                Math.fround(1e-45),
                3.4028234663852886e38,
            ]);
            assert.deepEqual(entry(model, "arr.f64").value, [Math.PI, "NaN", -0, 5e-324]);
            assert.deepEqual(entry(model, "arr.bool").value, [true, false, true]);
            assert.deepEqual(entry(model, "arr.i32.empty").value, []);
            assert.deepEqual(entry(model, "arr.nested").value, [[1, 2], [], [-3]]);
            assert.deepEqual(entry(model, "arr.nested.str").value, [["a", "b"], ["\u00e9"]]);
        } finally {
            await model.close();
        }
    });
}

requireSetup(!cliPath && "the native CLI is not built (it is the reference)");

test("the same metadata equals weightstream info --json, invalid UTF-8 replaced the same way", async () => {
    const model = await open(file);
    try {
        assert.deepEqual(model.info, cliInfo(file));
    } finally {
        await model.close();
    }
});
