// SPDX-License-Identifier: MIT
// The package as a web developer gets it: the packed tarball (`npm pack`) installed into an empty project with
// Vite (from the registry), a page that imports { open } from "weightstream" (and openInWorker from
// "weightstream/worker") built by `vite build`, then loaded in headless Chromium from nginx. It must find its
// .wasm where Vite put it, in the page and in the worker Vite bundled, and read a model exactly as the CLI.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";

import {
    chromiumMissing,
    cliHashes,
    cliInfo,
    cliPath,
    launchChromium,
    repoRoot,
    requireSetup,
    testData,
} from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";

const VITE = "vite@8.3.8";
const skip =
    (!nginxPath && "nginx not installed") ||
    chromiumMissing() ||
    (!cliPath && "the native CLI is not built (it is the reference)") ||
    (!existsSync(path.join(repoRoot, "wasm/js/dist/weightstream.wasm")) && "the wasm is not built");

const work = mkdtempSync(path.join(tmpdir(), "ws-vite-"));
after(() => rmSync(work, { recursive: true, force: true }));

function npm(args, cwd) {
    return execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

const MAIN = `
import { open } from "weightstream";
import { openInWorker } from "weightstream/worker";

async function sha256(view) {
    const digest = await crypto.subtle.digest("SHA-256", view);
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function run() {
    const url = new URL(document.body.dataset.model, location.href).href;
    const model = await open(url);
    const hashes = {};
    for (const t of model.tensors) hashes[t.name] = await sha256(await model.read(t.name));
    const info = model.info;
    await model.close();

    const inWorker = await openInWorker(url);
    const workerHashes = {};
    for (const t of inWorker.tensors.slice(0, 8)) workerHashes[t.name] = await sha256(await inWorker.read(t.name));
    await inWorker.close();
    return { info, hashes, workerHashes };
}

window.result = run().catch((e) => ({ error: String(e?.stack ?? e), code: e?.code }));
`;

requireSetup(skip);

test("the packed tarball in a Vite project: built, served, run in Chromium", { timeout: 15 * 60 * 1000 }, async () => {
    const tarball = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", work], repoRoot))[0]
        .filename;
    const project = path.join(work, "project");
    mkdirSync(project);
    writeFileSync(
        path.join(project, "package.json"),
        JSON.stringify({ name: "vite-app", private: true, type: "module" }, null, 2),
    );
    npm(["install", "--no-audit", "--no-fund", "--prefer-offline", path.join(work, tarball)], project);
    npm(["install", "--no-audit", "--no-fund", "--prefer-offline", "-D", "-E", VITE], project);
    writeFileSync(
        path.join(project, "index.html"),
        `<!doctype html>
<html>
  <head><meta charset="utf-8"><title>weightstream in Vite</title></head>
  <body data-model="../../ggml/ggml-types.gguf"><script type="module" src="./main.js"></script></body>
</html>
`,
    );
    writeFileSync(path.join(project, "main.js"), MAIN);
    execFileSync(process.execPath, [path.join(project, "node_modules/vite/bin/vite.js"), "build", "--base", "./"], {
        cwd: project,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
    });
    const assets = readdirSync(path.join(project, "dist/assets"));
    assert.ok(
        assets.some((f) => f.endsWith(".wasm")),
        `no .wasm among the built assets: ${assets.join(", ")}`,
    );

    const server = await startNginx();
    const browser = await launchChromium();
    try {
        cpSync(path.join(project, "dist"), path.join(server.generatedDir, "app"), { recursive: true });
        const page = await browser.newPage();
        const problems = [];
        page.on("pageerror", (e) => problems.push(String(e)));
        // A read that stops early (the header ended inside a read-ahead) cancels its response on purpose.
        page.on("requestfailed", (r) => {
            if (r.failure()?.errorText !== "net::ERR_ABORTED") problems.push(`${r.url()}: ${r.failure()?.errorText}`);
        });
        let aborted = 0;
        page.on("requestfailed", (r) => (aborted += r.failure()?.errorText === "net::ERR_ABORTED"));
        page.on("response", (r) => r.status() >= 400 && problems.push(`${r.url()}: HTTP ${r.status()}`));
        await page.goto(`${server.rangeBase}/generated/app/index.html`);
        const got = await page.evaluate(() => window.result);
        assert.equal(got.error, undefined, `${got.error}`);
        assert.deepEqual(problems, []);
        assert.ok(aborted <= 2, `${aborted} requests cancelled`); // the header's read-ahead, in page and worker

        const file = path.join(testData, "ggml/ggml-types.gguf");
        assert.deepEqual(got.info, cliInfo(file));
        const hashes = cliHashes(file);
        for (const [name, h] of hashes) assert.equal(got.hashes[name], h.f32_sha256, name);
        assert.equal(Object.keys(got.workerHashes).length, 8);
        for (const [name, h] of Object.entries(got.workerHashes)) assert.equal(h, hashes.get(name).f32_sha256, name);
    } finally {
        await browser.close();
        await server.stop();
    }
    // The page fetched the package's wasm from Vite's assets, not from the package folder.
    assert.ok(!readFileSync(path.join(project, "dist/index.html"), "utf8").includes("node_modules"));
});
