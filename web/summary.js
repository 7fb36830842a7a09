// SPDX-License-Identifier: MIT
// What a person looks for first in a model, derived from its info (pure; no DOM).

// llama.cpp's llama_ftype, the value of general.file_type.
const FILE_TYPES = {
    0: "all F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    4: "Q4_1_SOME_F16",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    21: "Q2_K_S",
    22: "IQ3_XS",
    23: "IQ3_XXS",
    24: "IQ1_S",
    25: "IQ4_NL",
    26: "IQ3_S",
    27: "IQ3_M",
    28: "IQ2_S",
    29: "IQ2_M",
    30: "IQ4_XS",
    31: "IQ1_M",
    32: "BF16",
    36: "TQ1_0",
    37: "TQ2_0",
    38: "MXFP4_MOE",
};

// Layer index in the usual tensor naming schemes: GGUF "blk.N.", Hugging Face "model.layers.N.",
// GPT-2 style "transformer.h.N.", and "blocks.N." / "block.N.".
const LAYER = /(?:^|\.)(?:blk|layers|h|blocks|block)\.(\d+)\./;

/** The layer number in a tensor name, or -1. */
export function layerOf(name) {
    const m = LAYER.exec(name);
    return m ? Number(m[1]) : -1;
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
    let parameters = 0n;
    let tensorBytes = 0n;
    const byDtype = new Map();
    const layers = new Set();
    for (const t of info.tensors) {
        parameters += BigInt(t.n_elements);
        tensorBytes += BigInt(t.nbytes);
        const d = byDtype.get(t.dtype) ?? { dtype: t.dtype, count: 0, bytes: 0n };
        d.count += 1;
        d.bytes += BigInt(t.nbytes);
        byDtype.set(t.dtype, d);
        const layer = layerOf(t.name);
        if (layer >= 0) layers.add(layer);
    }
    const total = Number(tensorBytes);
    const dtypeMix = [...byDtype.values()]
        .map((d) => ({ dtype: d.dtype, count: d.count, bytes: d.bytes, share: total ? Number(d.bytes) / total : 0 }))
        .sort((a, b) => (b.bytes > a.bytes ? 1 : b.bytes < a.bytes ? -1 : a.dtype < b.dtype ? -1 : 1));

    const archKey = (suffix) => (arch ? scalar(map, `${arch}.${suffix}`) : undefined);
    const blockCount = archKey("block_count");
    const fileType = scalar(map, "general.file_type");
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
        parameters,
        tensorBytes,
        tensorCount: info.tensors.length,
        fileSize: info.file_size,
        bitsPerWeight: parameters > 0n ? (Number(tensorBytes) * 8) / Number(parameters) : undefined,
        layers: blockCount !== undefined ? toNumber(blockCount) : layers.size || undefined,
        layersFromNames: blockCount === undefined && layers.size > 0,
        contextLength: toNumber(archKey("context_length")),
        vocabSize: toNumber(vocabSize),
        fileType: fileType === undefined ? undefined : (FILE_TYPES[toNumber(fileType)] ?? `type ${fileType}`),
        dtypeMix,
        facts,
    };
}
