// SPDX-License-Identifier: MIT
// The package's benchmarks under Node (npm run bench:wasm). Five parts, each reported as medians of several
// runs and as ratios measured in the same run (the machine is shared and its absolute speed moves):
//   ggml    Q4_0, Q4_1, BF16: our wasm decoders over ggml's own loops compiled by emcc -O3 -msimd128 into the
//           same module (bench/ggml_loops.h), in >= 10 alternating rounds.
//   decode  per type: WebAssembly GB/s over native GB/s, single-threaded. Both sides run bench/dequant_bench.h
//           (the same synthetic tensors, 64 MiB of float32 out, best of 5): natively `weightstream bench --json
//           --threads 1 --type T`, in wasm build/wasm/weightstream_bench.js (wasm/bench_bindings.cpp) over the
//           same core. For each type, native and wasm runs alternate, round by round.
//   quantize per type, with and without an importance matrix: MB/s of float32 input, native on 1 and 2 threads
//           (`weightstream bench --quantize --json --threads 2 --type T`) and wasm on one
//           (build/wasm/weightstream_bench.js: benchQuantize), both over bench/quantize_bench.h (the same weights,
//           best of 5), rounds alternating as for decode; wasm/native is over native's 1-thread figure. The
//           wasm bytes must hash as native's. Both run the quantizers their build has (SIMD scale searches).
//   parse   ggml-vocab-deepseek-llm.gguf (102,400 tokens, 99,757 merges) into model.metadata, against
//           @huggingface/gguf on the same bytes in the same run (both from memory; and both from the file).
//   stream  a generated GGUF of >= 1 GiB (written to a temporary folder, deleted after) through model.stream()
//           in a fresh Node process: peak WebAssembly memory, peak RSS, throughput.
// Usage: node bench/wasm_bench.mjs [--only decode,ggml,quantize,parse,stream] [--rounds N] [--json FILE]
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = process.env.WEIGHTSTREAM_CLI ?? path.join(root, "build/bin/weightstream");
const benchModule = path.join(root, "build/wasm/weightstream_bench.js");
const deepseek = path.join(
    process.env.WS_SHARED_TESTDATA ?? path.join(root, "../shared/testdata"),
    "ggml/vocab/ggml-vocab-deepseek-llm.gguf",
);
const MIB = 1 << 20;
const OUTPUT_BYTES = 64 * MIB; // as natively (native/cli/cmd_bench.cpp)
const REPS = 5;

const median = (values) => {
    const s = [...values].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "-");
const now = () => performance.now();

// ---- decode ---------------------------------------------------------------------------------------------------

async function loadBenchModule() {
    if (!existsSync(benchModule)) throw new Error(`${benchModule} is missing: npm run build:wasm`);
    const { default: create } = await import(pathToFileURL(benchModule).href);
    return create({ wasmBinary: readFileSync(benchModule.replace(/\.js$/, ".wasm")) });
}

