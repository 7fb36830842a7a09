// SPDX-License-Identifier: MIT
// Moving around the page in headless Chromium: the address (tab, tensor, compared model) with pushState,
// Back and Forward; Escape and "/"; the tensor table by keyboard; number columns never cut at 1280 px on a
// Qwen-sized model and the phone layout's header over its columns (screenshots in build/screenshots/); the
// error banner's text for a 404 and for CORS refusals of a test server (named header, no retry delay).
import assert from "node:assert/strict";
import http from "node:http";
import { truncate } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { cliJson, clickTensor, collectRows, screenshotDir, setUp, waitForModel } from "./support/harness.mjs";
import { hugeGgufHeader, tinyLlamaGguf } from "./support/models.mjs";

let h;
let cors; // {base, stop()}: a server of another origin with broken CORS
const tiny = tinyLlamaGguf();

/**
 * A server on another port (another origin) serving tiny-llama.gguf with Range: under /none/ without any
 * CORS header, under /hidden/ allowing any origin and the Range header but exposing no response header.
 */
async function startCorsServer() {
    const server = http.createServer((req, res) => {
        const hidden = req.url.startsWith("/hidden/");
        if (hidden) {
            res.setHeader("Access-Control-Allow-Origin", "*");
            res.setHeader("Access-Control-Allow-Headers", "Range");
        }
        if (req.method === "OPTIONS") return res.writeHead(204).end();
        if (!/^\/(none|hidden)\/tiny\.gguf$/.test(req.url)) return res.writeHead(404).end();
        res.setHeader("ETag", '"tiny-1"');
        res.setHeader("Accept-Ranges", "bytes");
        const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
        if (!m) return res.writeHead(200, { "Content-Length": tiny.length }).end(tiny);
        const start = Number(m[1]);
        const end = Math.min(tiny.length - 1, m[2] ? Number(m[2]) : tiny.length - 1);
        res.writeHead(206, {
            "Content-Range": `bytes ${start}-${end}/${tiny.length}`,
            "Content-Length": end - start + 1,
        });
        res.end(tiny.subarray(start, end + 1));
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { base: `http://127.0.0.1:${server.address().port}`, stop: () => new Promise((r) => server.close(r)) };
}

before(async () => {
    const huge = hugeGgufHeader();
    h = await setUp({ "tiny-llama.gguf": tiny, "other.gguf": tinyLlamaGguf({ seed: 9 }), "huge.gguf": huge.header });
    await truncate(h.modelPath("huge.gguf"), huge.size); // sparse: only the header is ever read
    cors = await startCorsServer();
});
after(async () => {
    await h?.tearDown();
    await cors?.stop();
});

const shot = (page, name) => page.screenshot({ path: path.join(screenshotDir, name) });
const params = (page) => Object.fromEntries(new URL(page.url()).searchParams);
const selectedTab = (page) => page.getAttribute('[role="tab"][aria-selected="true"]', "data-tab");
const detailName = (page) =>
    page.evaluate(() => {
        const root = document.querySelector('[data-testid="tensor-detail"]');
        return root.classList.contains("open") ? (root.querySelector("h2")?.textContent ?? null) : null;
    });

describe("the address and history", () => {
    test("tab and tensor are in the address; Back/Forward move between them and close the detail", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        assert.deepEqual(params(page), { url: "models/tiny-llama.gguf" });
        await page.click("#tab-tensors");
        assert.deepEqual(params(page), { url: "models/tiny-llama.gguf", tab: "tensors" });
        await clickTensor(page, "blk.0.attn_k.weight");
        await page.waitForSelector('[data-testid="tensor-stats"]');
        assert.deepEqual(params(page), {
            url: "models/tiny-llama.gguf",
            tab: "tensors",
            tensor: "blk.0.attn_k.weight",
        });
        await page.click("#tab-metadata");
        assert.equal(params(page).tab, "metadata");
        const length = await page.evaluate(() => history.length);

        await page.goBack();
        await page.waitForFunction(
            () => document.querySelector('[role="tab"][aria-selected="true"]').dataset.tab === "tensors",
        );
        assert.equal(await detailName(page), "blk.0.attn_k.weight");
        await page.goBack();
        await page.waitForFunction(
            () => !document.querySelector('[data-testid="tensor-detail"]').classList.contains("open"),
        );
        assert.equal(await selectedTab(page), "tensors");
        assert.equal(await page.locator('[data-testid="tensor-row"].selected').count(), 0);
        await page.goBack();
        await page.waitForFunction(
            () => document.querySelector('[role="tab"][aria-selected="true"]').dataset.tab === "summary",
        );
        await page.goForward();
        await page.goForward();
        await page.waitForFunction(() =>
            document.querySelector('[data-testid="tensor-detail"]').classList.contains("open"),
        );
        assert.equal(await detailName(page), "blk.0.attn_k.weight");
        assert.equal(await page.evaluate(() => history.length), length, "Back/Forward push nothing");

        // Escape closes the detail (an entry of its own: Back opens it again).
        await page.keyboard.press("Escape");
        assert.equal(await detailName(page), null);
        assert.equal(params(page).tensor, undefined);
        await page.goBack();
        await page.waitForFunction(() =>
            document.querySelector('[data-testid="tensor-detail"]').classList.contains("open"),
        );
        assert.equal(await detailName(page), "blk.0.attn_k.weight");
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("a deep link opens its tab and tensor; Escape closes a metadata value too", async () => {
        const { page, context, problems } = await h.newPage({
            query: "?url=models/tiny-llama.gguf&tab=tensors&tensor=blk.1.ffn_down.weight",
        });
        await waitForModel(page, 22);
        await page.waitForSelector('[data-testid="tensor-stats"]');
        assert.equal(await selectedTab(page), "tensors");
        assert.equal(await detailName(page), "blk.1.ffn_down.weight");
        assert.equal(
            await page.locator('[data-testid="tensor-row"][data-name="blk.1.ffn_down.weight"].selected').count(),
            1,
        );
        const other = await h.newPage({ query: "?url=models/tiny-llama.gguf&tab=metadata" });
        await waitForModel(other.page, 22);
        assert.equal(await selectedTab(other.page), "metadata");
        await other.page.click('[data-testid="metadata-row"][data-key="general.architecture"]');
        assert.equal(await other.page.isVisible('[data-testid="metadata-value"] .viewer-head'), true);
        await other.page.keyboard.press("Escape");
        assert.equal(await other.page.locator('[data-testid="metadata-value"] .viewer-head').count(), 0);
        // A tab the model does not have (no layers in a tokenizer-only file) falls back to the summary.
        await other.page.goto(`${h.url}?url=models/tiny-llama.gguf&tab=no-such-tab`);
        await waitForModel(other.page, 22);
        assert.equal(await selectedTab(other.page), "summary");
        assert.deepEqual([...problems, ...other.problems], []);
        await other.context.close();
        await context.close();
    });

    test("the compared model is in the address; Back ends the comparison, Forward compares again", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        await page.click('[data-testid="compare-open"] summary');
        await page.fill('[data-testid="compare-url-input"]', "models/other.gguf");
        await page.press('[data-testid="compare-url-input"]', "Enter");
        await page.waitForSelector('[data-testid="compare-row"]', { timeout: 30000 });
        assert.deepEqual(params(page), { url: "models/tiny-llama.gguf", compare: "models/other.gguf", tab: "compare" });
        await page.goBack();
        await page.waitForFunction(() => document.querySelector('[data-testid="tab-compare"]').hidden);
        assert.equal(await selectedTab(page), "summary");
        await page.goForward();
        await page.waitForSelector('[data-testid="compare-row"]', { timeout: 30000 });
        await page.waitForFunction(
            () => document.querySelector('[role="tab"][aria-selected="true"]').dataset.tab === "compare",
        );
        assert.deepEqual(problems, []);
        await context.close();
    });
});

describe("keyboard", () => {
    test("arrows, Home/End move the table's cursor, Enter opens; / focuses the filter", async () => {
        const { tensors } = await cliJson(["tensors", h.modelPath("tiny-llama.gguf"), "--json"]);
        const { page, context, problems } = await h.newPage({ query: "?url=models/tiny-llama.gguf&tab=tensors" });
        await waitForModel(page, 22);
        const cursor = () => page.getAttribute('[data-testid="tensor-row"][data-cursor]', "data-name");
        await page.focus('[data-testid="tensor-table"]');
        for (let i = 0; i < 3; ++i) await page.keyboard.press("ArrowDown");
        assert.equal(await cursor(), tensors[2].name);
        assert.equal(await detailName(page), null, "moving does not open");
        await page.keyboard.press("ArrowUp");
        assert.equal(await cursor(), tensors[1].name);
        await page.keyboard.press("Enter");
        await page.waitForSelector('[data-testid="tensor-stats"]');
        assert.equal(await detailName(page), tensors[1].name);
        assert.equal(params(page).tensor, tensors[1].name);
        await page.keyboard.press("End");
        assert.equal(await cursor(), tensors.at(-1).name);
        await page.keyboard.press("Home");
        assert.equal(await cursor(), tensors[0].name);
        // Escape from the table closes the detail and keeps the focus on the table.
        await page.keyboard.press("Escape");
        assert.equal(await detailName(page), null);
        assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), "tensor-table");
        // "/" focuses the filter of the tab on show, and is typed as text inside a field.
        await page.keyboard.press("/");
        assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), "tensor-filter");
        await page.keyboard.type("ffn_down/");
        assert.equal(await page.inputValue('[data-testid="tensor-filter"]'), "ffn_down/");
        await page.click("#tab-metadata");
        await page.keyboard.press("/");
        assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), "metadata-filter");
        await page.click('[data-testid="tab-tokenizer"]');
        await page.keyboard.press("/");
        assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), "token-search");
        assert.deepEqual(problems, []);
        await context.close();
    });
});

