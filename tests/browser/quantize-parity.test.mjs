// SPDX-License-Identifier: MIT
// The core's quantizers in Chromium: the package, loaded unbundled from nginx (/pkg/), quantizes every tensor
// of both ggml corpus files (tests/data/ggml, a copy of ../shared/testdata/ggml) from the floats ggml
// quantized (ref/*.src.f32, with ref/*.imatrix.f32), whole and row by row, in a page and in a Web Worker; every
// result equals the bytes stored in the corpus file. The check itself is tests/js/quantize-corpus.mjs, the one
// tests/js/quantize.test.mjs runs in Node.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { chromiumMissing, launchChromium, requireSetup } from "../js/helpers.mjs";
import { nginxPath, startNginx } from "../js/nginx.mjs";

requireSetup((!nginxPath && "nginx not installed") || chromiumMissing());

// Runs the check where it is evaluated (a page or a worker): the corpus fetched from nginx's /ggml/.
const CHECK = `
async function quantizeCorpusHere() {
    const { loadWasm } = await import("/pkg/wasm.js");
    const { quantizeCorpus } = await import("/tests/quantize-corpus.mjs");
    const load = async (file) => {
        const response = await fetch("/ggml/" + file);
        if (!response.ok) throw new Error(file + ": HTTP " + response.status);
        return new Uint8Array(await response.arrayBuffer());
    };
    return quantizeCorpus(await loadWasm(), load);
}`;

const WORKER = `${CHECK}
self.onmessage = async () => {
    try {
        self.postMessage({ ok: true, value: await quantizeCorpusHere() });
    } catch (e) {
        self.postMessage({ ok: false, error: String(e?.stack ?? e) });
    }
};
`;

// Every type the quantizers write, as the manifest spells them: each has at least one corpus tensor.
const TYPES = [
    "bf16", "f16", "f32", "iq1_m", "iq1_s", "iq2_s", "iq2_xs", "iq2_xxs", "iq3_s", "iq3_xxs", "iq4_nl", "iq4_xs",
    "mxfp4", "nvfp4", "q1_0", "q2_0", "q2_K", "q3_K", "q4_0", "q4_1", "q4_K", "q5_0", "q5_1", "q5_K", "q6_K",
    "q8_0", "tq1_0", "tq2_0",
];

function checkResult(r, where) {
    assert.deepEqual(r.mismatches, [], where);
    // Every tensor ggml quantized (all but the five integer ones), five with an importance matrix: the same
    // counts as in Node.
    assert.equal(r.checked, 47, where);
    assert.equal(r.withImatrix, 5, where);
    assert.deepEqual([...new Set(r.types)].sort(), TYPES, where);
    assert.deepEqual(r.refusal, { status: "unsupported", what: "imatrix" }, where);
}

describe("quantizers in Chromium", () => {
    let server;
    let browser;
    let page;
    const problems = [];

    before(async () => {
        server = await startNginx();
        writeFileSync(path.join(server.generatedDir, "blank.html"), "<!doctype html><title>weightstream test</title>");
        writeFileSync(path.join(server.generatedDir, "quantize-worker.mjs"), WORKER);
        browser = await launchChromium();
        page = await browser.newPage();
        page.on("pageerror", (e) => problems.push(String(e)));
        await page.goto(`${server.rangeBase}/generated/blank.html`);
    });
    after(async () => {
        await browser?.close();
        await server?.stop();
    });

    test("every corpus tensor quantized in a page equals ggml's stored bytes", async () => {
        const r = await page.evaluate(`(async () => { ${CHECK}\n return quantizeCorpusHere(); })()`);
        checkResult(r, "page");
        assert.deepEqual(problems, []);
    });

    test("every corpus tensor quantized in a Web Worker equals ggml's stored bytes", async () => {
        const reply = await page.evaluate(
            () =>
                new Promise((resolve) => {
                    const worker = new Worker("/generated/quantize-worker.mjs", { type: "module" });
                    worker.onmessage = ({ data }) => {
                        worker.terminate();
                        resolve(data);
                    };
                    worker.onerror = (e) => resolve({ ok: false, error: e.message || "the worker failed to load" });
                    worker.postMessage(null);
                }),
        );
        assert.ok(reply.ok, reply.error);
        checkResult(reply.value, "worker");
        assert.deepEqual(problems, []);
    });
});
