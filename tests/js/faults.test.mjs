// SPDX-License-Identifier: MIT
// A misbehaving HTTP server (node:http, in this process): it drops connections mid-body, answers 503 once,
// ignores Range, hides Content-Range, or keeps failing. Reads must stay bit-exact through the recoverable
// faults and reject with a clear code, without hanging, when the server never recovers.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, test } from "node:test";

import { open } from "weightstream";

import { bytesOf, testData } from "./helpers.mjs";

const file = path.join(testData, "ggml/ggml-types.gguf");
const bytes = readFileSync(file);
const fast = { retryDelay: 1 };

let server;
let base;
const hits = new Map(); // fault -> requests seen

before(async () => {
    server = http.createServer((req, res) => {
        const url = new URL(req.url, "http://x");
        const fault = url.searchParams.get("fault") ?? "none";
        const n = (hits.get(fault) ?? 0) + 1;
        hits.set(fault, n);
        if (fault === "always503" || (fault === "503once" && n === 1)) {
            res.writeHead(503, { "Content-Type": "text/plain" });
            res.end("busy");
            return;
        }
        const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
        let start = 0;
        let end = bytes.length;
        let status = 200;
        const headers = { "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes" };
        if (m && fault !== "norange") {
            start = Number(m[1]);
            end = Math.min(bytes.length, m[2] === "" ? bytes.length : Number(m[2]) + 1);
            if (start >= bytes.length) {
                res.writeHead(416, { "Content-Range": `bytes */${bytes.length}` });
                res.end();
                return;
            }
            status = 206;
            if (fault !== "hide") headers["Content-Range"] = `bytes ${start}-${end - 1}/${bytes.length}`;
        }
        headers["Content-Length"] = String(end - start);
        res.writeHead(status, headers);
        const body = bytes.subarray(start, end);
        const drop = (fault === "drop" && n % 2 === 1) || (fault === "dropnorange" && n % 2 === 1) || fault === "stall";
        if (drop && body.length > 1) {
            // Part of the body, then the connection is cut.
            const part = fault === "stall" ? 0 : Math.max(1, Math.min(body.length >> 1, 5000));
            res.write(body.subarray(0, part), () => res.destroy());
            return;
        }
        res.end(body);
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${server.address().port}/model.gguf`;
});

after(() => new Promise((resolve) => server.close(resolve)));

async function readAll(model) {
    const out = new Map();
    for (const t of model.tensors) out.set(t.name, await model.read(t.name));
    return out;
}

let reference;
before(async () => {
    const local = await open(new Uint8Array(bytes));
    reference = { info: local.info, tensors: await readAll(local) };
    await local.close();
});

function assertSame(model, tensors) {
    assert.deepEqual(model.info, reference.info);
    for (const [name, data] of tensors) assert.ok(bytesOf(data).equals(bytesOf(reference.tensors.get(name))), name);
}

for (const fault of ["drop", "503once", "norange", "dropnorange"]) {
    test(`${fault}: results stay bit-exact`, async () => {
        const model = await open(`${base}?fault=${fault}`, { ...fast, chunkSize: 8192 });
        try {
            assertSame(model, await readAll(model));
        } finally {
            await model.close();
        }
        // Reads in file order over a server without Range are one streamed pass: a single request.
        if (fault === "norange") assert.equal(hits.get(fault), 1);
        else assert.ok(hits.get(fault) > 1);
    });
}

test("a server that keeps answering 503 gives a clear rejection after the retries", async () => {
    const started = Date.now();
    await assert.rejects(open(`${base}?fault=always503`, { retries: 3, retryDelay: 5 }), { code: "http", status: 503 });
    assert.equal(hits.get("always503"), 4);
    assert.ok(Date.now() - started < 5000);
});

test("a server that cuts every response before any byte gives code network", async () => {
    await assert.rejects(open(`${base}?fault=stall`, { retries: 2, retryDelay: 1 }), { code: "network" });
    assert.equal(hits.get("stall"), 3);
});

test("a 206 without a readable Content-Range says the header must be exposed", async () => {
    await assert.rejects(
        open(`${base}?fault=hide`, fast),
        (e) => e.code === "cors" && /Access-Control-Expose-Headers/.test(e.message),
    );
});

test("a fetch that fails (network down, CORS refusal) gives code network naming CORS", async () => {
    let calls = 0;
    const failing = async () => {
        ++calls;
        throw new TypeError("fetch failed");
    };
    await assert.rejects(
        open("https://example.invalid/m.gguf", { fetch: failing, retries: 1, retryDelay: 1 }),
        (e) => e.code === "network" && /CORS/.test(e.message),
    );
    assert.equal(calls, 2);
});

test("aborting during a retry wait rejects at once", async () => {
    const controller = new AbortController();
    const pending = open(`${base}?fault=always503`, { retries: 10, retryDelay: 10000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await assert.rejects(pending, { name: "AbortError" });
    assert.ok(Date.now() - started < 2000);
});

test("a Request and a Response are sources too", async () => {
    const model = await open(new Request(`${base}?fault=none`));
    try {
        assertSame(model, await readAll(model));
    } finally {
        await model.close();
    }
    const streamed = await open(await fetch(`${base}?fault=none`));
    try {
        const tensors = new Map();
        for await (const { tensor, data } of streamed.stream()) tensors.set(tensor.name, data);
        assertSame(streamed, tensors);
    } finally {
        await streamed.close();
    }
});
