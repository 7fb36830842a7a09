// SPDX-License-Identifier: MIT
// The page's Quantize… action in headless Chromium, against the native CLI: for a generated F16 llama (rows
// that take llama-quantize's fallback included) the plan the page shows before starting (every tensor's type,
// offset and size, the output's size) is the layout of the file `weightstream quantize` writes for the same
// recipe and importance matrix, and the bytes the page saves, through showSaveFilePicker (stubbed here with an
// in-memory writable) or as a download where there is no File System Access API, are that file's bytes. A
// cancel aborts the writable: nothing is saved.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { cliJson, cliPath, setUp, waitForModel } from "./support/harness.mjs";
import { legacyImatrix, quantizableGguf } from "./support/models.mjs";

const run = promisify(execFile);
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

const MODEL = "quant.gguf";
const IMATRIX = "quant.imatrix.dat";
const TENSORS = 21;

let h;
before(async () => {
    const model = quantizableGguf();
    h = await setUp({ [MODEL]: model.bytes, [IMATRIX]: legacyImatrix(model.weights) });
});
after(async () => {
    await h?.tearDown();
});

// What `weightstream quantize` writes for the recipe: {sha256, size, tensors: [[name, dtype, offset, nbytes]]}.
// Run in the models' folder with the imatrix named as the page names it (its File's name), since
// quantize.imatrix.file records the path as typed.
const cliOutputs = new Map();
async function cliOutput(type, imatrix) {
    const key = `${type}|${imatrix ?? ""}`;
    if (!cliOutputs.has(key)) {
        const out = `cli-${type}${imatrix ? "-imatrix" : ""}.gguf`;
        const args = ["quantize", MODEL, out, "--type", type, ...(imatrix ? ["--imatrix", imatrix] : [])];
        await run(cliPath, args, { cwd: h.modelDir });
        const bytes = await readFile(h.modelPath(out));
        const info = await cliJson(["info", h.modelPath(out), "--json"]);
        cliOutputs.set(key, {
            sha256: sha256(bytes),
            size: bytes.length,
            tensors: info.tensors.map((t) => [t.name, t.dtype, Number(t.offset), Number(t.nbytes)]),
        });
    }
    return cliOutputs.get(key);
}

