// SPDX-License-Identifier: MIT
// Opening a remote model in few round trips, and model.metrics. Over nginx (its access log counts requests and
// body bytes): the deepseek vocabulary header (3.97 MB, 102,400 tokens) in at most 3 requests and at most the
// header + 64 KiB + 10 % of bytes, also when tensor data follows it; a small header in 1 request of at most
// 64 KiB; each parse equal to the local open's. model.metrics equals nginx's counts, counts the retries of a
// faulty server (node:http, in this process), and is kept for every source kind and in a worker.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { open } from "weightstream";
import { openInWorker } from "weightstream/worker";

import { withF32Tensor } from "./gguf-writer.mjs";
import { requireSetup, sharedTestData, testData } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";

const KIB64 = 64 * 1024;
const deepseekFile = path.join(sharedTestData, "ggml/vocab/ggml-vocab-deepseek-llm.gguf");
const smallFile = path.join(testData, "ggml/ggml-types.gguf");
requireSetup(!existsSync(deepseekFile) && "the shared corpus is not next to the checkout (../shared/testdata)");

requireSetup(!nginxPath && "nginx not installed");

describe("remote open over nginx", () => {
    let server;
    before(async () => {
        server = await startNginx();
    });
    after(async () => {
        await server?.stop();
    });

    async function served(tracker, op) {
        const lines = await server.served(op, tracker.requests.get(op));
        return { lines, body: lines.reduce((s, l) => s + l.bodyBytesSent, 0) };
    }

    async function openCounted(url) {
        const tracker = server.tracker();
        const op = tracker.op();
        const model = await open(url, { fetch: tracker.fetch });
        return { model, tracker, opened: await served(tracker, op) };
    }

    test("the deepseek vocabulary header: at most 3 requests, header + 64 KiB + 10 %, as the local open", async () => {
        const local = await open(deepseekFile);
        const { model, opened } = await openCounted(server.rangeBase + server.urlPath(deepseekFile));
        try {
            assert.deepEqual(model.info, local.info);
            const header = Number(model.info.data_offset);
            assert.equal(header, 3970167);
            assert.ok(opened.lines.length <= 3, `${opened.lines.length} requests: ${JSON.stringify(opened.lines)}`);
            assert.ok(opened.lines.every((l) => l.status === 206));
            assert.ok(opened.body <= header + KIB64 + header / 10, `${opened.body} bytes`);
            assert.ok(opened.body >= header);
            const m = model.metrics;
            assert.equal(m.requests, opened.lines.length);
            assert.equal(m.bytesFetched, opened.body);
            assert.equal(m.retries, 0);
            assert.equal(m.bytesFromCache, 0);
            assert.ok(m.timeToFirstByte > 0 && m.ioTime >= m.timeToFirstByte * 0.5, JSON.stringify(m));
            assert.equal(m.decodedBytes, 0);
            assert.equal(m.decodeGBps, null);
        } finally {
            await model.close();
            await local.close();
        }
    });

    test("the same header with tensor data after it: header + 64 KiB + 10 %, as the local open", async () => {
        const { bytes } = withF32Tensor(readFileSync(deepseekFile), 1 << 20);
        writeFileSync(path.join(server.generatedDir, "deepseek-tensor.gguf"), bytes);
        const local = await open(new Uint8Array(bytes));
        const { model, tracker, opened } = await openCounted(`${server.rangeBase}/generated/deepseek-tensor.gguf`);
        try {
            assert.deepEqual(model.info, local.info);
            const header = Number(model.info.tensors[0].offset) - 0; // the data section starts at the tensor
            assert.ok(opened.body <= header + KIB64 + header / 10, `${opened.body} bytes for ${header}`);
            assert.ok(opened.lines.length <= 8, `${opened.lines.length} requests`);
            const m = model.metrics;
            assert.equal(m.requests, opened.lines.length);
            // A last response cut short once the header was parsed: nginx may have sent more than arrived.
            assert.ok(m.bytesFetched >= header && m.bytesFetched <= opened.body, `${m.bytesFetched}`);

            // A read adds its request and exactly its bytes, and counts the decoding.
            const before = model.metrics;
            const op = tracker.op();
            const values = await model.read("weight");
            assert.equal(values[1001], 1 / 8);
            const read = await served(tracker, op);
            const after = model.metrics;
            assert.equal(after.requests - before.requests, read.lines.length);
            assert.equal(after.bytesFetched - before.bytesFetched, read.body);
            assert.equal(read.body, 4 << 20);
            assert.equal(after.decodedBytes, 4 << 20);
            assert.ok(after.decodeTime > 0 && after.decodeGBps > 0, JSON.stringify(after));
            assert.ok(Math.abs(after.decodeGBps - after.decodedBytes / after.decodeTime / 1e6) < 1e-9);
        } finally {
            await model.close();
            await local.close();
        }
    });

    test("a small header: 1 request of at most 64 KiB, metrics as nginx's", async () => {
        const local = await open(smallFile);
        const { model, opened } = await openCounted(server.rangeBase + server.urlPath(smallFile));
        try {
            assert.deepEqual(model.info, local.info);
            assert.equal(opened.lines.length, 1);
            assert.equal(opened.lines[0].range, `bytes=0-${KIB64 - 1}`);
            assert.equal(opened.body, KIB64);
            assert.equal(model.metrics.requests, 1);
            assert.equal(model.metrics.bytesFetched, KIB64);
        } finally {
            await model.close();
            await local.close();
        }
    });

    test("a server without Range: one request, the bytes that arrived", async () => {
        const tracker = server.tracker();
        const op = tracker.op();
        const model = await open(server.noRangeBase + server.urlPath(smallFile), { fetch: tracker.fetch });
        try {
            for (const tensor of model.tensors) await model.read(tensor.name, { as: "raw" });
            const all = await served(tracker, op);
            assert.equal(all.lines.length, 1);
            assert.equal(all.lines[0].status, 200);
            assert.equal(model.metrics.requests, 1);
            assert.equal(model.metrics.bytesFetched, all.body);
            assert.equal(all.body, readFileSync(smallFile).length);
        } finally {
            await model.close();
        }
    });
});

