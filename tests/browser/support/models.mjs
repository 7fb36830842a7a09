// SPDX-License-Identifier: MIT
// Test models for the page tests, written here (nothing is downloaded): GGUF files through the package tests'
// writer (tests/js/gguf-writer.mjs) with F32/F16/Q8_0 tensors encoded here, a safetensors writer, and the
// models the tests open.
import { ggufHeader, writeGguf as ggufFile } from "../../js/gguf-writer.mjs";

const GGML_TYPES = { F32: 0, F16: 1, Q8_0: 8, Q4_K: 12, Q5_K: 13, Q6_K: 14 };

/** Deterministic pseudo-random numbers (mulberry32) and normal deviates. */
export function rng(seed) {
    let a = seed >>> 0;
    const uniform = () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
    return { uniform, normal };
}

/** float -> IEEE binary16 bits, round to nearest even. */
export function toHalf(value) {
    const f32 = new Float32Array([value]);
    const x = new Uint32Array(f32.buffer)[0];
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
    let e = exp - 127 + 15;
    if (e >= 0x1f) return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10) return sign;
        mant |= 0x800000;
        const shift = 14 - e;
        let half = mant >>> shift;
        const rem = mant & ((1 << shift) - 1);
        const mid = 1 << (shift - 1);
        if (rem > mid || (rem === mid && (half & 1))) ++half;
        return sign | half;
    }
    let half = (e << 10) | (mant >>> 13);
    const rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem === 0x1000 && (half & 1))) ++half;
    return sign | half;
}

/** Encodes values (Float32Array-like) as a GGML type's bytes. */
export function encodeTensor(dtype, values) {
    const n = values.length;
    if (dtype === "F32") return new Uint8Array(Float32Array.from(values).buffer);
    if (dtype === "F16") return new Uint8Array(Uint16Array.from(values, toHalf).buffer);
    if (dtype === "Q8_0") {
        if (n % 32) throw new Error("Q8_0 needs a multiple of 32 values");
        const out = new Uint8Array((n / 32) * 34);
        const view = new DataView(out.buffer);
        for (let b = 0; b < n / 32; ++b) {
            let amax = 0;
            for (let i = 0; i < 32; ++i) amax = Math.max(amax, Math.abs(values[b * 32 + i]));
            const d = amax / 127;
            const id = d ? 1 / d : 0;
            view.setUint16(b * 34, toHalf(d), true);
            for (let i = 0; i < 32; ++i) view.setInt8(b * 34 + 2 + i, Math.round(values[b * 32 + i] * id));
        }
        return out;
    }
    throw new Error(`no encoder for ${dtype}`);
}

// This file's metadata [key, type, value, itemType?] and tensors {name, dtype, ne, nbytes} in the form of the
// package tests' GGUF writer (tests/js/gguf-writer.mjs), which writes the layout.
const writerKv = (kv) => kv.map(([key, type, value, itemType]) => ({ key, type, value, itemType }));
const writerTensors = (tensors) => tensors.map(({ name, dtype, ne, nbytes }) => ({ name, type: GGML_TYPES[dtype], ne, nbytes }));

/**
 * A GGUF v3 file. kv: [key, type, value] or [key, "array", items, itemType]; tensors: {name, dtype,
 * ne (innermost first), values} or {name, dtype, ne, bytes}.
 */
export function writeGguf({ kv = [], tensors = [], alignment = 32 }) {
    const data = tensors.map((t) => t.bytes ?? encodeTensor(t.dtype, t.values));
    return ggufFile({
        kv: writerKv(kv),
        tensors: tensors.map((t, i) => ({ name: t.name, type: GGML_TYPES[t.dtype], ne: t.ne, data: data[i] })),
        alignment,
    });
}