// Replaces showSaveFilePicker with one whose file is an in-memory WritableStream: window.__saved records the
// suggested name, the chunks written, and whether the stream was closed (saved) or aborted (discarded). Each
// write takes `writeMs` (a slow disk, for cancelling midway).
async function stubSavePicker(page, { writeMs = 0 } = {}) {
    await page.evaluate((writeMs) => {
        const saved = { name: null, chunks: [], writes: 0, closed: false, aborted: false };
        window.__saved = saved;
        window.showSaveFilePicker = async (options) => {
            saved.name = options?.suggestedName ?? null;
            return {
                createWritable: async () =>
                    new WritableStream({
                        async write(chunk) {
                            saved.chunks.push(new Uint8Array(chunk).slice());
                            saved.writes += 1;
                            if (writeMs) await new Promise((r) => setTimeout(r, writeMs));
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
    }, writeMs);
}

// {name, size, sha256, closed, aborted, writes} of what the stub's file received, hashed in the page.
function savedFile(page) {
    return page.evaluate(async () => {
        const s = window.__saved;
        const size = s.chunks.reduce((n, c) => n + c.length, 0);
        const all = new Uint8Array(size);
        let at = 0;
        for (const c of s.chunks) {
            all.set(c, at);
            at += c.length;
        }
        const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
        const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
        return { name: s.name, size, sha256: hex, closed: s.closed, aborted: s.aborted, writes: s.writes };
    });
}

// Opens the model, the Quantize tab, picks the imatrix (optional) and the recipe; waits for that recipe's plan.
async function planInPage(page, type, imatrix) {
    await waitForModel(page, TENSORS);
    await page.click('[data-testid="quantize-open"]');
    await page.waitForSelector('[data-testid="quantize-type"] option[value="Q4_K_M"]', { state: "attached" });
    if (imatrix) {
        await page.setInputFiles('[data-testid="quantize-imatrix-input"]', h.modelPath(imatrix));
        assert.equal(await page.textContent('[data-testid="quantize-imatrix-name"]'), imatrix);
    }
    await page.selectOption('[data-testid="quantize-type"]', type);
    await page.waitForFunction(
        (t) => {
            const s = document.querySelector('[data-testid="quantize-summary"]');
            return (s.dataset.state === "planned" && s.dataset.type === t) || s.dataset.state === "failed";
        },
        type,
        { timeout: 20000 },
    );
}

// The plan on show: {size (predicted, bytes), tensors: [[name, type, offset, nbytes]]}.
async function shownPlan(page) {
    const size = Number(await page.getAttribute('[data-testid="quantize-summary"]', "data-size"));
    const tensors = await page.$$eval('[data-testid="quantize-plan-row"]', (trs) =>
        trs.map((tr) => [tr.dataset.name, tr.dataset.type, Number(tr.dataset.offset), Number(tr.dataset.nbytes)]),
    );
    return { size, tensors };
}

async function waitForStatus(page, state) {
    await page.waitForFunction(
        (state) => document.querySelector('[data-testid="quantize-status"]').dataset.state === state,
        state,
        { timeout: 60000 },
    );
}

describe("Quantize…", () => {
    test("Q4_K_M: the plan shown is the CLI output's layout; the file saved is the CLI's bytes", async () => {
        const expected = await cliOutput("Q4_K_M");
        const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await stubSavePicker(page);
            await planInPage(page, "Q4_K_M");
            const plan = await shownPlan(page);
            assert.equal(plan.size, expected.size);
            assert.deepEqual(plan.tensors, expected.tensors);
            // The rows too long for whole blocks show their fallback (ffn_down is 320 wide).
            const down = page.locator('[data-testid="quantize-plan-row"][data-name="blk.0.ffn_down.weight"]');
            assert.match(await down.textContent(), /fallback from Q\d_K/);
            assert.match(await page.textContent('[data-testid="quantize-summary"]'), /2 with a fallback type/);
            // The list of recipes is the core's: every file type once, the aliases left out.
            const options = await page.$$eval('[data-testid="quantize-type"] option', (os) => os.map((o) => o.value));
            assert.equal(options.length, 33);
            for (const name of ["Q8_0", "IQ2_XXS", "MXFP4_MOE", "TQ1_0", "F16"]) assert.ok(options.includes(name), name);
            assert.ok(!options.includes("Q4_K"));

            await page.click('[data-testid="quantize-start"]');
            await waitForStatus(page, "done");
            const saved = await savedFile(page);
            assert.deepEqual(
                { name: saved.name, size: saved.size, sha256: saved.sha256, closed: saved.closed, aborted: saved.aborted },
                { name: "quant-Q4_K_M.gguf", size: expected.size, sha256: expected.sha256, closed: true, aborted: false },
            );
            const status = page.locator('[data-testid="quantize-status"]');
            assert.equal(await status.getAttribute("data-saved"), "file");
            assert.equal(await status.getAttribute("data-bytes"), String(expected.size));
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("IQ2_XXS: refused without an importance matrix; with the imatrix file, the CLI's plan and bytes", async () => {
        const expected = await cliOutput("IQ2_XXS", IMATRIX);
        const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await stubSavePicker(page);
            await planInPage(page, "IQ2_XXS");
            const summary = page.locator('[data-testid="quantize-summary"]');
            assert.equal(await summary.getAttribute("data-state"), "failed");
            assert.equal(await summary.getAttribute("data-code"), "unsupported");
            assert.match(await summary.textContent(), /imatrix\.required/);
            assert.equal(await page.isDisabled('[data-testid="quantize-start"]'), true);

            await page.setInputFiles('[data-testid="quantize-imatrix-input"]', h.modelPath(IMATRIX));
            await page.waitForFunction(
                () => document.querySelector('[data-testid="quantize-summary"]').dataset.state === "planned",
                null,
                { timeout: 20000 },
            );
            const plan = await shownPlan(page);
            assert.equal(plan.size, expected.size);
            assert.deepEqual(plan.tensors, expected.tensors);
            assert.ok(plan.tensors.some(([, type]) => type === "IQ2_XXS"));
            await page.click('[data-testid="quantize-start"]');
            await waitForStatus(page, "done");
            const saved = await savedFile(page);
            assert.equal(saved.name, "quant-IQ2_XXS.gguf");
            assert.equal(saved.size, expected.size);
            assert.equal(saved.sha256, expected.sha256);
            assert.equal(saved.closed, true);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("without the File System Access API the output is downloaded, the CLI's bytes", async () => {
        const expected = await cliOutput("Q8_0");
        const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
        try {
            await page.evaluate(() => {
                window.showSaveFilePicker = undefined;
            });
            await planInPage(page, "Q8_0");
            assert.equal((await shownPlan(page)).size, expected.size);
            const [download] = await Promise.all([
                page.waitForEvent("download", { timeout: 60000 }),
                page.click('[data-testid="quantize-start"]'),
            ]);
            assert.equal(download.suggestedFilename(), "quant-Q8_0.gguf");
            const bytes = await readFile(await download.path());
            assert.equal(bytes.length, expected.size);
            assert.equal(sha256(bytes), expected.sha256);
            await waitForStatus(page, "done");
            assert.equal(await page.getAttribute('[data-testid="quantize-status"]', "data-saved"), "download");
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("Cancel midway aborts the file (nothing saved), with progress in tensors and bytes until then", async () => {
        const { page, context, problems } = await h.newPage({ query: `?url=models/${MODEL}` });
        const downloads = [];
        page.on("download", (d) => downloads.push(d));
        try {
            await stubSavePicker(page, { writeMs: 250 });
            await planInPage(page, "Q4_K_M");
            await page.click('[data-testid="quantize-start"]');
            await page.waitForFunction(() => window.__saved.writes >= 3, null, { timeout: 20000 });
            const progress = await page.textContent('[data-testid="progress"] .progress-text');
            assert.match(progress, new RegExp(`tensor \\d+ of ${TENSORS} · .+ of .+`));
            const status = await page.textContent('[data-testid="quantize-status"]');
            assert.match(status, new RegExp(`\\d+ of ${TENSORS} tensors done · .+ written`));
            await page.click('[data-testid="progress"] .progress-cancel');
            await waitForStatus(page, "cancelled");
            const saved = await savedFile(page);
            assert.equal(saved.aborted, true);
            assert.equal(saved.closed, false);
            assert.ok(saved.size < (await cliOutput("Q4_K_M")).size);
            assert.match(await page.textContent('[data-testid="quantize-status"]'), /nothing was saved/);
            assert.equal(await page.isHidden('[data-testid="progress"]'), true);
            assert.deepEqual(downloads, []);
            // The page is usable again: the same recipe runs to the end.
            await stubSavePicker(page);
            await page.click('[data-testid="quantize-start"]');
            await waitForStatus(page, "done");
            assert.equal((await savedFile(page)).sha256, (await cliOutput("Q4_K_M")).sha256);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("without the File System Access API, Cancel midway downloads nothing", async () => {
        // /slow/ serves the model at 16 KiB/s: its 2 MB of tensors take minutes, the header a moment.
        const { page, context, problems } = await h.newPage({ query: `?url=slow/${MODEL}` });
        const downloads = [];
        page.on("download", (d) => downloads.push(d));
        try {
            await page.evaluate(() => {
                window.showSaveFilePicker = undefined;
            });
            await planInPage(page, "Q4_K_M");
            await page.click('[data-testid="quantize-start"]');
            await page.waitForFunction(
                () => /^tensor \d+ of \d+ · .*KiB of/.test(document.querySelector('[data-testid="progress"] .progress-text')?.textContent ?? ""),
                null,
                { timeout: 30000 },
            );
            await page.click('[data-testid="progress"] .progress-cancel');
            await waitForStatus(page, "cancelled");
            await page.waitForTimeout(500);
            assert.deepEqual(downloads, []);
            assert.equal(await page.isHidden('[data-testid="error-banner"]'), true);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });
});
