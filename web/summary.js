// SPDX-License-Identifier: MIT
// What a person looks for first in a model, derived from its info (pure; no DOM).

/**
 * The core's layer groups (Model.layers: {name, index, tensors}, include/weightstream/model_facts.h) with a `key` each: the
 * layer number when every group has the same prefix (blk.0 … blk.N), else the group's name ("blk.3", "v.blk.3":
 * the towers of a multimodal model stay apart). The page groups and labels layers by it, never by names itself.
 */
export function keyedLayers(layers) {
    const prefixes = new Set(layers.map((l) => l.name.replace(/\d+$/, "")));
    return layers.map((l) => ({ ...l, key: prefixes.size > 1 ? l.name : String(l.index) }));
}

/** key -> metadata entry. */
export function metadataMap(metadata) {
    const map = new Map();
    for (const entry of metadata) if (!map.has(entry.key)) map.set(entry.key, entry);
    return map;
}

function scalar(map, key) {
    const e = map.get(key);
    if (!e || e.type === "array") return undefined;
    return e.value;
}

function arrayLength(map, key) {
    const e = map.get(key);
    if (!e || e.type !== "array") return undefined;
    return e.length ?? (Array.isArray(e.value) ? e.value.length : undefined);
}

const toNumber = (v) => (typeof v === "bigint" ? Number(v) : v);

/**
 * {architecture, name, parameters, tensorBytes, fileSize, bitsPerWeight, layers, contextLength,
 *  vocabSize, fileType, dtypeMix: [{dtype, count, bytes, share}], facts: [{key, value}]}
 */
export function summarize(info, fileName = "") {
    const map = metadataMap(info.metadata);
    const arch = scalar(map, "general.architecture");
    // The core's derived facts (include/weightstream/model_facts.h, `info --json`'s "facts"): the parameter count, tensor bytes,
    // layers, llama-quantize's name of general.file_type, and bits per weight as llama.cpp prints them.
    const { facts: derived } = info;
    const byDtype = new Map();
    for (const t of info.tensors) {
        const d = byDtype.get(t.dtype) ?? { dtype: t.dtype, count: 0, bytes: 0n };
        d.count += 1;
        d.bytes += BigInt(t.nbytes);
        byDtype.set(t.dtype, d);
    }
    const total = derived.data_bytes;
    const dtypeMix = [...byDtype.values()]
        .map((d) => ({ dtype: d.dtype, count: d.count, bytes: d.bytes, share: total ? Number(d.bytes) / total : 0 }))
        .sort((a, b) => (b.bytes > a.bytes ? 1 : b.bytes < a.bytes ? -1 : a.dtype < b.dtype ? -1 : 1));

    const archKey = (suffix) => (arch ? scalar(map, `${arch}.${suffix}`) : undefined);
    const blockCount = archKey("block_count");
    const vocabSize = arrayLength(map, "tokenizer.ggml.tokens") ?? archKey("vocab_size");

    // Every other scalar general.* and <arch>.* key, in file order.
    const shown = new Set(["general.architecture", "general.name", "general.file_type"]);
    if (arch) for (const k of ["block_count", "context_length"]) shown.add(`${arch}.${k}`);
    const facts = [];
    for (const entry of info.metadata) {
        if (shown.has(entry.key) || entry.type === "array") continue;
        if (!entry.key.startsWith("general.") && !(arch && entry.key.startsWith(`${arch}.`))) continue;
        facts.push(entry);
    }
    return {
        format: info.format,
        version: info.version,
        architecture: typeof arch === "string" ? arch : undefined,
        name: scalar(map, "general.name") ?? fileName,
        parameters: derived.parameter_count,
        tensorBytes: derived.data_bytes,
        tensorCount: info.tensors.length,
        fileSize: info.file_size,
        bitsPerWeight: derived.bits_per_weight ?? undefined,
        layers: blockCount !== undefined ? toNumber(blockCount) : derived.layers || undefined,
        layersFromNames: blockCount === undefined && derived.layers > 0,
        contextLength: toNumber(archKey("context_length")),
        vocabSize: toNumber(vocabSize),
        fileType: derived.file_type ?? (derived.file_type_id === null ? undefined : `type ${derived.file_type_id}`),
        dtypeMix,
        facts,
    };
}