/** A safetensors file: tensors {name, dtype: "F32" | "F16", shape, values}, metadata string -> string. */
export function writeSafetensors({ tensors, metadata }) {
    const header = {};
    if (metadata) header.__metadata__ = metadata;
    const blobs = [];
    let offset = 0;
    for (const t of tensors) {
        const bytes = t.dtype === "F16" ? new Uint8Array(Uint16Array.from(t.values, toHalf).buffer) : new Uint8Array(Float32Array.from(t.values).buffer);
        header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
        offset += bytes.length;
        blobs.push(bytes);
    }
    let json = JSON.stringify(header);
    json += " ".repeat((8 - (json.length % 8)) % 8);
    const jsonBytes = new TextEncoder().encode(json);
    const out = new Uint8Array(8 + jsonBytes.length + offset);
    new DataView(out.buffer).setBigUint64(0, BigInt(jsonBytes.length), true);
    out.set(jsonBytes, 8);
    let o = 8 + jsonBytes.length;
    for (const b of blobs) {
        out.set(b, o);
        o += b.length;
    }
    return out;
}

function randomValues(random, n, scale) {
    return Float32Array.from({ length: n }, () => random.normal() * scale);
}

const CHAT_TEMPLATE = `{% for message in messages %}
{% if message['role'] == 'user' %}<|user|>
{{ message['content'] }}</s>
{% elif message['role'] == 'assistant' %}<|assistant|>
{{ message['content'] }}</s>
{% endif %}
{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}`;

/** The tokens of a small made-up vocabulary. */
function vocabulary(n) {
    const tokens = ["<unk>", "<s>", "</s>"];
    for (let i = 0; i < 256 && tokens.length < n; ++i) tokens.push(`<0x${i.toString(16).toUpperCase().padStart(2, "0")}>`);
    const syllables = ["ka", "lo", "mi", "re", "tu", "sen", "dor", "an", "el", "is", "qu", "th", "▁"];
    for (let i = 0; tokens.length < n; ++i) {
        let s = i % 3 === 0 ? "▁" : "";
        for (let k = i; ; k = Math.floor(k / syllables.length)) {
            s += syllables[k % syllables.length];
            if (k < syllables.length) break;
        }
        tokens.push(s);
    }
    return tokens;
}

/**
 * A tiny llama-style GGUF: Q8_0 projections, F32 norms, an F16 output, a 2x64 "special" F32 tensor holding
 * NaN, +-Inf and zeros, tokenizer arrays and a chat template.
 */
