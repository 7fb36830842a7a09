// SPDX-License-Identifier: MIT
// compare() against `weightstream diff --json`: the same object (rows, order, numbers) for a Hugging Face llama
// checkpoint against its F32 and Q8_0 GGUFs, GGUF against GGUF (F32 / Q4_K), a conversion without the Q/K
// permutation, a filter, Files with config.json among them, two nginx URLs (at most both headers + the compared
// tensors' bytes + 64 KiB each) and hostile pairs (clear errors or "incomparable", as the CLI).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { WeightstreamError, compare, open } from "weightstream";
import { WeightstreamWorker } from "weightstream/worker";

import { hfSafetensors, llamaCheckpoint, llamaGguf } from "./compare-fixtures.mjs";
import { cliPath, requireSetup } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";

requireSetup(!cliPath && "build/bin/weightstream not built");
requireSetup(!nginxPath && "nginx not installed");

const KIB64 = 64 * 1024;
// The core's error code in the CLI's one-line error ("weightstream: error: FILE: CODE: what (byte N)").
const cliCode = (stderr) => /^weightstream: error: .*?: ([a-z_]+): /.exec(stderr)?.[1];

function cli(args) {
    return spawnSync(cliPath, args, { encoding: "utf8", maxBuffer: 1 << 28 });
}

