// SPDX-License-Identifier: MIT
// The metadata view's Edit… mode in headless Chromium: a value and the chat template changed in the page and
// saved through showSaveFilePicker (stubbed with an in-memory writable) are the bytes `weightstream edit`
// writes for the same changes, and the saved file's metadata reads back changed (by the CLI's info --json);
// without the File System Access API the same bytes arrive as a download; a core error is shown, not saved.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { cliJson, cliPath, setUp, waitForModel } from "./support/harness.mjs";

const run = promisify(execFile);
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

const MODEL = "types.gguf";
const TEMPLATE = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}";
let h;
let tensorCount;
before(async () => {
    const bytes = await readFile(new URL("../data/ggml/ggml-types.gguf", import.meta.url));
    h = await setUp({ [MODEL]: bytes });
    tensorCount = (await cliJson(["info", h.modelPath(MODEL), "--json"])).tensors.length;
});
after(async () => {
    await h?.tearDown();
});

async function stubSavePicker(page) {
    await page.evaluate(() => {
        const saved = { name: null, chunks: [], closed: false, aborted: false };
        window.__saved = saved;
        window.showSaveFilePicker = async (options) => {
            saved.name = options?.suggestedName ?? null;
            return {
                createWritable: async () =>
                    new WritableStream({
                        write(chunk) {
                            saved.chunks.push(new Uint8Array(chunk).slice());
                        },
                        close() {
                            saved.closed = true;
                        },
                        abort() {
                            saved.aborted = true;
                        },
                    }),
            };
        };
    });
}

async function savedBytes(page) {
    const { name, closed, parts } = await page.evaluate(() => ({
        name: window.__saved.name,
        closed: window.__saved.closed,
        parts: window.__saved.chunks.map((c) => Array.from(c)),
    }));
    return { name, closed, bytes: Buffer.concat(parts.map((p) => Buffer.from(p))) };
}

// Opens the model, the Metadata tab and the Edit… mode; sets general.name, a new typed key and the template.
async function editInPage(page) {
    await waitForModel(page, tensorCount);
    await page.click("#tab-metadata");
    await page.click('[data-testid="metadata-edit"]');
    await page.fill('[data-testid="edit-key"]', "general.name");
    await page.fill('[data-testid="edit-value"]', "edited in the page");
    await page.click('[data-testid="edit-set"]');
    await page.fill('[data-testid="edit-key"]', "page.ids");
    await page.fill('[data-testid="edit-value"]', "[4, 5, 6]");
    await page.selectOption('[data-testid="edit-type"]', "u16");
    await page.click('[data-testid="edit-set"]');
    await page.fill('[data-testid="edit-chat-template"]', TEMPLATE);
    assert.equal(await page.locator('[data-testid="edit-changes"] li').count(), 2);
}

async function cliEdited() {
    const tmpl = h.modelPath("t.jinja");
    await writeFile(tmpl, TEMPLATE);
    const out = h.modelPath("cli-edited.gguf");
    await run(cliPath, [
        "edit",
        h.modelPath(MODEL),
        out,
        "--force",
        "--set",
        "general.name=edited in the page",
        "--set",
        "page.ids=[4,5,6]:u16",
        "--set-chat-template",
        tmpl,
    ]);
    return readFile(out);
}

describe("the metadata view's Edit… mode", () => {
    test("saves through showSaveFilePicker the bytes `weightstream edit` writes; they read back changed", async () => {
        const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await stubSavePicker(page);
            await editInPage(page);
            await page.click('[data-testid="edit-save"]');
            await page.waitForFunction(
                () => ["done", "failed"].includes(document.querySelector('[data-testid="edit-status"]').dataset.state),
                null,
                { timeout: 20000 },
            );
            assert.equal(await page.getAttribute('[data-testid="edit-status"]', "data-state"), "done");
            const saved = await savedBytes(page);
            assert.equal(saved.name, "types-edited.gguf");
            assert.ok(saved.closed);
            assert.equal(sha256(saved.bytes), sha256(await cliEdited()));
            const file = h.modelPath("page-edited.gguf");
            await writeFile(file, saved.bytes);
            const info = await cliJson(["info", file, "--json"]);
            const meta = new Map(info.metadata.map((e) => [e.key, e]));
            assert.equal(meta.get("general.name").value, "edited in the page");
            assert.equal(meta.get("page.ids").item_type, "uint16");
            assert.deepEqual(meta.get("page.ids").value, [4, 5, 6]);
            assert.equal(meta.get("tokenizer.chat_template").value, TEMPLATE);
            await run(cliPath, ["verify", file]);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("without showSaveFilePicker the same bytes arrive as a download", async () => {
        const { page, context } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await page.evaluate(() => delete window.showSaveFilePicker);
            await editInPage(page);
            const [download] = await Promise.all([
                page.waitForEvent("download", { timeout: 20000 }),
                page.click('[data-testid="edit-save"]'),
            ]);
            assert.equal(download.suggestedFilename(), "types-edited.gguf");
            const bytes = await readFile(await download.path());
            assert.equal(sha256(bytes), sha256(await cliEdited()));
        } finally {
            await context.close();
        }
    });

    test("a change the core refuses is shown and nothing is saved", async () => {
        const { page, context } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await stubSavePicker(page);
            await waitForModel(page, tensorCount);
            await page.click("#tab-metadata");
            await page.click('[data-testid="metadata-edit"]');
            await page.fill('[data-testid="edit-key"]', "general.alignment");
            await page.fill('[data-testid="edit-value"]', "64");
            await page.click('[data-testid="edit-set"]');
            await page.click('[data-testid="edit-save"]');
            await page.waitForFunction(
                () => document.querySelector('[data-testid="edit-status"]').dataset.state === "failed",
                null,
                { timeout: 20000 },
            );
            assert.match(await page.textContent('[data-testid="edit-status"]'), /general\.alignment/);
            const saved = await savedBytes(page);
            assert.equal(saved.closed, false);
        } finally {
            await context.close();
        }
    });
});