export function tinyLlamaGguf({ layers = 2, embd = 64, ff = 128, vocab = 320, seed = 1 } = {}) {
    const random = rng(seed);
    const tokens = vocabulary(vocab);
    const kv = [
        ["general.architecture", "string", "llama"],
        ["general.name", "string", "Tiny Test Llama"],
        ["general.basename", "string", "tiny-test-llama"],
        ["general.size_label", "string", "0.1M"],
        ["general.license", "string", "mit"],
        ["general.file_type", "uint32", 7],
        ["general.quantization_version", "uint32", 2],
        ["llama.context_length", "uint32", 2048],
        ["llama.embedding_length", "uint32", embd],
        ["llama.block_count", "uint32", layers],
        ["llama.feed_forward_length", "uint32", ff],
        ["llama.attention.head_count", "uint32", 4],
        ["llama.attention.head_count_kv", "uint32", 2],
        ["llama.rope.freq_base", "float32", 10000],
        ["llama.attention.layer_norm_rms_epsilon", "float32", 1e-5],
        ["test.int8", "int8", -5],
        ["test.int16", "int16", -300],
        ["test.uint16", "uint16", 60000],
        ["test.uint8", "uint8", 200],
        ["test.int64", "int64", -9007199254740993n],
        ["test.uint64", "uint64", 18446744073709551615n],
        ["test.float64", "float64", Math.PI],
        ["test.bool", "bool", true],
        ["tokenizer.ggml.model", "string", "llama"],
        ["tokenizer.ggml.tokens", "array", tokens, "string"],
        ["tokenizer.ggml.scores", "array", tokens.map((_, i) => -i / 10), "float32"],
        ["tokenizer.ggml.token_type", "array", tokens.map((_, i) => (i < 3 ? 3 : i < 259 ? 6 : 1)), "int32"],
        ["tokenizer.ggml.bos_token_id", "uint32", 1],
        ["tokenizer.ggml.eos_token_id", "uint32", 2],
        ["tokenizer.chat_template", "string", CHAT_TEMPLATE],
    ];
    const tensors = [
        { name: "token_embd.weight", dtype: "Q8_0", ne: [embd, vocab], values: randomValues(random, embd * vocab, 0.02) },
    ];
    for (let l = 0; l < layers; ++l) {
        const p = `blk.${l}.`;
        tensors.push(
            { name: `${p}attn_norm.weight`, dtype: "F32", ne: [embd], values: Float32Array.from({ length: embd }, () => 1 + random.normal() * 0.1) },
            { name: `${p}attn_q.weight`, dtype: "Q8_0", ne: [embd, embd], values: randomValues(random, embd * embd, 0.05) },
            { name: `${p}attn_k.weight`, dtype: "Q8_0", ne: [embd, embd / 2], values: randomValues(random, (embd * embd) / 2, 0.05) },
            { name: `${p}attn_v.weight`, dtype: "Q8_0", ne: [embd, embd / 2], values: randomValues(random, (embd * embd) / 2, 0.05) },
            { name: `${p}attn_output.weight`, dtype: "Q8_0", ne: [embd, embd], values: randomValues(random, embd * embd, 0.05) },
            { name: `${p}ffn_norm.weight`, dtype: "F32", ne: [embd], values: Float32Array.from({ length: embd }, () => 1 + random.normal() * 0.1) },
            { name: `${p}ffn_gate.weight`, dtype: "Q8_0", ne: [embd, ff], values: randomValues(random, embd * ff, 0.05) },
            { name: `${p}ffn_up.weight`, dtype: "Q8_0", ne: [embd, ff], values: randomValues(random, embd * ff, 0.05) },
            { name: `${p}ffn_down.weight`, dtype: "Q8_0", ne: [ff, embd], values: randomValues(random, embd * ff, 0.05) },
        );
    }
    const special = randomValues(random, 2 * 64, 1);
    special[3] = NaN;
    special[10] = Infinity;
    special[11] = -Infinity;
    special[12] = -Infinity;
    special[20] = 0;
    special[21] = -0;
    special[22] = 0;
    tensors.push(
        { name: "output_norm.weight", dtype: "F32", ne: [embd], values: Float32Array.from({ length: embd }, () => 1 + random.normal() * 0.1) },
        { name: "output.weight", dtype: "F16", ne: [embd, vocab], values: randomValues(random, embd * vocab, 0.02) },
        { name: "special.weight", dtype: "F32", ne: [64, 2], values: special },
    );
    return writeGguf({ kv, tensors });
}

/** A small safetensors model in Hugging Face naming (layers.N.). */
export function tinySafetensors({ seed = 2 } = {}) {
    const random = rng(seed);
    const tensors = [{ name: "model.embed_tokens.weight", dtype: "F16", shape: [64, 32], values: randomValues(random, 64 * 32, 0.02) }];
    for (let l = 0; l < 2; ++l) {
        tensors.push(
            { name: `model.layers.${l}.self_attn.q_proj.weight`, dtype: "F32", shape: [32, 32], values: randomValues(random, 32 * 32, 0.05) },
            { name: `model.layers.${l}.input_layernorm.weight`, dtype: "F32", shape: [32], values: Float32Array.from({ length: 32 }, () => 1 + random.normal() * 0.1) },
        );
    }
    return writeSafetensors({ tensors, metadata: { format: "pt", note: "weightstream page test" } });
}

/** A sharded safetensors model: {name: bytes} of two shards and their model.safetensors.index.json. */
export function shardedSafetensors({ seed = 6 } = {}) {
    const random = rng(seed);
    const shards = [[], []];
    const weightMap = {};
    for (let l = 0; l < 4; ++l) {
        const shard = l < 2 ? 0 : 1;
        for (const [kind, shape] of [["mlp.up_proj.weight", [16, 8]], ["post_attention_layernorm.weight", [8]]]) {
            const name = `model.layers.${l}.${kind}`;
            const n = shape.reduce((a, b) => a * b, 1);
            shards[shard].push({ name, dtype: l % 2 ? "F16" : "F32", shape, values: randomValues(random, n, 0.1) });
            weightMap[name] = `model-0000${shard + 1}-of-00002.safetensors`;
        }
    }
    const files = {};
    shards.forEach((tensors, i) => {
        files[`model-0000${i + 1}-of-00002.safetensors`] = writeSafetensors({ tensors, metadata: { format: "pt" } });
    });
    const totalSize = shards.flat().reduce((sum, t) => sum + t.values.length * (t.dtype === "F16" ? 2 : 4), 0);
    files["model.safetensors.index.json"] = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: totalSize }, weight_map: weightMap }, null, 2));
    return files;
}