// Native GB/s of one type (and of the store loop) from `weightstream bench --type`, single-threaded.
function nativeRun(dtype) {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: cmake --build --preset native-release`);
    const r = spawnSync(cli, ["bench", "--json", "--threads", "1", "--type", dtype], {
        encoding: "utf8",
        maxBuffer: 1 << 26,
    });
    if (r.status !== 0) throw new Error(`weightstream bench: exit ${r.status}: ${r.stderr}`);
    const report = JSON.parse(r.stdout);
    return { store: report.store_gbps, gbps: report.results[0].gbps_out, cpu: report.machine?.cpu };
}

// Per type, `rounds` native runs alternate with as many wasm runs, so each pair saw the same load on a shared
// machine; the ratio is the median of the pairs' ratios.
async function decode(rounds) {
    const module = await loadBenchModule();
    const rows = [];
    const stores = { native: [], wasm: [] };
    let cpu;
    const types = module.benchTypes();
    for (const [index, { id, name }] of types.entries()) {
        process.stderr.write(`\rdecode: ${name} (${index + 1}/${types.length})      `);
        const native = [];
        const wasm = [];
        for (let round = 0; round < rounds; ++round) {
            const n = nativeRun(name);
            cpu = n.cpu;
            native.push(n.gbps);
            stores.native.push(n.store);
            const w = module.benchDecode(id, OUTPUT_BYTES, REPS);
            if (!w.verified) throw new Error(`wasm decode of ${name} differs from the scalar reference`);
            wasm.push(w.gbps);
        }
        stores.wasm.push(module.benchStore(OUTPUT_BYTES, REPS));
        rows.push({
            dtype: name,
            native_gbps: median(native),
            wasm_gbps: median(wasm),
            ratio: median(native.map((n, i) => wasm[i] / n)),
        });
    }
    process.stderr.write("\n");
    return {
        cpu,
        rounds,
        output_mib: OUTPUT_BYTES / MIB,
        store_native_gbps: median(stores.native),
        store_wasm_gbps: median(stores.wasm),
        types: rows,
        min_ratio: Math.min(...rows.map((r) => r.ratio)),
        median_ratio: median(rows.map((r) => r.ratio)),
    };
}

function printDecode(d) {
    console.log(
        `\n== decode, single thread: ${d.output_mib} MiB of float32 out per type, best of ${REPS}, ` +
            `median of ${d.rounds} rounds (${d.cpu})`,
    );
    console.log(`float32 store loop: native ${fmt(d.store_native_gbps)} GB/s, wasm ${fmt(d.store_wasm_gbps)} GB/s`);
    console.log(
        `${"dtype".padEnd(12)} ${"native GB/s".padStart(12)} ${"wasm GB/s".padStart(10)} ${"wasm/native".padStart(12)}`,
    );
    for (const r of d.types) {
        console.log(
            `${r.dtype.padEnd(12)} ${fmt(r.native_gbps).padStart(12)} ${fmt(r.wasm_gbps).padStart(10)} ` +
                `${fmt(r.ratio).padStart(12)}`,
        );
    }
    console.log(`wasm/native: min ${fmt(d.min_ratio)}, median ${fmt(d.median_ratio)} (target >= 0.5 for every type)`);
}

// ---- ggml -----------------------------------------------------------------------------------------------------

// Our wasm decoders against ggml's own loops for the same types (bench/ggml_loops.h: dequantize_row_q4_0/_q4_1's
// scalar loops, ggml_bf16_to_fp32_row's shift loop) compiled into the same module by emcc -O3 -msimd128, as
// ggml's wasm build compiles them: at least 10 alternating rounds in one run, the ratio (ours over ggml's) a
// median of the rounds' ratios.
const GGML_TYPES = ["Q4_0", "Q4_1", "BF16"];

async function ggml(rounds) {
    const module = await loadBenchModule();
    const ids = new Map(module.benchTypes().map(({ id, name }) => [name, id]));
    const n = Math.max(10, rounds);
    const rows = [];
    for (const name of GGML_TYPES) {
        const r = module.benchGgmlLoop(ids.get(name), OUTPUT_BYTES, n);
        if (!r.verified) throw new Error(`wasm decode of ${name} differs from ggml's loop`);
        rows.push({ dtype: name, rounds: r.rounds, gbps: r.gbps, ggml_gbps: r.ggml_gbps, ratio: r.ratio });
    }
    return { output_mib: OUTPUT_BYTES / MIB, types: rows };
}

function printGgml(g) {
    console.log(`\n== wasm decode against ggml's loops (emcc -O3 -msimd128), ${g.output_mib} MiB of float32 out`);
    console.log(`${"dtype".padEnd(8)} ${"ours GB/s".padStart(10)} ${"ggml GB/s".padStart(10)} ${"ratio".padStart(7)}`);
    for (const r of g.types) {
        console.log(
            `${r.dtype.padEnd(8)} ${fmt(r.gbps).padStart(10)} ${fmt(r.ggml_gbps).padStart(10)} ` +
                `${fmt(r.ratio, 3).padStart(7)}  (median of ${r.rounds} rounds)`,
        );
    }
}

// ---- quantize -------------------------------------------------------------------------------------------------

const QUANTIZE_THREADS = 2;

