// SPDX-License-Identifier: MIT
// The twin check in headless Chromium (playwright-core driving /usr/bin/chromium; nothing is downloaded):
// the package, loaded unbundled from nginx (/pkg/), opens every corpus file from nginx in a page and inside a
// Web Worker, and describes each exactly as the native CLI's `info --json` does, every tensor's float32 and
// stored bytes hashing to `hash --json`. Also in the browser: weightstream/worker (decoding in its own worker,
// arrays transferred), {as: "f16"} as the runtime's Float16Array (Node has none), split and sharded models from
// URLs and Files, cross-origin servers with and without CORS, and compare() of two models from URLs (in the
// page and in weightstream/worker's worker) equal to the CLI's `diff --json`.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { hfSafetensors, llamaCheckpoint, llamaGguf } from "./compare-fixtures.mjs";
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

// Row windows read with {as: "f16"} besides every whole tensor: F16 (its bytes), F32, K-quant (2-D and 3-D).
const HALF_WINDOWS = [
    { name: "f16.weight", rows: [3, 2] },
    { name: "f32.weight", rows: [7, 1] },
    { name: "q4_k.weight", rows: [5, 3] },
    { name: "q4_k.3d", rows: [1, 4] },
];

// The records of checkHalves() (in-browser.mjs) for `reads` of the file `file`: each a Float16Array of the
// length the CLI's shape gives, equal to Math.f16round of the f32 read (and to the stored bytes for F16).
function checkHalfRecords(records, reads, file, label) {
    const tensors = new Map(reference(file).info.tensors.map((t) => [t.name, t]));
    assert.equal(records.length, reads.length, label);
    for (const [i, r] of records.entries()) {
        const where = `${label}: ${r.name}${r.rows ? ` rows [${r.rows}]` : ""}`;
        assert.equal(r.name, reads[i].name, where);
        const t = tensors.get(r.name);
        const length = r.rows ? r.rows[1] * Number(t.ne[0]) : Number(t.n_elements);
        assert.equal(r.kind, "Float16Array", where);
        assert.equal(r.float16, true, `${where}: not an instance of the page's Float16Array`);
        assert.equal(r.length, length, `${where}: length`);
        assert.equal(r.expectedLength, length, `${where}: f32 window length`);
        assert.equal(
            r.mismatches,
            0,
            `${where}: ${r.mismatches} values differ from Math.f16round(f32): ${JSON.stringify(r.first)}`,
        );
        assert.equal(r.rawEqual, t.dtype === "F16" ? true : null, `${where}: bits vs stored bytes`);
    }
    for (const dtype of ["F16", "Q4_K"]) {
        assert.ok(
            records.some((r) => r.dtype === dtype && !r.rows),
            `${label}: a whole ${dtype} tensor`,
        );
        assert.ok(
            records.some((r) => r.dtype === dtype && r.rows),
            `${label}: a ${dtype} row window`,
        );
    }
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

    describe("as f16: the runtime's Float16Array", () => {
        const item = () => models.find((m) => m.label.endsWith("ggml-types.gguf"));

        // checkHalves() on a model opened in the page by `opener` ("open" from /pkg/index.js or "openInWorker"
        // from /pkg/worker.js), with whether the page has a Float16Array at all.
        function halvesInPage(opener, reads) {
            return page.evaluate(
                async ({ url, opener, reads }) => {
                    const pkg = await import(opener === "open" ? "/pkg/index.js" : "/pkg/worker.js");
                    const { checkHalves } = await import("/tests/in-browser.mjs");
                    const hasFloat16 = typeof globalThis.Float16Array === "function";
                    const model = await pkg[opener](url);
                    try {
                        return { hasFloat16, records: await checkHalves(model, reads) };
                    } finally {
                        await model.close();
                    }
                },
                { url: server.rangeBase + server.urlPath(item().file), opener, reads },
            );
        }

        test("every tensor and row windows: Float16Array, Math.f16round of the f32 read, F16 = stored bytes", async () => {
            const reads = [...reference(item().file).info.tensors.map((t) => ({ name: t.name })), ...HALF_WINDOWS];
            const got = await halvesInPage("open", reads);
            assert.equal(got.hasFloat16, true, "this Chromium has no globalThis.Float16Array");
            checkHalfRecords(got.records, reads, item().file, "page");
            // The specials tensor takes every rounding case: overflow to infinity, NaN, subnormals, ties.
            const special = got.records.find((r) => r.name === "f32.special").specials;
            for (const key of ["nan", "infinity", "subnormal", "rounded"]) assert.ok(special[key] > 0, key);
        });

        test("weightstream/worker: made in its worker, transferred as a Float16Array", async () => {
            const reads = [
                { name: "f16.weight" },
                { name: "q4_k.weight" },
                { name: "f32.special" },
                ...HALF_WINDOWS.filter((w) => /^(f16|q4_k)\.weight$/.test(w.name)),
            ];
            const got = await halvesInPage("openInWorker", reads);
            assert.equal(got.hasFloat16, true, "this Chromium has no globalThis.Float16Array");
            checkHalfRecords(got.records, reads, item().file, "worker helper");
        });

        test('as "f16-bits": a Uint16Array of the same bits beside the Float16Array, here and in a worker', async () => {
            const got = await page.evaluate(
                async ({ url, names }) => {
                    const out = [];
                    for (const [spec, opener] of [
                        ["/pkg/index.js", "open"],
                        ["/pkg/worker.js", "openInWorker"],
                    ]) {
                        const model = await (await import(spec))[opener](url);
                        try {
                            for (const name of names) {
                                const half = await model.read(name, { as: "f16" });
                                const bits = await model.read(name, { as: "f16-bits" });
                                const view = new Uint16Array(half.buffer, half.byteOffset, half.length);
                                out.push({
                                    opener,
                                    name,
                                    half: half.constructor.name,
                                    bits: bits.constructor.name,
                                    same: bits.length === view.length && bits.every((b, i) => b === view[i]),
                                });
                            }
                        } finally {
                            await model.close();
                        }
                    }
                    return out;
                },
                {
                    url: server.rangeBase + server.urlPath(item().file),
                    names: ["f16.weight", "q4_k.weight", "f32.special"],
                },
            );
            assert.equal(got.length, 6);
            for (const r of got) {
                assert.deepEqual(r, {
                    opener: r.opener,
                    name: r.name,
                    half: "Float16Array",
                    bits: "Uint16Array",
                    same: true,
                });
            }
        });
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

    describe("compare() equals diff --json", () => {
        // The fixtures of compare.test.mjs: a Hugging Face llama checkpoint (config.json beside it), its F32
        // GGUF, that converted to Q8_0 and Q4_K, and a conversion without the Q/K permutation.
        const files = {};
        before(() => {
            const checkpoint = llamaCheckpoint();
            const dir = mkdtempSync(path.join(work, "compare-"));
            mkdirSync(path.join(dir, "hf"));
            files.hf = path.join(dir, "hf", "model.safetensors");
            writeFileSync(files.hf, hfSafetensors(checkpoint));
            writeFileSync(path.join(dir, "hf", "config.json"), JSON.stringify(checkpoint.config));
            files.f32 = path.join(dir, "tiny-f32.gguf");
            writeFileSync(files.f32, llamaGguf(checkpoint));
            files.noPermute = path.join(dir, "tiny-no-permute.gguf");
            writeFileSync(files.noPermute, llamaGguf(checkpoint, { mistake: "no_permute" }));
            for (const dtype of ["q8_0", "q4_k"]) {
                files[dtype] = path.join(dir, `tiny-${dtype}.gguf`);
                const r = spawnSync(cliPath, ["convert", files.f32, files[dtype], "--dtype", dtype], {
                    encoding: "utf8",
                });
                assert.equal(r.status, 0, r.stderr);
            }
            mkdirSync(path.join(server.generatedDir, "hf"));
            for (const name of ["model.safetensors", "config.json"]) {
                writeFileSync(path.join(server.generatedDir, "hf", name), readFileSync(path.join(dir, "hf", name)));
            }
            for (const key of ["f32", "noPermute", "q8_0", "q4_k"]) {
                writeFileSync(path.join(server.generatedDir, path.basename(files[key])), readFileSync(files[key]));
            }
        });
        const urlOf = (file) =>
            `${server.rangeBase}/generated/${file === files.hf ? "hf/model.safetensors" : path.basename(file)}`;

        // The CLI's report with the paths the package gives URLs (the URL itself).
        function cliDiff(a, b) {
            const r = spawnSync(cliPath, ["diff", a, b, "--json"], { encoding: "utf8", maxBuffer: 1 << 28 });
            assert.equal(r.status, 0, `weightstream diff ${a} ${b}: ${r.stderr}`);
            const report = JSON.parse(r.stdout);
            return { ...report, a: { ...report.a, path: urlOf(a) }, b: { ...report.b, path: urlOf(b) } };
        }

        // compare() in the page ("open": /pkg/index.js) or in weightstream/worker's worker ("openInWorker").
        function compareInPage(a, b, where = "open") {
            return page.evaluate(
                async ({ a, b, where }) => {
                    const rows = [];
                    const onTensor = (row) => rows.push(row);
                    const report =
                        where === "open"
                            ? await (await import("/pkg/index.js")).compare(a, b, { onTensor })
                            : await (await import("/pkg/worker.js")).compareInWorker(a, b, { onTensor });
                    return { report, rows };
                },
                { a: urlOf(a), b: urlOf(b), where },
            );
        }

        test("HF checkpoint (config.json fetched beside it) against its Q8_0 GGUF, in the page and a worker", async () => {
            const expected = cliDiff(files.hf, files.q8_0);
            assert.equal(expected.mapping, "hf-to-gguf:llama");
            // convert keeps 1-D tensors (the norms) F32 as llama.cpp does: those pairs are identical, the rest differ.
            const quantized = expected.tensors.filter((t) => t.dtype_b !== "F32").length;
            assert.ok(quantized > 0 && quantized < expected.tensors.length);
            assert.equal(expected.summary.different, quantized);
            for (const where of ["open", "openInWorker"]) {
                const got = await compareInPage(files.hf, files.q8_0, where);
                assert.deepEqual(got.report, expected, where);
                assert.deepEqual(got.rows, expected.tensors, `${where}: onTensor rows`);
            }
        });

        test("GGUF F32 against GGUF Q4_K: by names, every quantized pair different", async () => {
            const expected = cliDiff(files.f32, files.q4_k);
            assert.equal(expected.mapping, "names");
            const quantized = expected.tensors.filter((t) => t.dtype_b !== "F32").length;
            assert.ok(quantized > 0);
            assert.equal(expected.summary.different, quantized);
            assert.deepEqual((await compareInPage(files.f32, files.q4_k)).report, expected);
        });

        test("a conversion without the Q/K permutation: the same hint", async () => {
            const expected = cliDiff(files.hf, files.noPermute);
            const q = expected.tensors.find((t) => t.b === "blk.0.attn_q.weight");
            assert.match(q.hint, /without the Q\/K permutation/);
            assert.deepEqual((await compareInPage(files.hf, files.noPermute)).report, expected);
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

        test("no CORS at all: code cors naming Access-Control-Allow-Origin, at once (not retried)", async () => {
            const started = Date.now();
            const e = await page.evaluate(
                async (url) => {
                    const { open } = await import("/pkg/index.js");
                    const { errorRecord } = await import("/tests/in-browser.mjs");
                    try {
                        // Retries that a network error would wait for (250 ms, then doubling): a refusal skips them.
                        await open(url, { retries: 4, retryDelay: 2000 });
                        return null;
                    } catch (e) {
                        return errorRecord(e);
                    }
                },
                server.noRangeBase + server.urlPath(item().file),
            );
            assert.equal(e?.code, "cors", JSON.stringify(e));
            assert.match(e.message, /without Access-Control-Allow-Origin/);
            assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms: no retry delay`);
        });

        test("a server that is down: code network, retried", async () => {
            const e = await openError("http://127.0.0.1:9/model.gguf");
            assert.equal(e?.code, "network", JSON.stringify(e));
        });
    });
});