/** The parts of a split GGUF: 3 files, the first holding the metadata. */
export function splitGguf({ seed = 3 } = {}) {
    const random = rng(seed);
    const all = [];
    for (let i = 0; i < 6; ++i) all.push({ name: `blk.${i}.w`, dtype: i % 2 ? "Q8_0" : "F32", ne: [32, 4], values: randomValues(random, 128, 0.1) });
    const parts = [];
    for (let p = 0; p < 3; ++p) {
        const kv = [
            ["split.no", "uint16", p],
            ["split.count", "uint16", 3],
            ["split.tensors.count", "int32", all.length],
        ];
        if (p === 0) kv.unshift(["general.architecture", "string", "llama"], ["general.name", "string", "split test"]);
        parts.push(writeGguf({ kv, tensors: all.slice(p * 2, p * 2 + 2) }));
    }
    return parts;
}

/** Payloads that would run or inject something if a page ever treated file text as HTML. */
export const XSS_PAYLOADS = [
    `<script>window.__xss = (window.__xss || 0) + 1; alert("xss-script")</script>`,
    `<img src=x onerror="window.__xss = (window.__xss || 0) + 1; alert('xss-img')">`,
    `<svg onload="window.__xss = (window.__xss || 0) + 1; alert('xss-svg')"></svg>`,
    `"><iframe srcdoc="<script>parent.__xss=1</script>"></iframe>`,
];

export const XSS_TENSOR_NAMES = [
    "<script>window.__xss=1;alert(1)</script>",
    "<img src=x onerror=window.__xss=2;alert(2)>",
    "<svg onload=window.__xss=3;alert(3)>",
    "blk.0.<b>bold</b>&amp;<i>",
];

/** A GGUF whose metadata keys and values, tensor names and chat template hold the payloads. */
export function xssGguf() {
    const random = rng(4);
    const [script, img, svg, iframe] = XSS_PAYLOADS;
    const kv = [
        ["general.architecture", "string", "llama"],
        ["general.name", "string", img],
        ["general.description", "string", svg],
        ["llama.context_length", "uint32", 128],
        [`general.${script}`, "string", iframe],
        [`x.${img}`, "string", script],
        ["tokenizer.ggml.tokens", "array", ["<unk>", script, img, svg, iframe], "string"],
        ["tokenizer.chat_template", "string", `{% for m in messages %}${script}\n${img}\n${svg}{{ m.content }}{% endfor %}`],
    ];
    // ggml caps tensor names at 63 bytes: short forms of the same payloads.
    const tensors = XSS_TENSOR_NAMES.map((name) => ({ name, dtype: "F32", ne: [8, 2], values: randomValues(random, 16, 1) }));
    return writeGguf({ kv, tensors });
}

/** A model with `count` tensors in `count / 10` layers and a vocabulary of `vocab` tokens. */
export function largeGguf({ count = 5000, vocab = 150000 } = {}) {
    const tokens = vocabulary(vocab);
    const perLayer = 10;
    const kinds = ["attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down", "layer_output_scale"];
    const tensors = [];
    const zeros32 = new Float32Array(32);
    for (let i = 0; i < count; ++i) {
        const layer = Math.floor(i / perLayer);
        const kind = kinds[i % perLayer];
        tensors.push({ name: `blk.${layer}.${kind}.weight`, dtype: i % 2 ? "Q8_0" : "F32", ne: [32, 1], values: zeros32 });
    }
    const kv = [
        ["general.architecture", "string", "llama"],
        ["general.name", "string", "Many tensors, large vocabulary"],
        ["llama.block_count", "uint32", Math.ceil(count / perLayer)],
        ["llama.context_length", "uint32", 131072],
        ["tokenizer.ggml.model", "string", "gpt2"],
        ["tokenizer.ggml.tokens", "array", tokens, "string"],
        ["tokenizer.ggml.token_type", "array", tokens.map(() => 1), "int32"],
        ["tokenizer.ggml.merges", "array", tokens.slice(300, 300 + Math.floor(vocab / 2)).map((t, i) => `${t} ${tokens[(i * 7) % vocab]}`), "string"],
    ];
    return writeGguf({ kv, tensors });
}

