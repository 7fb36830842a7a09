// SPDX-License-Identifier: MIT
// weightstream/worker in Node (a worker_threads Worker; the same code runs as a Web Worker in
// browser.test.mjs): models opened in the worker describe themselves and decode exactly as open() does on this
// thread, from every kind of source that can cross to a worker; progress, cancellation, errors with their
// codes, early ends of streams, and a terminated worker.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { WeightstreamError, open } from "weightstream";
import { WeightstreamWorker, openInWorker } from "weightstream/worker";

import { packInfo } from "../../wasm/js/worker_info.js";
import { writeGguf } from "./gguf-writer.mjs";
import { bytesOf, randomChunkStream, requireSetup, testData } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";
import { writeSplitGguf } from "./split-fixtures.mjs";

const types = path.join(testData, "ggml/ggml-types.gguf");
const safetensors = path.join(testData, "safetensors/sample_overall.safetensors");
const bytes = (file) => new Uint8Array(readFileSync(file));

// Every tensor of `model` (in a worker) against open(file) on this thread, bit for bit.
async function sameAsHere(model, file, label) {
    const here = await open(file);
    try {
        assert.deepEqual(model.info, here.info, label);
        for (const t of here.tensors) {
            for (const as of ["f32", "raw"]) {
                const got = await model.read(t.name, { as });
                const expected = await here.read(t.name, { as });
                assert.equal(got.constructor, expected.constructor, `${label}: ${t.name} ${as}`);
                assert.ok(bytesOf(got).equals(bytesOf(expected)), `${label}: ${t.name} ${as}`);
            }
        }
    } finally {
        await here.close();
    }
}

test("openInWorker: paths, bytes, Blobs, Files, streams and Responses decode as open() does", async () => {
    const sources = {
        path: () => types,
        "file: URL": () => new URL(`file://${types}`),
        Uint8Array: () => bytes(types),
        ArrayBuffer: () => bytes(types).buffer,
        Blob: () => new Blob([bytes(types)]),
        File: () => new File([bytes(types)], "types.gguf"),
    };
    for (const [label, make] of Object.entries(sources)) {
        const model = await openInWorker(make());
        try {
            await sameAsHere(model, types, label);
        } finally {
            await model.close();
        }
    }
    for (const [label, make] of Object.entries({
        ReadableStream: () => randomChunkStream(bytes(safetensors), 7),
        Response: () => new Response(bytes(safetensors)),
    })) {
        const model = await openInWorker(make());
        const here = await open(safetensors);
        try {
            assert.deepEqual({ ...model.info, file_size: here.info.file_size }, here.info, label);
            const seen = [];
            for await (const { tensor, data } of model.stream()) {
                assert.ok(bytesOf(data).equals(bytesOf(await here.read(tensor.name))), `${label}: ${tensor.name}`);
                assert.equal(model.tensor(tensor.name), tensor);
                seen.push(tensor.name);
            }
            assert.equal(seen.length, here.tensors.length);
        } finally {
            await model.close();
            await here.close();
        }
    }
});

test("long metadata arrays (a vocabulary) cross packed and arrive equal to open()'s, item for item", async () => {
    const n = 40000; // more than two slices of the rebuild
    const tokens = Array.from({ length: n }, (_, i) =>
        i % 7 === 0 ? "" : `\u2581tok${i}${i % 5 === 0 ? "\u{1F600}" : ""}`,
    );
    const bytesOfModel = writeGguf({
        kv: [
            { key: "tokenizer.ggml.tokens", type: "array", itemType: "string", value: tokens },
            {
                key: "scores",
                type: "array",
                itemType: "float32",
                value: Array.from({ length: n }, (_, i) => (i % 3) - 1.5),
            },
            // NaN is "NaN" in metadata, and 2^60 a bigint: these arrays cross as they are.
            { key: "with_nan", type: "array", itemType: "float64", value: [...Array(300).fill(-0), NaN] },
            { key: "big", type: "array", itemType: "uint64", value: [...Array(300).fill(1n), 1n << 60n] },
            { key: "flags", type: "array", itemType: "bool", value: Array(300).fill(true) },
            { key: "short", type: "array", itemType: "string", value: ["a", "b"] },
        ],
    });
    const here = await open(bytesOfModel);
    // What crosses: the tokens as one string and their ends, the scores as a Float64Array; the rest as is.
    const { info: packed, transfer } = packInfo(here.info);
    assert.deepEqual(
        packed.metadata.map((e) => Array.isArray(e.value)),
        [false, false, true, true, true, true],
    );
    assert.deepEqual(
        transfer.map((b) => b.byteLength),
        [4 * n, 8 * n],
    );
    const model = await openInWorker(bytesOfModel.slice());
    try {
        assert.deepEqual(model.info, here.info);
        assert.equal(model.metadata[0].value[5], "\u2581tok5\u{1F600}");
        assert.equal(typeof model.metadata[3].value[300], "bigint");
        assert.ok(Object.is(model.metadata[2].value[0], -0));
    } finally {
        await model.close();
        await here.close();
    }
});

test("the arrays are moved to this thread: no copy is left behind, each owns its buffer", async () => {
    const model = await openInWorker(types);
    try {
        const data = await model.read("q4_k.weight");
        assert.ok(data instanceof Float32Array);
        assert.equal(data.buffer.byteLength, data.byteLength);
        const rows = await model.read("q4_k.weight", { rows: [2, 3] });
        assert.ok(bytesOf(rows).equals(bytesOf(data.subarray(2 * 512, 5 * 512))));
        const raw = await model.read("f16.weight", { as: "f16" });
        assert.ok(raw instanceof (globalThis.Float16Array ?? Uint16Array));
    } finally {
        await model.close();
    }
});

