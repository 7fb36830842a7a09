// SPDX-License-Identifier: MIT
// The CLI and the package over the same URL (one operation in one place): the same header reads (the
// core's HeaderReads, include/weightstream/header_reads.h), request for request as nginx's access log shows
// them, for a small header, vocabularies with and without tensor data after them, and a safetensors file; and
// the same code and words for the same failure (tests/support/fault_server.py: a file replaced while it is
// read is source_changed, a missing one http) from the CLI's `verify --json` and error line and the package's
// WeightstreamError.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";

import { open } from "weightstream";

import { withF32Tensor, writeGguf } from "./gguf-writer.mjs";
import { cliPath, repoRoot, requireSetup, sharedTestData, testData } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";

const deepseekFile = path.join(sharedTestData, "ggml/vocab/ggml-vocab-deepseek-llm.gguf");
requireSetup(!existsSync(deepseekFile) && "the shared corpus is not next to the checkout (../shared/testdata)");
requireSetup(!nginxPath && "nginx not installed");
const GGML_TYPE_F32 = 0;
const noCli = !cliPath && "the CLI is not built (build/bin/weightstream)";

/** Runs the CLI (no header cache: every run asks the network); stdout parsed when it is JSON. */
function cli(args) {
    const r = spawnSync(cliPath, args, {
        encoding: "utf8",
        env: { ...process.env, WEIGHTSTREAM_CACHE: "0" },
        maxBuffer: 1 << 30,
    });
    let json = null;
    try {
        json = JSON.parse(r.stdout);
    } catch {
        // not JSON: a failure before any output
    }
    return { status: r.status, stderr: r.stderr, json };
}

describe("the same header reads natively and in the package", { skip: noCli }, () => {
    let server;
    before(async () => {
        server = await startNginx();
    });
    after(async () => {
        await server?.stop();
    });

    const cases = [
        ["a small header", () => server.urlPath(path.join(testData, "ggml/ggml-types.gguf"))],
        ["a safetensors header", () => server.urlPath(path.join(testData, "safetensors/voices.safetensors"))],
        ["a vocabulary without tensors (3.97 MB)", () => server.urlPath(deepseekFile)],
        [
            "the vocabulary followed by 4 MiB of tensor data",
            () => {
                const { bytes } = withF32Tensor(readFileSync(deepseekFile), 1 << 20);
                writeFileSync(path.join(server.generatedDir, "twins-deepseek-tensor.gguf"), bytes);
                return "/generated/twins-deepseek-tensor.gguf";
            },
        ],
    ];
    let cliOps = 0;
    for (const [label, urlPath] of cases) {
        test(label, async () => {
            const url = server.rangeBase + urlPath();
            const cliOp = `cli${++cliOps}`;
            const native = cli(["info", url, "--json", "--header", `X-WS-Op: ${cliOp}`]);
            assert.equal(native.status, 0, native.stderr);
            const nativeLines = await server.served(cliOp, native.json.io.requests);

            const tracker = server.tracker();
            const op = tracker.op();
            const model = await open(url, { fetch: tracker.fetch });
            try {
                const lines = await server.served(op, tracker.requests.get(op));
                const ranges = (ls) => ls.map((l) => l.range);
                assert.ok(lines.length >= 1 && lines.every((l) => l.status === 206), JSON.stringify(lines));
                assert.deepEqual(ranges(lines), ranges(nativeLines));
                assert.equal(model.metrics.requests, native.json.io.requests);
                assert.equal(model.metrics.requests, lines.length);
            } finally {
                await model.close();
            }
        });
    }
});

describe("the same code for the same failure natively and in the package", { skip: noCli }, () => {
    let dir, child, base;
    before(async () => {
        dir = mkdtempSync(path.join(tmpdir(), "ws-twins-"));
        // A tensor of 256 KiB: its read is a request after the header's.
        const values = new Float32Array(65536).map((_, i) => i);
        const file = writeGguf({
            tensors: [{ name: "t", type: GGML_TYPE_F32, ne: [65536], data: new Uint8Array(values.buffer) }],
        });
        writeFileSync(path.join(dir, "model.gguf"), file);
        // What the fault server's "changing" modes serve after the first request of a path: another size.
        writeFileSync(path.join(dir, "model.gguf.v2"), Buffer.concat([file, Buffer.alloc(32)]));
        const portFile = path.join(dir, "port");
        child = spawn(
            "python3",
            [
                path.join(repoRoot, "tests/support/fault_server.py"),
                "--root",
                dir,
                "--port-file",
                portFile,
                "--log",
                path.join(dir, "log"),
            ],
            { stdio: "ignore" },
        );
        for (let i = 0; !existsSync(portFile); ++i) {
            assert.ok(i < 400 && child.exitCode === null, "the fault server did not start");
            await sleep(25);
        }
        base = `http://127.0.0.1:${readFileSync(portFile, "utf8").trim()}`;
    });
    after(async () => {
        if (child && child.exitCode === null) {
            child.kill("SIGTERM");
            await new Promise((resolve) => child.once("exit", resolve));
        }
        if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** The package's error for `url`: opening it, then reading its tensor. */
    async function packageError(url) {
        let model;
        try {
            model = await open(url, { retries: 0 });
            await model.read("t");
        } catch (e) {
            return e;
        } finally {
            await model?.close();
        }
        assert.fail(`${url} was read`);
    }

    for (const [label, mode, name, code] of [
        ["a file replaced while read (If-Range honoured)", "changing", "model.gguf", "source_changed"],
        ["a file replaced while read (If-Range ignored)", "changing-tag", "model.gguf", "source_changed"],
        ["a missing file", "plain", "missing.gguf", "http"],
    ]) {
        test(`${label}: ${code}`, async () => {
            // The server counts requests per path, query included: one path for each twin.
            const url = `${base}/${mode}/${name}`;
            const native = cli(["verify", `${url}?twin=cli`, "--json"]);
            assert.equal(native.status, 3, native.stderr);
            assert.equal(native.json.verdict, code);
            const e = await packageError(`${url}?twin=js`);
            assert.equal(e.code, code, e.message);
            // The same words after the code: the core's description of it.
            assert.ok(e.description, "a source error carries the core's description");
            const message = native.json.error.message;
            assert.ok(message.startsWith(`${url}?twin=cli: ${code}: ${e.description}: `), message);
            assert.equal(native.stderr, `weightstream: error: ${message}\n`);
        });
    }
});