/**
 * The header of a GGUF whose tensors {name, dtype, ne, nbytes} have no data in it, and the size of the whole
 * file: written and then extended to that size (a sparse file), it is a valid model of any size, read by
 * its header alone. Alignment 32.
 */
export function ggufHeaderOnly({ kv = [], tensors }) {
    const alignment = 32;
    const { bytes, offsets } = ggufHeader({ kv: writerKv(kv), tensors: writerTensors(tensors), alignment });
    const last = tensors.length - 1;
    const end = last < 0 ? 0 : offsets[last] + Math.ceil(tensors[last].nbytes / alignment) * alignment;
    return { header: bytes, size: bytes.length + end };
}

// Bytes of `elements` values of a GGML type (block elements, block bytes).
const BLOCKS = { F32: [1, 4], F16: [1, 2], Q4_K: [256, 144], Q5_K: [256, 176], Q6_K: [256, 210], Q8_0: [32, 34] };
const typeBytes = (dtype, elements) => (elements / BLOCKS[dtype][0]) * BLOCKS[dtype][1];

/**
 * A Qwen-sized model (tensors 16,384 wide, a 151,936-token embedding, 12-digit offsets) with a mixed
 * quantization (Q4_K_M's Q6_K in some layers' attn_v and ffn_down): header only (ggufHeaderOnly()).
 */
export function hugeGgufHeader({ layers = 6 } = {}) {
    const embd = 16384;
    const ff = 53248;
    const vocab = 151936;
    const kvDim = 2048;
    const tensor = (name, dtype, ne) => ({ name, dtype, ne, nbytes: typeBytes(dtype, ne.reduce((a, b) => a * b, 1)) });
    const tensors = [tensor("token_embd.weight", "Q4_K", [embd, vocab])];
    for (let l = 0; l < layers; ++l) {
        const more = l < 2 || l % 3 === 2; // llama.cpp's use_more_bits: the first layers and every third
        tensors.push(
            tensor(`blk.${l}.attn_norm.weight`, "F32", [embd]),
            tensor(`blk.${l}.attn_q.weight`, "Q4_K", [embd, embd]),
            tensor(`blk.${l}.attn_k.weight`, "Q4_K", [embd, kvDim]),
            tensor(`blk.${l}.attn_v.weight`, more ? "Q6_K" : "Q4_K", [embd, kvDim]),
            tensor(`blk.${l}.attn_output.weight`, "Q4_K", [embd, embd]),
            tensor(`blk.${l}.ffn_norm.weight`, "F32", [embd]),
            tensor(`blk.${l}.ffn_gate.weight`, "Q4_K", [embd, ff]),
            tensor(`blk.${l}.ffn_up.weight`, "Q4_K", [embd, ff]),
            tensor(`blk.${l}.ffn_down.weight`, more ? "Q6_K" : "Q4_K", [ff, embd]),
        );
    }
    tensors.push(tensor("output_norm.weight", "F32", [embd]), tensor("output.weight", "Q6_K", [embd, vocab]));
    const kv = [
        ["general.architecture", "string", "qwen2"],
        ["general.name", "string", "huge (header only)"],
        ["general.file_type", "uint32", 15],
        ["qwen2.block_count", "uint32", layers],
        ["qwen2.embedding_length", "uint32", embd],
    ];
    return ggufHeaderOnly({ kv, tensors });
}

/** A tensor too large to decode at once (1100 rows of 4096, Q8_0): the page reads it by row windows. */
export function wideGguf() {
    const random = rng(5);
    const rows = 1100;
    const cols = 4096;
    const values = new Float32Array(rows * cols);
    for (let r = 0; r < rows; ++r) for (let c = 0; c < cols; ++c) values[r * cols + c] = Math.sin(r / 40) * Math.cos(c / 300) + random.normal() * 0.05;
    return writeGguf({
        kv: [["general.architecture", "string", "llama"], ["general.name", "string", "wide"]],
        tensors: [{ name: "wide.weight", dtype: "Q8_0", ne: [cols, rows], values }],
    });
}