// Native MB/s of one type from `weightstream bench --quantize --type`: {cpu, cases: {"no"|"yes": {one, many, hash}}}.
function nativeQuantizeRun(dtype) {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: cmake --build --preset native-release`);
    const args = ["bench", "--quantize", "--json", "--threads", String(QUANTIZE_THREADS), "--type", dtype];
    const r = spawnSync(cli, args, { encoding: "utf8", maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`weightstream bench --quantize: exit ${r.status}: ${r.stderr}`);
    const report = JSON.parse(r.stdout);
    const cases = {};
    for (const row of report.quantize.results) {
        const c = (cases[row.imatrix ? "yes" : "no"] ??= { hash: row.output_fnv1a64, values: row.values });
        c[row.threads === 1 ? "one" : "many"] = row.mbps_in;
    }
    return { cpu: report.machine?.cpu, cases };
}

// Per type, `rounds` native runs (1 and 2 threads) alternate with as many wasm runs of each case; the figures
// are medians over the rounds, and the ratio the median of the rounds' wasm / native-1-thread ratios.
async function quantize(rounds) {
    const module = await loadBenchModule();
    const rows = [];
    let cpu;
    const types = module.benchQuantizeTypes();
    for (const [index, { id, name, imatrix }] of types.entries()) {
        process.stderr.write(`\rquantize: ${name} (${index + 1}/${types.length})      `);
        const variants = { none: ["no"], optional: ["no", "yes"], required: ["yes"] }[imatrix];
        const runs = Object.fromEntries(variants.map((v) => [v, { one: [], many: [], wasm: [] }]));
        let values;
        for (let round = 0; round < rounds; ++round) {
            const n = nativeQuantizeRun(name);
            cpu = n.cpu;
            for (const v of variants) {
                const native = n.cases[v];
                if (!native) throw new Error(`weightstream bench --quantize --type ${name}: no imatrix=${v} case`);
                const w = module.benchQuantize(id, v === "yes", REPS);
                if (!w.ok) throw new Error(`wasm quantize of ${name} failed`);
                if (w.hash !== native.hash) {
                    throw new Error(`wasm quantize of ${name} (imatrix ${v}): bytes differ from native's`);
                }
                values = w.values;
                runs[v].one.push(native.one);
                runs[v].many.push(native.many);
                runs[v].wasm.push(w.mbps);
            }
        }
        for (const v of variants) {
            const r = runs[v];
            rows.push({
                dtype: name,
                imatrix: v === "yes",
                values,
                native_mbps: median(r.one),
                native_threads_mbps: median(r.many),
                wasm_mbps: median(r.wasm),
                ratio: median(r.wasm.map((w, i) => w / r.one[i])),
            });
        }
    }
    process.stderr.write("\n");
    return {
        cpu,
        rounds,
        threads: QUANTIZE_THREADS,
        path: "fastest",
        cases: rows,
        min_ratio: Math.min(...rows.map((r) => r.ratio)),
        median_ratio: median(rows.map((r) => r.ratio)),
    };
}

function printQuantize(q) {
    console.log(
        `\n== quantize: MB/s of float32 input, best of ${REPS}, median of ${q.rounds} rounds (${q.cpu}); ` +
            "the quantizers each build runs (SIMD scale searches); wasm bytes checked equal to native's",
    );
    const t = `native ${q.threads}t`;
    console.log(
        `${"dtype".padEnd(9)} ${"imatrix".padEnd(7)} ${"native 1t".padStart(10)} ${t.padStart(10)} ` +
            `${"wasm".padStart(10)} ${"wasm/native".padStart(12)}`,
    );
    for (const r of q.cases) {
        console.log(
            `${r.dtype.padEnd(9)} ${(r.imatrix ? "yes" : "no").padEnd(7)} ${fmt(r.native_mbps, 1).padStart(10)} ` +
                `${fmt(r.native_threads_mbps, 1).padStart(10)} ${fmt(r.wasm_mbps, 1).padStart(10)} ` +
                `${fmt(r.ratio).padStart(12)}`,
        );
    }
    console.log(`wasm/native (1 thread): min ${fmt(q.min_ratio)}, median ${fmt(q.median_ratio)}`);
}

// ---- parse ----------------------------------------------------------------------------------------------------

