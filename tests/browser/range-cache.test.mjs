// SPDX-License-Identifier: MIT
// The range cache in headless Chromium (playwright-core driving /usr/bin/chromium): the package, unbundled
// from nginx (tests/js/nginx.mjs, whose access log says what crossed the network, per operation id sent as
// X-WS-Op), opens a model in a page and reads every tensor's stored bytes. Each test runs in a browser
// context of its own (its own origin private file system and HTTP cache). Checked: OPFS by default, a second
// open and read cost one revalidation (304, no body bytes); a replaced file (new ETag) refetches; the size
// cap evicts the least recently used; cache off sends every request; the Cache API where OPFS is missing;
// OPFS writes that throw QuotaExceededError leave the load working (counted in metrics.cacheErrors);
// clearCache() empties it, and weightstream/worker's cacheInfo()/clearCache() see the worker's cache.
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { chromiumMissing, launchChromium, requireSetup, testData } from "../js/helpers.mjs";
import { nginxPath, startNginx } from "../js/nginx.mjs";

const modelFile = path.join(testData, "ggml/ggml-types.gguf");
const otherFile = path.join(testData, "ggml/ggml-types-ext.gguf");

requireSetup((!nginxPath && "nginx not installed") || chromiumMissing());

describe("range cache in Chromium", () => {
    let server;
    let browser;
    let ops = 0;
    const target = (name) => path.join(server.generatedDir, name);

    before(async () => {
        server = await startNginx();
        writeFileSync(target("blank.html"), "<!doctype html><title>weightstream cache test</title>");
        browser = await launchChromium();
    });
    after(async () => {
        await browser?.close();
        await server?.stop();
    });

    // A page in a context of its own; `init` runs before the page's scripts (a stub of the storage APIs).
    async function newPage(init) {
        const context = await browser.newContext();
        const page = await context.newPage();
        const errors = [];
        page.on("pageerror", (e) => errors.push(String(e)));
        if (init) await page.addInitScript(init);
        await page.goto(`${server.rangeBase}/generated/blank.html`);
        return { page, context, errors };
    }

    // Opens `name` in the page and reads every tensor's stored bytes (or those of `names`): {raw (base64 per
    // tensor), metrics, info (cacheInfo()), lines (nginx's log of the requests)}.
    async function openAndRead(page, name, { options = {}, names } = {}) {
        const op = `cache${++ops}`;
        const got = await page.evaluate(
            async ({ url, op, options, names }) => {
                const { open, cacheInfo } = await import("/pkg/index.js");
                let requests = 0;
                const fetchTagged = (input, init = {}) => {
                    ++requests;
                    const headers = new Headers(init.headers);
                    headers.set("X-WS-Op", op);
                    return fetch(input, { ...init, headers });
                };
                const model = await open(url, { ...options, fetch: fetchTagged });
                const raw = {};
                const tensors = [];
                try {
                    for (const t of model.tensors) {
                        tensors.push({ name: t.name, offset: Number(t.offset), nbytes: Number(t.nbytes) });
                        if (names && !names.includes(t.name)) continue;
                        const bytes = await model.read(t.name, { as: "raw" });
                        let s = "";
                        for (const b of new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
                            s += String.fromCharCode(b);
                        raw[t.name] = btoa(s);
                    }
                    return { raw, tensors, metrics: model.metrics, info: await cacheInfo(), requests };
                } finally {
                    await model.close();
                }
            },
            { url: `${server.rangeBase}/generated/${name}`, op, options, names },
        );
        got.lines = await server.served(op, got.requests);
        return got;
    }

    function expectedRaw(file, tensors, names) {
        const bytes = readFileSync(file);
        const raw = {};
        for (const t of tensors) {
            if (names && !names.includes(t.name)) continue;
            raw[t.name] = bytes.subarray(t.offset, t.offset + t.nbytes).toString("base64");
        }
        return raw;
    }

    const body = (lines) => lines.reduce((n, l) => n + l.bodyBytesSent, 0);

    test("OPFS: a second open and read fetch no body bytes (one 304 revalidation)", async () => {
        copyFileSync(modelFile, target("opfs.gguf"));
        const { page, context, errors } = await newPage();
        const cold = await openAndRead(page, "opfs.gguf");
        assert.deepEqual(cold.raw, expectedRaw(target("opfs.gguf"), cold.tensors));
        assert.ok(
            cold.lines.every((l) => l.status === 206),
            JSON.stringify(cold.lines),
        );
        assert.equal(cold.metrics.bytesFetched, body(cold.lines));
        assert.equal(cold.info.backend, "opfs");
        assert.equal(cold.info.entries.length, 1);
        assert.equal(cold.info.bytes, cold.metrics.bytesFetched);

        const warm = await openAndRead(page, "opfs.gguf");
        assert.deepEqual(warm.raw, cold.raw);
        assert.deepEqual(
            warm.lines.map((l) => [l.status, l.bodyBytesSent, l.range]),
            [[304, 0, "bytes=0-0"]],
        );
        assert.equal(warm.metrics.requests, 1);
        assert.equal(warm.metrics.bytesFetched, 0);
        const readBytes = cold.metrics.bytesFetched + cold.metrics.bytesFromCache;
        assert.equal(readBytes, 64 * 1024 + cold.tensors.reduce((n, t) => n + t.nbytes, 0));
        assert.equal(warm.metrics.bytesFromCache, readBytes);

        // A reload: a new module, the index read back from OPFS.
        await page.reload();
        const reloaded = await openAndRead(page, "opfs.gguf");
        assert.deepEqual(reloaded.raw, cold.raw);
        assert.deepEqual(
            reloaded.lines.map((l) => l.status),
            [304],
        );
        assert.equal(reloaded.metrics.bytesFromCache, readBytes);
        assert.deepEqual(errors, []);
        await context.close();
    });

    test("an ETag change (the file replaced) refetches and drops the old entry", async () => {
        copyFileSync(modelFile, target("etag.gguf"));
        const { page, context } = await newPage();
        const first = await openAndRead(page, "etag.gguf");
        copyFileSync(otherFile, target("etag.gguf"));
        utimesSync(target("etag.gguf"), new Date(), new Date(Date.now() + 5000));
        const second = await openAndRead(page, "etag.gguf");
        assert.deepEqual(second.raw, expectedRaw(target("etag.gguf"), second.tensors));
        assert.deepEqual(
            second.lines.map((l) => [l.status, l.bodyBytesSent]),
            [
                [206, 1],
                [206, readFileSync(otherFile).length],
            ],
        );
        assert.equal(second.info.entries.length, 1);
        assert.notEqual(second.info.entries[0].etag, first.info.entries[0].etag);
        assert.equal(second.info.entries[0].size, readFileSync(otherFile).length);
        // And the new version is what a third open gets from the cache.
        const third = await openAndRead(page, "etag.gguf");
        assert.deepEqual(third.raw, second.raw);
        assert.deepEqual(
            third.lines.map((l) => l.status),
            [304],
        );
        await context.close();
    });

    test("the size cap evicts the least recently used pieces", async () => {
        copyFileSync(modelFile, target("cap.gguf"));
        const { page, context } = await newPage();
        const all = await openAndRead(page, "cap.gguf", { options: { cache: false }, names: [] });
        // The three largest tensors past the header's first read (64 KiB: one piece of the cache).
        const [a, b, c] = all.tensors.filter((t) => t.offset >= 64 * 1024).sort((x, y) => y.nbytes - x.nbytes);
        const maxBytes = 64 * 1024 + a.nbytes + b.nbytes + c.nbytes - 1;
        const options = { cache: { maxBytes } };
        await openAndRead(page, "cap.gguf", { options, names: [a.name] });
        await openAndRead(page, "cap.gguf", { options, names: [b.name] });
        const last = await openAndRead(page, "cap.gguf", { options, names: [c.name] });
        assert.ok(last.info.bytes <= maxBytes);
        const held = (t) => last.info.entries[0].ranges.some(([s, e]) => s <= t.offset && t.offset + t.nbytes <= e);
        assert.deepEqual([held(a), held(b), held(c)], [false, true, true]);
        const hits = await openAndRead(page, "cap.gguf", { options, names: [b.name, c.name] });
        assert.deepEqual(hits.raw, expectedRaw(target("cap.gguf"), hits.tensors, [b.name, c.name]));
        assert.deepEqual(
            hits.lines.map((l) => l.status),
            [304],
        );
        const again = await openAndRead(page, "cap.gguf", { options, names: [a.name] });
        assert.deepEqual(again.raw, expectedRaw(target("cap.gguf"), again.tensors, [a.name]));
        assert.deepEqual(
            again.lines.map((l) => [l.status, l.bodyBytesSent]),
            [
                [304, 0],
                [206, a.nbytes],
            ],
        );
        await context.close();
    });

    test("cache off sends every request", async () => {
        copyFileSync(modelFile, target("off.gguf"));
        const { page, context } = await newPage();
        const options = { cache: false };
        const one = await openAndRead(page, "off.gguf", { options });
        const two = await openAndRead(page, "off.gguf", { options });
        // Every request reaches the server; Chromium's own HTTP cache may revalidate some of them (a 304 for
        // a range it kept), so the body bytes sent may be fewer, but the package gets them all again.
        assert.equal(two.lines.length, one.lines.length);
        assert.equal(two.metrics.requests, one.metrics.requests);
        assert.equal(two.metrics.bytesFetched, one.metrics.bytesFetched);
        assert.ok(body(one.lines) > 0);
        assert.equal(two.metrics.bytesFromCache, 0);
        assert.deepEqual([two.info.entries, two.info.bytes], [[], 0]);
        await context.close();
    });

    test("the Cache API where there is no OPFS", async () => {
        copyFileSync(modelFile, target("cacheapi.gguf"));
        const { page, context, errors } = await newPage(() => {
            delete StorageManager.prototype.getDirectory;
        });
        const cold = await openAndRead(page, "cacheapi.gguf");
        assert.equal(cold.info.backend, "cache-api");
        assert.equal(cold.info.bytes, cold.metrics.bytesFetched);
        const warm = await openAndRead(page, "cacheapi.gguf");
        assert.deepEqual(warm.raw, cold.raw);
        assert.deepEqual(
            warm.lines.map((l) => [l.status, l.bodyBytesSent]),
            [[304, 0]],
        );
        assert.equal(warm.metrics.bytesFromCache, cold.metrics.bytesFetched + cold.metrics.bytesFromCache);
        assert.deepEqual(errors, []);
        await context.close();
    });

    test("OPFS writes failing with QuotaExceededError: the load goes on uncached, counted", async () => {
        copyFileSync(modelFile, target("quota.gguf"));
        const { page, context, errors } = await newPage(() => {
            FileSystemFileHandle.prototype.createWritable = async function () {
                return {
                    async write() {
                        throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
                    },
                    async close() {},
                    async abort() {},
                };
            };
        });
        const one = await openAndRead(page, "quota.gguf");
        assert.deepEqual(one.raw, expectedRaw(target("quota.gguf"), one.tensors));
        assert.ok(one.metrics.cacheErrors >= 1, JSON.stringify(one.metrics));
        assert.equal(one.info.backend, "opfs");
        assert.equal(one.info.bytes, 0);
        assert.ok(one.info.writeErrors >= 1);
        const two = await openAndRead(page, "quota.gguf");
        assert.deepEqual(two.raw, one.raw);
        assert.equal(two.metrics.bytesFromCache, 0);
        assert.equal(two.lines.length, one.lines.length);
        // Nothing held, so no revalidation: every read went out again (Chromium's HTTP cache may turn some
        // into 304s of its own).
        assert.equal(two.metrics.bytesFetched, one.metrics.bytesFetched);
        assert.ok(two.lines.every((l) => l.range !== "bytes=0-0"));
        assert.deepEqual(errors, []);
        await context.close();
    });

    test("clearCache() empties it; weightstream/worker's cacheInfo() and clearCache() see the worker's cache", async () => {
        copyFileSync(modelFile, target("clear.gguf"));
        const { page, context } = await newPage();
        await openAndRead(page, "clear.gguf");
        const url = `${server.rangeBase}/generated/clear.gguf`;
        const result = await page.evaluate(async (url) => {
            const { cacheInfo, clearCache } = await import("/pkg/index.js");
            const { WeightstreamWorker } = await import("/pkg/worker.js");
            const before = await cacheInfo();
            await clearCache();
            const cleared = await cacheInfo();
            const worker = new WeightstreamWorker();
            const model = await worker.open(url);
            await model.read(model.tensors[0].name, { as: "raw" });
            await model.close();
            const inWorker = await worker.cacheInfo();
            await worker.clearCache();
            const workerCleared = await worker.cacheInfo();
            await worker.terminate();
            return { before, cleared, inWorker, workerCleared };
        }, url);
        assert.equal(result.before.entries.length, 1);
        assert.deepEqual([result.cleared.entries, result.cleared.bytes], [[], 0]);
        assert.equal(result.inWorker.backend, "opfs");
        assert.deepEqual(
            result.inWorker.entries.map((e) => e.url),
            [url],
        );
        assert.ok(result.inWorker.bytes > 0);
        assert.deepEqual([result.workerCleared.entries, result.workerCleared.bytes], [[], 0]);
        await context.close();
    });
});
