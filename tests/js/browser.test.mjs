// SPDX-License-Identifier: MIT
// The twin check in headless Chromium (playwright-core driving /usr/bin/chromium; nothing is downloaded):
// the package, loaded unbundled from nginx (/pkg/), opens every corpus file from nginx in a page and inside a
// Web Worker, and describes each exactly as the native CLI's `info --json` does, every tensor's float32 and
// stored bytes hashing to `hash --json`. Also in the browser: weightstream/worker (decoding in its own worker,
// arrays transferred), split and sharded models from URLs and Files, and cross-origin servers with and
// without CORS.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { chromiumMissing, cliHashes, cliInfo, cliPath, corpus, launchChromium, requireSetup } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";
import { writeShards, writeSplitGguf } from "./split-fixtures.mjs";

const skip =
    (!nginxPath && "nginx not installed") ||
    chromiumMissing() ||
    (!cliPath && "the native CLI is not built (it is the reference)");

// The module a Web Worker runs for the in-worker parity check.
const PARITY_WORKER = `
import { open } from "/pkg/index.js";
import { describeModel, errorRecord } from "/tests/in-browser.mjs";
self.onmessage = async ({ data }) => {
    try {
        self.postMessage({ ok: true, value: await describeModel(open, data.source, data.options) });
    } catch (e) {
        self.postMessage({ ok: false, error: errorRecord(e) });
    }
};
`;

const models = corpus();
const work = mkdtempSync(path.join(tmpdir(), "ws-browser-"));
after(() => rmSync(work, { recursive: true, force: true }));

// The CLI's view of a file: info --json and {name: {f32, raw}}.
const references = new Map();
function reference(file) {
    if (!references.has(file)) {
        const hashes = {};
        for (const [name, h] of cliHashes(file)) hashes[name] = { f32: h.f32_sha256, raw: h.raw_sha256 };
        references.set(file, { info: cliInfo(file), hashes });
    }
    return references.get(file);
}

function checkDescription(got, file, label, { rawHashes = true, sizeKnown = true } = {}) {
    const expected = reference(file);
    const info = sizeKnown ? got.info : { ...got.info, file_size: expected.info.file_size };
    assert.deepEqual(info, expected.info, `${label}: info`);
    for (const [name, h] of Object.entries(expected.hashes)) {
        assert.ok(got.hashes[name], `${label}: ${name} missing`);
        assert.equal(got.hashes[name].f32, h.f32, `${label}: ${name} f32_sha256`);
        if (rawHashes) assert.equal(got.hashes[name].raw, h.raw, `${label}: ${name} raw_sha256`);
    }
    assert.equal(Object.keys(got.hashes).length, Object.keys(expected.hashes).length, label);
    for (const kind of Object.values(got.kinds)) assert.equal(kind, "Float32Array", label);
}

requireSetup(skip);

