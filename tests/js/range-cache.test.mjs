// SPDX-License-Identifier: MIT
// The range cache in Node ({cache: {directory}}; Node has no browser storage, so it is off unless asked),
// over nginx, whose access log says what crossed the network: a second open and read cost one revalidation
// (304, no body bytes); a replaced file (a new ETag) refetches and drops the old entry; a file replaced after
// the revalidation still fails "source_changed"; the size cap evicts the least recently used pieces; cache
// off sends every request; a directory that cannot be made leaves the load working uncached; pieces deleted
// behind its back are refetched, files not its own never deleted; cacheInfo() and clearCache(). And over a
// server without ETags (node:http): keyed by Last-Modified, a rollback to an older file (If-Modified-Since met,
// a 304) is noticed by the 304's Last-Modified. The browser stores (OPFS, the Cache API) are tested in tests/browser/range-cache.test.mjs.
import assert from "node:assert/strict";
import {
    copyFileSync,
    existsSync,
    mkdirSync,
    mkdtempSync,
    readFileSync,
    readdirSync,
    rmSync,
    symlinkSync,
    utimesSync,
    writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";

import { cacheInfo, clearCache, open } from "weightstream";

import { requireSetup, testData } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";

const modelFile = path.join(testData, "ggml/ggml-types.gguf");

requireSetup(!nginxPath && "nginx not installed");

describe("range cache over nginx (Node, a directory)", () => {
    let server;
    let work;
    let directory;
    let url;
    const target = () => path.join(server.generatedDir, "cached.gguf");

    before(async () => {
        server = await startNginx();
        work = mkdtempSync(path.join(tmpdir(), "ws-range-cache-"));
    });
    after(async () => {
        await server?.stop();
        rmSync(work, { recursive: true, force: true });
    });
    let serial = 0;
    beforeEach(() => {
        directory = path.join(work, `cache${++serial}`);
        copyFileSync(modelFile, target());
        url = `${server.rangeBase}/generated/cached.gguf`;
    });

    // Opens url, reads every tensor's stored bytes: {hashes, metrics, lines (nginx), tensors}.
    async function openAndRead(options, { tracker = server.tracker(), names } = {}) {
        const op = tracker.op();
        const model = await open(url, { fetch: tracker.fetch, ...options });
        try {
            const raw = {};
            for (const t of model.tensors) {
                if (names && !names.includes(t.name)) continue;
                raw[t.name] = Buffer.from((await model.read(t.name, { as: "raw" })).buffer).toString("base64");
            }
            const lines = await server.served(op, tracker.requests.get(op));
            return { raw, metrics: model.metrics, lines, tensors: model.tensors };
        } finally {
            await model.close();
        }
    }

    function expectedRaw(file, tensors, names) {
        const bytes = readFileSync(file);
        const raw = {};
        for (const t of tensors) {
            if (names && !names.includes(t.name)) continue;
            const start = Number(t.offset);
            raw[t.name] = bytes.subarray(start, start + Number(t.nbytes)).toString("base64");
        }
        return raw;
    }

    const body = (lines) => lines.reduce((n, l) => n + l.bodyBytesSent, 0);

    test("a second open and read of every tensor: one revalidation (304), no body bytes", async () => {
        const cache = { directory };
        const cold = await openAndRead({ cache });
        assert.deepEqual(cold.raw, expectedRaw(target(), cold.tensors));
        assert.ok(cold.lines.length >= 2 && cold.lines.every((l) => l.status === 206), JSON.stringify(cold.lines));
        assert.equal(cold.metrics.bytesFetched, body(cold.lines));
        // The tensors inside the header's first read (64 KiB) already came from the cache.
        const readBytes = 64 * 1024 + cold.tensors.reduce((n, t) => n + Number(t.nbytes), 0);
        assert.equal(cold.metrics.bytesFetched + cold.metrics.bytesFromCache, readBytes);
        assert.ok(cold.metrics.bytesFromCache > 0);

        const info = await cacheInfo({ directory });
        assert.equal(info.backend, "directory");
        assert.equal(info.entries.length, 1);
        const [entry] = info.entries;
        assert.equal(entry.url, url);
        assert.equal(entry.size, readFileSync(target()).length);
        assert.match(entry.etag, /^"[0-9a-f]+-[0-9a-f]+"$/); // nginx: "mtime-size"
        assert.equal(info.bytes, cold.metrics.bytesFetched); // every byte fetched is held (all of it whole)
        assert.equal(info.writeErrors, 0);

        const warm = await openAndRead({ cache });
        assert.deepEqual(warm.raw, cold.raw);
        assert.deepEqual(
            warm.lines.map((l) => [l.status, l.bodyBytesSent, l.range]),
            [[304, 0, "bytes=0-0"]],
        );
        assert.equal(warm.metrics.requests, 1);
        assert.equal(warm.metrics.bytesFetched, 0);
        assert.equal(warm.metrics.bytesFromCache, readBytes);
        assert.equal(warm.metrics.retries, 0);
    });

    test("reads of the same bytes at once share one fetch: the others are served from the cache it fills", async () => {
        const cache = { directory };
        const tracker = server.tracker();
        const op = tracker.op();
        const model = await open(url, { fetch: tracker.fetch, cache });
        try {
            // The largest tensor past the header's first read, read three times at once (the page reads a
            // tensor's values, its statistics and its exact values together).
            const t = model.tensors.filter((x) => Number(x.offset) >= 64 * 1024).sort((x, y) => y.nbytes - x.nbytes)[0];
            const before = model.metrics.requests;
            const reads = await Promise.all([0, 1, 2].map(() => model.read(t.name, { as: "raw" })));
            const expected = expectedRaw(target(), [t])[t.name];
            for (const r of reads) assert.equal(Buffer.from(r.buffer).toString("base64"), expected);
            const lines = (await server.served(op, tracker.requests.get(op))).filter(
                (l) => l.range !== "bytes=0-65535",
            );
            assert.equal(model.metrics.requests - before, 1);
            assert.deepEqual(
                lines.map((l) => [l.status, l.bodyBytesSent]),
                [[206, Number(t.nbytes)]],
            );
            assert.equal(model.metrics.bytesFromCache >= 2 * Number(t.nbytes), true);
        } finally {
            await model.close();
        }
    });

    test("a replaced file (new ETag and size) refetches, and its old entry is dropped", async () => {
        const cache = { directory };
        const first = await openAndRead({ cache });
        const oldEtag = (await cacheInfo({ directory })).entries[0].etag;
        // Another file of another size at the same URL.
        copyFileSync(path.join(testData, "ggml/ggml-types-ext.gguf"), target());
        utimesSync(target(), new Date(), new Date(Date.now() + 5000));
        const second = await openAndRead({ cache });
        assert.deepEqual(second.raw, expectedRaw(target(), second.tensors));
        assert.notDeepEqual(second.raw, first.raw);
        // The revalidation answered 206 with one byte (the condition failed), then the header and tensors.
        assert.deepEqual([second.lines[0].status, second.lines[0].bodyBytesSent], [206, 1]);
        // The new file (6144 bytes) in one read: the header's, which holds every tensor.
        assert.deepEqual(
            second.lines.slice(1).map((l) => [l.status, l.bodyBytesSent]),
            [[206, readFileSync(target()).length]],
        );
        const info = await cacheInfo({ directory });
        assert.equal(info.entries.length, 1);
        assert.notEqual(info.entries[0].etag, oldEtag);
        assert.equal(info.entries[0].size, readFileSync(target()).length);
        assert.equal(info.bytes, second.metrics.bytesFetched - 1);
    });

    test("the same size with a new ETag (another mtime) refetches too", async () => {
        const cache = { directory };
        const first = await openAndRead({ cache });
        const bytes = readFileSync(target());
        const t0 = (await openAndRead({ cache: false })).tensors.find((t) => Number(t.nbytes) >= 16);
        bytes[Number(t0.offset)] ^= 0xff;
        writeFileSync(target(), bytes);
        utimesSync(target(), new Date(), new Date(Date.now() + 10000));
        const again = await openAndRead({ cache });
        assert.deepEqual(again.raw, expectedRaw(target(), again.tensors));
        assert.equal(again.lines[0].status, 206);
        assert.equal(body(again.lines), 1 + body(first.lines)); // all of it again, and the revalidation's byte
    });

    test("a file replaced after the revalidation fails source_changed, never mixing versions", async () => {
        const cache = { directory };
        const tracker = server.tracker();
        const cold = await openAndRead({ cache }, { tracker, names: [] }); // the header only
        const model = await open(url, { fetch: tracker.fetch, cache });
        try {
            assert.equal(model.metrics.bytesFetched, 0); // the header came from the cache
            copyFileSync(path.join(testData, "ggml/ggml-types-ext.gguf"), target());
            utimesSync(target(), new Date(), new Date(Date.now() + 20000));
            const tensor = cold.tensors.at(-1);
            await assert.rejects(model.read(tensor.name, { as: "raw" }), (e) => e.code === "source_changed");
        } finally {
            await model.close();
        }
    });

    test("the size cap evicts the least recently used pieces", async () => {
        const all = await openAndRead({ cache: false });
        // The three largest tensors past the header's first read (64 KiB, one piece of the cache); a cap that
        // holds that piece and two of them, not three.
        const sorted = all.tensors
            .filter((t) => Number(t.offset) >= 64 * 1024)
            .sort((a, b) => Number(b.nbytes) - Number(a.nbytes));
        const [a, b, c] = sorted;
        const header = 64 * 1024;
        const maxBytes = header + Number(a.nbytes) + Number(b.nbytes) + Number(c.nbytes) - 1;
        const cache = { directory, maxBytes };
        const tracker = server.tracker();
        await openAndRead({ cache }, { tracker, names: [a.name] });
        await openAndRead({ cache }, { tracker, names: [b.name] });
        await openAndRead({ cache }, { tracker, names: [c.name] }); // evicts the least recently used: a's bytes
        const info = await cacheInfo({ directory });
        assert.equal(info.maxBytes, maxBytes);
        assert.ok(info.bytes <= maxBytes, `${info.bytes} > ${maxBytes}`);
        const held = (t) =>
            info.entries[0].ranges.some(([s, e]) => s <= Number(t.offset) && Number(t.offset) + Number(t.nbytes) <= e);
        assert.equal(held(a), false, "the least recently used tensor is evicted");
        assert.equal(held(b), true);
        assert.equal(held(c), true);
        // b and c (and the header) come from the cache; a crosses the network again.
        const hits = await openAndRead({ cache }, { tracker, names: [b.name, c.name] });
        assert.deepEqual(hits.raw, expectedRaw(target(), hits.tensors, [b.name, c.name]));
        assert.deepEqual(
            hits.lines.map((l) => l.status),
            [304],
        );
        const again = await openAndRead({ cache }, { tracker, names: [a.name] });
        assert.deepEqual(again.raw, expectedRaw(target(), again.tensors, [a.name]));
        assert.equal(again.metrics.bytesFetched, Number(a.nbytes));
        assert.deepEqual(
            again.lines.map((l) => [l.status, l.bodyBytesSent]),
            [
                [304, 0],
                [206, Number(a.nbytes)],
            ],
        );
    });

    test("cache off (and Node's default) sends every request", async () => {
        for (const cache of [false, undefined]) {
            const one = await openAndRead({ cache });
            const two = await openAndRead({ cache });
            assert.equal(two.lines.length, one.lines.length);
            assert.equal(body(two.lines), body(one.lines));
            assert.equal(two.metrics.bytesFromCache, 0);
            assert.ok(two.metrics.bytesFetched > 0);
        }
        assert.deepEqual(await cacheInfo(), {
            backend: null,
            maxBytes: 1 << 30,
            bytes: 0,
            entries: [],
            writeErrors: 0,
        });
        await assert.rejects(open(url, { cache: true }), TypeError);
        await assert.rejects(open(url, { cache: { directory, maxBytes: -1 } }), TypeError);
    });

    test("a cache directory that cannot be made: the load goes on uncached", async () => {
        const blocker = path.join(work, "a-file");
        writeFileSync(blocker, "not a directory");
        const cache = { directory: path.join(blocker, "cache") };
        const one = await openAndRead({ cache });
        assert.deepEqual(one.raw, expectedRaw(target(), one.tensors));
        const two = await openAndRead({ cache });
        assert.equal(two.metrics.bytesFromCache, 0);
        assert.equal(two.lines.length, one.lines.length);
    });

    test("pieces deleted behind its back are fetched again; files not its own are never deleted", async () => {
        mkdirSync(directory, { recursive: true });
        writeFileSync(path.join(directory, "notes.txt"), "mine");
        const cache = { directory };
        const cold = await openAndRead({ cache });
        const pieces = readdirSync(directory).filter((n) => n.startsWith("piece-"));
        assert.ok(pieces.length >= 2, pieces.join());
        for (const name of pieces) rmSync(path.join(directory, name));
        const again = await openAndRead({ cache });
        assert.deepEqual(again.raw, cold.raw);
        assert.equal(again.lines[0].status, 304);
        assert.equal(
            again.metrics.bytesFromCache + again.metrics.bytesFetched,
            cold.metrics.bytesFromCache + cold.metrics.bytesFetched,
        );
        assert.ok(again.metrics.bytesFetched >= cold.metrics.bytesFetched);
        await clearCache({ directory });
        assert.deepEqual(readdirSync(directory), ["notes.txt"]);
        assert.ok(existsSync(path.join(directory, "notes.txt")));
    });

    test(
        "a FIFO or link planted at the index or a piece is passed over, not waited on",
        { timeout: 60_000 },
        async () => {
            const cache = { directory };
            const cold = await openAndRead({ cache });
            const piece = readdirSync(directory).find((n) => n.startsWith("piece-"));
            for (const name of ["index.json", piece]) {
                const file = path.join(directory, name);
                rmSync(file);
                assert.equal(spawnSync("mkfifo", [file]).status, 0);
            }
            const again = await openAndRead({ cache });
            assert.deepEqual(again.raw, cold.raw);
            // The piece a link points to is not read either.
            const other = readdirSync(directory).find((n) => n.startsWith("piece-") && n !== piece);
            rmSync(path.join(directory, other));
            symlinkSync(path.join(directory, piece), path.join(directory, other));
            assert.deepEqual((await openAndRead({ cache })).raw, cold.raw);
        },
    );

    test("clearCache() empties the cache", async () => {
        const cache = { directory };
        await openAndRead({ cache });
        assert.ok((await cacheInfo({ directory })).bytes > 0);
        await clearCache({ directory });
        const info = await cacheInfo({ directory });
        assert.deepEqual([info.entries, info.bytes], [[], 0]);
        const again = await openAndRead({ cache });
        assert.equal(again.metrics.bytesFetched, body(again.lines));
        assert.ok(again.lines.every((l) => l.status === 206)); // no entry: no revalidation
    });
});

// A server with Last-Modified and no ETag, that answers If-Modified-Since as HTTP says: 304 when the file is
// not newer than the date given. So a file replaced by an older one (a rollback) meets the condition; the
// 304's own Last-Modified tells the cache its entry is stale.
describe("range cache keyed by Last-Modified (a server without ETags)", () => {
    let server;
    let base;
    let work;
    let file = { bytes: readFileSync(modelFile), modified: new Date("2025-06-01T00:00:00Z") };
    const log = [];
    before(async () => {
        work = mkdtempSync(path.join(tmpdir(), "ws-range-cache-lm-"));
        server = http.createServer((req, res) => {
            const { bytes, modified } = file;
            const since = req.headers["if-modified-since"];
            const headers = { "Last-Modified": modified.toUTCString(), "Accept-Ranges": "bytes" };
            if (since && Date.parse(since) >= modified.getTime()) {
                log.push([304, 0]);
                res.writeHead(304, headers).end();
                return;
            }
            const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
            const start = Number(m[1]);
            const end = Math.min(Number(m[2]) + 1, bytes.length);
            log.push([206, end - start]);
            res.writeHead(206, {
                ...headers,
                "Content-Range": `bytes ${start}-${end - 1}/${bytes.length}`,
                "Content-Length": end - start,
            });
            res.end(bytes.subarray(start, end));
        });
        await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
        base = `http://127.0.0.1:${server.address().port}`;
    });
    after(async () => {
        await new Promise((resolve) => server.close(resolve));
        rmSync(work, { recursive: true, force: true });
    });

    async function readAll(cache) {
        log.length = 0;
        const model = await open(`${base}/m.gguf`, { cache });
        try {
            const out = {};
            for (const t of model.tensors)
                out[t.name] = Buffer.from((await model.read(t.name, { as: "raw" })).buffer).toString("base64");
            return { raw: out, metrics: model.metrics, log: [...log] };
        } finally {
            await model.close();
        }
    }

    test("reopened: one 304; an older file put in place (If-Modified-Since met) is fetched again", async () => {
        const cache = { directory: path.join(work, "cache") };
        const cold = await readAll(cache);
        const info = await cacheInfo(cache);
        assert.deepEqual([info.entries[0].etag, info.entries[0].lastModified], [null, file.modified.toUTCString()]);
        const warm = await readAll(cache);
        assert.deepEqual(warm.raw, cold.raw);
        assert.deepEqual(warm.log, [[304, 0]]);

        const other = readFileSync(path.join(testData, "ggml/ggml-types-ext.gguf"));
        file = { bytes: other, modified: new Date("2025-01-01T00:00:00Z") };
        const rolledBack = await readAll(cache);
        assert.deepEqual(rolledBack.log[0], [304, 0]);
        assert.equal(rolledBack.metrics.bytesFromCache + rolledBack.metrics.bytesFetched > 0, true);
        const expected = {};
        const model = await open(new Uint8Array(other));
        for (const t of model.tensors)
            expected[t.name] = Buffer.from((await model.read(t.name, { as: "raw" })).buffer).toString("base64");
        await model.close();
        assert.deepEqual(rolledBack.raw, expected);
        const after = await cacheInfo(cache);
        assert.deepEqual(
            [after.entries[0].lastModified, after.entries[0].size],
            [file.modified.toUTCString(), other.length],
        );
    });
});
