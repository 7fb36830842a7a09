// SPDX-License-Identifier: MIT
// The page's Convert view in headless Chromium, against the native CLI: a Hugging Face checkpoint (the shared
// tiny-llama-spm: config.json, model.safetensors, a SentencePiece tokenizer) picked as a folder, given as a
// repository URL or dropped as files shows the core's plan before anything runs (every tensor's GGUF name and type
// and size, the output's exact size: `weightstream convert --json`'s), and the bytes the page saves (through
// showSaveFilePicker, stubbed here with an in-memory file, or as a download) are the bytes `weightstream convert`
// writes for the same folder and type; the result then opens in the page. A llama-quantize recipe runs the one pass:
// its plan is `weightstream quantize CHECKPOINT --json`'s and the saved bytes that command's file. The saved file is
// named from the general.name the core writes. A bad checkpoint shows the package's error; tensor and folder names
// full of markup stay text.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { convertPlan } from "weightstream";
import { writeSafetensors } from "../js/safetensors-writer.mjs";
import { cliPath, repoRoot, setUp, waitForModel } from "./support/harness.mjs";

const run = promisify(execFile);
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

const NAME = "tiny-llama-spm";
const source = path.join(repoRoot, "..", "shared", "testdata", "convert", NAME);
const TENSORS = 21;
// Tensor and folder names that would be markup if any were put in as HTML.
const HOSTILE = ['<img src=x onerror="window.__xss=1">', "</td><script>window.__xss=2</script>"];
const HOSTILE_FOLDER = "<img src=x onerror=window.__xss=3>folder"; // no "/": a folder name

const tmp = mkdtempSync(path.join(os.tmpdir(), "ws-page-convert-"));
const folder = path.join(tmp, NAME);

let h;
before(async () => {
    cpSync(source, folder, { recursive: true });
    h = await setUp({});
    // The checkpoint as a Hugging Face repository serves it: /models/org/NAME/resolve/main/FILE.
    cpSync(source, path.join(h.modelDir, "org", NAME, "resolve", "main"), { recursive: true });
});
after(async () => {
    await h?.tearDown();
    rmSync(tmp, { recursive: true, force: true });
});

// What `weightstream convert FOLDER/model.safetensors OUT --dtype TYPE` writes: {sha256, size, tensors: [[name,
// dtype, nbytes]]}.
const cliOutputs = new Map();
async function cliOutput(type) {
    if (!cliOutputs.has(type)) {
        const out = path.join(tmp, `cli-${type}.gguf`);
        const args = ["convert", path.join(folder, "model.safetensors"), out, "--dtype", type.toLowerCase(), "--json"];
        const { stdout } = await run(cliPath, args);
        const bytes = readFileSync(out);
        const json = JSON.parse(stdout);
        cliOutputs.set(type, {
            sha256: sha256(bytes),
            size: bytes.length,
            tensors: json.tensors.map((t) => [t.name, t.dtype, t.bytes]),
        });
    }
    return cliOutputs.get(type);
}

// What `weightstream quantize FOLDER OUT --type TYPE --json` (the one pass) writes: {sha256, size, tensors}.
const quantizeOutputs = new Map();
async function cliQuantizeOutput(type) {
    if (!quantizeOutputs.has(type)) {
        const out = path.join(tmp, `cli-one-pass-${type}.gguf`);
        const { stdout } = await run(cliPath, ["quantize", folder, out, "--type", type, "--json"]);
        const bytes = readFileSync(out);
        const json = JSON.parse(stdout);
        quantizeOutputs.set(type, {
            sha256: sha256(bytes),
            size: bytes.length,
            tensors: json.tensors.map((t) => [t.name, t.dtype, t.bytes]),
        });
    }
    return quantizeOutputs.get(type);
}

// The saved file's name: the general.name the conversion writes ("Tiny Llama Spm"), as llama.cpp names files.
const SAVED = "Tiny-Llama-Spm";

// Replaces showSaveFilePicker with one whose file is in memory: window.__saved records the suggested name, the
// chunks written, and whether the stream was closed (saved) or aborted; the handle's getFile() reads it back.
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
                getFile: async () => new File(saved.chunks, saved.name),
            };
        };
    });
}

// {name, size, sha256, closed, aborted} of what the stub's file received, hashed in the page.
function savedFile(page) {
    return page.evaluate(async () => {
        const s = window.__saved;
        const all = new Uint8Array(await new Blob(s.chunks).arrayBuffer());
        const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
        const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
        return { name: s.name, size: all.length, sha256: hex, closed: s.closed, aborted: s.aborted };
    });
}

