// SPDX-License-Identifier: MIT
// model.stream({into}) against the wasm decoder's own throughput, per type (Q4_K, Q8_0), from a Node path and from
// a ReadableStream. For each type a GGUF of >= 1 GiB of that type (ggml's own blocks from
// tests/data/ggml/ggml-types.gguf, tiled) is written to a temporary folder and deleted after. Each round runs, in
// this order and in this process: the decoder in the heap (build/wasm/weightstream_bench.js benchDecode: 64 MiB
// of float32 out, best of 5, decoding only), then model.stream() of the whole file into one reused Float32Array
// (`into`) from the path, then from a ReadableStream of the file. Reported: float32 GB/s out of each, and the
// ratio stream/decoder: the median over the rounds of each round's ratio.
// Usage: node bench/stream_into.mjs [--rounds N] [--types Q4_K,Q8_0] [--no-into] [--json FILE]
//   --no-into: stream() without `into` (a fresh Float32Array per tensor), the figure before `into` existed.
import {
    closeSync,
    createReadStream,
    existsSync,
    mkdtempSync,
    openSync,
    readFileSync,
    rmSync,
    writeFileSync,
} from "node:fs";
import { writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const benchModule = path.join(root, "build/wasm/weightstream_bench.js");
const MIB = 1 << 20;
const GIB = 1 << 30;

const median = (values) => {
    const s = [...values].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const now = () => performance.now();

const TYPES = {
    Q4_K: { id: 12, blockElems: 256, blockBytes: 144, sample: "q4_k.weight" },
    Q8_0: { id: 8, blockElems: 32, blockBytes: 34, sample: "q8_0.weight" },
};

// A GGUF of `type` only: 4096 x 11008 matrices (ffn-sized) until the data reaches 1 GiB.
async function writeModel(file, type) {
    const { ggufHeader } = await import(pathToFileURL(path.join(root, "tests/js/gguf-writer.mjs")).href);
    const { open } = await import("weightstream");
    const samples = await open(path.join(root, "tests/data/ggml/ggml-types.gguf"));
    const ne = [4096, 11008];
    const nbytes = ((ne[0] * ne[1]) / type.blockElems) * type.blockBytes;
    const count = Math.ceil(GIB / nbytes);
    const tensors = Array.from({ length: count }, (_, i) => ({
        name: `blk.${i}.ffn_up.weight`,
        type: type.id,
        ne,
        nbytes,
    }));
    const header = ggufHeader({ kv: [{ key: "general.architecture", type: "string", value: "llama" }], tensors });
    const tile = await samples.read(type.sample, { as: "raw" });
    await samples.close();
    const chunk = new Uint8Array(Math.floor((8 * MIB) / tile.length) * tile.length);
    for (let i = 0; i < chunk.length; i += tile.length) chunk.set(tile, i);
    const fd = openSync(file, "w");
    let written = 0;
    try {
        written += writeSync(fd, header.bytes);
        for (let t = 0; t < count; ++t) {
            for (let left = nbytes; left > 0;) {
                const n = Math.min(left, chunk.length);
                written += writeSync(fd, chunk, 0, n);
                left -= n;
            }
            const pad = (32 - (written % 32)) % 32;
            if (pad) written += writeSync(fd, new Uint8Array(pad));
        }
    } finally {
        closeSync(fd);
    }
    return { bytes: written, tensors: count, values: count * ne[0] * ne[1], tensorValues: ne[0] * ne[1] };
}

// Float32 GB/s of model.stream() over the whole file.
async function streamOnce(open, file, kind, into) {
    const source = kind === "path" ? file : Readable.toWeb(createReadStream(file, { highWaterMark: MIB }));
    const start = now();
    const model = await open(source);
    let values = 0;
    let check = 0;
    for await (const { data } of model.stream(into ? { into } : {})) {
        values += data.length;
        check += data[data.length - 1];
    }
    const seconds = (now() - start) / 1000;
    await model.close();
    if (!Number.isFinite(check)) throw new Error("stream(): a non-finite value");
    return (values * 4) / seconds / 1e9;
}

async function main() {
    const { values: args } = parseArgs({
        options: {
            rounds: { type: "string", default: "10" },
            types: { type: "string", default: "Q4_K,Q8_0" },
            "no-into": { type: "boolean", default: false },
            json: { type: "string" },
        },
    });
    if (!existsSync(benchModule)) throw new Error(`${benchModule} is missing: npm run build:wasm`);
    const { default: create } = await import(pathToFileURL(benchModule).href);
    const bench = await create({ wasmBinary: readFileSync(benchModule.replace(/\.js$/, ".wasm")) });
    const { open } = await import("weightstream");
    const rounds = Number(args.rounds);
    const report = { into: !args["no-into"], rounds, types: {} };
    const dir = mkdtempSync(path.join(tmpdir(), "ws-stream-into-"));
    try {
        for (const name of args.types.split(",")) {
            const type = TYPES[name];
            if (!type) throw new Error(`--types: no ${name} (Q4_K, Q8_0)`);
            const file = path.join(dir, `${name}.gguf`);
            process.stderr.write(`${name}: writing the model...`);
            const model = await writeModel(file, type);
            process.stderr.write(` ${(model.bytes / GIB).toFixed(2)} GiB\n`);
            const into = args["no-into"] ? null : new Float32Array(model.tensorValues);
            const runs = { decoder: [], path: [], stream: [] };
            for (let round = 0; round < rounds; ++round) {
                process.stderr.write(`\r${name}: round ${round + 1}/${rounds}   `);
                const d = bench.benchDecode(type.id, 64 * MIB, 5);
                if (!d.verified) throw new Error(`benchDecode ${name}: not verified`);
                runs.decoder.push(d.gbps);
                runs.path.push(await streamOnce(open, file, "path", into));
                runs.stream.push(await streamOnce(open, file, "stream", into));
            }
            process.stderr.write("\n");
            rmSync(file, { force: true });
            const ratio = (kind) => median(runs[kind].map((x, i) => x / runs.decoder[i]));
            report.types[name] = {
                file_gib: model.bytes / GIB,
                tensors: model.tensors,
                decoder_gbps: median(runs.decoder),
                path_gbps: median(runs.path),
                stream_gbps: median(runs.stream),
                path_ratio: ratio("path"),
                stream_ratio: ratio("stream"),
            };
        }
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
    console.log(
        `== model.stream(${report.into ? "{into}" : ""}) over the wasm decoder in the heap, float32 GB/s out, ` +
            `median of ${rounds} alternating rounds`,
    );
    for (const [name, r] of Object.entries(report.types)) {
        console.log(
            `${name.padEnd(5)} ${r.file_gib.toFixed(2)} GiB: decoder ${r.decoder_gbps.toFixed(2)}; path ` +
                `${r.path_gbps.toFixed(2)} (${r.path_ratio.toFixed(2)}x); ReadableStream ${r.stream_gbps.toFixed(2)} ` +
                `(${r.stream_ratio.toFixed(2)}x)`,
        );
    }
    if (args.json) writeFileSync(args.json, JSON.stringify(report, null, 2) + "\n");
}

await main();