/**
 * A GGUF cut short in its tensor directory, a file that is neither GGUF nor safetensors, and a GGUF with a
 * metadata key given twice (duplicate_name at the second key, past the start of the file).
 */
export function corruptFiles() {
    const good = tinyLlamaGguf({ layers: 1, vocab: 260 });
    return {
        truncated: good.slice(0, 3000),
        badMagic: new TextEncoder().encode("this is not a model file, just some text\n".repeat(4)),
        duplicateKey: writeGguf({
            kv: [
                ["general.architecture", "string", "llama"],
                ["general.name", "string", "first"],
                ["general.name", "string", "second"],
            ],
        }),
    };
}

/**
 * A small F16 llama to quantize: 256-wide (whole K-quant blocks) except the feed-forward width `ff`, so that
 * ffn_down's rows (ff long) take llama-quantize's fallback type when ff is not a multiple of 256; GQA (4 heads,
 * 2 KV heads); F32 norms. `weights` lists every 2-D tensor with its row length, for an importance matrix.
 */
export function quantizableGguf({ layers = 2, embd = 256, ff = 320, vocab = 384, seed = 11 } = {}) {
    const random = rng(seed);
    const kv = [
        ["general.architecture", "string", "llama"],
        ["general.name", "string", "Quantizable Test Llama"],
        ["llama.context_length", "uint32", 2048],
        ["llama.embedding_length", "uint32", embd],
        ["llama.block_count", "uint32", layers],
        ["llama.feed_forward_length", "uint32", ff],
        ["llama.attention.head_count", "uint32", 4],
        ["llama.attention.head_count_kv", "uint32", 2],
        ["llama.rope.freq_base", "float32", 10000],
        ["llama.attention.layer_norm_rms_epsilon", "float32", 1e-5],
    ];
    const norm = (name) => ({ name, dtype: "F32", ne: [embd], values: Float32Array.from({ length: embd }, () => 1 + random.normal() * 0.1) });
    const weight = (name, ne, scale = 0.05) => ({ name, dtype: "F16", ne, values: randomValues(random, ne[0] * ne[1], scale) });
    const tensors = [weight("token_embd.weight", [embd, vocab], 0.02)];
    for (let l = 0; l < layers; ++l) {
        const p = `blk.${l}.`;
        tensors.push(
            norm(`${p}attn_norm.weight`),
            weight(`${p}attn_q.weight`, [embd, embd]),
            weight(`${p}attn_k.weight`, [embd, embd / 2]),
            weight(`${p}attn_v.weight`, [embd, embd / 2]),
            weight(`${p}attn_output.weight`, [embd, embd]),
            norm(`${p}ffn_norm.weight`),
            weight(`${p}ffn_gate.weight`, [embd, ff]),
            weight(`${p}ffn_up.weight`, [embd, ff]),
            weight(`${p}ffn_down.weight`, [ff, embd]),
        );
    }
    tensors.push(norm("output_norm.weight"), weight("output.weight", [embd, vocab], 0.02));
    const weights = tensors.filter((t) => t.ne.length === 2).map((t) => [t.name, t.ne[0]]);
    return { bytes: writeGguf({ kv, tensors }), weights };
}

/** llama-imatrix's legacy .dat: per [name, length], one call's importance values (positive, from `seed`). */
export function legacyImatrix(weights, { seed = 12 } = {}) {
    const random = rng(seed);
    const parts = [];
    const i32 = (v) => parts.push(new Uint8Array(new Int32Array([v]).buffer));
    i32(weights.length);
    for (const [name, length] of weights) {
        const bytes = new TextEncoder().encode(name);
        i32(bytes.length);
        parts.push(bytes);
        i32(1); // ncall
        i32(length);
        parts.push(new Uint8Array(Float32Array.from({ length }, () => 0.1 + random.uniform() * 4).buffer));
    }
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
        out.set(p, at);
        at += p.length;
    }
    return out;
}
