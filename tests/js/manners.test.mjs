// SPDX-License-Identifier: MIT
// What servers, files and callers do over time: a file replaced behind its
// URL (nginx, and a server that ignores If-Range), Retry-After, a 416 inside the file, a server that trickles
// bytes, signals that live for many reads, a stream skip far into a stream, hundreds of reads at once, and
// close() during stream(). The fault server here is node:http in this process, so the test sees each request.
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { open } from "weightstream";

import { loadWasm } from "../../wasm/js/wasm.js";
import { ggufHeader, writeGguf } from "./gguf-writer.mjs";
import { bytesOf, requireSetup, testData } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";

requireSetup(!nginxPath && "nginx not installed");

const GGML_TYPE_F32 = 0;
const GGML_TYPE_Q8_0 = 8;

const typesFile = path.join(testData, "ggml/ggml-types.gguf");
const typesBytes = readFileSync(typesFile);

// Two files of one layout (one F32 tensor of 4096 values) and the same size, with other values.
function twin(seed) {
    const values = new Float32Array(4096).map((_, i) => seed + i);
    return writeGguf({
        tensors: [{ name: "t", type: GGML_TYPE_F32, ne: [4096], data: new Uint8Array(values.buffer) }],
    });
}
const fileA = twin(0);
const fileB = twin(100000);
assert.equal(fileA.length, fileB.length);

describe("a file replaced behind nginx", () => {
    let server;
    before(async () => {
        server = await startNginx();
    });
    after(async () => {
        await server?.stop();
    });

    for (const [label, replacement] of [
        ["same size", fileB],
        ["another size", fileB.subarray(0, fileB.length - 1024)],
    ]) {
        test(`${label}: the next read rejects source_changed (If-Range: nginx answers the whole new file)`, async () => {
            const file = path.join(server.generatedDir, `replaced-${label.replace(" ", "-")}.gguf`);
            writeFileSync(file, fileA);
            utimesSync(file, 1700000000, 1700000000);
            const tracker = server.tracker();
            const model = await open(`${server.rangeBase}/generated/${path.basename(file)}`, { fetch: tracker.fetch });
            try {
                assert.deepEqual(Array.from((await model.read("t", { rows: [0, 1] })).subarray(0, 3)), [0, 1, 2]);
                writeFileSync(file, replacement);
                utimesSync(file, 1700000100, 1700000100); // nginx's ETag is its mtime and size
                const op = tracker.op();
                await assert.rejects(model.read("t"), (e) => {
                    assert.equal(e.code, "source_changed");
                    assert.equal(e.offset, Number(model.tensor("t").offset));
                    assert.match(e.message, /changed while it was being read/);
                    return true;
                });
                // nginx saw the If-Range fail: it sent 200 (the new file), not 206.
                const lines = await server.served(op, 1);
                assert.deepEqual(
                    lines.map((l) => l.status),
                    [200],
                );
            } finally {
                await model.close();
            }
        });
    }

    test("an unchanged file reads as before (If-Range matches: 206)", async () => {
        const file = path.join(server.generatedDir, "unchanged.gguf");
        writeFileSync(file, fileA);
        const tracker = server.tracker();
        const model = await open(`${server.rangeBase}/generated/unchanged.gguf`, { fetch: tracker.fetch });
        try {
            const op = tracker.op();
            const t = await model.read("t");
            assert.equal(t[4095], 4095);
            assert.deepEqual(
                (await server.served(op, 1)).map((l) => l.status),
                [206],
            );
        } finally {
            await model.close();
        }
    });
});

// ---- a fault server ---------------------------------------------------------------------------------------

let faultServer;
let base;
const seen = new Map(); // fault -> [{at (ms), headers, range}]
const files = new Map([["types", typesBytes]]); // ?file= -> bytes

function answer(req, res, bytes, extra = {}) {
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
    const headers = { "Content-Type": "application/octet-stream", ...extra };
    if (!m) {
        res.writeHead(200, { ...headers, "Content-Length": String(bytes.length) });
        res.end(bytes);
        return;
    }
    const start = Number(m[1]);
    const end = Math.min(bytes.length, m[2] === "" ? bytes.length : Number(m[2]) + 1);
    if (start >= bytes.length) {
        res.writeHead(416, { "Content-Range": `bytes */${bytes.length}` });
        res.end();
        return;
    }
    res.writeHead(206, {
        ...headers,
        "Content-Range": `bytes ${start}-${end - 1}/${bytes.length}`,
        "Content-Length": String(end - start),
    });
    res.end(bytes.subarray(start, end));
}

