// SPDX-License-Identifier: MIT
// A synthetic model with 5,000 tensors and a 150,000-token vocabulary (plus 75,000 merges): the page opens
// it, and its tensor table and vocabulary list render and scroll without a long task over 200 ms on the main
// thread (PerformanceObserver "longtask", observed from the page's first script). The figures are printed
// as test diagnostics and written to build/screenshots/scale-report.json.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";
import { screenshotDir, setUp, waitForModel } from "./support/harness.mjs";
import { largeGguf } from "./support/models.mjs";

const TENSORS = 5000;
const VOCABULARY = 150000;
const LONG_TASK_LIMIT_MS = 200;

let h;
before(async () => {
    h = await setUp({ "large.gguf": largeGguf({ count: TENSORS, vocab: VOCABULARY }) });
});
after(() => h?.tearDown());

/** Scrolls a virtualized list from top to bottom, `step` pixels per frame; the slowest frame in ms. */
function scrollThrough(page, testId, step) {
    return page.evaluate(
        async ({ testId, step }) => {
            const el = document.querySelector(`[data-testid="${testId}"]`);
            const frame = () => new Promise((r) => requestAnimationFrame(r));
            el.scrollTop = 0;
            let last = await frame();
            let slowest = 0;
            let frames = 0;
            while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
                el.scrollTop += step;
                const now = await frame();
                slowest = Math.max(slowest, now - last);
                last = now;
                ++frames;
            }
            return { slowest, frames };
        },
        { testId, step },
    );
}

const longTasks = (page) => page.evaluate(() => window.__longTasks);

/** Opens the model in a fresh page, scrolls everything; the figures of this run. */
async function scenario(t, attempt) {
    const { page, context, problems } = await h.newPage();
    // The page's own start (parsing its script, first layout, in a cold browser process) comes before any
    // model: it is reported, and the limit applies from opening the model on.
    await page.waitForLoadState("load");
    await page.waitForTimeout(500);
    const atStart = await longTasks(page);
    const report = { attempt, page_load_longest_task_ms: Math.max(0, ...atStart.map((x) => x.duration)) };
    t.diagnostic(`run ${attempt}: page load (before any model): longest task ${report.page_load_longest_task_ms} ms`);
    const phase = async (name, fn) => {
        const before = (await longTasks(page)).length;
        const started = Date.now();
        const result = await fn();
        const tasks = (await longTasks(page)).slice(before);
        report[name] = { ms: Date.now() - started, longest_task_ms: Math.max(0, ...tasks.map((x) => x.duration)), long_tasks: tasks.length, ...result };
        t.diagnostic(`run ${attempt}: ${name}: ${JSON.stringify(report[name])}`);
    };

    await phase("open", async () => {
        await page.setInputFiles('[data-testid="file-input"]', h.modelPath("large.gguf"));
        await waitForModel(page, TENSORS);
        const shown = await page.evaluate(() => performance.getEntriesByName("weightstream: show model").at(-1).duration);
        return { show_model_ms: Math.round(shown) };
    });
    assert.equal(await page.textContent('[data-fact="vocab-size"] .value'), VOCABULARY.toLocaleString("en-US"));

    await phase("tensor table: scroll 5,000 rows", async () => {
        await page.click("#tab-tensors");
        const rowsInDom = await page.locator('[data-testid="tensor-row"]').count();
        assert.ok(rowsInDom < 80, `virtualized: ${rowsInDom} row elements`);
        const scroll = await scrollThrough(page, "tensor-table", 300);
        const last = await page.locator('[data-testid="tensor-row"]:not([hidden])').evaluateAll((rows) =>
            rows.sort((a, b) => b.vlistIndex - a.vlistIndex)[0].dataset.name);
        assert.equal(last, `blk.${TENSORS / 10 - 1}.layer_output_scale.weight`);
        return { slowest_frame_ms: Math.round(scroll.slowest), frames: scroll.frames };
    });
    await page.screenshot({ path: path.join(screenshotDir, "18-large-tensors.png") });

    await phase("tensor table: sort, filter, group by layer, scroll", async () => {
        await page.click('.thead button:has-text("Name")');
        await page.fill('[data-testid="tensor-filter"]', "attn");
        assert.equal(await page.textContent(".tensor-table-root .count"), `${(TENSORS * 0.5).toLocaleString("en-US")} of ${TENSORS.toLocaleString("en-US")} tensors`);
        await page.fill('[data-testid="tensor-filter"]', "");
        await page.check('[data-testid="tensor-group-toggle"]');
        const scroll = await scrollThrough(page, "tensor-table", 600);
        return { slowest_frame_ms: Math.round(scroll.slowest), frames: scroll.frames };
    });

    await phase("vocabulary: open, scroll 150,000 items, search", async () => {
        await page.click("#tab-metadata");
        await page.click('[data-testid="metadata-row"][data-key="tokenizer.ggml.tokens"]');
        await page.waitForSelector('[data-testid="array-items"] .trow');
        assert.ok((await page.locator('[data-testid="array-items"] .trow').count()) < 100);
        // 150,000 items are 3.9 million pixels: scroll in big strides (every frame renders a new window).
        const scroll = await scrollThrough(page, "array-items", 20000);
        await page.fill('[data-testid="array-search"]', "kalo");
        await page.waitForFunction(() => / of 150,000 items$/.test(document.querySelector('[data-testid="metadata-value"] .count')?.textContent ?? ""));
        return { slowest_frame_ms: Math.round(scroll.slowest), frames: scroll.frames };
    });
    await page.screenshot({ path: path.join(screenshotDir, "19-large-vocabulary.png") });

    const all = (await longTasks(page)).slice(atStart.length);
    report.longest_task_ms = Math.max(0, ...all.map((x) => x.duration));
    report.long_tasks = all.length;
    report.long_task_list = all.map((x) => [Math.round(x.start), Math.round(x.duration)]);
    t.diagnostic(`run ${attempt}: longest main-thread task from opening the model to the end: ${report.longest_task_ms} ms (${all.length} tasks over 50 ms)`);
    assert.deepEqual(problems, []);
    await context.close();
    return report;
}

test(`${TENSORS.toLocaleString("en-US")} tensors and a ${VOCABULARY.toLocaleString("en-US")}-token vocabulary render and scroll without long tasks`, async (t) => {
    // A long task is wall time: on a shared machine one preemption can stretch a 40 ms task past the limit.
    // A second run in a fresh page tells such noise from a real regression, which fails both.
    const runs = [await scenario(t, 1)];
    if (runs[0].longest_task_ms > LONG_TASK_LIMIT_MS) runs.push(await scenario(t, 2));
    await writeFile(path.join(screenshotDir, "scale-report.json"), `${JSON.stringify(runs, null, 2)}\n`);
    const best = Math.min(...runs.map((r) => r.longest_task_ms));
    assert.ok(best <= LONG_TASK_LIMIT_MS, `a long task over ${LONG_TASK_LIMIT_MS} ms in every run: ${JSON.stringify(runs.map((r) => r.long_task_list))}`);
});
