// SPDX-License-Identifier: MIT
// One list of error codes: the core's (errorNames() of the wasm module, from include/weightstream/status.h: an
// invalid file's and a source's) is the CoreErrorCode type of index.d.ts, entry for entry; every code the
// package's JavaScript and the page reject with is an ErrorCode. One list of words for them: the core describes
// its codes (errorDescriptions(), the words the CLI prints after a code) and the package's errors carry them as
// `description`; the page describes exactly the package's own codes (web/errors.js). A code added to the core or the package without its type
// and description fails here. Then the page's banner reads an error's fields, never its message, the same
// whether the error came from this thread or through weightstream/worker.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";

import { WeightstreamError, open } from "weightstream";
import { openInWorker } from "weightstream/worker";

import { loadWasm } from "../../wasm/js/wasm.js";
import { DESCRIPTIONS, bannerParts } from "../../web/errors.js";
import { cliError, cliPath, repoRoot } from "./helpers.mjs";
import { unionMembers } from "./index-dts.mjs";

// Codes of the core that are not failures: no JavaScript error carries them.
const NOT_FAILURES = ["ok", "need_more_data"];

/** Every code that the .js files of `dir` pass to the error constructors named in `constructors`. */
function codesIn(dir, constructors) {
    const found = new Map(); // code -> file
    const pattern = new RegExp(`(?:${constructors.join("|")})\\(\\s*\\{?\\s*(?:code:\\s*)?"([a-z_]+)"`, "g");
    for (const name of readdirSync(path.join(repoRoot, dir))) {
        if (!name.endsWith(".js")) continue;
        for (const m of readFileSync(path.join(repoRoot, dir, name), "utf8").matchAll(pattern)) {
            found.set(m[1], `${dir}/${name}`);
        }
    }
    return found;
}

test("the core's error list is index.d.ts's CoreErrorCode, in order", async () => {
    const wasm = await loadWasm();
    const names = wasm.errorNames();
    assert.ok(names.length >= 18, `${names.length} codes`);
    assert.deepEqual(names.slice(0, 2), NOT_FAILURES);
    assert.equal(new Set(names).size, names.length, "names are unique");
    assert.deepEqual(unionMembers("CoreErrorCode"), names.slice(NOT_FAILURES.length));
});

test("every code the package and the page reject with is an ErrorCode, and the page describes each", () => {
    const codes = unionMembers("ErrorCode");
    assert.equal(new Set(codes).size, codes.length, "ErrorCode lists each code once");
    assert.deepEqual([...unionMembers("CoreErrorCode"), ...unionMembers("PackageErrorCode")].sort(), [...codes].sort());
    const used = new Map([...codesIn("wasm/js", ["WeightstreamError"]), ...codesIn("web", ["PageError", "showError"])]);
    // The scan sees the package's codes: a broken pattern would find nothing and pass.
    for (const code of ["io", "network", "http", "closed", "no_such_tensor", "bad_source", "worker"]) {
        assert.ok(used.has(code), `the scan finds ${code}`);
    }
    for (const [code, file] of used)
        assert.ok(codes.includes(code), `${file} rejects with "${code}", not an ErrorCode`);
    assert.deepEqual(
        Object.keys(DESCRIPTIONS).sort(),
        [...unionMembers("PackageErrorCode")].sort(),
        "web/errors.js describes the package's own codes, and no core code (those come from the core)",
    );
    for (const [code, text] of Object.entries(DESCRIPTIONS)) assert.ok(text.length > 0, code);
});