// A fetch serving `bytes` from memory with Range support: @huggingface/gguf reads URLs only.
function memoryFetch(bytes) {
    return async (_url, init = {}) => {
        const range = new Headers(init.headers).get("Range");
        const m = range && /bytes=(\d+)-(\d*)/.exec(range);
        if (!m) return new Response(bytes, { status: 200, headers: { "Content-Length": String(bytes.length) } });
        const start = Number(m[1]);
        const end = Math.min(bytes.length, m[2] ? Number(m[2]) + 1 : bytes.length);
        return new Response(bytes.subarray(start, end), {
            status: 206,
            headers: {
                "Content-Range": `bytes ${start}-${end - 1}/${bytes.length}`,
                "Content-Length": String(end - start),
            },
        });
    };
}

// Runs a and b alternately (so both meet the same load), after warming both up: {a, b} median milliseconds and
// ratio, the median of b/a over the pairs.
async function timePair(runs, a, b) {
    for (let i = 0; i < 2; ++i) {
        await a();
        await b();
    }
    const ta = [];
    const tb = [];
    for (let i = 0; i < runs; ++i) {
        let start = now();
        await a();
        ta.push(now() - start);
        start = now();
        await b();
        tb.push(now() - start);
    }
    return { a: median(ta), b: median(tb), ratio: median(tb.map((t, i) => t / ta[i])) };
}

async function parse(rounds) {
    if (!existsSync(deepseek)) throw new Error(`${deepseek} is missing (the shared corpus)`);
    const { open } = await import("weightstream");
    const { gguf } = await import("@huggingface/gguf");
    const bytes = new Uint8Array(readFileSync(deepseek));
    const memory = memoryFetch(bytes);
    const ours = async (source) => {
        const model = await open(source);
        const metadata = model.metadata;
        await model.close();
        return metadata;
    };
    const theirs = (uri, params) => gguf(uri, params).then((r) => r.metadata);

    // Verify before timing: the same tokens and merges.
    const a = await ours(bytes);
    const b = await theirs("http://memory/ggml-vocab-deepseek-llm.gguf", { fetch: memory });
    for (const key of ["tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type"]) {
        const mine = a.find((m) => m.key === key).value;
        if (mine.length !== b[key].length || mine.some((v, i) => v !== b[key][i])) throw new Error(`${key} differs`);
    }
    const runs = Math.max(5, rounds * 5);
    const uri = "http://memory/ggml-vocab-deepseek-llm.gguf";
    const memoryPair = await timePair(
        runs,
        () => ours(bytes),
        () => theirs(uri, { fetch: memory }),
    );
    const filePair = await timePair(
        runs,
        () => ours(deepseek),
        () => theirs(deepseek, { allowLocalFile: true }),
    );
    return {
        file: path.basename(deepseek),
        bytes: bytes.length,
        runs,
        memory_ms: { weightstream: memoryPair.a, huggingface_gguf: memoryPair.b },
        memory_speedup: memoryPair.ratio,
        file_ms: { weightstream: filePair.a, huggingface_gguf: filePair.b },
        file_speedup: filePair.ratio,
    };
}

function printParse(p) {
    console.log(
        `\n== parse ${p.file} (${(p.bytes / MIB).toFixed(1)} MiB) into metadata: median of ${p.runs} ` +
            "alternating runs; speedup: the median of the runs' ratios",
    );
    console.log(
        `from memory: weightstream ${fmt(p.memory_ms.weightstream, 1)} ms, @huggingface/gguf ` +
            `${fmt(p.memory_ms.huggingface_gguf, 1)} ms: ${fmt(p.memory_speedup, 1)}x faster (target >= 5x)`,
    );
    console.log(
        `from the file: weightstream ${fmt(p.file_ms.weightstream, 1)} ms, @huggingface/gguf ` +
            `${fmt(p.file_ms.huggingface_gguf, 1)} ms: ${fmt(p.file_speedup, 1)}x faster`,
    );
}

// ---- stream ---------------------------------------------------------------------------------------------------