/**
 * Number cells (and headers) of the rows on show whose text does not fit in its box, or whose box is not
 * wholly inside the table's visible area (a column scrolled out of view is cut too).
 */
const cutCells = (page) =>
    page.evaluate(() => {
        const table = document.querySelector('[data-testid="tensor-table"]').getBoundingClientRect();
        return [
            ...document.querySelectorAll(
                '[data-testid="tensor-row"]:not([hidden]) .cell.num, .tensor-grid .thead .cell',
            ),
        ]
            .filter((c) => c.offsetParent !== null)
            .filter((c) => {
                const box = c.getBoundingClientRect();
                return c.scrollWidth > c.clientWidth || box.left < table.left || box.right > table.right;
            })
            .map((c) => `${c.parentElement.dataset.name ?? "header"}: ${c.className} "${c.textContent}"`);
    });

describe("layouts", () => {
    test("1280 px: a Qwen-sized model's shapes, sizes and offsets are never cut (detail closed and open)", async () => {
        const { tensors } = await cliJson(["tensors", h.modelPath("huge.gguf"), "--json"]);
        const { page, context, problems } = await h.newPage({
            width: 1280,
            height: 800,
            query: "?url=models/huge.gguf&tab=tensors",
        });
        await waitForModel(page, tensors.length);
        const rows = await collectRows(page, "tensor-table", "tensor-row", "name");
        assert.equal(rows.get("token_embd.weight")[2].text, "151,936 × 16,384");
        assert.ok(
            tensors.some((t) => t.offset >= 1e10),
            "12-digit offsets",
        );
        assert.deepEqual(await cutCells(page), []);
        await page.evaluate(() => (document.querySelector('[data-testid="tensor-table"]').scrollTop = 1e6));
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
        assert.deepEqual(await cutCells(page), []);
        await shot(page, "24-wide-model-1280.png");
        await clickTensor(page, "output.weight");
        await page.waitForSelector('[data-testid="tensor-stats"]', { timeout: 30000 });
        assert.deepEqual(await cutCells(page), []);
        await shot(page, "25-wide-model-1280-detail.png");
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("phone width: the header's Type, Shape and Size stand over the rows' columns", async () => {
        const { page, context, problems } = await h.newPage({
            width: 390,
            height: 844,
            query: "?url=models/huge.gguf&tab=tensors",
        });
        await waitForModel(page, 2 + 6 * 9 + 1);
        const boxes = await page.evaluate(() => {
            const table = document.querySelector('[data-testid="tensor-table"]');
            const edges = (row, cls) => {
                const r = row.querySelector(cls).getBoundingClientRect();
                return [Math.round(r.left), Math.round(r.right)];
            };
            const header = table.querySelector(".thead");
            const rows = [...table.querySelectorAll('[data-testid="tensor-row"]:not([hidden])')];
            const columns = [".c-dtype", ".c-shape", ".c-size"];
            return {
                header: columns.map((c) => edges(header, c)),
                rows: rows.map((row) => columns.map((c) => edges(row, c))),
                overflow: document.documentElement.scrollWidth - window.innerWidth,
            };
        });
        assert.equal(boxes.overflow, 0);
        assert.ok(boxes.rows.length > 5);
        for (const row of boxes.rows) assert.deepEqual(row, boxes.header);
        assert.deepEqual(await cutCells(page), []);
        await shot(page, "26-phone-wide-model.png");
        assert.deepEqual(problems, []);
        await context.close();
    });
});

describe("error banner", () => {
    const banner = '[data-testid="error-banner"]';

    async function loadUrl(page, url) {
        await page.evaluate(() => document.querySelector('[data-testid="error-banner"]').setAttribute("hidden", ""));
        const started = Date.now();
        await page.fill('[data-testid="url-input"]', url);
        await page.click('[data-testid="url-load"]');
        await page.waitForSelector(`${banner}:not([hidden])`, { timeout: 20000 });
        return {
            ms: Date.now() - started,
            code: await page.getAttribute(banner, "data-code"),
            text: await page.textContent(`${banner} .error-message`),
        };
    }

    test("a 404 says not found, once; CORS refusals name the header, without the retry delay", async (t) => {
        const { page, context, problems } = await h.newPage();
        const missing = await loadUrl(page, "models/no-such-model.gguf");
        assert.equal(missing.code, "http");
        assert.equal(missing.text, "no-such-model.gguf: not found: HTTP 404");
        await shot(page, "27-error-404.png");

        // No Access-Control-Allow-Origin: a refusal (the server answers no-cors requests), not retried. A
        // network error is retried 4 times, after 250 + 500 + 1000 + 2000 ms.
        const none = await loadUrl(page, `${cors.base}/none/tiny.gguf`);
        assert.equal(none.code, "cors");
        assert.match(
            none.text,
            /^tiny\.gguf: the server's CORS headers do not let this page read the file: the server answered without Access-Control-Allow-Origin for http:\/\/127\.0\.0\.1:\d+/,
        );
        assert.equal(none.text.split("tiny.gguf").length - 1, 1, `the file named once: ${none.text}`);
        assert.ok(none.ms < 2000, `${none.ms} ms`);
        await shot(page, "28-error-cors.png");

        // Allowed, but Content-Range (and ETag) not exposed.
        const hidden = await loadUrl(page, `${cors.base}/hidden/tiny.gguf`);
        assert.equal(hidden.code, "cors");
        assert.match(hidden.text, /must send Access-Control-Expose-Headers: Content-Range, ETag$/);
        assert.ok(hidden.ms < 2000, `${hidden.ms} ms`);
        t.diagnostic(`banner after: 404 ${missing.ms} ms, no ACAO ${none.ms} ms, Content-Range hidden ${hidden.ms} ms`);
        assert.deepEqual(
            problems.filter((p) => !/404|CORS|Access-Control|Failed to load/.test(p)),
            [],
        );
        await context.close();
    });
});