describe("Chromium", () => {
    let server;
    let browser;
    let page;
    let pageErrors;

    before(async () => {
        server = await startNginx();
        writeFileSync(path.join(server.generatedDir, "blank.html"), "<!doctype html><title>weightstream test</title>");
        writeFileSync(path.join(server.generatedDir, "parity-worker.mjs"), PARITY_WORKER);
        browser = await launchChromium();
        page = await browser.newPage();
        pageErrors = [];
        page.on("pageerror", (e) => pageErrors.push(String(e)));
        await page.goto(`${server.rangeBase}/generated/blank.html`);
    });
    after(async () => {
        await browser?.close();
        await server?.stop();
        assert.deepEqual(pageErrors ?? [], []);
    });

    // describeModel() in the page; `source` is evaluated there from `make` (a function body of `url`).
    function inPage(url, { make = "url", mode = "read", options = {} } = {}) {
        return page.evaluate(
            async ({ url, make, mode, options }) => {
                const { open } = await import("/pkg/index.js");
                const { describeModel } = await import("/tests/in-browser.mjs");
                const source = await new Function("url", `return (async () => ${make})()`)(url);
                return describeModel(open, source, { mode, options });
            },
            { url, make, mode, options },
        );
    }

    function inWorker(source, { mode = "read", options = {} } = {}) {
        return page.evaluate(
            ({ source, mode, options }) =>
                new Promise((resolve, reject) => {
                    const worker = new Worker("/generated/parity-worker.mjs", { type: "module" });
                    worker.onmessage = ({ data }) => {
                        worker.terminate();
                        if (data.ok) resolve(data.value);
                        else reject(new Error(JSON.stringify(data.error)));
                    };
                    worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
                    worker.postMessage({ source, mode, options });
                }),
            { source, mode, options },
        );
    }

    for (const item of models) {
        test(`page, Range URL: ${item.label}`, async () => {
            const got = await inPage(server.rangeBase + server.urlPath(item.file));
            checkDescription(got, item.file, item.label);
        });
    }

    for (const item of models) {
        test(`page, Blob: ${item.label}`, async () => {
            const got = await inPage(server.rangeBase + server.urlPath(item.file), {
                make: "await (await fetch(url)).blob()",
            });
            checkDescription(got, item.file, item.label);
        });
    }

    for (const item of models) {
        test(`Web Worker, stream() over a server without Range: ${item.label}`, async () => {
            const got = await inWorker(`${server.rangeBase}/norange${server.urlPath(item.file)}`, { mode: "stream" });
            checkDescription(got, item.file, item.label, { rawHashes: false });
        });
    }

    test("Web Worker, Range URL and a ReadableStream", async () => {
        const item = models.find((m) => m.label.endsWith("ggml-types.gguf"));
        const url = server.rangeBase + server.urlPath(item.file);
        checkDescription(await inWorker(url), item.file, "worker Range");
        const got = await page.evaluate(async (url) => {
            const { open } = await import("/pkg/index.js");
            const { describeModel } = await import("/tests/in-browser.mjs");
            return describeModel(open, (await fetch(url)).body, { mode: "stream" });
        }, url);
        checkDescription(got, item.file, "page ReadableStream", { rawHashes: false, sizeKnown: false });
    });

    test("weightstream/worker: decoding in its worker, every array transferred to the page", async () => {
        // A page of its own, that has never loaded the package's WebAssembly itself.
        const helperPage = await browser.newPage();
        helperPage.on("pageerror", (e) => pageErrors.push(String(e)));
        await helperPage.goto(`${server.rangeBase}/generated/blank.html`);
        const files = models.filter((m) => /ggml-types\.gguf|sample_overall|mlx_lora/.test(m.label));
        for (const item of files) {
            const url = server.rangeBase + server.urlPath(item.file);
            const got = await helperPage.evaluate(async (url) => {
                const { openInWorker } = await import("/pkg/worker.js");
                const { errorRecord } = await import("/tests/in-browser.mjs");
                const hex = async (a) =>
                    Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", a)), (b) =>
                        b.toString(16).padStart(2, "0"),
                    ).join("");
                const model = await openInWorker(url);
                const hashes = {};
                const kinds = {};
                let progress = 0;
                for (const t of model.tensors) {
                    const data = await model.read(t.name, { onProgress: () => ++progress });
                    hashes[t.name] = { f32: await hex(data), raw: await hex(await model.read(t.name, { as: "raw" })) };
                    kinds[t.name] = data.constructor.name;
                }
                const streamed = [];
                for await (const { tensor, data } of model.stream()) {
                    if (hashes[tensor.name].f32 !== (await hex(data))) streamed.push(`${tensor.name} differs`);
                    if (streamed.length === 2) break; // an early end of the stream
                }
                const info = model.info;
                await model.close();
                let closed = null;
                try {
                    await model.read(model.tensors[0].name);
                } catch (e) {
                    closed = errorRecord(e);
                }
                let bad = null;
                try {
                    await openInWorker(new Uint8Array(64));
                } catch (e) {
                    bad = errorRecord(e);
                }
                // The page itself never loaded the WebAssembly module: the worker did the work.
                const wasmInPage = performance.getEntriesByType("resource").some((r) => r.name.endsWith(".wasm"));
                return { info, hashes, kinds, progress, streamed, closed, bad, wasmInPage };
            }, url);
            checkDescription(got, item.file, `worker helper ${item.label}`);
            assert.ok(got.progress >= got.info.tensors.length, `progress ${got.progress}`);
            assert.deepEqual(got.streamed, []);
            assert.equal(got.closed.code, "closed");
            assert.deepEqual([got.bad.name, got.bad.code, got.bad.offset], ["WeightstreamError", "bad_magic", 0]);
            assert.equal(got.wasmInPage, false);
        }
        await helperPage.close();
    });

    describe("models in several files", () => {
        let splitDir;
        const split = {};
        before(() => {
            splitDir = mkdtempSync(path.join(work, "split-"));
            split.parts = writeSplitGguf(splitDir);
            Object.assign(split, writeShards(splitDir));
            for (const p of [...split.parts, ...split.shards, split.index]) {
                writeFileSync(path.join(server.generatedDir, path.basename(p)), readFileSync(p));
            }
        });
        const urlOf = (p) => `${server.rangeBase}/generated/${path.basename(p)}`;

        test("split GGUF and sharded safetensors from the URL of a part / of the index", async () => {
            checkDescription(await inPage(urlOf(split.parts[1])), split.parts[1], "split URL");
            checkDescription(await inPage(urlOf(split.index)), split.index, "index URL");
            checkDescription(await inWorker(urlOf(split.index)), split.index, "index URL in a worker");
        });

        test("split GGUF and sharded safetensors from Files", async () => {
            for (const [files, reference] of [
                [split.parts, split.parts[0]],
                [[split.index, ...split.shards], split.index],
            ]) {
                const urls = [...files].reverse().map(urlOf);
                const make = `await Promise.all(${JSON.stringify(urls)}.map(async (u) =>
                    new File([await (await fetch(u)).blob()], u.slice(u.lastIndexOf("/") + 1))))`;
                checkDescription(await inPage(null, { make }), reference, "Files");
            }
        });
    });

    describe("cross-origin servers", () => {
        const item = () => models.find((m) => m.label.endsWith("ggml-types.gguf"));

        test("CORS allowing Range and exposing Content-Range: read with Range", async () => {
            const got = await inPage(server.corsBase + server.urlPath(item().file));
            checkDescription(got, item().file, "cors");
        });

        async function openError(url) {
            return page.evaluate(async (url) => {
                const { open } = await import("/pkg/index.js");
                const { errorRecord } = await import("/tests/in-browser.mjs");
                try {
                    await open(url, { retries: 0 });
                    return null;
                } catch (e) {
                    return errorRecord(e);
                }
            }, url);
        }

        test("Content-Range not exposed: code cors, naming the header", async () => {
            const e = await openError(server.corsHiddenBase + server.urlPath(item().file));
            assert.equal(e?.code, "cors", JSON.stringify(e));
            assert.match(e.message, /Access-Control-Expose-Headers: Content-Range/);
        });

        test("no CORS at all: code network, saying it may be CORS", async () => {
            const e = await openError(server.noRangeBase + server.urlPath(item().file));
            assert.equal(e?.code, "network", JSON.stringify(e));
            assert.match(e.message, /CORS/);
        });
    });
});