// A llama-7B-shaped model with 8 blocks (~1.2 GiB): Q4_K matrices, Q6_K ffn_down and output, F32 norms. The
// quantized data tiles real blocks that ggml wrote (ggml-types.gguf), so every scale is a sane number.
function planModel() {
    const embd = 4096;
    const ff = 11008;
    const vocab = 32000;
    const Q4_K = { id: 12, blockElems: 256, blockBytes: 144, sample: "q4_k.weight" };
    const Q6_K = { id: 14, blockElems: 256, blockBytes: 210, sample: "q6_k.weight" };
    const F32 = { id: 0, blockElems: 1, blockBytes: 4, sample: null };
    const tensors = [];
    const add = (name, type, ne) =>
        tensors.push({ name, type, ne, nbytes: ((ne[0] * ne[1]) / type.blockElems) * type.blockBytes });
    add("token_embd.weight", Q4_K, [embd, vocab]);
    for (let b = 0; b < 8; ++b) {
        add(`blk.${b}.attn_norm.weight`, F32, [embd, 1]);
        for (const m of ["attn_q", "attn_k", "attn_v", "attn_output"]) add(`blk.${b}.${m}.weight`, Q4_K, [embd, embd]);
        add(`blk.${b}.ffn_norm.weight`, F32, [embd, 1]);
        add(`blk.${b}.ffn_gate.weight`, Q4_K, [embd, ff]);
        add(`blk.${b}.ffn_up.weight`, Q4_K, [embd, ff]);
        add(`blk.${b}.ffn_down.weight`, Q6_K, [ff, embd]);
    }
    add("output_norm.weight", F32, [embd, 1]);
    add("output.weight", Q6_K, [embd, vocab]);
    return tensors;
}

async function writeModel(file) {
    const { ggufHeader } = await import(pathToFileURL(path.join(root, "tests/js/gguf-writer.mjs")).href);
    const { open } = await import("weightstream");
    const samples = await open(path.join(root, "tests/data/ggml/ggml-types.gguf"));
    const tensors = planModel();
    const header = ggufHeader({
        kv: [{ key: "general.architecture", type: "string", value: "llama" }],
        tensors: tensors.map((t) => ({ name: t.name, type: t.type.id, ne: t.ne, nbytes: t.nbytes })),
    });
    const fd = openSync(file, "w");
    try {
        writeSync(fd, header.bytes);
        let written = header.bytes.length;
        const chunk = new Uint8Array(8 * MIB);
        for (const t of tensors) {
            let tile;
            if (t.type.sample) {
                tile = await samples.read(t.type.sample, { as: "raw" });
            } else {
                tile = new Uint8Array(new Float32Array(1024).fill(1).buffer);
            }
            for (let i = 0; i < chunk.length; i += tile.length) chunk.set(tile.subarray(0, chunk.length - i), i);
            for (let left = t.nbytes; left > 0;) {
                const n = Math.min(left, chunk.length - (chunk.length % tile.length || 0));
                writeSync(fd, chunk, 0, n);
                left -= n;
                written += n;
            }
            const pad = (32 - (written % 32)) % 32;
            if (pad) writeSync(fd, new Uint8Array(pad));
            written += pad;
        }
        return { bytes: written, tensors: tensors.length, largest: Math.max(...tensors.map((t) => t.nbytes)) };
    } finally {
        closeSync(fd);
        await samples.close();
    }
}

// Runs in a fresh process: streams `file` and reports memory. kind: "path" or "stream" (a ReadableStream).
async function streamChild(file, kind) {
    const { open } = await import("weightstream");
    const { loadWasm } = await import(pathToFileURL(path.join(root, "wasm/js/wasm.js")).href);
    const module = await loadWasm();
    const { createReadStream, statSync } = await import("node:fs");
    const rssBefore = process.memoryUsage().rss;
    const wasmBefore = module.HEAPU8.length;
    const start = now();
    const source = kind === "path" ? file : Readable.toWeb(createReadStream(file, { highWaterMark: 1 << 20 }));
    const model = await open(source);
    let tensors = 0;
    let values = 0;
    let largestValues = 0;
    let peakWasm = module.HEAPU8.length;
    let peakArrayBuffers = 0;
    for await (const { data } of model.stream()) {
        ++tensors;
        values += data.length;
        largestValues = Math.max(largestValues, data.length);
        peakWasm = Math.max(peakWasm, module.HEAPU8.length);
        peakArrayBuffers = Math.max(peakArrayBuffers, process.memoryUsage().arrayBuffers);
    }
    const seconds = (now() - start) / 1000;
    await model.close();
    return {
        kind,
        tensors,
        values,
        seconds,
        file_gbps: statSync(file).size / seconds / 1e9,
        f32_gbps: (values * 4) / seconds / 1e9,
        wasm_before_mib: wasmBefore / MIB,
        wasm_peak_mib: peakWasm / MIB,
        largest_f32_mib: (largestValues * 4) / MIB,
        rss_before_mib: rssBefore / MIB,
        rss_peak_mib: process.resourceUsage().maxRSS / 1024,
        array_buffers_peak_mib: peakArrayBuffers / MIB,
    };
}

