// SPDX-License-Identifier: MIT
// The page as the README's main command serves it: built with `web/build.mjs --samples DIR`, the welcome
// view lists the bundled models and each link opens one (by ?url=, read with Range requests).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { repoRoot, screenshotDir, setUp, waitForModel } from "./support/harness.mjs";
import { tinyLlamaGguf, tinySafetensors } from "./support/models.mjs";

const run = promisify(execFile);
let h;
let dir;

before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "ws-samples-"));
    const samples = path.join(dir, "samples");
    await mkdir(samples);
    await writeFile(path.join(samples, "tiny-llama-q8_0.gguf"), tinyLlamaGguf());
    await writeFile(path.join(samples, "tiny.safetensors"), tinySafetensors());
    await writeFile(path.join(samples, "notes.txt"), "not a model");
    await run(process.execPath, [path.join(repoRoot, "web", "build.mjs"), "--out", path.join(dir, "site"), "--samples", samples]);
    h = await setUp({}, { root: path.join(dir, "site") });
});
after(async () => {
    await h?.tearDown();
    await rm(dir, { recursive: true, force: true });
});

test("the welcome view lists the bundled samples and a link opens one", async () => {
    const { page, context, problems } = await h.newPage();
    await page.waitForSelector("#samples:not([hidden])");
    const links = await page.locator("#sample-list a").allTextContents();
    assert.deepEqual(links, ["tiny-llama-q8_0.gguf", "tiny.safetensors"]);
    await page.screenshot({ path: path.join(screenshotDir, "00-welcome-samples.png") });
    await page.click("#sample-list a >> text=tiny.safetensors");
    await waitForModel(page, 5);
    assert.equal(new URL(page.url()).searchParams.get("url"), "samples/tiny.safetensors");
    await page.goBack();
    await page.goForward();
    await waitForModel(page, 5);
    assert.deepEqual(problems, []);
    await context.close();
});
