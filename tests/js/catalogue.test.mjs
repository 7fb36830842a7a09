// SPDX-License-Identifier: MIT
// The core's corrupt-file catalogues through the package. fuzz/corpus/fuzz_gguf and fuzz_safetensors hold
// exactly the entries of tests/support/gguf_catalogue.h and safetensors_catalogue.h (fuzz/write_seeds.cpp).
// Every file must reject with the same code, field and byte offset as `weightstream info FILE` reports, or open with
// the same warnings, whatever the source; and compared like for like: the seeds have no extension, so the CLI
// passes no format hint; named with the format's extension, both the CLI (a copy) and the package (the name of
// a {name, source} record, or the copy's path) pass the same hint.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";

import { WeightstreamError, open } from "weightstream";

import { cliError, cliInfo, cliPath, repoRoot, requireSetup } from "./helpers.mjs";

const dir = mkdtempSync(path.join(tmpdir(), "ws-catalogue-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const catalogues = [
    { folder: "fuzz_gguf", extension: ".gguf", minimum: 48 },
    { folder: "fuzz_safetensors", extension: ".safetensors", minimum: 64 },
];

// The outcome of opening `source`: {ok, warnings} or {code, offset}. Anything but a WeightstreamError with a
// numeric offset fails the test.
async function outcome(source, label) {
    try {
        const model = await open(source);
        const warnings = (model.info.warnings ?? []).map((w) => ({ code: w.code, offset: w.offset }));
        await model.close();
        return { ok: true, warnings };
    } catch (e) {
        assert.ok(e instanceof WeightstreamError, `${label}: threw ${e?.constructor?.name}: ${e}`);
        assert.equal(typeof e.offset, "number", `${label}: offset ${e.offset}`);
        return { ok: false, code: e.code, what: e.what, offset: e.offset };
    }
}

// What the CLI says of `file`: the same shape.
function cliOutcome(file) {
    const error = cliError(file);
    if (error.status === 0) {
        const info = cliInfo(file);
        return { ok: true, warnings: (info.warnings ?? []).map((w) => ({ code: w.code, offset: w.offset })) };
    }
    assert.equal(error.status, 1, `${file}: exit ${error.status}: ${error.stderr}`);
    // "weightstream: error: FILE: CODE: DESCRIPTION: WHAT (byte N)" (a description holds no ": ")
    const message = error.stderr.trim();
    const described = message.lastIndexOf(`: ${error.code}: `) + error.code.length + 4;
    const what = message.slice(message.indexOf(": ", described) + 2, message.lastIndexOf(" (byte "));
    return { ok: false, code: error.code, what, offset: error.offset };
}

requireSetup(!cliPath && "the native CLI is not built (it is the reference)");

for (const { folder, extension, minimum } of catalogues) {
    describe(folder, () => {
        const seeds = readdirSync(path.join(repoRoot, "fuzz/corpus", folder))
            .sort()
            .map((name) => path.join(repoRoot, "fuzz/corpus", folder, name));

        test(`the corpus holds the whole catalogue (${minimum}+ entries)`, () => {
            assert.ok(seeds.length >= minimum, `${seeds.length} seeds`);
        });

        test("every seed, unnamed (no format hint), as a path, bytes and a Blob: as the CLI", async () => {
            let rejected = 0;
            for (const seed of seeds) {
                const label = `${folder}/${path.basename(seed)}`;
                const expected = cliOutcome(seed);
                const bytes = new Uint8Array(readFileSync(seed));
                for (const [kind, source] of Object.entries({ path: seed, bytes, blob: new Blob([bytes]) })) {
                    assert.deepEqual(await outcome(source, label), expected, `${label} (${kind})`);
                }
                if (!expected.ok) ++rejected;
            }
            assert.ok(rejected >= seeds.length / 2, `only ${rejected} of ${seeds.length} rejected`);
        });

        test(`every seed named *${extension} (the format hint): as the CLI on a copy so named`, async () => {
            for (const seed of seeds) {
                const name = `${path.basename(seed)}${extension}`;
                const label = `${folder}/${name}`;
                const copy = path.join(dir, name);
                copyFileSync(seed, copy);
                const expected = cliOutcome(copy);
                const bytes = new Uint8Array(readFileSync(seed));
                assert.deepEqual(await outcome({ name, source: bytes }, label), expected, `${label} (record)`);
                assert.deepEqual(await outcome(copy, label), expected, `${label} (path)`);
            }
        });
    });
}
