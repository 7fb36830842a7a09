// SPDX-License-Identifier: MIT
// The page's network panel (web/network_view.js): its numbers for the model on show equal what crossed the
// network, as Chromium itself reports every request of the page and its worker (Playwright's request
// events: count and response body sizes) — requests, bytes fetched, and after a reload (a new worker, the
// range cache read back from OPFS) one revalidation and every byte from the cache; the cache's entries and
// bytes; and its Clear button empties the cache (the next open fetches again).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { clickTensor, setUp, waitForModel } from "./support/harness.mjs";
import { tinyLlamaGguf } from "./support/models.mjs";

const MODEL = "tiny-llama.gguf";
let h;

before(async () => {
    h = await setUp({ [MODEL]: tinyLlamaGguf() });
});
after(async () => {
    await h?.tearDown();
});

// The panel's numbers: {model: {key: value}, cache: {key: value}, entries: [text]}.
async function panel(page) {
    return page.evaluate(() => {
        const values = (testid) => {
            const table = document.querySelector(`[data-testid="${testid}"]`);
            if (!table) return null;
            const out = {};
            for (const tr of table.querySelectorAll("tr[data-key]")) {
                const v = tr.querySelector("td").dataset.value;
                out[tr.dataset.key] = v === "" ? null : Number(v);
            }
            return out;
        };
        return {
            model: values("network-model"),
            cache: values("network-cache"),
            entries: [...document.querySelectorAll('[data-testid="network-entries"] li')].map((li) => li.title),
            renders: Number(document.querySelector("#network").dataset.renders ?? 0),
        };
    });
}

// Waits for a redraw after `renders` that satisfies `ok`.
async function panelAfter(page, renders, ok = () => true) {
    for (let i = 0; i < 200; ++i) {
        const p = await panel(page);
        if (p.renders > renders && ok(p)) return p;
        await page.waitForTimeout(25);
    }
    throw new Error(`the network panel did not redraw: ${JSON.stringify(await panel(page))}`);
}

// Every request of the page and its worker for the model, with its status and body size, as Chromium saw it.
function watch(context) {
    const seen = [];
    context.on("requestfinished", async (request) => {
        if (!request.url().endsWith(`/models/${MODEL}`)) return;
        const entry = { range: request.headers().range ?? null, status: null, body: null };
        seen.push(entry);
        const response = await request.response();
        entry.status = response?.status() ?? null;
        entry.body = (await request.sizes()).responseBodySize;
    });
    return seen;
}

async function settled(seen, count) {
    for (let i = 0; i < 200 && (seen.length < count || seen.some((e) => e.body === null)); ++i)
        await new Promise((r) => setTimeout(r, 25));
    return seen;
}

test("the network panel equals what crossed the network; the cache is shown, reused after a reload, cleared", async () => {
    const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
    const seen = watch(context);
    await waitForModel(page, 22);
    await page.click("#network > summary");
    let p = await panelAfter(page, 0, (x) => x.model && x.cache);
    await settled(seen, p.model.requests);
    // The open: the header's reads, all from the network.
    assert.equal(p.model.requests, seen.length);
    assert.equal(
        p.model.bytesFetched,
        seen.reduce((n, e) => n + e.body, 0),
    );
    assert.equal(p.model.retries, 0);
    assert.ok(p.model.timeToFirstByte > 0);
    assert.deepEqual(p.entries, [new URL(`models/${MODEL}`, h.url).href]);
    assert.equal(p.cache.entries, 1);
    assert.equal(p.cache.bytes, p.model.bytesFetched);

    // A tensor past the header's first read: its bytes are fetched once (the read and the stats share the fetch).
    await page.click("#tab-tensors");
    await clickTensor(page, "blk.1.ffn_down.weight");
    const opened = p.model;
    p = await panelAfter(page, p.renders, (x) => x.model.bytesFetched > opened.bytesFetched);
    await settled(seen, p.model.requests);
    assert.equal(p.model.requests, seen.length);
    assert.equal(
        p.model.bytesFetched,
        seen.reduce((n, e) => n + e.body, 0),
    );
    const cold = p;

    // A reload: a new worker; the cache is read back: one revalidation (304), every byte from the cache. (The
    // model's own address, not the page's current one: that names the open tensor, which would be read at once.)
    seen.length = 0;
    await page.goto(new URL(`?url=models/${MODEL}`, h.url).href);
    await waitForModel(page, 22);
    await page.click("#network > summary");
    p = await panelAfter(page, 0, (x) => x.model && x.cache);
    await settled(seen, 1);
    assert.deepEqual(
        seen.map((e) => [e.status, e.body, e.range]),
        [[304, 0, "bytes=0-0"]],
    );
    assert.equal(p.model.requests, 1);
    assert.equal(p.model.bytesFetched, 0);
    assert.ok(p.model.bytesFromCache >= 64 * 1024, JSON.stringify(p.model));
    assert.equal(p.cache.bytes, cold.cache.bytes);
    assert.ok(cold.cache.bytes > opened.bytesFetched);
    await page.click("#tab-tensors");
    await clickTensor(page, "blk.1.ffn_down.weight");
    const read = await panelAfter(page, p.renders, (x) => x.model.bytesFromCache > p.model.bytesFromCache);
    assert.equal(read.model.requests, 1);
    assert.equal(read.model.bytesFetched, 0);

    // Clear: the cache is empty, and the next open fetches everything again (no revalidation).
    const before = read.renders;
    await page.click('[data-testid="network-clear"]');
    p = await panelAfter(page, before, (x) => x.cache?.entries === 0);
    assert.deepEqual([p.cache.entries, p.cache.bytes, p.entries], [0, 0, []]);
    // (The model's own address again: the open tensor's read and statistics share one fetch, the second served
    // from the cache the first fills, which is not what this checks.)
    seen.length = 0;
    await page.goto(new URL(`?url=models/${MODEL}`, h.url).href);
    await waitForModel(page, 22);
    await page.click("#network > summary");
    p = await panelAfter(page, 0, (x) => x.model && x.cache);
    await settled(seen, p.model.requests);
    assert.ok(
        seen.every((e) => e.range !== "bytes=0-0" && e.status === 206),
        JSON.stringify(seen),
    );
    assert.equal(p.model.bytesFromCache, 0);
    assert.ok(p.model.bytesFetched > 0);
    assert.deepEqual(problems, []);
    await context.close();
});
