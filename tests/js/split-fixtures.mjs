// SPDX-License-Identifier: MIT
// Models in several files for the tests, written with the tests' own writers from the corpus (the tensors'
// stored bytes at the offsets its manifests give): a split GGUF in llama.cpp's layout (every part a whole
// GGUF with split.no / split.count / split.tensors.count, the model's metadata in the first) and a sharded
// safetensors model with its model.safetensors.index.json.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

import { writeGguf } from "./gguf-writer.mjs";
import { sharedTestData, testData } from "./helpers.mjs";
import { writeSafetensors } from "./safetensors-writer.mjs";

function corpusFile(rel) {
    for (const root of [testData, sharedTestData]) {
        const file = path.join(root, rel);
        try {
            return { file, bytes: readFileSync(file) };
        } catch {
            // try the next root
        }
    }
    throw new Error(`${rel} is in neither tests/data nor the shared corpus`);
}

function manifestOf(rel) {
    const { file } = corpusFile(rel);
    const manifest = JSON.parse(readFileSync(path.join(path.dirname(file), "manifest.json"), "utf8"));
    return manifest.files.find((f) => f.file === path.basename(rel));
}

export function splitPartName(prefix, part, count) {
    return `${prefix}-${String(part).padStart(5, "0")}-of-${String(count).padStart(5, "0")}.gguf`;
}

/**
 * Writes `${prefix}-0000K-of-00003.gguf` into dir from the tensors of ggml-types.gguf: part K holds every
 * third tensor of a selection of types. Options break it: splitCount (the split.count written), tensorsCount
 * (split.tensors.count). Returns the part paths in order.
 */
export function writeSplitGguf(dir, prefix = "split", { splitCount = 3, tensorsCount } = {}) {
    const { bytes } = corpusFile("ggml/ggml-types.gguf");
    const entry = manifestOf("ggml/ggml-types.gguf");
    const wanted = ["f32", "f16", "bf16", "q4_0", "q8_0", "q4_k", "q6_k", "iq2_xxs", "iq4_nl", "tq2_0", "mxfp4"];
    const tensors = entry.tensors
        .filter((t) => wanted.includes(t.ggml_type))
        .map((t) => ({
            name: t.name,
            type: t.ggml_type_id,
            ne: t.ne,
            data: bytes.subarray(t.absolute_offset, t.absolute_offset + t.size_bytes),
        }));
    const count = 3;
    const paths = [];
    for (let k = 0; k < count; ++k) {
        const kv = [];
        if (k === 0) {
            kv.push({ key: "general.architecture", type: "string", value: "llama" });
            kv.push({ key: "general.name", type: "string", value: "split fixture" });
            kv.push({ key: "tokenizer.ggml.tokens", type: "array", itemType: "string", value: ["<s>", "</s>", "ä"] });
            kv.push({ key: "llama.context_length", type: "uint64", value: 2n ** 60n + 1n });
        }
        kv.push({ key: "split.no", type: "uint16", value: k });
        kv.push({ key: "split.count", type: "uint16", value: splitCount });
        kv.push({ key: "split.tensors.count", type: "int32", value: tensorsCount ?? tensors.length });
        const file = path.join(dir, splitPartName(prefix, k + 1, count));
        writeFileSync(file, writeGguf({ kv, tensors: tensors.filter((_, i) => i % count === k) }));
        paths.push(file);
    }
    return paths;
}

/**
 * Writes model-0000K-of-00002.safetensors and model.safetensors.index.json into dir from the tensors of
 * sample_overall.safetensors and mlx_lora_adapters.safetensors. Returns {index, shards} (paths).
 */
export function writeShards(dir, prefix = "model") {
    const sources = ["safetensors/sample_overall.safetensors", "safetensors/mlx_lora_adapters.safetensors"];
    const shards = [];
    const weightMap = {};
    sources.forEach((rel, k) => {
        const { bytes } = corpusFile(rel);
        const entry = manifestOf(rel);
        const name = `${prefix}-${String(k + 1).padStart(5, "0")}-of-00002.safetensors`;
        const tensors = entry.tensors.map((t) => ({
            name: `${k}.${t.name}`,
            dtype: t.dtype,
            shape: t.shape,
            data: bytes.subarray(t.absolute_offsets[0], t.absolute_offsets[1]),
        }));
        for (const t of tensors) weightMap[t.name] = name;
        const file = path.join(dir, name);
        writeFileSync(file, writeSafetensors({ tensors, metadata: k === 0 ? { format: "pt" } : undefined }));
        shards.push(file);
    });
    const index = path.join(dir, `${prefix}.safetensors.index.json`);
    writeFileSync(index, JSON.stringify({ metadata: { total_size: 12345, note: "shards" }, weight_map: weightMap }));
    return { index, shards };
}