async function waitForSummary(page, states, type) {
    await page.waitForFunction(
        ({ states, type }) => {
            const s = document.querySelector('[data-testid="convert-summary"]');
            return states.includes(s.dataset.state) && (type === undefined || s.dataset.type === type);
        },
        { states, type },
        { timeout: 30000 },
    );
    return page.getAttribute('[data-testid="convert-summary"]', "data-state");
}

// The plan on show: {size, tensors: [[name, type, nbytes]], from: [input names]}.
async function shownPlan(page) {
    const size = Number(await page.getAttribute('[data-testid="convert-summary"]', "data-size"));
    const rows = await page.$$eval('[data-testid="convert-plan-row"]', (trs) =>
        trs.map((tr) => ({ ...tr.dataset, text: tr.textContent })),
    );
    return { size, tensors: rows.map((r) => [r.name, r.type, Number(r.nbytes)]), rows };
}

async function waitForStatus(page, state) {
    await page.waitForFunction(
        (state) => document.querySelector('[data-testid="convert-status"]').dataset.state === state,
        state,
        { timeout: 60000 },
    );
}

async function openConvert(page) {
    await page.click('[data-testid="convert-open"]');
    await page.waitForSelector('[data-testid="convert-view"]:not([hidden])');
}

describe("Convert…", () => {
    test("a folder picked: the CLI's plan; F16 saved through the picker is the CLI's file; it then opens", async () => {
        const expected = await cliOutput("F16");
        const { page, context, problems } = await h.newPage();
        const methods = new Set();
        page.on("request", (r) => methods.add(r.method()));
        try {
            await stubSavePicker(page);
            await openConvert(page);
            await page.setInputFiles('[data-testid="convert-folder-input"]', folder);
            assert.equal(await waitForSummary(page, ["planned", "failed"], "F16"), "planned");
            assert.match(
                await page.textContent('[data-testid="convert-source"]'),
                /^Folder tiny-llama-spm: 4 files \(/,
            );
            const plan = await shownPlan(page);
            assert.equal(plan.size, expected.size);
            assert.deepEqual(plan.tensors, expected.tensors);
            // Each GGUF name beside the checkpoint's.
            const embd = plan.rows.find((r) => r.name === "token_embd.weight");
            assert.equal(embd.inName, "model.embed_tokens.weight");
            assert.match(embd.text, /model\.embed_tokens\.weight/);
            assert.match(await page.textContent('[data-testid="convert-summary"]'), /21 tensors, \d+ re-encoded/);
            // The recipes of llama-quantize are listed; one planned is the one pass's plan.
            const recipes = await page.$$eval('[data-testid="convert-type"] optgroup option', (os) =>
                os.map((o) => o.textContent),
            );
            assert.ok(recipes.includes("Q4_K_M") && !recipes.includes("F16"), String(recipes));
            await page.selectOption('[data-testid="convert-type"]', "recipe:Q4_K_M");
            assert.equal(await waitForSummary(page, ["planned", "failed"], "Q4_K_M"), "planned");
            const quantized = await cliQuantizeOutput("Q4_K_M");
            const recipePlan = await shownPlan(page);
            assert.equal(recipePlan.size, quantized.size);
            assert.deepEqual(recipePlan.tensors, quantized.tensors);
            assert.match(
                await page.textContent('[data-testid="convert-summary"]'),
                /21 tensors, 16 quantized, [\d.]+ bits per weight/,
            );
            assert.equal(await page.isDisabled('[data-testid="convert-start"]'), false);
            await page.selectOption('[data-testid="convert-type"]', "F16");
            assert.equal(await waitForSummary(page, ["planned"], "F16"), "planned");

            await page.click('[data-testid="convert-start"]');
            await waitForStatus(page, "done");
            assert.deepEqual(await savedFile(page), {
                name: `${SAVED}-F16.gguf`,
                size: expected.size,
                sha256: expected.sha256,
                closed: true,
                aborted: false,
            });
            assert.equal(await page.getAttribute('[data-testid="convert-status"]', "data-saved"), "file");
            await waitForModel(page, TENSORS);
            assert.equal(await page.isHidden('[data-testid="convert-view"]'), true);
            assert.match(await page.textContent("#model-headline"), /^GGUF v3 · llama · .* · 21 tensors$/);
            // Nothing was sent anywhere: every request read (the page, the package).
            assert.deepEqual([...methods], ["GET"]);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("a repository URL: its index is looked for, then model.safetensors; Q8_0 downloaded is the CLI's file", async () => {
        const expected = await cliOutput("Q8_0");
        const { page, context, problems, requests } = await h.newPage();
        try {
            await page.evaluate(() => {
                window.showSaveFilePicker = undefined;
            });
            await openConvert(page);
            await page.fill('[data-testid="convert-url-input"]', `${h.url}models/org/${NAME}`);
            await page.click('[data-testid="convert-url-load"]');
            assert.equal(await waitForSummary(page, ["planned", "failed"], "F16"), "planned");
            await page.selectOption('[data-testid="convert-type"]', "Q8_0");
            assert.equal(await waitForSummary(page, ["planned", "failed"], "Q8_0"), "planned");
            const plan = await shownPlan(page);
            assert.equal(plan.size, expected.size);
            assert.deepEqual(plan.tensors, expected.tensors);
            const base = `${h.url}models/org/${NAME}/resolve/main/`;
            for (const file of ["model.safetensors.index.json", "model.safetensors", "config.json"])
                assert.ok(requests.includes(base + file), `${file} requested`);

            const [download] = await Promise.all([
                page.waitForEvent("download", { timeout: 60000 }),
                page.click('[data-testid="convert-start"]'),
            ]);
            assert.equal(download.suggestedFilename(), `${SAVED}-Q8_0.gguf`);
            const bytes = readFileSync(await download.path());
            assert.equal(bytes.length, expected.size);
            assert.equal(sha256(bytes), expected.sha256);
            await waitForStatus(page, "done");
            assert.equal(await page.getAttribute('[data-testid="convert-status"]', "data-saved"), "download");
            await waitForModel(page, TENSORS);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("a recipe from a repository URL: the one pass saved through the picker is the CLI's file; it opens", async () => {
        const expected = await cliQuantizeOutput("Q4_K_M");
        const { page, context, problems } = await h.newPage();
        try {
            await stubSavePicker(page);
            await openConvert(page);
            await page.fill('[data-testid="convert-url-input"]', `${h.url}models/org/${NAME}`);
            await page.click('[data-testid="convert-url-load"]');
            assert.equal(await waitForSummary(page, ["planned", "failed"], "F16"), "planned");
            await page.selectOption('[data-testid="convert-type"]', "recipe:Q4_K_M");
            assert.equal(await waitForSummary(page, ["planned", "failed"], "Q4_K_M"), "planned");
            assert.equal((await shownPlan(page)).size, expected.size);
            await page.click('[data-testid="convert-start"]');
            await waitForStatus(page, "done");
            assert.deepEqual(await savedFile(page), {
                name: `${SAVED}-Q4_K_M.gguf`,
                size: expected.size,
                sha256: expected.sha256,
                closed: true,
                aborted: false,
            });
            assert.match(
                await page.textContent('[data-testid="convert-status"]'),
                /^Saved Tiny-Llama-Spm-Q4_K_M\.gguf/,
            );
            await waitForModel(page, TENSORS);
            assert.match(await page.textContent("#model-headline"), /^GGUF v3 · llama · .* · 21 tensors$/);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("files dropped on the Convert view are the checkpoint; a repository without one says so", async () => {
        const expected = await cliOutput("F16");
        const { page, context, problems } = await h.newPage();
        try {
            await openConvert(page);
            await page.fill('[data-testid="convert-url-input"]', `${h.url}models/org/none`);
            await page.click('[data-testid="convert-url-load"]');
            assert.equal(await waitForSummary(page, ["planned", "failed"]), "failed");
            assert.equal(await page.getAttribute('[data-testid="convert-summary"]', "data-code"), "http");
            assert.match(
                await page.textContent('[data-testid="convert-summary"]'),
                /neither model\.safetensors\.index\.json nor .*\/models\/org\/none\/resolve\/main\/model\.safetensors was found: HTTP 404/,
            );
            // A drop of the checkpoint's files (fetched from the server into Files) while the view is open.
            await page.evaluate(async (base) => {
                const transfer = new DataTransfer();
                for (const name of ["config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json"]) {
                    const blob = await (await fetch(base + name)).blob();
                    transfer.items.add(new File([blob], name));
                }
                window.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, cancelable: true }));
            }, `${h.url}models/org/${NAME}/resolve/main/`);
            assert.equal(await waitForSummary(page, ["planned", "failed"], "F16"), "planned");
            assert.match(
                await page.textContent('[data-testid="convert-source"]'),
                /^4 files \(config\.json, model\.safetensors/,
            );
            assert.equal((await shownPlan(page)).size, expected.size);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("Cancel midway aborts the file: nothing saved, nothing opened; the same checkpoint then converts", async () => {
        const expected = await cliOutput("F16");
        const { page, context, problems } = await h.newPage();
        try {
            await stubSavePicker(page);
            await openConvert(page);
            // /slow/ serves at 16 KiB/s: the header and config.json come at once, the 660 KB of tensors do not.
            await page.fill(
                '[data-testid="convert-url-input"]',
                `${h.url}slow/org/${NAME}/resolve/main/model.safetensors`,
            );
            await page.click('[data-testid="convert-url-load"]');
            assert.equal(await waitForSummary(page, ["planned", "failed"], "F16"), "planned");
            await page.click('[data-testid="convert-start"]');
            await page.waitForFunction(
                () =>
                    /^tensor \d+ of 21 · /.test(
                        document.querySelector('[data-testid="progress"] .progress-text')?.textContent ?? "",
                    ),
                null,
                { timeout: 30000 },
            );
            await page.click('[data-testid="progress"] .progress-cancel');
            await waitForStatus(page, "cancelled");
            const saved = await savedFile(page);
            assert.equal(saved.aborted, true);
            assert.equal(saved.closed, false);
            assert.ok(saved.size < expected.size);
            assert.match(await page.textContent('[data-testid="convert-status"]'), /nothing was saved/);
            assert.equal(await page.isHidden("#model"), true);
            assert.equal(await page.isHidden('[data-testid="error-banner"]'), true);
            // From the fast URL, to the end.
            await stubSavePicker(page);
            await page.fill(
                '[data-testid="convert-url-input"]',
                `${h.url}models/org/${NAME}/resolve/main/model.safetensors`,
            );
            await page.click('[data-testid="convert-url-load"]');
            assert.equal(await waitForSummary(page, ["planned", "failed"], "F16"), "planned");
            await page.click('[data-testid="convert-start"]');
            await waitForStatus(page, "done");
            assert.equal((await savedFile(page)).sha256, expected.sha256);
            await waitForModel(page, TENSORS);
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });

    test("a bad checkpoint shows the package's error; markup in tensor and folder names stays text", async () => {
        // A safetensors header that claims more bytes than the file has, in a file named with markup.
        const broken = path.join(tmp, "broken");
        mkdirSync(broken);
        const header = Buffer.alloc(16);
        header.writeBigUInt64LE(1000n);
        header.write("{}      ", 8);
        const brokenFile = path.join(broken, "<img src=x onerror=window.__xss=4>.safetensors");
        writeFileSync(brokenFile, header);
        const expectedError = await convertPlan(brokenFile, {
            to: "gguf",
            dtype: "f16",
        }).then(
            () => assert.fail("the broken checkpoint was planned"),
            (e) => e,
        );
        // Tensors named with markup, in a folder named with markup (no config.json: the names are kept).
        const evil = path.join(tmp, HOSTILE_FOLDER);
        mkdirSync(evil);
        const tensors = HOSTILE.map((name) => ({ name, dtype: "F32", shape: [2, 2], data: new Uint8Array(16) }));
        writeFileSync(path.join(evil, "model.safetensors"), writeSafetensors({ tensors }));

        const { page, context, problems } = await h.newPage();
        try {
            await openConvert(page);
            await page.setInputFiles('[data-testid="convert-files-input"]', brokenFile);
            assert.equal(await waitForSummary(page, ["planned", "failed"]), "failed");
            assert.equal(await page.getAttribute('[data-testid="convert-summary"]', "data-code"), expectedError.code);
            assert.ok(
                (await page.textContent('[data-testid="convert-summary"]')).includes(expectedError.message),
                expectedError.message,
            );
            assert.equal(await page.isDisabled('[data-testid="convert-start"]'), true);
            assert.equal(
                await page.textContent('[data-testid="convert-source"]'),
                "1 file (<img src=x onerror=window.__xss=4>.safetensors)",
            );

            await page.setInputFiles('[data-testid="convert-folder-input"]', evil);
            assert.equal(await waitForSummary(page, ["planned", "failed"], "F16"), "planned");
            const plan = await shownPlan(page);
            assert.deepEqual(
                plan.rows.map((r) => r.name),
                HOSTILE,
            );
            for (const r of plan.rows) assert.ok(r.text.startsWith(r.name));
            assert.ok(
                (await page.textContent('[data-testid="convert-source"]')).startsWith(`Folder ${HOSTILE_FOLDER}: `),
            );
            const injected = await page.evaluate(() => ({
                xss: window.__xss ?? null,
                img: document.querySelectorAll("#convert img, #convert script").length,
            }));
            assert.deepEqual(injected, { xss: null, img: 0 });
            assert.deepEqual(problems, []);
        } finally {
            await context.close();
        }
    });
});
