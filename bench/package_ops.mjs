// SPDX-License-Identifier: MIT
// One package operation, timed, for before/after ratios of two checkouts (docs/SPEED.md, "Operations as jobs"):
//   node bench/package_ops.mjs ROOT quantize F16.gguf [TYPE [OUT]]  quantize(F16, {type: TYPE}) (Q4_K_M), the
//                                                                  output written to OUT, or else hashed
//   node bench/package_ops.mjs ROOT compare A.gguf B.gguf    compare(A, B)
// ROOT is a checkout whose wasm/js/dist is built (so two checkouts can be timed against each other by farm-bench).
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [root, op, a, b, out] = process.argv.slice(2);
const ws = await import(pathToFileURL(path.resolve(root, "wasm/js/index.js")).href);
const t0 = performance.now();
if (op === "quantize") {
    // Written (what a user does) or hashed, not both: hashing is not part of the operation's time.
    const hash = out ? null : createHash("sha256");
    const file = out ? createWriteStream(out) : null;
    for await (const chunk of ws.quantize(a, { type: b ?? "Q4_K_M" })) {
        if (hash) hash.update(chunk);
        else if (!file.write(chunk)) await new Promise((resolve) => file.once("drain", resolve));
    }
    if (file) await new Promise((resolve, reject) => file.end((error) => (error ? reject(error) : resolve())));
    const what = hash ? `sha256 ${hash.digest("hex")}` : `written to ${out}`;
    console.log(`quantize: ${what}, ${((performance.now() - t0) / 1000).toFixed(2)} s`);
} else if (op === "compare") {
    const report = await ws.compare(a, b);
    console.log(`compare: ${report.tensors.length} rows, ${((performance.now() - t0) / 1000).toFixed(2)} s`);
} else {
    throw new Error("usage: node bench/package_ops.mjs ROOT quantize F16.gguf [TYPE [OUT]] | compare A.gguf B.gguf");
}