describe("metrics of a faulty server", () => {
    const bytes = readFileSync(smallFile);
    let server;
    let base;
    const hits = new Map();
    before(async () => {
        server = http.createServer((req, res) => {
            const fault = new URL(req.url, "http://x").searchParams.get("fault");
            const n = (hits.get(fault) ?? 0) + 1;
            hits.set(fault, n);
            if (fault === "503twice" && n <= 2) {
                res.writeHead(503).end("busy");
                return;
            }
            const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
            const start = Number(m[1]);
            const end = Math.min(bytes.length, Number(m[2]) + 1);
            res.writeHead(206, {
                "Content-Range": `bytes ${start}-${end - 1}/${bytes.length}`,
                "Content-Length": String(end - start),
            });
            const body = bytes.subarray(start, end);
            if (fault === "dropfirst" && n === 1) {
                // 5000 bytes, then the connection is cut: the retry resumes at byte 5000.
                res.write(body.subarray(0, 5000), () => res.destroy());
                return;
            }
            res.end(body);
        });
        await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
        base = `http://127.0.0.1:${server.address().port}/m.gguf`;
    });
    after(() => new Promise((resolve) => server.close(resolve)));

    test("503 twice, then the file: 2 retries, 3 requests", async () => {
        const model = await open(`${base}?fault=503twice`, { retryDelay: 1 });
        try {
            const m = model.metrics;
            assert.equal(hits.get("503twice"), 3);
            assert.equal(m.retries, 2);
            assert.equal(m.requests, 3);
            assert.equal(m.bytesFetched, KIB64); // the header is inside the first read
        } finally {
            await model.close();
        }
    });

    test("a dropped body: 1 retry resumed where it broke, no byte counted twice", async () => {
        const model = await open(`${base}?fault=dropfirst`, { retryDelay: 1 });
        try {
            const m = model.metrics;
            assert.equal(hits.get("dropfirst"), 2);
            assert.equal(m.retries, 1);
            assert.equal(m.requests, 2);
            assert.equal(m.bytesFetched, KIB64); // 5000 bytes, then the other 60,536 of the read
        } finally {
            await model.close();
        }
    });
});

describe("metrics of every source kind", () => {
    const bytes = readFileSync(smallFile);
    const kinds = {
        "Node path": () => smallFile,
        Blob: () => new Blob([bytes]),
        Uint8Array: () => new Uint8Array(bytes),
        ReadableStream: () => new Blob([bytes]).stream(),
    };
    for (const [kind, make] of Object.entries(kinds)) {
        test(`${kind}: requests, bytes, decoding`, async () => {
            const model = await open(make());
            try {
                // The header is read ahead a chunk (1 MiB): the whole file, in one read.
                const opened = model.metrics;
                assert.equal(opened.bytesFetched, bytes.length);
                assert.equal(opened.requests, kind === "Uint8Array" ? 0 : 1);
                for await (const step of model.stream()) assert.ok(step.data.length > 0);
                const m = model.metrics;
                const tensorBytes = model.tensors.reduce((s, t) => s + Number(t.nbytes), 0);
                // Every tensor is decoded; a random-access source reads each again (one read each, below a
                // chunk), a stream keeps what the header read pulled.
                assert.equal(m.decodedBytes, tensorBytes);
                assert.ok(m.decodeGBps > 0);
                if (kind === "ReadableStream") {
                    assert.equal(m.bytesFetched, bytes.length);
                    assert.equal(m.requests, 1);
                } else {
                    assert.equal(m.bytesFetched, bytes.length + tensorBytes);
                    assert.equal(m.requests, kind === "Uint8Array" ? 0 : 1 + model.tensors.length);
                }
                assert.ok(m.timeToFirstByte !== null && m.ioTime >= 0 && m.retries === 0);
            } finally {
                await model.close();
            }
        });
    }

    test("a model in a worker: the metrics of its latest answer", async () => {
        const model = await openInWorker(smallFile);
        try {
            const opened = model.metrics;
            assert.ok(opened.requests >= 1 && opened.bytesFetched >= Number(model.info.data_offset));
            const tensor = model.tensors.find((t) => t.dtype === "Q8_0");
            await model.read(tensor.name);
            const m = model.metrics;
            assert.equal(m.decodedBytes, Number(tensor.nbytes));
            assert.ok(m.bytesFetched > opened.bytesFetched);
            assert.ok(m.decodeGBps > 0);
        } finally {
            await model.close();
        }
        // Still there, as of the last answer, after close().
        assert.ok(model.metrics.decodedBytes > 0);
    });
});
