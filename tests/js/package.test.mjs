// SPDX-License-Identifier: MIT
// The package as a user gets it: its exports, the `files` whitelist, and the packed tarball installed into an
// empty project, imported by name in Node and accepted by tsc.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";

import * as weightstream from "weightstream";
import * as weightstreamWorker from "weightstream/worker";

import { repoRoot, testData } from "./helpers.mjs";

const pkg = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8"));
const work = mkdtempSync(path.join(tmpdir(), "ws-pack-"));
after(() => rmSync(work, { recursive: true, force: true }));

function npm(args, cwd) {
    return execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

test("the package exports open, compare, convert (with its plan), quantize (with its plan and file types), edit, dtypes, the range cache's cacheInfo and clearCache, tokenizer and Tokenizer, and WeightstreamError; weightstream/worker the worker helpers", () => {
    assert.deepEqual(Object.keys(weightstream).sort(), [
        "Tokenizer",
        "WeightstreamError",
        "cacheInfo",
        "clearCache",
        "compare",
        "convert",
        "convertPlan",
        "dtypes",
        "edit",
        "open",
        "quantize",
        "quantizeFileTypes",
        "quantizePlan",
        "tokenizer",
    ]);
    assert.deepEqual(Object.keys(weightstreamWorker).sort(), [
        "WeightstreamError",
        "WeightstreamWorker",
        "compareInWorker",
        "openInWorker",
    ]);
    assert.equal(weightstreamWorker.WeightstreamError, weightstream.WeightstreamError);
    assert.equal(pkg.name, "weightstream");
    assert.equal(pkg.type, "module");
    assert.equal(pkg.exports["."].types, pkg.types);
    for (const target of [
        pkg.exports["."].default,
        pkg.types,
        pkg.exports["./worker"].default,
        pkg.exports["./worker"].types,
    ])
        assert.ok(existsSync(path.join(repoRoot, target)), target);
});

test("npm pack holds the JavaScript, the types, the built wasm and the docs, nothing else", () => {
    const [report] = JSON.parse(npm(["pack", "--dry-run", "--json", "--ignore-scripts"], repoRoot));
    const files = report.files.map((f) => f.path).sort();
    for (const needed of [
        "package.json",
        "wasm/js/index.js",
        "wasm/js/index.d.ts",
        "wasm/js/worker.js",
        "wasm/js/worker_main.js",
        "wasm/js/worker.d.ts",
        "wasm/js/dist/weightstream.js",
        "wasm/js/dist/weightstream.wasm",
        "README.md",
        "LICENSE",
        "docs/API.md",
    ]) {
        assert.ok(files.includes(needed), `${needed} missing from ${files.join(", ")}`);
    }
    const allowed = new RegExp(
        "^(package\\.json|README\\.md|LICENSE|docs/API\\.md|wasm/js/[a-z_]+\\.js|wasm/js/(index|worker)\\.d\\.ts|" +
            "wasm/js/dist/weightstream\\.(js|wasm))$",
    );
    assert.deepEqual(
        files.filter((f) => !allowed.test(f)),
        [],
    );
});

test("the packed tarball installs into an empty project, imports by name and type-checks", () => {
    const tarball = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", work], repoRoot))[0]
        .filename;
    const project = path.join(work, "project");
    mkdirSync(project);
    writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "empty", private: true, type: "module" }));
    npm(["install", "--no-audit", "--no-fund", "--offline", path.join(work, tarball)], project);

    const model = path.join(testData, "ggml/ggml-types.gguf");
    writeFileSync(
        path.join(project, "main.js"),
        `import { open } from "weightstream";
const model = await open(${JSON.stringify(model)});
const data = await model.read("q4_k.weight");
await model.close();
const { openInWorker } = await import("weightstream/worker");
const inWorker = await openInWorker(${JSON.stringify(model)});
const same = Buffer.from((await inWorker.read("q4_k.weight")).buffer).equals(Buffer.from(data.buffer));
await inWorker.close();
console.log(JSON.stringify({ format: model.format, tensors: model.tensors.length, values: data.length, same }));
`,
    );
    const out = JSON.parse(execFileSync(process.execPath, ["main.js"], { cwd: project, encoding: "utf8" }));
    assert.deepEqual(out, { format: "gguf", tensors: 46, values: 4096, same: true });

    const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc");
    if (!existsSync(tsc)) return; // devDependencies not installed
    writeFileSync(
        path.join(project, "check.ts"),
        `import { open, type Model } from "weightstream";
import { openInWorker, WeightstreamWorker, type WorkerModel } from "weightstream/worker";
const model: Model = await open(new Uint8Array(8));
const values: Float32Array = await model.read("t", { rows: [0, 1] });
const parts: Model = await open([{ name: "a-00001-of-00002.gguf", source: new Blob([]) }, "a-00002-of-00002.gguf"]);
const remote: WorkerModel = await openInWorker("https://example.com/m.gguf", { concurrency: 2 });
const worker = new WeightstreamWorker();
const raw: Uint8Array = await (await worker.open(new Blob([]))).read("t", { as: "raw" });
await worker.terminate();
const ids: Int32Array = model.tokenizer().tokenize("x", { addSpecial: false });
export { values, parts, remote, raw, ids };
`,
    );
    writeFileSync(
        path.join(project, "tsconfig.json"),
        JSON.stringify({
            compilerOptions: {
                target: "ES2022",
                module: "NodeNext",
                moduleResolution: "NodeNext",
                lib: ["ES2022", "DOM"],
                strict: true,
                noEmit: true,
                types: [],
            },
            files: ["check.ts"],
        }),
    );
    execFileSync(process.execPath, [tsc, "-p", project], { encoding: "utf8" });
});
