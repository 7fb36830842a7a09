// SPDX-License-Identifier: MIT
// Peak memory of quantize() in Node: writes a generated llama-shaped F16 model of about 2 GiB (4 layers of a
// 7B's width, vocabulary 32768), then quantizes it to Q4_K_M through the package, hashing the output (nothing
// is kept), and prints the time, the peak process RSS and the peak size of the wasm heap.
//   node bench/quantize_memory.mjs /tmp/big-f16.gguf [--write-only | --quantize-only] [--out FILE]
// The same file through the CLI: /usr/bin/time -v build/native/bin/weightstream quantize IN OUT --type Q4_K_M.
import { createHash } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import { quantize } from "../wasm/js/index.js";
import { loadWasm } from "../wasm/js/wasm.js";
import { ggufHeader } from "../tests/js/gguf-writer.mjs";

const F16 = 1;
const F32 = 0;
const EMBD = 4096;
const FFN = 11008;
const LAYERS = 4;
const VOCAB = 32768;

function tensors() {
    const list = [{ name: "token_embd.weight", type: F16, ne: [EMBD, VOCAB] }];
    for (let l = 0; l < LAYERS; ++l) {
        const p = `blk.${l}.`;
        list.push({ name: p + "attn_norm.weight", type: F32, ne: [EMBD] });
        for (const n of ["attn_q", "attn_k", "attn_v", "attn_output"])
            list.push({ name: `${p}${n}.weight`, type: F16, ne: [EMBD, EMBD] });
        list.push({ name: p + "ffn_norm.weight", type: F32, ne: [EMBD] });
        list.push({ name: p + "ffn_gate.weight", type: F16, ne: [EMBD, FFN] });
        list.push({ name: p + "ffn_up.weight", type: F16, ne: [EMBD, FFN] });
        list.push({ name: p + "ffn_down.weight", type: F16, ne: [FFN, EMBD] });
    }
    list.push({ name: "output_norm.weight", type: F32, ne: [EMBD] });
    list.push({ name: "output.weight", type: F16, ne: [EMBD, VOCAB] });
    for (const t of list) t.nbytes = t.ne.reduce((a, b) => a * b, 1) * (t.type === F16 ? 2 : 4);
    return list;
}

const kv = [
    { key: "general.architecture", type: "string", value: "llama" },
    { key: "general.name", type: "string", value: "generated-2gib-f16" },
    { key: "llama.block_count", type: "uint32", value: LAYERS },
    { key: "llama.context_length", type: "uint32", value: 4096 },
    { key: "llama.embedding_length", type: "uint32", value: EMBD },
    { key: "llama.feed_forward_length", type: "uint32", value: FFN },
    { key: "llama.attention.head_count", type: "uint32", value: 32 },
    { key: "llama.attention.head_count_kv", type: "uint32", value: 32 },
    { key: "general.file_type", type: "uint32", value: 1 },
];

// Pseudo-random weights (xorshift, roughly N(0, 0.02) as binary16): 4 MiB of them, written over and over from
// a moving start so that no two rows are alike.
function pattern() {
    const values = new Uint16Array(1 << 21);
    const f = new Float32Array(1);
    const u = new Uint32Array(f.buffer);
    let s = 0x9e3779b9;
    for (let i = 0; i < values.length; ++i) {
        let sum = 0;
        for (let k = 0; k < 4; ++k) {
            s ^= s << 13;
            s ^= s >>> 17;
            s ^= s << 5;
            sum += (s >>> 0) / 4294967296;
        }
        f[0] = (sum - 2) * 0.035;
        const x = u[0];
        const exp = ((x >>> 23) & 0xff) - 127 + 15;
        const sign = (x >>> 16) & 0x8000;
        values[i] = exp <= 0 ? sign : sign | (exp << 10) | ((x >>> 13) & 0x3ff);
    }
    return new Uint8Array(values.buffer);
}

async function write(path) {
    const list = tensors();
    const { bytes } = ggufHeader({ kv, tensors: list });
    const out = createWriteStream(path);
    const put = (b) => (out.write(b) ? Promise.resolve() : new Promise((r) => out.once("drain", r)));
    await put(bytes);
    const data = pattern();
    let shift = 0;
    for (const t of list) {
        if (t.type === F32) {
            const ones = new Float32Array(t.nbytes / 4).fill(1);
            await put(new Uint8Array(ones.buffer));
        } else {
            for (let done = 0; done < t.nbytes;) {
                shift = (shift + 4099 * 2) % (data.length / 2);
                const n = Math.min(t.nbytes - done, data.length - shift);
                await put(data.slice(shift, shift + n));
                done += n;
            }
        }
        const pad = (32 - (t.nbytes % 32)) % 32;
        if (pad) await put(new Uint8Array(pad));
    }
    await new Promise((r) => out.end(r));
}

async function run(path, outPath) {
    const wasm = await loadWasm();
    let peakRss = 0;
    let peakHeap = 0;
    const sample = () => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
        peakHeap = Math.max(peakHeap, wasm.HEAPU8.buffer.byteLength);
    };
    const timer = setInterval(sample, 50);
    const hash = createHash("sha256");
    const file = outPath ? await openFile(outPath, "w") : null;
    const start = process.hrtime.bigint();
    let n = 0;
    let last = 0;
    for await (const chunk of quantize(path, {
        type: "Q4_K_M",
        onProgress: (p) => {
            if (p.tensor !== last) {
                last = p.tensor;
                process.stderr.write(`\r${p.tensor}/${p.tensors} ${p.name}        `);
            }
        },
    })) {
        hash.update(chunk);
        if (file) await file.write(chunk);
        n += chunk.length;
        sample();
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    clearInterval(timer);
    await file?.close();
    sample();
    const mib = (b) => (b / 1048576).toFixed(1);
    console.log(
        JSON.stringify({
            output_bytes: n,
            sha256: hash.digest("hex"),
            seconds: Number(seconds.toFixed(1)),
            peak_rss_mib: Number(mib(peakRss)),
            max_rss_mib: Number(mib(process.resourceUsage().maxRSS * 1024)),
            peak_wasm_heap_mib: Number(mib(peakHeap)),
        }),
    );
}

const [path, ...flags] = process.argv.slice(2);
if (!path) throw new Error("usage: node bench/quantize_memory.mjs FILE [--write-only | --quantize-only] [--out FILE]");
if (!flags.includes("--quantize-only") || !existsSync(path)) await write(path);
const outAt = flags.indexOf("--out");
if (!flags.includes("--write-only")) await run(path, outAt >= 0 ? flags[outAt + 1] : undefined);
