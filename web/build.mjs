// SPDX-License-Identifier: MIT
// Builds the inspection page into build/web/: a static folder any HTTP server can serve.
//   node web/build.mjs [--out DIR] [--samples DIR] [--dev]
// main.js is bundled by esbuild with the weightstream package (wasm/js), and so is the package's worker
// script (weightstream/worker starts it as new Worker(new URL("./worker_main.js", import.meta.url)), which
// esbuild leaves as it is: the script must be next to main.js). The package's weightstream.wasm is copied
// next to both, where its loader looks for it (new URL(..., import.meta.url)).
// --samples DIR copies the models in DIR into OUT/samples/ and lists them in samples/index.json, which the
// page shows as links.
import { build } from "esbuild";
import { copyFile, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
    options: {
        out: { type: "string", default: path.join(root, "build", "web") },
        samples: { type: "string" },
        dev: { type: "boolean", default: false },
    },
});
const out = path.resolve(args.out);
const wasm = path.join(root, "wasm", "js", "dist", "weightstream.wasm");

try {
    await stat(wasm);
} catch {
    console.error(
        `web/build.mjs: ${path.relative(root, wasm)} is missing: build the package first (npm run build:wasm)`,
    );
    process.exit(1);
}

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

await build({
    entryPoints: {
        main: path.join(root, "web", "main.js"),
        worker_main: path.join(root, "wasm", "js", "worker_main.js"),
        // The chat template's renderer (template_view.js starts it from next to main.js).
        template_worker: path.join(root, "web", "template_worker.js"),
    },
    outdir: out,
    bundle: true,
    format: "esm",
    platform: "browser",
    // Module workers, import.meta and top-level await: Chrome 111, Firefox 114, Safari 16.4.
    target: ["chrome111", "firefox114", "safari16.4"],
    minify: !args.dev,
    sourcemap: true,
    legalComments: "none",
    alias: {
        weightstream: path.join(root, "wasm", "js", "index.js"),
        "weightstream/worker": path.join(root, "wasm", "js", "worker.js"),
    },
    logLevel: "warning",
});

for (const file of ["index.html", "style.css", "favicon.svg"])
    await copyFile(path.join(root, "web", file), path.join(out, file));
await copyFile(wasm, path.join(out, "weightstream.wasm"));

// The page lists samples/index.json; an empty list when there are none (rather than a 404).
const samplesDir = path.join(out, "samples");
await mkdir(samplesDir, { recursive: true });
const samples = [];
if (args.samples) {
    const from = path.resolve(args.samples);
    for (const name of (await readdir(from)).sort()) {
        if (!/\.(gguf|safetensors)$/i.test(name) && !/\.index\.json$/i.test(name)) continue;
        await copyFile(path.join(from, name), path.join(samplesDir, name));
        samples.push({ name, size: (await stat(path.join(samplesDir, name))).size });
    }
    console.log(`web/build.mjs: ${samples.length} sample models in ${path.relative(root, samplesDir)}`);
}
await writeFile(path.join(samplesDir, "index.json"), `${JSON.stringify(samples, null, 1)}\n`);

console.log(`web/build.mjs: built ${path.relative(root, out) || out}`);
