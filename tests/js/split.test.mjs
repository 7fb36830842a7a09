// SPDX-License-Identifier: MIT
// Models in several files through the package: a split GGUF and a sharded safetensors model, opened from any
// part's path or URL (siblings found next to it), from the index, and from several Files / paths / records at
// once. Each must describe itself exactly as `weightstream info --json` does for the same files (tensors with
// `file`) and decode every tensor to the CLI's f32_sha256; parts that do not fit together reject as the CLI
// does.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { WeightstreamError, open } from "weightstream";

import { bytesOf, cliError, cliHashes, cliInfo, cliPath, randomChunkStream, requireSetup, sha256 } from "./helpers.mjs";
import { nginxPath, startNginx } from "./nginx.mjs";
import { writeSafetensors } from "./safetensors-writer.mjs";
import { splitPartName, writeShards, writeSplitGguf } from "./split-fixtures.mjs";

const KIB64 = 64 * 1024;
const dir = mkdtempSync(path.join(tmpdir(), "ws-split-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const parts = writeSplitGguf(dir);
const { index, shards } = writeShards(dir);
const models = [
    { label: "split GGUF", entry: parts[0], files: parts },
    { label: "sharded safetensors", entry: index, files: shards },
];

function fileOf(p) {
    return new File([readFileSync(p)], path.basename(p));
}

function shuffled(list) {
    return [...list].reverse();
}

// The info and every tensor's decode against the CLI's info --json and hash --json of `reference`.
async function checkModel(model, reference, label) {
    try {
        const expected = cliPath ? cliInfo(reference) : null;
        if (expected) assert.deepEqual({ ...model.info }, expected, label);
        assert.ok(model.info.files.length > 1, label);
        for (const t of model.tensors) assert.ok(model.info.files.includes(t.file), `${label}: ${t.name}`);
        const hashes = cliHashes(reference);
        for (const t of model.tensors) {
            const data = await model.read(t.name);
            assert.equal(data.length, Number(t.n_elements), `${label}: ${t.name}`);
            if (hashes) assert.equal(sha256(bytesOf(data)), hashes.get(t.name).f32_sha256, `${label}: ${t.name}`);
            const raw = await model.read(t.name, { as: "raw" });
            if (hashes) assert.equal(sha256(raw), hashes.get(t.name).raw_sha256, `${label}: ${t.name} raw`);
        }
    } finally {
        await model.close();
    }
}

for (const { label, entry, files } of models) {
    describe(label, () => {
        test("from the path of its entry file, and for a split from any part", async () => {
            const entries = label === "split GGUF" ? files : [entry];
            for (const p of entries) await checkModel(await open(p), p, path.basename(p));
        });

        test("from several Files in any order (with the index, and for shards also without it)", async () => {
            const given = label === "split GGUF" ? files : [entry, ...files];
            await checkModel(await open(shuffled(given).map(fileOf)), entry, "Files");
            if (label !== "split GGUF") {
                // Without the index: made from the shards (in name order); the same model less the index's
                // metadata.
                const model = await open(shuffled(files).map(fileOf));
                try {
                    const expected = cliInfo(entry);
                    const fromIndex = expected.metadata.filter((m) => ["total_size", "note"].includes(m.key));
                    assert.deepEqual(
                        { ...model.info },
                        { ...expected, metadata: expected.metadata.filter((m) => !fromIndex.includes(m)) },
                    );
                } finally {
                    await model.close();
                }
            }
        });

        test("from {name, source} records of bytes and streams, and from paths", async () => {
            const given = label === "split GGUF" ? files : [entry, ...files];
            const records = given.map((p, i) => ({
                name: path.basename(p),
                source: i % 2 ? new Uint8Array(readFileSync(p)) : new Blob([readFileSync(p)]),
            }));
            await checkModel(await open(records), entry, "records");
            await checkModel(await open(shuffled(given)), entry, "paths");

            // Streams: one pass over every file, in file order.
            const streams = given.map((p, i) => ({
                name: path.basename(p),
                source: randomChunkStream(new Uint8Array(readFileSync(p)), i + 1),
            }));
            const model = await open(streams);
            try {
                const hashes = cliHashes(entry);
                const seen = [];
                for await (const { tensor, data } of model.stream()) {
                    if (hashes) assert.equal(sha256(bytesOf(data)), hashes.get(tensor.name).f32_sha256, tensor.name);
                    seen.push(tensor.file);
                }
                assert.deepEqual(
                    seen,
                    [...seen].sort((a, b) => model.info.files.indexOf(a) - model.info.files.indexOf(b)),
                );
                assert.equal(seen.length, model.tensors.length);
            } finally {
                await model.close();
            }
        });
    });
}

test("split: false opens one part on its own", async () => {
    const model = await open(parts[1], { split: false });
    try {
        assert.equal(model.info.files, undefined);
        assert.ok(model.tensors.length > 0 && model.tensors.every((t) => t.file === undefined));
        assert.equal(model.info.file_size, readFileSync(parts[1]).length);
    } finally {
        await model.close();
    }
});

describe("parts that do not fit together", () => {
    const broken = mkdtempSync(path.join(dir, "broken-"));

    test("split.count or split.tensors.count disagreeing reject with the CLI's code and offset", async () => {
        const cases = [
            writeSplitGguf(broken, "count", { splitCount: 4 }),
            writeSplitGguf(broken, "tensors", { tensorsCount: 99 }),
        ];
        for (const files of cases) {
            const cli = cliPath ? cliError(files[0]) : { code: "bad_split" };
            for (const source of [files[2], files.map(fileOf)]) {
                await assert.rejects(open(source), (e) => {
                    assert.ok(e instanceof WeightstreamError, String(e));
                    assert.equal(e.code, cli.code);
                    if (cliPath) assert.equal(e.offset, cli.offset);
                    if (cliPath) assert.equal(e.file, cli.file);
                    return true;
                });
            }
        }
    });

    test("a missing part: an io error naming it (path), bad_split (Files)", async () => {
        const files = writeSplitGguf(broken, "missing");
        unlinkSync(files[1]);
        await assert.rejects(open(files[0]), (e) => {
            assert.equal(e.code, "io");
            assert.equal(e.file, path.basename(files[1]));
            assert.match(e.message, /missing-00002-of-00003\.gguf/);
            return true;
        });
        await assert.rejects(open([files[0], files[2]].map(fileOf)), {
            code: "bad_split",
            message: /missing parts of the split model: missing-00002-of-00003\.gguf/,
        });
    });

    test("Files of different models, duplicates and unnamed sources are refused", async () => {
        const other = writeSplitGguf(broken, "other");
        await assert.rejects(open([parts[0], other[1], parts[2]].map(fileOf)), { code: "bad_split" });
        await assert.rejects(open([parts[0], parts[0], parts[1]].map(fileOf)), { code: "bad_split" });
        await assert.rejects(open([parts[0], path.join(dir, "model.safetensors.index.json")].map(fileOf)), {
            code: "bad_split",
        });
        await assert.rejects(open([new Uint8Array(8), new Uint8Array(8)]), { code: "bad_source" });
        await assert.rejects(open([parts[0], shards[0]].map(fileOf)), { code: "bad_source" });
    });

    test("an index naming a missing shard or a shard it does not list", async () => {
        const sub = mkdtempSync(path.join(broken, "idx-"));
        const written = writeShards(sub);
        await assert.rejects(open([written.index, written.shards[0]].map(fileOf)), {
            code: "bad_split",
            message: /names shards not given: model-00002-of-00002\.safetensors/,
        });
        const extra = path.join(sub, "extra.safetensors");
        writeFileSync(extra, readFileSync(written.shards[0]));
        await assert.rejects(open([written.index, ...written.shards, extra].map(fileOf)), {
            code: "bad_split",
            message: /does not name extra\.safetensors/,
        });
    });

    test("hostile indexes reject like the CLI", async () => {
        const sub = mkdtempSync(path.join(broken, "hostile-"));
        const written = writeShards(sub);
        const realMap = JSON.parse(readFileSync(written.index, "utf8")).weight_map;
        const cases = {
            escape: JSON.stringify({ weight_map: { "0.a": "../etc/passwd" } }),
            "not json": "{weight_map",
            "no weight_map": JSON.stringify({ metadata: {} }),
            // One tensor of the second shard said to be in the first.
            "wrong shard": JSON.stringify({
                weight_map: { ...realMap, [Object.keys(realMap).at(-1)]: path.basename(written.shards[0]) },
            }),
            "a GGUF as a shard": JSON.stringify({ weight_map: { a: path.basename(parts[0]) } }),
        };
        writeFileSync(path.join(sub, path.basename(parts[0])), readFileSync(parts[0]));
        for (const [label, text] of Object.entries(cases)) {
            writeFileSync(written.index, text);
            const cli = cliPath ? cliError(written.index) : null;
            await assert.rejects(open(written.index), (e) => {
                assert.ok(e instanceof WeightstreamError, `${label}: ${e}`);
                if (cli)
                    assert.deepEqual({ code: e.code, offset: e.offset }, { code: cli.code, offset: cli.offset }, label);
                // The file the offset is in: the index, or the shard that contradicts it.
                assert.equal(e.file, cli ? cli.file : e.file, label);
                if (label !== "wrong shard" && label !== "a GGUF as a shard") {
                    assert.equal(e.file, "model.safetensors.index.json", label);
                }
                if (label === "wrong shard") {
                    // The tensor and the shards are named, in the CLI's words.
                    const words = /the index's weight_map puts tensor '[^']+' in [^ ]+, but [^ ]+ holds it/;
                    assert.match(e.message, words);
                    if (cli) assert.equal(words.exec(e.message)[0], words.exec(cli.stderr)?.[0]);
                }
                return true;
            });
        }
    });
});

describe("the plan's rules and caps (include/weightstream/model_plan.h)", () => {
    // A fetch that records what is asked, and answers 404 after `delay` ms.
    function notFound(delay = 0) {
        const calls = { urls: [], inFlight: 0, most: 0 };
        calls.fetch = async (input) => {
            calls.urls.push(String(input.url ?? input));
            calls.most = Math.max(calls.most, ++calls.inFlight);
            await new Promise((resolve) => setTimeout(resolve, delay));
            --calls.inFlight;
            return new Response("gone", { status: 404 });
        };
        return calls;
    }

    test("a split of more parts than maxSplitParts is refused before any part is requested", async () => {
        const calls = notFound();
        await assert.rejects(open("https://example.test/m/m-00001-of-99999.gguf", { fetch: calls.fetch }), (e) => {
            assert.ok(e instanceof WeightstreamError, String(e));
            assert.equal(e.code, "too_large");
            assert.equal(e.file, "m-00001-of-99999.gguf");
            assert.equal(e.message, "m-00001-of-99999.gguf: a split of 99999 parts, more than the 1024 allowed");
            return true;
        });
        assert.deepEqual(calls.urls, []);
        await assert.rejects(open(parts[1], { maxSplitParts: 2 }), {
            code: "too_large",
            message: /a split of 3 parts, more than the 2 allowed/,
        });
        await assert.rejects(open(parts.map(fileOf), { maxSplitParts: 2 }), { code: "too_large" });
        await checkModel(await open(parts[1], { maxSplitParts: 3 }), parts[0], "maxSplitParts: 3");
        await assert.rejects(open(parts[1], { maxSplitParts: 0 }), TypeError);
        if (cliPath) {
            const big = path.join(mkdtempSync(path.join(dir, "big-")), "m-00001-of-99999.gguf");
            writeFileSync(big, readFileSync(parts[0]));
            assert.deepEqual(cliError(big).code, "too_large");
        }
    });

    test("parts are opened options.concurrency at a time, and none after a failure", async () => {
        const calls = notFound(20);
        await assert.rejects(
            open("https://example.test/m/m-00001-of-00040.gguf", { fetch: calls.fetch, concurrency: 3, retries: 0 }),
            (e) => {
                assert.equal(e.code, "http");
                assert.equal(e.file, "m-00001-of-00040.gguf"); // the first failure in file order
                return true;
            },
        );
        assert.equal(calls.most, 3);
        assert.deepEqual(
            calls.urls.map((u) => u.slice(u.lastIndexOf("/") + 1)),
            [1, 2, 3].map((k) => splitPartName("m", k, 40)),
        );
    });

    test("shards without an index holding the same tensor: duplicate_name in the later shard", async () => {
        const tensor = { name: "w", dtype: "F32", shape: [2], data: new Uint8Array(8) };
        const a = writeSafetensors({ tensors: [tensor] });
        const b = writeSafetensors({ tensors: [{ ...tensor, name: "v" }, tensor] });
        await assert.rejects(
            open([
                { name: "b.safetensors", source: b },
                { name: "a.safetensors", source: a },
            ]),
            (e) => {
                assert.equal(e.code, "duplicate_name");
                assert.equal(e.file, "b.safetensors");
                // The name of "w" in b's header (8 bytes of length, then the JSON).
                assert.equal(e.offset, new TextDecoder().decode(b).indexOf('"w"'));
                return true;
            },
        );
    });

    test("modelFilesOnly: the other files of a folder are left out; an index alone is refused", async () => {
        const config = new File(['{"architectures": []}'], "config.json");
        const given = [config, ...[index, ...shards].map(fileOf)];
        await assert.rejects(open(given), { code: "bad_split", message: /does not name config\.json/ });
        await checkModel(await open(given, { modelFilesOnly: true }), index, "modelFilesOnly");
        await assert.rejects(open([config, fileOf(parts[0])]), { code: "bad_source" });
        // One left: opened on its own, as one File is.
        const one = await open([config, fileOf(parts[0])], { modelFilesOnly: true });
        try {
            assert.equal(one.info.files, undefined);
            assert.equal(one.info.file_size, readFileSync(parts[0]).length);
        } finally {
            await one.close();
        }
        for (const [source, options] of [
            [[config, fileOf(index)], { modelFilesOnly: true }],
            [fileOf(index), {}],
            [index, { split: false }],
        ]) {
            await assert.rejects(open(source, options), {
                code: "bad_source",
                file: "model.safetensors.index.json",
                message:
                    "model.safetensors.index.json: the index of a sharded safetensors model: give its .safetensors " +
                    "shards with it",
            });
        }
        await assert.rejects(open([config, new File(["x"], "x.bin")], { modelFilesOnly: true }), {
            code: "bad_source",
            message: /none of the 2 files is a model file/,
        });
    });

    test("an index over the core's cap is refused without reading it all", async () => {
        const chunk = new Uint8Array(1 << 20).fill(0x20);
        let pulled = 0;
        const huge = new ReadableStream({
            pull(controller) {
                ++pulled;
                controller.enqueue(chunk);
            },
        });
        await assert.rejects(
            open([
                { name: "model.safetensors.index.json", source: huge },
                { name: path.basename(shards[0]), source: readFileSync(shards[0]) },
            ]),
            { code: "too_large", file: "model.safetensors.index.json", message: /larger than 100000000 bytes/ },
        );
        assert.ok(pulled <= 100 + 3, `${pulled} chunks pulled`);
    });
});

requireSetup(!nginxPath && "nginx not installed");

describe("over HTTP (nginx)", () => {
    let server;
    before(async () => {
        server = await startNginx();
        for (const p of [...parts, ...shards, index])
            writeFileSync(path.join(server.generatedDir, path.basename(p)), readFileSync(p));
    });
    after(async () => {
        await server?.stop();
    });

    const url = (base, p) => `${base}/generated/${encodeURIComponent(path.basename(p))}`;

    for (const { label, entry, files } of models) {
        test(`Range: ${label} from the URL of ${path.basename(label === "split GGUF" ? files[2] : entry)}: headers + 64 KiB each`, async () => {
            const tracker = server.tracker();
            const op = tracker.op();
            const start = label === "split GGUF" ? files[2] : entry;
            const model = await open(url(server.rangeBase, start), { fetch: tracker.fetch });
            const lines = await server.served(op, tracker.requests.get(op));
            let budget = label === "split GGUF" ? 0 : readFileSync(entry).length;
            for (const p of files) {
                const part = await open(p, { split: false });
                budget += Number(part.info.data_offset) + KIB64;
                await part.close();
            }
            const body = lines.reduce((s, l) => s + l.bodyBytesSent, 0);
            assert.ok(body <= budget, `${body} body bytes for the headers, budget ${budget}`);
            assert.ok(
                lines.every((l) => l.status === 206),
                JSON.stringify(lines),
            );
            await checkModel(model, entry, `${label} over Range`);
        });

        test(`max_ranges 0: ${label}: stream() reads each file in one pass`, async () => {
            const tracker = server.tracker();
            const op = tracker.op();
            const model = await open(url(server.noRangeBase, entry), { fetch: tracker.fetch });
            try {
                const hashes = cliHashes(entry);
                let n = 0;
                for await (const { tensor, data } of model.stream()) {
                    if (hashes) assert.equal(sha256(bytesOf(data)), hashes.get(tensor.name).f32_sha256, tensor.name);
                    ++n;
                }
                assert.equal(n, model.tensors.length);
            } finally {
                await model.close();
            }
            const lines = await server.served(op, tracker.requests.get(op));
            // One GET per file (and the index's own for shards).
            assert.equal(lines.length, files.length + (label === "split GGUF" ? 0 : 1), JSON.stringify(lines));
            assert.ok(lines.every((l) => l.status === 200));
        });
    }

    test("a missing part at a URL rejects with http 404 naming it", async () => {
        const name = splitPartName("gone", 2, 2);
        writeFileSync(path.join(server.generatedDir, splitPartName("gone", 1, 2)), readFileSync(parts[0]));
        await assert.rejects(
            open(`${server.rangeBase}/generated/${splitPartName("gone", 1, 2)}`, { retries: 0 }),
            (e) => {
                assert.equal(e.code, "http");
                assert.equal(e.status, 404);
                assert.equal(e.file, name);
                return true;
            },
        );
    });

    test("a URL's query is kept for its siblings", async () => {
        const tracker = server.tracker();
        const op = tracker.op();
        const model = await open(`${url(server.rangeBase, parts[0])}?download=true`, { fetch: tracker.fetch });
        await model.close();
        const lines = await server.served(op, tracker.requests.get(op));
        assert.ok(lines.length >= 3);
        assert.ok(
            tracker.urls.every((u) => u.endsWith("?download=true")),
            tracker.urls.join(" "),
        );
    });
});
