// SPDX-License-Identifier: MIT
// Every string from a file is text: a GGUF whose metadata keys and values, tensor names, token list and chat
// template hold <script>, <img onerror>, <svg onload> and <iframe srcdoc> payloads shows them verbatim,
// runs nothing, opens no dialog and adds no element. (The page's Content-Security-Policy would also stop
// inline scripts; the element checks below hold without it.)
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { cliJson, clickTensor, collectRows, screenshotDir, setUp, waitForModel } from "./support/harness.mjs";
import { XSS_PAYLOADS, XSS_TENSOR_NAMES, xssGguf } from "./support/models.mjs";

let h;
before(async () => {
    h = await setUp({ "xss.gguf": xssGguf() });
});
after(() => h?.tearDown());

/** Elements no view of the page makes: any of them would have come from file text. */
const foreignElements = () =>
    document.querySelectorAll("body script, img, svg, iframe, object, embed, b, i, body style, body link, [onerror], [onload]").length;

test("payloads in metadata, tensor names and chat template are shown as text and never run", async () => {
    const { page, context, problems } = await h.newPage();
    const scriptsBefore = await page.evaluate(() => document.scripts.length);
    await page.setInputFiles('[data-testid="file-input"]', h.modelPath("xss.gguf"));
    await waitForModel(page, 4);
    const info = await cliJson(["info", h.modelPath("xss.gguf"), "--json"]);

    // Summary: the name card holds the <img onerror> payload as its text; the document title too.
    assert.equal(await page.textContent('[data-fact="name"] .value'), XSS_PAYLOADS[1]);
    assert.ok((await page.title()).startsWith(XSS_PAYLOADS[1]));
    const facts = await page.locator('[data-testid="model-summary"] .facts dd').allTextContents();
    assert.ok(facts.includes(XSS_PAYLOADS[2]), "general.description as text");
    await page.screenshot({ path: path.join(screenshotDir, "15-xss-summary.png") });

    // Tensors: each name verbatim, as the row's text and its data-name.
    await page.click("#tab-tensors");
    const rows = await collectRows(page, "tensor-table", "tensor-row", "name");
    assert.deepEqual([...rows.keys()].sort(), [...XSS_TENSOR_NAMES].sort());
    for (const [name, cells] of rows) assert.equal(cells[0].text, name);
    await clickTensor(page, XSS_TENSOR_NAMES[0]);
    await page.waitForSelector('[data-testid="tensor-stats"]');
    assert.equal(await page.textContent('[data-testid="tensor-detail"] h2'), XSS_TENSOR_NAMES[0]);
    await page.screenshot({ path: path.join(screenshotDir, "16-xss-tensors.png") });

    // Metadata: keys and values verbatim; the chat template and the token list as text.
    await page.click("#tab-metadata");
    const meta = await collectRows(page, "metadata-table", "metadata-row", "key");
    assert.deepEqual([...meta.keys()], info.metadata.map((m) => m.key));
    for (const m of info.metadata) {
        assert.equal(meta.get(m.key)[0].text, m.key);
        if (m.type === "string" && !m.value.includes("\n")) assert.equal(meta.get(m.key)[2].text, m.value);
    }
    const template = info.metadata.find((m) => m.key === "tokenizer.chat_template").value;
    await page.click('[data-testid="metadata-row"][data-key="tokenizer.chat_template"]');
    assert.equal(await page.textContent('[data-testid="metadata-text"]'), template);
    await page.screenshot({ path: path.join(screenshotDir, "17-xss-chat-template.png") });
    await page.click('[data-testid="metadata-row"][data-key="tokenizer.ggml.tokens"]');
    const tokens = await page.locator('[data-testid="array-items"] .trow:not([hidden]) .a-value').allTextContents();
    assert.deepEqual(tokens, info.metadata.find((m) => m.key === "tokenizer.ggml.tokens").value.map((t) => JSON.stringify(t)));

    // The tokenizer and chat template views: the same payloads as text (the template's output too).
    await page.click('[data-testid="tab-tokenizer"]');
    const titles = await page.locator('[data-testid="token-row"]:not([hidden]) .t-text').evaluateAll((cells) => cells.map((c) => c.title));
    assert.deepEqual(titles, info.metadata.find((m) => m.key === "tokenizer.ggml.tokens").value.map((t) => JSON.stringify(t)));
    await page.click('[data-testid="tab-template"]');
    await page.waitForFunction(() => ["ok", "error"].includes(document.querySelector('[data-testid="template-status"]')?.dataset.state));
    assert.equal(await page.textContent('[data-testid="template-source"]'), template);
    assert.match(await page.textContent('[data-testid="template-output"]'), /<script>/);
    await page.screenshot({ path: path.join(screenshotDir, "17b-xss-template-view.png") });

    // Nothing ran, nothing was injected.
    await page.waitForTimeout(300); // an injected onerror/onload would have fired by now
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.equal(await page.evaluate(() => document.scripts.length), scriptsBefore);
    assert.equal(await page.evaluate(foreignElements), 0);
    assert.deepEqual(problems, []); // no dialog, no page error
    await context.close();
});

test("the page's sources never write HTML", async () => {
    // The guarantee above rests on this: text goes in through textContent and text nodes only. The page's
    // own modules, and the package's (wasm/js: the worker the page runs) too.
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
    for (const [dir, least] of [
        ["web", 14],
        ["wasm/js", 8],
    ]) {
        const files = (await readdir(path.join(root, dir))).filter((f) => f.endsWith(".js"));
        assert.ok(files.length >= least, files.join(" "));
        for (const file of files) {
            const source = await readFile(path.join(root, dir, file), "utf8");
            for (const sink of ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "createContextualFragment", "srcdoc", "eval(", "new Function"]) {
                assert.ok(!source.includes(sink), `${dir}/${file} uses ${sink}`);
            }
        }
    }
});
