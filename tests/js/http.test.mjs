// SPDX-License-Identifier: MIT
// URLs served by a real nginx. With Range: open() fetches at most the header plus 64 KiB, a tensor read at
// most its bytes plus 64 KiB (counted from nginx's own access log), and every result equals the Uint8Array
// path. With `max_ranges 0;` (the server answers 200): open() and model.stream() make one streamed pass.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { open } from "weightstream";

import { writeGguf } from "./gguf-writer.mjs";
import { bytesOf, corpus, requireSetup } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";

const KIB64 = 64 * 1024;
const HEADERS_ALLOWANCE = 1024; // response headers per request, beyond the body bytes

const models = corpus();

requireSetup(!nginxPath && "nginx not installed");

describe("nginx", () => {
    let server;
    before(async () => {
        server = await startNginx();
    });
    after(async () => {
        await server?.stop();
    });

    async function servedFor(tracker, op) {
        const lines = await server.served(op, tracker.requests.get(op));
        const body = lines.reduce((s, l) => s + l.bodyBytesSent, 0);
        const total = lines.reduce((s, l) => s + l.bytesSent, 0);
        return { lines, body, total };
    }

    function assertWithin(served, bodyLimit, label) {
        assert.ok(served.body <= bodyLimit, `${label}: nginx sent ${served.body} body bytes, limit ${bodyLimit}`);
        assert.ok(
            served.total <= bodyLimit + HEADERS_ALLOWANCE * served.lines.length,
            `${label}: ${served.total} bytes in all`,
        );
    }

    for (const item of models) {
        test(`Range: ${item.label}: header + 64 KiB to open, tensor + 64 KiB per read, same results`, async () => {
            const bytes = new Uint8Array(readFileSync(item.file));
            const local = await open(bytes);
            const tracker = server.tracker();
            const op = tracker.op();
            const model = await open(server.rangeBase + server.urlPath(item.file), { fetch: tracker.fetch });
            try {
                assert.deepEqual(model.info, local.info);
                const opened = await servedFor(tracker, op);
                assert.ok(
                    opened.lines.every((l) => l.status === 206),
                    `${item.label}: ${JSON.stringify(opened.lines)}`,
                );
                assertWithin(opened, Number(model.info.data_offset) + KIB64, `${item.label} open`);

                for (const tensor of model.tensors) {
                    const readOp = tracker.op();
                    const data = await model.read(tensor.name);
                    const expected = await local.read(tensor.name);
                    assert.ok(
                        bytesOf(data).equals(bytesOf(expected)),
                        `${tensor.name}: differs from the Uint8Array path`,
                    );
                    assertWithin(
                        await servedFor(tracker, readOp),
                        Number(tensor.nbytes) + KIB64,
                        `${item.label} ${tensor.name}`,
                    );
                }
            } finally {
                await model.close();
                await local.close();
            }
        });
    }

    test("Range: a row window fetches only those rows' bytes", async () => {
        const item = models.find((m) => m.label.endsWith("ggml-types.gguf"));
        const tracker = server.tracker();
        const model = await open(server.rangeBase + server.urlPath(item.file), { fetch: tracker.fetch });
        const local = await open(item.file);
        try {
            const t = model.tensor("q6_k.weight");
            const rowBytes = Number(t.nbytes) / 8;
            const op = tracker.op();
            const data = await model.read("q6_k.weight", { rows: [3, 2] });
            assert.ok(bytesOf(data).equals(bytesOf(await local.read("q6_k.weight", { rows: [3, 2] }))));
            const served = await servedFor(tracker, op);
            assert.deepEqual(
                served.lines.map((l) => l.range),
                [`bytes=${Number(t.offset) + 3 * rowBytes}-${Number(t.offset) + 5 * rowBytes - 1}`],
            );
            assert.equal(served.body, 2 * rowBytes);
        } finally {
            await model.close();
            await local.close();
        }
    });

    test("Range: parallel reads keep to the concurrency cap", async () => {
        const item = models.find((m) => m.label.endsWith("ggml-types.gguf"));
        const tracker = server.tracker();
        const model = await open(server.rangeBase + server.urlPath(item.file), {
            fetch: tracker.fetch,
            concurrency: 2,
            chunkSize: 4096,
        });
        const local = await open(item.file);
        try {
            tracker.maxInFlight = 0;
            const results = await Promise.all(model.tensors.map((t) => model.read(t.name)));
            for (const [i, t] of model.tensors.entries()) {
                assert.ok(bytesOf(results[i]).equals(bytesOf(await local.read(t.name))), t.name);
            }
            assert.ok(tracker.maxInFlight <= 2, `${tracker.maxInFlight} requests in flight`);
            assert.ok(tracker.maxInFlight >= 1);
        } finally {
            await model.close();
            await local.close();
        }
    });

    for (const item of models) {
        test(`max_ranges 0: ${item.label}: open() + stream() in one pass, same results`, async () => {
            const local = await open(item.file);
            const tracker = server.tracker();
            const op = tracker.op();
            const model = await open(server.noRangeBase + server.urlPath(item.file), { fetch: tracker.fetch });
            try {
                assert.deepEqual({ ...model.info, file_size: local.info.file_size }, local.info);
                for await (const { tensor, data } of model.stream()) {
                    assert.ok(bytesOf(data).equals(bytesOf(await local.read(tensor.name))), tensor.name);
                }
                await model.close();
                const served = await servedFor(tracker, op);
                assert.equal(served.lines.length, 1, `${item.label}: ${JSON.stringify(served.lines)}`);
                assert.equal(served.lines[0].status, 200);
                assert.ok(served.body <= Number(local.info.file_size));
            } finally {
                await model.close();
                await local.close();
            }
        });
    }

    test("max_ranges 0: reads out of file order still work (the download restarts)", async () => {
        const item = models.find((m) => m.label.endsWith("ggml-types.gguf"));
        const local = await open(item.file);
        const model = await open(server.noRangeBase + server.urlPath(item.file));
        try {
            const names = model.tensors
                .map((t) => t.name)
                .reverse()
                .slice(0, 5);
            for (const name of names) {
                assert.ok(bytesOf(await model.read(name)).equals(bytesOf(await local.read(name))), name);
            }
        } finally {
            await model.close();
            await local.close();
        }
    });

    test("Range: a 2 MiB header followed by data still costs at most the header + 64 KiB + 10 %", async () => {
        // A tokenizer-sized header (one long string array), then tensors: the data must not be fetched.
        const tokens = Array.from({ length: 60000 }, (_, i) => `token-${i}-${"x".repeat(i % 40)}`);
        const data = new Uint8Array(1 << 20).map((_, i) => i * 7);
        const bytes = writeGguf({
            kv: [{ key: "tokenizer.ggml.tokens", type: "array", itemType: "string", value: tokens }],
            tensors: [
                { name: "a", type: 0, ne: [1024, 128], data: data.subarray(0, 1 << 19) },
                { name: "b", type: 0, ne: [1024, 128], data: data.subarray(1 << 19) },
            ],
        });
        writeFileSync(path.join(server.generatedDir, "big-header.gguf"), bytes);
        const tracker = server.tracker();
        const op = tracker.op();
        const model = await open(`${server.rangeBase}/generated/big-header.gguf`, { fetch: tracker.fetch });
        try {
            const headerBytes = Number(model.info.data_offset);
            assert.ok(headerBytes > 2 * 1024 * 1024, `header of ${headerBytes} bytes`);
            assert.deepEqual(model.metadata[0].value, tokens);
            const served = await servedFor(tracker, op);
            // Reads grow with what the parser expects (few round trips, at most 10 % more bytes).
            assertWithin(served, headerBytes + KIB64 + headerBytes / 10, "big header open");
            assert.ok(served.lines.length <= 4, `${served.lines.length} requests`);
            const readOp = tracker.op();
            const b = await model.read("b", { as: "raw" });
            assert.ok(Buffer.from(b).equals(Buffer.from(data.subarray(1 << 19))));
            assertWithin(await servedFor(tracker, readOp), (1 << 19) + KIB64, "big header read");
        } finally {
            await model.close();
        }
    });

    test("Range: the 3.9 MB header of a real vocabulary opens in few growing reads", async () => {
        const item = models.find((m) => m.label.endsWith("ggml-vocab-deepseek-llm.gguf"));
        requireSetup(!item && "the shared corpus is not next to the checkout (../shared/testdata)");
        const tracker = server.tracker();
        const op = tracker.op();
        const model = await open(server.rangeBase + server.urlPath(item.file), { fetch: tracker.fetch });
        try {
            const served = await servedFor(tracker, op);
            const header = Number(model.info.data_offset);
            assertWithin(served, header + KIB64, "deepseek-llm open");
            // 100k tokens and 100k merges: one 64 KiB read after another would take 61. The core's guess of the
            // rest of the header (a file without tensors is all header) makes it 2.
            assert.ok(served.lines.length <= 3, `${served.lines.length} requests for a ${header}-byte header`);
            assert.equal(model.metadata.find((m) => m.key === "tokenizer.ggml.tokens").value.length, 102400);
        } finally {
            await model.close();
        }
    });

    test("a missing file rejects with code http and status 404", async () => {
        await assert.rejects(open(`${server.rangeBase}/no/such/file.gguf`, { retries: 0 }), {
            code: "http",
            status: 404,
        });
        await assert.rejects(open(`${server.noRangeBase}/no/such/file.gguf`, { retries: 0 }), {
            code: "http",
            status: 404,
        });
    });

    test("a file that is not a model rejects with bad_magic, fetching little", async () => {
        const tracker = server.tracker();
        const op = tracker.op();
        await assert.rejects(open(`${server.rangeBase}/ggml/manifest.json`, { fetch: tracker.fetch }), {
            code: "bad_magic",
            offset: 0,
        });
        assertWithin(await servedFor(tracker, op), KIB64, "manifest.json");
    });
});
