// SPDX-License-Identifier: MIT
// The page's comparison in headless Chromium: ?url=A&compare=B lists every pair with the verdicts of
// `weightstream diff --json`, worst first; a pair's detail overlays both sides' histograms (the counts of
// `weightstream stats --json` of each) and shows the difference heatmap, of the Hugging Face side as the
// converter writes it (the package's read({transform}): an F16 Gemma's norms + 1 rounded to F16, no difference).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { gemmaF16Checkpoint, hfSafetensors, llamaCheckpoint, llamaGguf } from "../js/compare-fixtures.mjs";
import { cliJson, cliPath, setUp } from "./support/harness.mjs";

const run = promisify(execFile);

let h;
let tmp;
before(async () => {
    const checkpoint = llamaCheckpoint();
    tmp = await mkdtemp(path.join(os.tmpdir(), "ws-compare-page-"));
    const f32 = path.join(tmp, "f32.gguf");
    const q8 = path.join(tmp, "q8.gguf");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(f32, llamaGguf(checkpoint, { mistake: "no_permute" }));
    await run(cliPath, ["convert", f32, q8, "--dtype", "q8_0"]);
    // An F16 Gemma checkpoint and `weightstream convert`'s GGUF of it (the converter's + 1, rounded to F16).
    const gemma = gemmaF16Checkpoint();
    const { mkdir } = await import("node:fs/promises");
    await mkdir(path.join(tmp, "gemma"));
    for (const [file, bytes] of Object.entries(gemma.files)) await writeFile(path.join(tmp, "gemma", file), bytes);
    const gemmaGguf = path.join(tmp, "gemma.gguf");
    await run(cliPath, ["convert", path.join(tmp, "gemma", "model.safetensors"), gemmaGguf]);
    h = await setUp({
        "model.safetensors": hfSafetensors(checkpoint),
        "config.json": JSON.stringify(checkpoint.config),
        "tiny-q8_0.gguf": await readFile(q8),
        "gemma.gguf": await readFile(gemmaGguf),
    });
    // The Gemma checkpoint in a folder of its own (config.json beside it, as compare() looks for it).
    await mkdir(path.join(h.modelDir, "gemma"));
    for (const [file, bytes] of Object.entries(gemma.files)) await writeFile(path.join(h.modelDir, "gemma", file), bytes);
});
after(async () => {
    await h?.tearDown();
    if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("compare view", () => {
    test("?url=A&compare=B: every pair with diff --json's verdicts, worst first; a pair's detail", async () => {
        const expected = await cliJson(["diff", h.modelPath("model.safetensors"), h.modelPath("tiny-q8_0.gguf"), "--json"]);
        const { page, context, problems } = await h.newPage({
            query: "?url=models/model.safetensors&compare=models/tiny-q8_0.gguf",
        });
        try {
            await page.waitForSelector('[data-testid="compare-row"]', { timeout: 30000 });
            const rows = await page.$$eval('[data-testid="compare-row"]', (trs) =>
                trs.map((tr) => ({ a: tr.dataset.a, b: tr.dataset.b, verdict: tr.dataset.verdict, text: tr.textContent })),
            );
            assert.equal(rows.length, expected.tensors.length);
            const byPair = new Map(rows.map((r) => [`${r.a}|${r.b}`, r]));
            for (const t of expected.tensors) {
                const r = byPair.get(`${t.a ?? ""}|${t.b ?? ""}`);
                assert.ok(r, `no row for ${t.a} / ${t.b}`);
                assert.equal(r.verdict, t.verdict, `${t.a}: verdict`);
                if (t.hint) assert.ok(r.text.includes(t.hint), `${t.a}: hint`);
            }
            // Worst first: the un-permuted q/k (nmse about 2) lead, the identical norms come last.
            assert.match(rows[0].b, /attn_[qk]\.weight$/);
            assert.match(rows[0].text, /without the Q\/K permutation/);
            const nmse = new Map(expected.tensors.map((t) => [t.b, t.metrics?.nmse ?? null]));
            const shown = rows.map((r) => nmse.get(r.b));
            assert.deepEqual(shown, [...shown].sort((x, y) => y - x), "nmse largest first");
            const summary = await page.textContent('[data-testid="compare-summary"]');
            assert.match(summary, new RegExp(`${expected.summary.different} different`));

            // Sortable: nmse ascending puts the smallest first (several pairs tie at 0: the F32 norms).
            await page.click('button[data-sort="nmse"]');
            const first = await page.$eval('[data-testid="compare-row"]', (tr) => tr.dataset.b);
            assert.equal(nmse.get(first), nmse.get(rows.at(-1).b));

            // A pair's detail: both histograms (stats of each side, as the CLI's) and the difference heatmap.
            await page.click('[data-testid="compare-row"][data-b="blk.0.ffn_down.weight"]');
            await page.waitForSelector('[data-testid="compare-histogram"]', { timeout: 20000 });
            await page.waitForSelector('[data-testid="tensor-heatmap"]', { timeout: 20000 });
            const counts = await page.$eval('[data-testid="compare-histogram"]', (c) => [c.dataset.countsA, c.dataset.countsB]);
            const statsA = await cliJson(["stats", h.modelPath("model.safetensors"), "model.layers.0.mlp.down_proj.weight", "--json"]);
            const statsB = await cliJson(["stats", h.modelPath("tiny-q8_0.gguf"), "blk.0.ffn_down.weight", "--json"]);
            assert.equal(counts[0], statsA.tensors[0].histogram.counts.join(","));
            assert.equal(counts[1], statsB.tensors[0].histogram.counts.join(","));
            const window = await page.textContent('[data-testid="compare-diff-window"]');
            assert.match(window, /rows 0–255 of 256, 512 columns/);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("a pair's difference is of the converter's values: an F16 Gemma norm + 1, rounded as the converter adds", async () => {
        const expected = await cliJson(["diff", h.modelPath("gemma/model.safetensors"), h.modelPath("gemma.gguf"), "--json"]);
        const norm = expected.tensors.find((t) => t.b === "blk.0.attn_norm.weight");
        assert.equal(norm.transform, "plus_one");
        assert.equal(norm.verdict, "identical");
        const { page, context, problems } = await h.newPage({
            query: "?url=models/gemma/model.safetensors&compare=models/gemma.gguf",
        });
        try {
            await page.waitForSelector('[data-testid="compare-row"][data-b="blk.0.attn_norm.weight"]', { timeout: 30000 });
            await page.click('[data-testid="compare-row"][data-b="blk.0.attn_norm.weight"]');
            await page.waitForSelector('[data-testid="compare-diff-window"]', { timeout: 20000 });
            // A + 1 in float32 alone would leave differences up to 2^-11 (gemmaF16Checkpoint's values).
            const window = await page.$eval('[data-testid="compare-diff-window"]', (p) => ({
                maxAbs: p.dataset.maxAbs,
                text: p.textContent,
            }));
            assert.equal(window.maxAbs, "0");
            assert.match(window.text, /after plus_one/);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });
});
