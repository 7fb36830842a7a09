// SPDX-License-Identifier: MIT
// The Model helpers (model_view.js) against the native CLI and against values computed here from the tensor
// table: get() and metadataMap against `info --json`'s metadata; parameterCount, bitsPerWeight, fileType
// and layers against its "facts" (include/weightstream/model_facts.h) and against sums, the core's file type list
// (quantizeFileTypes()) and a grouping written here from the rule in index.d.ts. Over the whole corpus, a
// split model and in a worker. Then read()'s half types, and index.d.ts's unions against the core's lists.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";

import { dtypes, open, quantizeFileTypes } from "weightstream";
import { openInWorker } from "weightstream/worker";

import { loadWasm } from "../../wasm/js/wasm.js";
import { cliInfo, cliPath, corpus, requireSetup, sharedTestData, testData } from "./helpers.mjs";
import { unionMembers } from "./index-dts.mjs";
import { writeSplitGguf } from "./split-fixtures.mjs";

requireSetup(!cliPath && "the native CLI is not built (it is the reference)");

const dir = mkdtempSync(path.join(tmpdir(), "ws-helpers-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const LAYER_WORDS = new Set(["blk", "layers", "layer", "h", "blocks"]);

// index.d.ts's rule for Model.layers, written independently of the core: the first component that is a
// layer word followed by 1 to 9 digits and then by more of the name.
function layerOf(name) {
    const parts = name.split(".");
    for (let i = 0; i + 2 < parts.length; ++i) {
        if (LAYER_WORDS.has(parts[i]) && /^[0-9]{1,9}$/.test(parts[i + 1]) && parts.slice(i + 2).join(".") !== "") {
            return {
                name: parts.slice(0, i + 2).join("."),
                prefix: parts.slice(0, i + 1).join("."),
                index: +parts[i + 1],
            };
        }
    }
    return null;
}

function expectedLayers(tensors) {
    const prefixes = [];
    const groups = new Map();
    const other = [];
    for (const t of tensors) {
        const l = layerOf(t.name);
        if (!l) {
            other.push(t);
            continue;
        }
        if (!prefixes.includes(l.prefix)) prefixes.push(l.prefix);
        if (!groups.has(l.name)) groups.set(l.name, { name: l.name, index: l.index, prefix: l.prefix, tensors: [] });
        groups.get(l.name).tensors.push(t);
    }
    const layers = [...groups.values()]
        .sort((a, b) => prefixes.indexOf(a.prefix) - prefixes.indexOf(b.prefix) || a.index - b.index)
        .map(({ name, index, tensors }) => ({ name, index, tensors }));
    return { layers, other };
}

const fileTypeNames = new Map((await quantizeFileTypes()).map((f) => [f.id, f.name]));

// Every helper of `model` against `cli` (info --json of the same file).
function checkHelpers(model, cli, where) {
    assert.deepEqual(model.info.facts, cli.facts, `${where}: facts`);
    // get() and the map: every key's value, as info --json prints it.
    assert.equal(model.metadataMap.size, cli.metadata.length, where);
    assert.equal(model.metadataMap, model.metadataMap, "the same Map at each access");
    for (const entry of cli.metadata) {
        assert.deepEqual(model.get(entry.key), entry.value, `${where}: ${entry.key}`);
        assert.deepEqual(model.metadataMap.get(entry.key), entry, `${where}: ${entry.key}`);
    }
    assert.equal(model.get("no.such.key"), undefined);
    // The facts from the tensor table.
    const params = cli.tensors.reduce((sum, t) => sum + Number(t.n_elements), 0);
    const bytes = cli.tensors.reduce((sum, t) => sum + Number(t.nbytes), 0);
    assert.equal(model.parameterCount, params, `${where}: parameterCount`);
    assert.equal(model.parameterCount, cli.facts.parameter_count);
    assert.equal(model.bitsPerWeight, params > 0 ? (bytes * 8) / params : null, `${where}: bitsPerWeight`);
    assert.equal(model.bitsPerWeight, cli.facts.bits_per_weight);
    const stored = cli.metadata.find((e) => e.key === "general.file_type")?.value;
    assert.equal(model.fileType, fileTypeNames.get(Number(stored)) ?? null, `${where}: fileType`);
    assert.equal(model.fileType, cli.facts.file_type);
    // Layers: the grouping written here, with the model's own tensor records.
    const expected = expectedLayers(model.tensors);
    assert.deepEqual(model.layers, expected.layers, `${where}: layers`);
    assert.equal(model.layers.length, cli.facts.layers);
    assert.deepEqual(model.nonLayerTensors, expected.other, `${where}: nonLayerTensors`);
    const seen = [...model.nonLayerTensors, ...model.layers.flatMap((l) => l.tensors)];
    assert.equal(seen.length, model.tensors.length);
    for (const t of seen) assert.ok(model.tensors.includes(t), `${where}: ${t.name} is the model's own record`);
    assert.equal(model.layers, model.layers, "the same array at each access");
}

describe("helpers over the corpus, against info --json", () => {
    for (const { file, label } of corpus()) {
        test(label, async () => {
            const model = await open(file);
            try {
                checkHelpers(model, cliInfo(file), label);
            } finally {
                await model.close();
            }
        });
    }
});

test("file types and bits per weight of llama-quantize's own outputs (recipes), as it named and printed them", async () => {
    const recipes = path.join(sharedTestData, "recipes");
    requireSetup(!existsSync(path.join(recipes, "manifest.json")) && "no ../shared/testdata/recipes");
    const manifest = JSON.parse(readFileSync(path.join(recipes, "manifest.json"), "utf8"));
    const kept = manifest.runs.filter((r) => r.output_kept);
    assert.equal(kept.length, 3);
    for (const run of kept) {
        const model = await open(path.join(recipes, run.output));
        try {
            assert.equal(model.fileType, run.ftype);
            // llama-quantize's "quant size = ... (B BPW)", printed with two decimals.
            assert.equal(model.bitsPerWeight.toFixed(2), run.quant_bpw.toFixed(2));
            const blocks = model.get("llama.block_count");
            assert.deepEqual(
                model.layers.map((l) => l.name),
                Array.from({ length: blocks }, (_, i) => `blk.${i}`),
            );
            assert.deepEqual(
                model.nonLayerTensors.map((t) => t.name).sort(),
                model.tensors
                    .map((t) => t.name)
                    .filter((n) => !n.startsWith("blk."))
                    .sort(),
            );
        } finally {
            await model.close();
        }
    }
});

test("a split model: the facts of all its parts, as the CLI reports them", async () => {
    const parts = writeSplitGguf(dir, "facts");
    const model = await open(parts[0]);
    try {
        assert.equal(model.info.files.length, 3);
        const cli = cliInfo(parts[0]);
        assert.equal(cli.files.length, 3);
        checkHelpers(model, cli, "split");
        // Every part's tensors count, not only the first part's.
        const first = await open(parts[0], { split: false });
        assert.ok(first.parameterCount < model.parameterCount);
        await first.close();
    } finally {
        await model.close();
    }
});

test("safetensors: Hugging Face layer names group, no file type", async () => {
    const file = path.join(testData, "safetensors/mlx_lora_adapters.safetensors");
    const model = await open(file);
    try {
        checkHelpers(model, cliInfo(file), "mlx_lora_adapters");
        assert.equal(model.fileType, null);
        assert.deepEqual(
            model.layers.map((l) => [l.name, l.index, l.tensors.length]),
            [
                ["model.layers.36", 36, 4],
                ["model.layers.37", 37, 4],
                ["model.layers.38", 38, 4],
                ["model.layers.39", 39, 4],
            ],
        );
        assert.deepEqual(model.nonLayerTensors, []);
    } finally {
        await model.close();
    }
});

test("in a worker: the same helpers", async () => {
    const file = path.join(testData, "ggml/ggml-types.gguf");
    const model = await openInWorker(file);
    try {
        checkHelpers(model, cliInfo(file), "worker");
        assert.equal(model.fileType, "F16");
    } finally {
        await model.close();
    }
});

describe("read() as f16 and f16-bits", () => {
    const file = path.join(testData, "ggml/ggml-types.gguf");
    // The same values (results carry their shape as an own property; a subarray or a view does not).
    const sameValues = (a, b, where) => assert.deepEqual(Array.from(a), Array.from(b), where);

    test("without a Float16Array (Node 20/22): both are the bits in a Uint16Array", async () => {
        assert.equal(globalThis.Float16Array, undefined);
        const model = await open(file);
        try {
            for (const name of ["q4_k.weight", "f16.weight", "bf16.weight"]) {
                const half = await model.read(name, { as: "f16" });
                const raw = await model.read(name, { as: "f16-bits" });
                assert.equal(half.constructor, Uint16Array);
                assert.equal(raw.constructor, Uint16Array);
                sameValues(raw, half, name);
                assert.equal(raw.length, model.tensor(name).n_elements);
                assert.deepEqual(raw.shape, model.tensor(name).shape);
                // Into a caller's array: only a Uint16Array takes the bits.
                const into = new Uint16Array(raw.length + 8);
                const filled = await model.read(name, { as: "f16-bits", into });
                assert.equal(filled.buffer, into.buffer);
                assert.deepEqual(Array.from(filled), Array.from(raw));
                await assert.rejects(model.read(name, { as: "f16-bits", into: new Float32Array(raw.length) }));
            }
            // F16 data: the stored bits.
            const stored = await model.read("f16.weight", { as: "raw" });
            sameValues(
                await model.read("f16.weight", { as: "f16-bits" }),
                new Uint16Array(stored.buffer, stored.byteOffset, stored.length / 2),
            );
            // Rows [1, 3) of the whole tensor's halves.
            const rows = await model.read("q4_k.weight", { as: "f16-bits", rows: [1, 2] });
            const width = rows.length / 2;
            const whole = await model.read("q4_k.weight", { as: "f16" });
            sameValues(rows, whole.slice(width, 3 * width));
            await assert.rejects(model.read("f16.weight", { as: "f64" }), TypeError);
        } finally {
            await model.close();
        }
    });

    test("with a Float16Array: f16 is one, f16-bits still the Uint16Array of the same bits", async () => {
        // A stand-in for the runtime's class (Node 20 has none): a view of binary16 storage.
        class Float16Array extends Uint16Array {}
        globalThis.Float16Array = Float16Array;
        const model = await open(file);
        try {
            for (const name of ["q4_k.weight", "f16.weight"]) {
                const half = await model.read(name, { as: "f16" });
                const raw = await model.read(name, { as: "f16-bits" });
                assert.equal(half.constructor, Float16Array);
                assert.equal(raw.constructor, Uint16Array);
                sameValues(raw, new Uint16Array(half.buffer, half.byteOffset, half.length), name);
            }
            for await (const { data } of model.stream({ as: "f16-bits" })) {
                assert.ok(!(data instanceof Float16Array));
                break;
            }
        } finally {
            delete globalThis.Float16Array;
            await model.close();
        }
    });

    test("in a worker: f16-bits crosses as a Uint16Array", async () => {
        const model = await openInWorker(file);
        try {
            const raw = await model.read("q4_k.weight", { as: "f16-bits" });
            assert.equal(raw.constructor, Uint16Array);
            const here = await open(file);
            assert.deepEqual(Array.from(raw), Array.from(await here.read("q4_k.weight", { as: "f16-bits" })));
            await here.close();
        } finally {
            await model.close();
        }
    });
});

test("index.d.ts's DTypeName is the core's dtype list, in order", async () => {
    const names = (await dtypes()).map((d) => d.name);
    assert.ok(names.length >= 49, `${names.length} dtypes`);
    assert.deepEqual(unionMembers("DTypeName"), names);
});

test("index.d.ts's QuantizeFileType is every file type the core names, and its aliases", async () => {
    const listed = new Map((await quantizeFileTypes()).map((f) => [f.name, f.id]));
    const offered = unionMembers("QuantizeFileType", { open: true });
    assert.equal(new Set(offered).size, offered.length, "a name offered twice");
    for (const name of listed.keys()) assert.ok(offered.includes(name), `${name} is not offered`);
    const wasm = await loadWasm();
    // The others are aliases: names the core reads as a listed type (Q4_K for Q4_K_M), not listed themselves.
    const aliases = offered.filter((name) => !listed.has(name));
    for (const name of aliases) {
        const id = wasm.ftypeFromName(name);
        assert.ok([...listed.values()].includes(id), `${name} (${id}) names no listed file type`);
    }
});

test("index.d.ts's ReadAs is what read() takes", async () => {
    const model = await open(path.join(testData, "ggml/ggml-types.gguf"));
    try {
        const kinds = unionMembers("ReadAs");
        assert.deepEqual(kinds, ["f32", "f16", "f16-bits", "raw", "native"]);
        for (const as of kinds) assert.ok((await model.read("f32.weight", { as })).length > 0, as);
    } finally {
        await model.close();
    }
});