async function stream() {
    const dir = mkdtempSync(path.join(tmpdir(), "ws-bench-"));
    try {
        const file = path.join(dir, "llama-8-blocks.gguf");
        process.stderr.write("stream: writing the model...");
        const written = await writeModel(file);
        process.stderr.write(` ${(written.bytes / 2 ** 30).toFixed(2)} GiB\n`);
        const runs = [];
        for (const kind of ["path", "stream"]) {
            process.stderr.write(`stream: ${kind}...`);
            const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--stream-child", file, kind], {
                encoding: "utf8",
                maxBuffer: 1 << 20,
            });
            if (r.status !== 0) throw new Error(`stream child: exit ${r.status}: ${r.stderr}`);
            runs.push(JSON.parse(r.stdout));
            process.stderr.write(" done\n");
        }
        const limit = 64 + written.largest / MIB; // 64 MiB plus the largest tensor's stored bytes
        for (const run of runs) {
            run.wasm_limit_mib = limit;
            if (run.wasm_peak_mib > limit) throw new Error(`peak wasm memory ${run.wasm_peak_mib} MiB > ${limit} MiB`);
        }
        return {
            file_gib: written.bytes / 2 ** 30,
            tensors: written.tensors,
            largest_mib: written.largest / MIB,
            runs,
        };
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

function printStream(s) {
    console.log(
        `\n== stream a ${fmt(s.file_gib)} GiB GGUF (${s.tensors} tensors, largest ${fmt(s.largest_mib, 1)} MiB ` +
            "stored) through model.stream(), in a fresh process",
    );
    for (const r of s.runs) {
        console.log(
            `${r.kind.padEnd(7)} ${fmt(r.seconds, 1)} s (${fmt(r.file_gbps)} GB/s of file, ${fmt(r.f32_gbps)} GB/s of ` +
                `float32 out); wasm memory ` +
                `${fmt(r.wasm_before_mib, 1)} -> peak ${fmt(r.wasm_peak_mib, 1)} MiB (limit ${fmt(r.wasm_limit_mib, 0)}); ` +
                `RSS ${fmt(r.rss_before_mib, 0)} -> peak ${fmt(r.rss_peak_mib, 0)} MiB (largest tensor as f32: ` +
                `${fmt(r.largest_f32_mib, 0)} MiB)`,
        );
    }
}

// ---- main -----------------------------------------------------------------------------------------------------

const { values: args } = parseArgs({
    options: {
        only: { type: "string", default: "decode,ggml,quantize,parse,stream" },
        rounds: { type: "string", default: "3" },
        json: { type: "string" },
        "stream-child": { type: "string" },
    },
    allowPositionals: true,
    strict: false,
});

if (args["stream-child"]) {
    const kind = process.argv.at(-1);
    console.log(JSON.stringify(await streamChild(args["stream-child"], kind)));
} else {
    const only = new Set(args.only.split(","));
    const rounds = Math.max(1, Number(args.rounds));
    const report = {};
    if (only.has("decode")) printDecode((report.decode = await decode(rounds)));
    if (only.has("ggml")) printGgml((report.ggml = await ggml(rounds)));
    if (only.has("quantize")) printQuantize((report.quantize = await quantize(rounds)));
    if (only.has("parse")) printParse((report.parse = await parse(rounds)));
    if (only.has("stream")) printStream((report.stream = await stream()));
    if (args.json) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
}