before(async () => {
    faultServer = http.createServer((req, res) => {
        const url = new URL(req.url, "http://x");
        const fault = url.searchParams.get("fault") ?? "none";
        const bytes = files.get(url.searchParams.get("file") ?? "types");
        const log = seen.get(fault) ?? [];
        seen.set(fault, log);
        log.push({ at: Date.now(), headers: req.headers, range: req.headers.range });
        const n = log.length;
        const start = Number(/^bytes=(\d+)-/.exec(req.headers.range ?? "")?.[1] ?? 0);
        switch (fault) {
            case "429": // Retry-After in seconds, once
                if (n === 1) {
                    res.writeHead(429, { "Retry-After": "2" });
                    res.end();
                    return;
                }
                break;
            case "503date": // Retry-After as an HTTP-date (whole seconds), once
                if (n === 1) {
                    res.writeHead(503, { "Retry-After": new Date(Date.now() + 3000).toUTCString() });
                    res.end();
                    return;
                }
                break;
            case "503far": // a Retry-After of a day: waited for at most the cap, never a day
                if (n === 1) {
                    res.writeHead(503, { "Retry-After": "86400" });
                    res.end();
                    return;
                }
                break;
            case "416": // the header, then 416 for a range inside the file
                if (start > 0) {
                    res.writeHead(416, { "Content-Range": `bytes */${bytes.length}` });
                    res.end();
                    return;
                }
                break;
            case "trickle": // a byte a second
                res.writeHead(206, {
                    "Content-Range": `bytes ${start}-65535/${bytes.length}`,
                    "Content-Length": String(65536 - start),
                });
                {
                    let i = start;
                    const timer = setInterval(() => res.write(bytes.subarray(i, ++i)), 1000);
                    res.on("close", () => clearInterval(timer));
                }
                return;
            case "silent": // no response at all
                res.on("close", () => {});
                return;
            case "etag": // ETag changes after the first response; If-Range ignored (206 anyway)
                answer(req, res, n === 1 ? bytes : fileB, { ETag: n === 1 ? '"v1"' : '"v2"' });
                return;
            case "lastmodified": // the same with Last-Modified only
                answer(req, res, n === 1 ? bytes : fileB, {
                    "Last-Modified": n === 1 ? "Tue, 14 Nov 2023 22:13:20 GMT" : "Tue, 14 Nov 2023 22:15:00 GMT",
                });
                return;
            case "total": // no validator; the size changes
                answer(req, res, n === 1 ? bytes : Buffer.concat([bytes, Buffer.alloc(32)]));
                return;
            case "412": // a server that refuses the If-Range precondition outright
                if (req.headers["if-range"]) {
                    res.writeHead(412);
                    res.end();
                    return;
                }
                answer(req, res, bytes, { ETag: '"v1"' });
                return;
            case "norange412": // no Range support; the file changes before the download restarts
                if (req.headers["if-match"]) {
                    res.writeHead(412);
                    res.end();
                    return;
                }
                res.writeHead(200, { ETag: '"v1"', "Content-Length": String(bytes.length) });
                res.end(bytes);
                return;
        }
        answer(req, res, bytes, { ETag: '"same"' });
    });
    await new Promise((resolve) => faultServer.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${faultServer.address().port}/model.gguf`;
});

after(() => {
    faultServer.closeAllConnections();
    return new Promise((resolve) => faultServer.close(resolve));
});

const fast = { retryDelay: 1 };

test("a 429 with Retry-After: 2 is retried after 2 s, not after the backoff", async () => {
    const model = await open(`${base}?fault=429`, fast);
    await model.close();
    const [first, second] = seen.get("429");
    const waited = second.at - first.at;
    assert.ok(waited >= 1950 && waited < 4000, `retried after ${waited} ms`);
});

test("a 503 with Retry-After as an HTTP-date waits until then, then reads", async () => {
    const model = await open(`${base}?fault=503date`, fast);
    try {
        assert.equal((await model.read("f32.weight")).length, 4096);
    } finally {
        await model.close();
    }
    const [first, second] = seen.get("503date");
    const waited = second.at - first.at;
    // The date has whole seconds: 3 s from a time inside a second is 2 to 3 s away.
    assert.ok(waited >= 1900 && waited < 4500, `retried after ${waited} ms`);
});

test("a Retry-After beyond the cap is honoured up to the cap only (aborted here while waiting)", async () => {
    const controller = new AbortController();
    const pending = open(`${base}?fault=503far`, { ...fast, signal: controller.signal });
    setTimeout(() => controller.abort(), 3000);
    const started = Date.now();
    await assert.rejects(pending, { name: "AbortError" });
    // Still waiting after 3 s: the backoff (1 ms) did not win over Retry-After.
    assert.ok(Date.now() - started >= 2900);
    assert.equal(seen.get("503far").length, 1);
});

test("a 416 for a range inside the file is an http error, not truncated", async () => {
    const model = await open(`${base}?fault=416`, fast);
    try {
        await assert.rejects(model.read("f16.weight"), (e) => {
            assert.equal(e.code, "http");
            assert.equal(e.status, 416);
            assert.equal(e.offset, 22848);
            assert.match(e.message, /inside the file/);
            return true;
        });
    } finally {
        await model.close();
    }
});

test("a server sending 1 byte/s trips stallTimeout: retried, then network", async () => {
    const started = Date.now();
    await assert.rejects(open(`${base}?fault=trickle`, { stallTimeout: 1500, retries: 1, retryDelay: 1 }), (e) => {
        assert.equal(e.code, "network");
        assert.match(e.message, /no progress for 1500 ms/);
        return true;
    });
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 2900 && elapsed < 6000, `${elapsed} ms`);
    assert.equal(seen.get("trickle").length, 2);
});

test("a server that never answers trips stallTimeout too", async () => {
    const started = Date.now();
    await assert.rejects(open(`${base}?fault=silent`, { stallTimeout: 500, retries: 0 }), {
        code: "network",
        message: /no progress for 500 ms at byte 0/,
    });
    assert.ok(Date.now() - started < 3000);
});

test("stallTimeout must be a non-negative integer", async () => {
    await assert.rejects(open(`${base}?fault=none`, { stallTimeout: -1 }), TypeError);
    const model = await open(`${base}?fault=none`, { stallTimeout: 0 });
    await model.close();
});

for (const [fault, what] of [
    ["etag", /ETag "v1", now "v2"/],
    ["lastmodified", /Last-Modified .*, now /],
    ["total", /102624 bytes, now 102656/],
    ["412", /412/],
]) {
    test(`${fault}: a response of another file rejects source_changed`, async () => {
        const model = await open(`${base}?fault=${fault}`, fast);
        try {
            await assert.rejects(model.read("f32.weight"), (e) => {
                assert.equal(e.code, "source_changed");
                assert.equal(e.offset, 6464);
                assert.match(e.message, what);
                return true;
            });
        } finally {
            await model.close();
        }
        // The later request carried the first response's validator.
        const later = seen.get(fault)[1].headers["if-range"];
        if (fault === "etag" || fault === "412") assert.equal(later, '"v1"');
        if (fault === "lastmodified") assert.equal(later, "Tue, 14 Nov 2023 22:13:20 GMT");
        if (fault === "total") assert.equal(later, undefined);
    });
}

test("without Range support, the restarted download carries If-Match: a 412 rejects source_changed", async () => {
    const model = await open(`${base}?fault=norange412`, fast);
    try {
        const last = model.tensors.at(-1).name;
        await model.read(last); // to the end of the one pass
        await assert.rejects(model.read("f32.weight"), { code: "source_changed", message: /If-Match/ });
        assert.equal(seen.get("norange412")[1].headers["if-match"], '"v1"');
    } finally {
        await model.close();
    }
});

test("2,000 reads leave no listener on a long-lived signal and raise no MaxListenersExceededWarning", async () => {
    const tiny = writeGguf({ tensors: [{ name: "t", type: GGML_TYPE_F32, ne: [4], data: new Uint8Array(16) }] });
    files.set("tiny", tiny);
    const warnings = [];
    const onWarning = (w) => warnings.push(w.name);
    process.on("warning", onWarning);
    const signals = new Set();
    const counting = (url, init) => {
        signals.add(init.signal);
        return fetch(url, init);
    };
    const lifetime = new AbortController();
    const model = await open(`${base}?fault=many&file=tiny`, { fetch: counting, concurrency: 16 });
    try {
        // Node warns past 10 listeners on one signal: a listener left per read would be ~1,000 here (60,000 reads
        // took 51 s of CI and proved no more).
        const reads = 2000;
        let next = 0;
        const worker = async () => {
            while (next < reads) {
                const i = next++;
                // Half the reads without a signal (the model's own close signal is the only one), half with one
                // signal shared by all.
                const data = await model.read("t", i % 2 ? { signal: lifetime.signal } : {});
                assert.equal(data.length, 4);
            }
        };
        await Promise.all(Array.from({ length: 16 }, worker));
        await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
        assert.deepEqual(
            warnings.filter((w) => w === "MaxListenersExceededWarning"),
            [],
        );
        assert.equal(getEventListeners(lifetime.signal, "abort").length, 0);
        // Every request had a signal of its own (fetch's listener is on it, not on a signal that outlives it).
        assert.equal(seen.get("many").length, reads + 1);
        assert.equal(signals.size, reads + 1);
    } finally {
        process.off("warning", onWarning);
        await model.close();
    }
});

// ---- streams, memory, close -------------------------------------------------------------------------------

test(
    "a tensor 2^40 bytes into a ReadableStream: the skip yields, and a timer's abort stops it",
    { timeout: 30000 },
    async () => {
        const FAR = 2 ** 40;
        // "pad" (F32, 2^38 values = 2^40 bytes), then "far": the stream never gets there.
        const { bytes: header } = ggufHeader({
            tensors: [
                { name: "pad", type: GGML_TYPE_F32, ne: [FAR / 4], nbytes: FAR },
                { name: "far", type: GGML_TYPE_F32, ne: [8], nbytes: 32 },
            ],
        });
        const zeros = new Uint8Array(64 * 1024);
        let first = true;
        const stream = new ReadableStream({
            pull(controller) {
                controller.enqueue(first ? header : zeros);
                first = false;
            },
        });
        const model = await open(stream);
        try {
            assert.equal(Number(model.tensor("far").offset), header.length + FAR);
            let ticks = 0;
            const ticker = setInterval(() => ++ticks, 10);
            const started = Date.now();
            try {
                await assert.rejects(model.read("far", { signal: AbortSignal.timeout(300) }), { name: "TimeoutError" });
            } finally {
                clearInterval(ticker);
            }
            const elapsed = Date.now() - started;
            assert.ok(elapsed < 1500, `aborted after ${elapsed} ms`);
            assert.ok(ticks >= 5, `${ticks} timer ticks during the skip`);
        } finally {
            await model.close();
        }
    },
);

test("600 concurrent reads of a small model all succeed, and wasm memory stays bounded", async () => {
    // One Q8_0 tensor of 2^17 values (139 KB), read in 16 KiB chunks: each read takes 9 chunks, so 600 reads
    // are all between chunks at once. Before the decoders trimmed, each held its buffers: heap 16 -> 514 MiB
    // (2^18 values, 64 KiB chunks).
    const n = 1 << 17;
    const blocks = n / 32;
    const data = new Uint8Array(blocks * 34);
    for (let b = 0; b < blocks; ++b) {
        data[b * 34] = 0x00; // d = 2^-10 as binary16 (0x1400)
        data[b * 34 + 1] = 0x14;
        for (let i = 0; i < 32; ++i) data[b * 34 + 2 + i] = (b + i) & 0x7f;
    }
    const file = path.join(mkdtempSync(path.join(tmpdir(), "ws-manners-")), "q8_0.gguf");
    writeFileSync(file, writeGguf({ tensors: [{ name: "q", type: GGML_TYPE_Q8_0, ne: [n], data }] }));
    const wasm = await loadWasm();
    const model = await open(file, { chunkSize: 16 * 1024 });
    try {
        const reference = await model.read("q");
        assert.equal(reference[33], ((1 + 1) & 0x7f) / 1024); // block 1, value 1
        const heapBefore = wasm.HEAP8.length;
        const results = await Promise.allSettled(Array.from({ length: 600 }, () => model.read("q")));
        const stats = await Promise.allSettled(Array.from({ length: 600 }, () => model.stats("q")));
        const growth = wasm.HEAP8.length - heapBefore;
        assert.deepEqual(
            results.filter((r) => r.status === "rejected").map((r) => r.reason),
            [],
        );
        assert.deepEqual(
            stats.filter((r) => r.status === "rejected").map((r) => r.reason),
            [],
        );
        for (const r of results) assert.ok(bytesOf(r.value).equals(bytesOf(reference)));
        for (const r of stats) assert.equal(r.value.max, 127 / 1024);
        // Four decoders keep their buffers (16 KiB + 15,420 values each), one more at a time fills and trims;
        // eight stats() run at once, each with its accumulator (384 KiB).
        assert.ok(growth <= 16 * 1024 * 1024, `wasm heap grew by ${growth} bytes`);
    } finally {
        await model.close();
    }
});

test("close() during stream() from a Node path rejects closed, not io", async () => {
    // Between two tensors: the next read starts on the closed file.
    const model = await open(typesFile, { chunkSize: 512 });
    const it = model.stream();
    await it.next();
    await model.close();
    await assert.rejects(it.next(), { code: "closed" });
    // In the middle of a tensor's chunks.
    const again = await open(typesFile, { chunkSize: 512 });
    const it2 = again.stream();
    await it2.next();
    const pending = assert.rejects(it2.next(), { code: "closed" });
    await again.close();
    await pending;
});

test("close() during stream() from a ReadableStream rejects closed, not truncated", async () => {
    let pos = 0;
    const stream = new ReadableStream({
        async pull(controller) {
            await new Promise((resolve) => setTimeout(resolve, 1));
            if (pos >= typesBytes.length) return controller.close();
            controller.enqueue(new Uint8Array(typesBytes.subarray(pos, pos + 256)));
            pos += 256;
        },
    });
    const model = await open(stream);
    const it = model.stream();
    await it.next();
    const pending = assert.rejects(it.next(), { code: "closed" });
    await model.close();
    await pending;
});