test("a split model from several Files in a worker", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ws-worker-split-"));
    try {
        const parts = writeSplitGguf(dir);
        const model = await openInWorker(parts.map((p) => new File([readFileSync(p)], path.basename(p))).reverse());
        try {
            assert.equal(model.info.files.length, 3);
            await sameAsHere(model, parts[0], "split Files");
        } finally {
            await model.close();
        }
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("progress of open, read and stream reaches this thread", async () => {
    const seen = { open: [], read: [], stream: [] };
    const model = await openInWorker(types, { chunkSize: 4096, onProgress: (p) => seen.open.push(p) });
    try {
        await model.read("f32.weight", { onProgress: (p) => seen.read.push(p) });
        let streamed = 0;
        for await (const { data } of model.stream({ onProgress: (p) => seen.stream.push(p) })) streamed += data.length;
        assert.ok(streamed > 0);
    } finally {
        await model.close();
    }
    assert.ok(seen.open.length >= 1 && seen.open.at(-1).total === readFileSync(types).length);
    assert.deepEqual(seen.read.at(-1), { loaded: 16384, total: 16384 });
    const total = seen.stream.at(-1).total;
    assert.equal(seen.stream.at(-1).loaded, total);
    assert.ok(seen.stream.every((p, i) => i === 0 || p.loaded >= seen.stream[i - 1].loaded));
});

test("errors keep their code, offset and file; misuse is refused", async () => {
    await assert.rejects(openInWorker(new Uint8Array(64)), (e) => {
        assert.ok(e instanceof WeightstreamError);
        assert.deepEqual([e.code, e.offset], ["bad_magic", 0]);
        return true;
    });
    await assert.rejects(openInWorker("/no/such/file.gguf"), { code: "io" });
    await assert.rejects(openInWorker(types, { fetch }), TypeError);
    await assert.rejects(openInWorker(types, { chunkSize: -1 }), TypeError);
    const model = await openInWorker(types);
    await assert.rejects(model.read("nope"), { code: "no_such_tensor" });
    await assert.rejects(model.read("f32.weight", { as: "f64" }), TypeError);
    await model.close();
    assert.equal(model.closed, true);
    await assert.rejects(model.read("f32.weight"), { code: "closed" });
});

describe("one worker, several models", () => {
    let worker;
    before(() => {
        worker = new WeightstreamWorker();
    });
    after(() => worker.terminate());

    test("reads of two models interleave; a stream ended early frees the model for other reads", async () => {
        const [a, b] = await Promise.all([worker.open(types), worker.open(safetensors)]);
        const [ra, rb] = await Promise.all([a.read("q6_k.weight"), b.read(b.tensors[0].name)]);
        const [ea, eb] = [await open(types), await open(safetensors)];
        assert.ok(bytesOf(ra).equals(bytesOf(await ea.read("q6_k.weight"))));
        assert.ok(bytesOf(rb).equals(bytesOf(await eb.read(eb.tensors[0].name))));
        let n = 0;
        for await (const { data } of a.stream({ as: "raw" })) {
            assert.ok(data instanceof Uint8Array);
            if (++n === 3) break;
        }
        assert.ok(bytesOf(await a.read("iq2_xxs.weight")).equals(bytesOf(await ea.read("iq2_xxs.weight"))));
        await Promise.all([a.close(), b.close(), ea.close(), eb.close()]);
    });

    test("an aborted read rejects with the signal's reason; the worker goes on", async () => {
        const model = await worker.open(new Blob([bytes(types)]), { chunkSize: 64 });
        const controller = new AbortController();
        const reading = model.read("f32.weight", { signal: controller.signal });
        controller.abort(new Error("stop"));
        await assert.rejects(reading, { message: "stop" });
        const before = AbortSignal.abort();
        await assert.rejects(model.read("f32.weight", { signal: before }), { name: "AbortError" });
        assert.equal((await model.read("f32.weight")).length, 4096);
        await model.close();
    });

    test("terminate() rejects what is pending with code worker", async () => {
        const other = new WeightstreamWorker();
        const model = await other.open(types);
        const pending = assert.rejects(model.read("q8_0.weight"), { code: "worker" });
        await other.terminate();
        await pending;
        await assert.rejects(other.open(types), { code: "worker" });
        await model.close(); // nothing left to close: no error
    });
});

requireSetup(!nginxPath && "nginx not installed");

describe("URLs from a worker", () => {
    let server;
    before(async () => {
        server = await startNginx();
    });
    after(() => server?.stop());

    test("a URL and a Request (its headers reach the server) read with Range in the worker", async () => {
        const url = `${server.rangeBase}/ggml/ggml-types.gguf`;
        const model = await openInWorker(url);
        try {
            await sameAsHere(model, types, "URL");
        } finally {
            await model.close();
        }
        const op = server.tracker().op();
        const viaRequest = await openInWorker(new Request(url, { headers: { "X-WS-Op": op } }));
        try {
            assert.equal((await viaRequest.read("q4_0.weight")).length, 4096);
        } finally {
            await viaRequest.close();
        }
        const lines = await server.served(op, 2);
        assert.ok(lines.length >= 2 && lines.every((l) => l.status === 206), JSON.stringify(lines));
    });
});