test("the core describes each of its codes; the package's errors and the CLI use the same words", async () => {
    const wasm = await loadWasm();
    const names = wasm.errorNames();
    const descriptions = wasm.errorDescriptions();
    assert.equal(descriptions.length, names.length);
    assert.equal(new Set(descriptions).size, descriptions.length, "each code has its own words");
    for (const [i, text] of descriptions.entries()) {
        assert.ok(text.length > 0 && !text.includes(": "), `${names[i]}: "${text}"`);
    }
    const described = new Map(names.map((name, i) => [name, descriptions[i]]));
    assert.equal(described.get("bad_magic"), "not a GGUF or safetensors file");
    const text = new TextEncoder().encode("not a model at all, just some text");
    const here = await open(text).then(
        () => assert.fail("opened"),
        (e) => e,
    );
    const there = await openInWorker(text.slice()).then(
        () => assert.fail("opened in a worker"),
        (e) => e,
    );
    assert.equal(here.code, "bad_magic");
    assert.equal(here.description, described.get("bad_magic"));
    assert.equal(there.description, here.description);
    // A source error is the core's too, with its words (the CLI's for the same failure); a package code's are the
    // page's.
    assert.equal(new WeightstreamError("http", "u: HTTP 404").description, described.get("http"));
    assert.equal(new WeightstreamError("closed", "m").description, undefined);
    // The CLI prints the same words after the code: "FILE: bad_magic: not a GGUF or safetensors file: WHAT (byte 0)".
    if (cliPath) {
        const dir = mkdtempSync(path.join(tmpdir(), "ws-errors-"));
        const file = path.join(dir, "text.bin"); // no format hint, as the bytes opened above
        writeFileSync(file, text);
        try {
            const r = cliError(file);
            assert.equal(r.status, 1);
            assert.equal(r.code, "bad_magic");
            assert.equal(
                r.stderr,
                `weightstream: error: ${file}: bad_magic: ${here.description}: ${here.what} (byte 0)\n`,
            );
        } finally {
            rmSync(dir, { recursive: true });
        }
    }
});

test("the banner reads code, offset, file and what: the same from this thread and from the worker", async () => {
    // GGUF magic, version 3, then a tensor count that ends the file early: truncated at byte 8.
    const bytes = new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0, 1, 0]);
    const here = await open(bytes).then(
        () => assert.fail("opened"),
        (e) => e,
    );
    const there = await openInWorker(bytes.slice()).then(
        () => assert.fail("opened in a worker"),
        (e) => e,
    );
    assert.ok(here instanceof WeightstreamError && there instanceof WeightstreamError);
    assert.deepEqual([here.code, here.offset], ["truncated", 8]);
    assert.match(here.message, /^truncated: .* \(byte 8\)$/);
    const parts = bannerParts(here, "x.gguf");
    assert.deepEqual(parts, {
        code: "truncated",
        offset: 8,
        file: undefined,
        text: `x.gguf: ${here.description}: ${here.what}`,
    });
    assert.deepEqual(bannerParts(there, "x.gguf"), parts);
    // An error of one file of several names it; one without `what` says its message.
    const inPart = Object.assign(new WeightstreamError("bad_split", "m", { offset: 4, what: "split.no" }), {
        file: "b.gguf",
    });
    assert.deepEqual(bannerParts(inPart), {
        code: "bad_split",
        offset: 4,
        file: "b.gguf",
        text: `${inPart.description}: b.gguf: split.no`,
    });
    const http = new WeightstreamError("http", "u: HTTP 404");
    assert.deepEqual(bannerParts(http), {
        code: "http",
        offset: undefined,
        file: undefined,
        text: `${http.description}: u: HTTP 404`,
    });
    assert.equal(bannerParts(new TypeError("t")).code, "error");
});

test("the banner says each thing once: the URL of a message dropped, an HTTP status in words", async () => {
    await loadWasm(); // the core's descriptions of its source codes
    const url = "https://example.com/models/m.gguf";
    const notFound = new WeightstreamError("http", `${url}: HTTP 404 Not Found`, { offset: 0, status: 404 });
    assert.deepEqual(bannerParts(notFound, "m.gguf"), {
        code: "http",
        offset: 0,
        file: undefined,
        url,
        text: "m.gguf: not found: HTTP 404",
    });
    const forbidden = new WeightstreamError("http", `${url}: HTTP 403 Forbidden`, { status: 403 });
    assert.equal(bannerParts(forbidden, "m.gguf").text, "m.gguf: access denied: HTTP 403");
    const failing = new WeightstreamError("http", `${url}: HTTP 500 Internal Server Error`, { status: 500 });
    assert.equal(bannerParts(failing, "m.gguf").text, `m.gguf: ${failing.description}: HTTP 500 Internal Server Error`);
    const range = new WeightstreamError(
        "http",
        `${url}: HTTP 416 Range Not Satisfiable: bytes 9-10 are inside the file`,
        {
            status: 416,
        },
    );
    assert.equal(
        bannerParts(range, "m.gguf").text,
        `m.gguf: ${range.description}: HTTP 416 Range Not Satisfiable: bytes 9-10 are inside the file`,
    );
    // A message that starts with what the description says does not get it twice.
    const closed = new WeightstreamError("closed", `${DESCRIPTIONS.closed} before the read`);
    assert.equal(bannerParts(closed).text, `${DESCRIPTIONS.closed} before the read`);
});
