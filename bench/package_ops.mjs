// SPDX-License-Identifier: MIT
// One package operation, timed, for before/after ratios of two checkouts (docs/SPEED.md, "Operations as jobs"):
//   node bench/package_ops.mjs ROOT quantize F16.gguf        quantize(F16, {type: "Q4_K_M"}), the output hashed
//   node bench/package_ops.mjs ROOT compare A.gguf B.gguf    compare(A, B)
// ROOT is a checkout whose wasm/js/dist is built (so two checkouts can be timed against each other by farm-bench).
import { createHash } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [root, op, a, b] = process.argv.slice(2);
const ws = await import(pathToFileURL(path.resolve(root, "wasm/js/index.js")).href);
const t0 = performance.now();
if (op === "quantize") {
    const hash = createHash("sha256");
    for await (const chunk of ws.quantize(a, { type: "Q4_K_M" })) hash.update(chunk);
    console.log(`quantize: sha256 ${hash.digest("hex")}, ${((performance.now() - t0) / 1000).toFixed(2)} s`);
} else if (op === "compare") {
    const report = await ws.compare(a, b);
    console.log(`compare: ${report.tensors.length} rows, ${((performance.now() - t0) / 1000).toFixed(2)} s`);
} else {
    throw new Error("usage: node bench/package_ops.mjs ROOT quantize F16.gguf | compare A.gguf B.gguf");
}
