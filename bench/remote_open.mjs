// SPDX-License-Identifier: MIT
// Opening a remote model, where the round trips are the cost: weightstream's open() against
// @huggingface/gguf's gguf() over a local HTTP server that holds every response back a fixed latency (50 ms)
// and counts requests and body bytes. Files: the deepseek vocabulary GGUF of the reference corpus (102,400
// tokens, a 3.97 MB header, no tensors), the same header followed by a tensor (so that reading past the
// header costs bytes), and ggml-types.gguf (a small header before 96 KiB of tensors). Rounds alternate which
// side goes first; the figures are medians.
// Usage: node bench/remote_open.mjs [--rounds N] [--latency MS] [--json FILE]
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { gguf } from "@huggingface/gguf";
import { open } from "weightstream";

import { withF32Tensor } from "../tests/js/gguf-writer.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
    options: {
        rounds: { type: "string", default: "11" },
        latency: { type: "string", default: "50" },
        json: { type: "string" },
    },
});
const rounds = Number(args.rounds);
const latency = Number(args.latency);

const deepseekPath = [
    path.join(root, "../shared/testdata/ggml/vocab/ggml-vocab-deepseek-llm.gguf"),
    "/work/shared/testdata/ggml/vocab/ggml-vocab-deepseek-llm.gguf",
].find((p) => existsSync(p));
if (!deepseekPath) throw new Error("the reference corpus (ggml-vocab-deepseek-llm.gguf) is not present");
const deepseek = readFileSync(deepseekPath);

const tensorCase = withF32Tensor(deepseek, 4 << 20);
const files = [
    { name: "deepseek-llm vocab (3.97 MB header)", path: "/deepseek.gguf", bytes: deepseek, header: deepseek.length },
    {
        name: "deepseek-llm vocab + 16 MiB tensor",
        path: "/deepseek-tensor.gguf",
        bytes: tensorCase.bytes,
        header: tensorCase.header,
    },
    {
        name: "ggml-types.gguf (small header)",
        path: "/small.gguf",
        bytes: readFileSync(path.join(root, "tests/data/ggml/ggml-types.gguf")),
        header: null, // from open()'s data_offset
    },
];

// The server: single ranges (206 with Content-Range; 416 past the end), else the whole file; every response waits `latency` ms.
const counts = { requests: 0, bytes: 0 };
const server = http.createServer((req, res) => {
    const file = files.find((f) => f.path === req.url);
    counts.requests += 1;
    setTimeout(() => {
        if (!file) {
            res.writeHead(404).end();
            return;
        }
        const size = file.bytes.length;
        const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
        const headers = { "Accept-Ranges": "bytes", ETag: '"v1"', "Content-Type": "application/octet-stream" };
        let body = file.bytes;
        if (m && Number(m[1]) >= size) {
            res.writeHead(416, { ...headers, "Content-Range": `bytes */${size}`, "Content-Length": 0 }).end();
            return;
        }
        if (m) {
            const start = Number(m[1]);
            const end = Math.min(size, m[2] === "" ? size : Number(m[2]) + 1);
            body = file.bytes.subarray(start, end);
            headers["Content-Range"] = `bytes ${start}-${end - 1}/${size}`;
            res.writeHead(206, { ...headers, "Content-Length": body.length });
        } else {
            res.writeHead(200, { ...headers, "Content-Length": size });
        }
        // Bytes count as they leave: a cancelled body counts what was written before the cancel.
        const step = 64 * 1024;
        let at = 0;
        const pump = () => {
            while (at < body.length) {
                const part = body.subarray(at, at + step);
                at += part.length;
                counts.bytes += part.length;
                if (!res.write(part)) {
                    res.once("drain", pump);
                    return;
                }
            }
            res.end();
        };
        res.on("close", () => (at = body.length));
        pump();
    }, latency);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${server.address().port}`;

async function measure(run) {
    counts.requests = 0;
    counts.bytes = 0;
    const t0 = performance.now();
    const extra = await run();
    const ms = performance.now() - t0;
    // Let a cancelled response's last writes land before the next round resets the counts.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { ms, requests: counts.requests, bytes: counts.bytes, ...extra };
}

const sides = {
    weightstream: (url) =>
        measure(async () => {
            const model = await open(url);
            const out = { header: Number(model.info.data_offset), metrics: model.metrics };
            await model.close();
            return out;
        }),
    "@huggingface/gguf": (url) =>
        measure(async () => {
            await gguf(url);
            return {};
        }),
};

const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const report = [];
console.log(`remote open, ${latency} ms added to every response, median of ${rounds} alternating rounds`);
for (const file of files) {
    const url = base + file.path;
    const runs = { weightstream: [], "@huggingface/gguf": [] };
    for (let r = 0; r < rounds + 1; ++r) {
        const order = r % 2 ? ["@huggingface/gguf", "weightstream"] : ["weightstream", "@huggingface/gguf"];
        for (const side of order) {
            const result = await sides[side](url);
            if (r > 0) runs[side].push(result); // round 0 warms up both (wasm load, connections)
        }
    }
    const ws = runs.weightstream;
    const hf = runs["@huggingface/gguf"];
    const header = file.header ?? ws[0].header;
    const row = {
        file: file.name,
        header,
        weightstream: { ms: median(ws.map((x) => x.ms)), requests: ws[0].requests, bytes: ws[0].bytes },
        huggingface: { ms: median(hf.map((x) => x.ms)), requests: hf[0].requests, bytes: hf[0].bytes },
        metrics: ws[0].metrics,
    };
    row.ratio = row.weightstream.ms / row.huggingface.ms;
    report.push(row);
    const over = (b) => `${(((b - header) / header) * 100).toFixed(1)} % past the header`;
    console.log(`\n${file.name}: header ${header} bytes`);
    for (const [label, r] of [
        ["weightstream open()   ", row.weightstream],
        ["@huggingface/gguf gguf", row.huggingface],
    ]) {
        console.log(
            `  ${label}  ${r.ms.toFixed(1).padStart(7)} ms  ${String(r.requests).padStart(2)} requests  ` +
                `${String(r.bytes).padStart(9)} bytes (${over(r.bytes)})`,
        );
    }
    console.log(`  time ratio weightstream / @huggingface/gguf: ${row.ratio.toFixed(2)}`);
    console.log(`  model.metrics: ${JSON.stringify(row.metrics)}`);
}
server.close();
server.closeAllConnections?.();
if (args.json) writeFileSync(args.json, JSON.stringify(report, null, 2));