function cliDiff(a, b, extra = []) {
    const r = cli(["diff", a, b, "--json", ...extra]);
    if (r.status !== 0) throw new Error(`weightstream diff ${a} ${b}: exit ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout);
}

function withPaths(report, a, b) {
    return { ...report, a: { ...report.a, path: a }, b: { ...report.b, path: b } };
}

const checkpoint = llamaCheckpoint();
let dir;
const file = {};

before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "ws-compare-"));
    const hfDir = path.join(dir, "hf");
    spawnSync("mkdir", ["-p", hfDir]);
    file.hf = path.join(hfDir, "model.safetensors");
    file.config = path.join(hfDir, "config.json");
    writeFileSync(file.hf, hfSafetensors(checkpoint));
    writeFileSync(file.config, JSON.stringify(checkpoint.config));
    file.f32 = path.join(dir, "tiny-f32.gguf");
    writeFileSync(file.f32, llamaGguf(checkpoint));
    file.noPermute = path.join(dir, "tiny-no-permute.gguf");
    writeFileSync(file.noPermute, llamaGguf(checkpoint, { mistake: "no_permute" }));
    file.shape = path.join(dir, "tiny-shape.gguf");
    writeFileSync(file.shape, llamaGguf(checkpoint, { mistake: "shape" }));
    for (const [key, dtype] of [
        ["q8", "q8_0"],
        ["q4k", "q4_k"],
    ]) {
        file[key] = path.join(dir, `tiny-${dtype}.gguf`);
        const r = cli(["convert", file.f32, file[key], "--dtype", dtype]);
        assert.equal(r.status, 0, r.stderr);
    }
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe("compare() equals diff --json", () => {
    test("HF llama checkpoint against its F32 GGUF: every pair identical, by the conversion map", async () => {
        const expected = cliDiff(file.hf, file.f32);
        const actual = await compare(file.hf, file.f32);
        assert.deepEqual(actual, expected);
        assert.equal(actual.mapping, "hf-to-gguf:llama");
        assert.equal(actual.tensors.length, checkpoint.tensors.length);
        assert.deepEqual(actual.summary, {
            identical: checkpoint.tensors.length,
            different: 0,
            non_finite: 0,
            only_a: 0,
            only_b: 0,
            incomparable: 0,
        });
        const q = actual.tensors.find((t) => t.a === "model.layers.1.self_attn.q_proj.weight");
        assert.equal(q.b, "blk.1.attn_q.weight");
        assert.equal(q.transform, "permute_q");
        assert.deepEqual(q.shape_a, [256, 256]);
        assert.equal(actual.tensors.find((t) => t.b === "blk.0.attn_k.weight").transform, "permute_k");
    });

    test("HF checkpoint against its Q8_0 GGUF: quantization alone", async () => {
        const rows = [];
        const expected = cliDiff(file.hf, file.q8);
        const actual = await compare(file.hf, file.q8, { onTensor: (row, i) => rows.push([i, row]) });
        assert.deepEqual(actual, expected);
        assert.deepEqual(
            rows,
            actual.tensors.map((t, i) => [i, t]),
        );
        const q = actual.tensors.find((t) => t.b === "blk.0.attn_q.weight");
        assert.equal(q.verdict, "different");
        assert.equal(q.dtype_b, "Q8_0");
        assert.ok(q.metrics.nmse > 0 && q.metrics.nmse < 1e-3, String(q.metrics.nmse));
    });

    test("a tensor all NaN on one side: non_finite (nmse 0 over no finite pair), as diff --json", async () => {
        const v = "model.layers.0.self_attn.v_proj.weight";
        const nan = {
            ...checkpoint,
            tensors: checkpoint.tensors.map((t) =>
                t.name === v ? { ...t, values: new Float32Array(t.values.length).fill(NaN) } : t,
            ),
        };
        const nanFile = path.join(dir, "tiny-nan.gguf");
        writeFileSync(nanFile, llamaGguf(nan));
        const actual = await compare(file.f32, nanFile);
        assert.deepEqual(actual, cliDiff(file.f32, nanFile));
        const row = actual.tensors.find((t) => t.b === "blk.0.attn_v.weight");
        assert.equal(row.verdict, "non_finite");
        assert.equal(row.metrics.nmse, 0);
        assert.equal(row.metrics.n_nonfinite_diff, row.metrics.n_nan_b);
        assert.equal(actual.summary.non_finite, 1);
        assert.equal(actual.summary.identical, checkpoint.tensors.length - 1);
    });

    test("GGUF F32 against GGUF Q4_K: by names, metadata differences", async () => {
        const expected = cliDiff(file.f32, file.q4k);
        const actual = await compare(file.f32, file.q4k);
        assert.deepEqual(actual, expected);
        assert.equal(actual.mapping, "names");
        assert.ok(actual.summary.different > 0);
        const same = await compare(file.q4k, file.q4k);
        assert.deepEqual(same, cliDiff(file.q4k, file.q4k));
        assert.equal(same.summary.identical, checkpoint.tensors.length);
    });

    test("a conversion without the Q/K permutation: the hint names it", async () => {
        const expected = cliDiff(file.hf, file.noPermute);
        const actual = await compare(file.hf, file.noPermute);
        assert.deepEqual(actual, expected);
        const q = actual.tensors.find((t) => t.b === "blk.0.attn_q.weight");
        assert.equal(q.verdict, "different");
        assert.match(q.hint, /without the Q\/K permutation/);
    });

    test("tensors filter (RegExp and string) as --tensors", async () => {
        const expected = cliDiff(file.hf, file.q8, ["--tensors", "attn_q|ffn_down"]);
        assert.deepEqual(await compare(file.hf, file.q8, { tensors: /attn_q|ffn_down/g }), expected);
        assert.deepEqual(await compare(file.hf, file.q8, { tensors: "attn_q|ffn_down" }), expected);
        assert.equal(expected.tensors.length, 4);
        await assert.rejects(compare(file.hf, file.q8, { tensors: "(" }), TypeError);
    });

    test("a string filter is the CLI's pattern, matched by the core's engine: its syntax, its refusals", async () => {
        // (?i) is Oniguruma's, not ECMAScript's: a RegExp could not take it, --tensors does.
        const expected = cliDiff(file.hf, file.q8, ["--tensors", "(?i)ATTN_Q|FFN_DOWN"]);
        assert.equal(expected.tensors.length, 4);
        assert.deepEqual(await compare(file.hf, file.q8, { tensors: "(?i)ATTN_Q|FFN_DOWN" }), expected);
        // A look-behind is refused in the CLI's words.
        const refused = cli(["diff", file.hf, file.q8, "--tensors", "(?<=attn)_q"]);
        assert.equal(refused.status, 2);
        const e = await compare(file.hf, file.q8, { tensors: "(?<=attn)_q" }).catch((x) => x);
        assert.ok(e instanceof TypeError);
        assert.ok(
            refused.stderr.includes(e.message.replace(/^tensors/, "--tensors")),
            `${refused.stderr} / ${e.message}`,
        );
    });

    test("Files, config.json among them; bytes; progress", async () => {
        const expected = cliDiff(file.hf, file.q8);
        const hfFile = new File([readFileSync(file.hf)], "model.safetensors");
        const config = new File([readFileSync(file.config)], "config.json");
        const progress = [];
        const actual = await compare([config, hfFile], new Uint8Array(readFileSync(file.q8)), {
            onProgress: (p) => progress.push(p),
        });
        assert.deepEqual(actual, withPaths(expected, "model.safetensors", ""));
        const last = progress.at(-1);
        assert.equal(last.loaded, last.total);
        assert.ok(last.total > 0);
    });

    test("without config.json the GGUF's architecture and head counts still pair and permute", async () => {
        const bare = path.join(dir, "bare.safetensors");
        copyFileSync(file.hf, bare);
        const expected = cliDiff(bare, file.f32);
        const actual = await compare(bare, file.f32);
        assert.deepEqual(actual, expected);
        assert.equal(actual.summary.identical, checkpoint.tensors.length);
    });

    test("in a worker", async () => {
        const worker = new WeightstreamWorker();
        try {
            const rows = [];
            const actual = await worker.compare(file.hf, file.q8, { onTensor: (row) => rows.push(row) });
            assert.deepEqual(actual, cliDiff(file.hf, file.q8));
            assert.deepEqual(rows, actual.tensors);
        } finally {
            await worker.terminate();
        }
    });
});

describe("compare() of hostile pairs", () => {
    test("shapes that disagree: incomparable, as the CLI says", async () => {
        const expected = cliDiff(file.hf, file.shape);
        const actual = await compare(file.hf, file.shape);
        assert.deepEqual(actual, expected);
        const v = actual.tensors.find((t) => t.b === "blk.0.attn_v.weight");
        assert.equal(v.verdict, "incomparable");
        assert.match(v.hint, /shape/);
    });

    test("a corrupt side: the CLI's error code", async () => {
        const bytes = new Uint8Array(readFileSync(file.f32));
        const corrupt = path.join(dir, "corrupt.gguf");
        const copy = bytes.slice();
        copy[0] = 0x58; // not "GGUF"
        writeFileSync(corrupt, copy);
        const r = cli(["diff", file.hf, corrupt, "--json"]);
        assert.equal(r.status, 1);
        const code = cliCode(r.stderr);
        assert.equal(code, "bad_magic");
        await assert.rejects(compare(file.hf, corrupt), (e) => e instanceof WeightstreamError && e.code === code);

        const truncated = path.join(dir, "truncated.gguf");
        writeFileSync(truncated, bytes.subarray(0, bytes.length - 1000));
        const t = cli(["diff", file.hf, truncated, "--json"]);
        if (t.status === 0) {
            assert.deepEqual(await compare(file.hf, truncated), JSON.parse(t.stdout));
        } else {
            const tcode = cliCode(t.stderr);
            await assert.rejects(
                compare(file.hf, truncated),
                (e) => e instanceof WeightstreamError && e.code === tcode,
            );
        }
    });

    test("a missing shard: the CLI's error code", async () => {
        const index = path.join(dir, "hf", "model.safetensors.index.json");
        writeFileSync(index, JSON.stringify({ weight_map: { "lm_head.weight": "model-00002-of-00002.safetensors" } }));
        try {
            const r = cli(["diff", index, file.f32, "--json"]);
            assert.equal(r.status, 3, r.stdout); // an I/O error: the shard is not there
            assert.match(r.stderr, /model-00002-of-00002\.safetensors/);
            await assert.rejects(
                compare(index, file.f32),
                (e) =>
                    e instanceof WeightstreamError && e.code === "io" && e.file === "model-00002-of-00002.safetensors",
            );
        } finally {
            rmSync(index);
        }
    });

    test("bad options", async () => {
        await assert.rejects(compare(file.hf, file.f32, { onTensor: 3 }), TypeError);
        await assert.rejects(compare(file.hf, file.f32, { tensors: 3 }), TypeError);
        const controller = new AbortController();
        controller.abort();
        await assert.rejects(compare(file.hf, file.f32, { signal: controller.signal }), { name: "AbortError" });
    });
});

describe("compare() of two nginx URLs", () => {
    let server;
    before(async () => {
        server = await startNginx();
    });
    after(async () => {
        await server?.stop();
    });

    test("headers + compared tensors' bytes + 64 KiB each; the same report", async () => {
        const hfDir = path.join(server.generatedDir, "hf");
        spawnSync("mkdir", ["-p", hfDir]);
        copyFileSync(file.hf, path.join(hfDir, "model.safetensors"));
        copyFileSync(file.config, path.join(hfDir, "config.json"));
        copyFileSync(file.q8, path.join(server.generatedDir, "tiny-q8_0.gguf"));
        const urlA = `${server.rangeBase}/generated/hf/model.safetensors`;
        const urlB = `${server.rangeBase}/generated/tiny-q8_0.gguf`;

        const tracker = server.tracker();
        const op = tracker.op();
        const actual = await compare(urlA, urlB, { fetch: tracker.fetch });
        assert.deepEqual(actual, withPaths(cliDiff(file.hf, file.q8), urlA, urlB));

        const lines = await server.served(op, tracker.requests.get(op));
        const body = lines.reduce((s, l) => s + l.bodyBytesSent, 0);
        const [ma, mb] = [await open(file.hf), await open(file.q8)];
        const headerOf = (m) => Math.min(...m.tensors.map((t) => t.offset));
        const compared = [...ma.tensors, ...mb.tensors].reduce((s, t) => s + t.nbytes, 0);
        const config = readFileSync(file.config).length;
        const limit = headerOf(ma) + headerOf(mb) + compared + config + 2 * KIB64;
        await Promise.all([ma.close(), mb.close()]);
        assert.ok(body <= limit, `nginx sent ${body} body bytes, limit ${limit}`);
        assert.ok(body >= compared, `nginx sent ${body} body bytes, fewer than the ${compared} compared`);
        console.log(
            `# remote compare(): ${body} body bytes in ${lines.length} requests ` +
                `(headers ${headerOf(ma)} + ${headerOf(mb)}, tensors ${compared}, config.json ${config})`,
        );
    });
});
