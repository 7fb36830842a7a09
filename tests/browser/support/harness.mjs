// SPDX-License-Identifier: MIT
// Shared setup of the page tests: the built page and a folder of test models served by nginx, headless
// Chromium (the system's /usr/bin/chromium through playwright-core; nothing is downloaded), the CLI's JSON,
// and helpers that read the page's virtualized tables.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { startNginx } from "../../../web/serve.mjs";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const webRoot = path.join(repoRoot, "build", "web");
export const screenshotDir = path.join(repoRoot, "build", "screenshots");
export const cliPath = path.join(repoRoot, "build", "bin", "weightstream");
const CHROMIUM = "/usr/bin/chromium";

const run = promisify(execFile);

/** The CLI's JSON output for `args` (e.g. ["tensors", file, "--json"]). */
export async function cliJson(args) {
    if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: cmake --preset native-release && cmake --build --preset native-release --target weightstream`);
    const { stdout } = await run(cliPath, args, { maxBuffer: 1 << 28 });
    return JSON.parse(stdout);
}

/** A folder of models (name -> bytes), the page and the folder served by nginx, and a browser. */
export async function setUp(models = {}, { root = webRoot } = {}) {
    if (!existsSync(path.join(root, "index.html")) || !existsSync(path.join(root, "weightstream.wasm"))) {
        throw new Error(`${root} is not built: node web/build.mjs`);
    }
    const dir = await mkdtemp(path.join(os.tmpdir(), "ws-page-"));
    const modelDir = path.join(dir, "models");
    await mkdir(modelDir);
    for (const [name, bytes] of Object.entries(models)) await writeFile(path.join(modelDir, name), bytes);
    // /models/ serves the folder; /slow/ serves it at 16 KiB/s per request, for cancelling a download midway.
    const aliases = [
        ["models", modelDir],
        ["slow", modelDir, "limit_rate 16k;"],
    ];
    const server = await startNginx({ root, aliases, dir: path.join(dir, "nginx") });
    const browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    await mkdir(screenshotDir, { recursive: true });
    return {
        url: server.url,
        modelDir,
        modelPath: (name) => path.join(modelDir, name),
        browser,
        async newPage({ width = 1280, height = 800, colorScheme = "light", query = "" } = {}) {
            const context = await browser.newContext({ viewport: { width, height }, colorScheme, acceptDownloads: true });
            const page = await context.newPage();
            const problems = [];
            const requests = [];
            page.on("request", (r) => requests.push(r.url()));
            page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
            page.on("console", (m) => {
                if (m.type() === "error") problems.push(`console: ${m.text()}`);
            });
            page.on("dialog", (d) => {
                problems.push(`dialog: ${d.message()}`);
                d.dismiss().catch(() => {});
            });
            // Long tasks from the very start of the page, for the responsiveness test.
            await page.addInitScript(() => {
                window.__longTasks = [];
                new PerformanceObserver((list) => {
                    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
                }).observe({ type: "longtask", buffered: true });
            });
            await page.goto(server.url + query);
            return { page, context, problems, requests };
        },
        async tearDown() {
            await browser.close();
            await server.stop();
            await rm(dir, { recursive: true, force: true });
        },
    };
}

/** Waits until the model view shows `count` tensors (the Tensors tab label). */
export async function waitForModel(page, count) {
    await page.waitForFunction(
        (n) => document.querySelector("#tab-tensors")?.textContent === `Tensors (${n.toLocaleString("en-US")})` && !document.querySelector("#model").hidden,
        count,
        { timeout: 20000 },
    );
}

/**
 * Every row of a virtualized table, read by scrolling it from top to bottom: Map(key -> cell texts and
 * data attributes). keyAttr: the row attribute that identifies it ("name" for tensors).
 */
export async function collectRows(page, tableTestId, rowTestId, keyAttr) {
    return new Map(
        await page.evaluate(
            async ({ tableTestId, rowTestId, keyAttr }) => {
                const table = document.querySelector(`[data-testid="${tableTestId}"]`);
                const rows = new Map();
                const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
                table.scrollTop = 0;
                await frame();
                for (;;) {
                    for (const row of table.querySelectorAll(`[data-testid="${rowTestId}"]:not([hidden])`)) {
                        const cells = [...row.querySelectorAll('[role="cell"]')].map((c) => ({ text: c.textContent, ...c.dataset }));
                        rows.set(row.dataset[keyAttr], cells);
                    }
                    if (table.scrollTop + table.clientHeight >= table.scrollHeight - 1) break;
                    table.scrollTop += Math.max(50, table.clientHeight - 60);
                    await frame();
                }
                table.scrollTop = 0;
                return [...rows];
            },
            { tableTestId, rowTestId, keyAttr },
        ),
    );
}

/** Scrolls the tensor table to the row `name` and clicks it. */
export async function clickTensor(page, name) {
    await page.evaluate(async (name) => {
        const table = document.querySelector('[data-testid="tensor-table"]');
        const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
        table.scrollTop = 0;
        await frame();
        for (;;) {
            const row = [...table.querySelectorAll('[data-testid="tensor-row"]:not([hidden])')].find((r) => r.dataset.name === name);
            if (row) {
                row.scrollIntoView({ block: "center" });
                await frame();
                return;
            }
            if (table.scrollTop + table.clientHeight >= table.scrollHeight - 1) throw new Error(`no row for ${name}`);
            table.scrollTop += table.clientHeight - 60;
            await frame();
        }
    }, name);
    await page.locator(`[data-testid="tensor-row"][data-name="${cssEscape(name)}"]:not([hidden])`).click();
}

/** A CSS attribute-value escape for names that hold quotes and backslashes. */
export function cssEscape(s) {
    return s.replace(/["\\]/g, "\\$&");
}

/**
 * Pixels of an element's screenshot: {total, differing (from its most common colour), colours}. The PNG
 * is decoded in a blank page of the same browser, not in the page under test.
 */
export async function screenshotPixels(browser, locator) {
    const png = await locator.screenshot();
    const page = await browser.newPage();
    try {
        return await page.evaluate(async (b64) => {
            const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
            const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
            const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
            const ctx = canvas.getContext("2d");
            ctx.drawImage(bitmap, 0, 0);
            const data = new Uint32Array(ctx.getImageData(0, 0, bitmap.width, bitmap.height).data.buffer);
            const counts = new Map();
            for (const p of data) counts.set(p, (counts.get(p) ?? 0) + 1);
            let top = 0;
            for (const n of counts.values()) top = Math.max(top, n);
            return { total: data.length, differing: data.length - top, colours: counts.size };
        }, png.toString("base64"));
    } finally {
        await page.close();
    }
}
