// SPDX-License-Identifier: MIT
// Fixtures for compare(): a tiny Hugging Face-style llama checkpoint (HF names, BF16, config.json) and the F32
// GGUF llama.cpp's converter makes of it, written with the tests' own writers. The conversion rules are written
// out here on their own (the names as literal patterns, the Q/K permutation as convert_hf_to_gguf.py's
// reshape(n_head, 2, rows / n_head / 2, cols).swapaxes(1, 2)), independently of core/hf/hf_names.cpp, and can be
// broken on purpose. Quantized GGUFs are made from the F32 one by `weightstream convert --dtype`.
import { writeGguf } from "./gguf-writer.mjs";
import { rng } from "./helpers.mjs";
import { writeSafetensors } from "./safetensors-writer.mjs";

export const LLAMA = { nEmbd: 256, nHead: 4, nHeadKv: 2, nFf: 512, nVocab: 96, nLayer: 2 };

const GGML_F32 = 0;

// Round to the nearest bfloat16 (ties to even), as torch stores a checkpoint.
function toBf16Bits(value) {
    const f = new Float32Array([value]);
    const u = new Uint32Array(f.buffer)[0];
    return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

function bf16ToF32(bits) {
    return new Float32Array(new Uint32Array([bits << 16]).buffer)[0];
}

/** The checkpoint: [{name, shape (outermost first), values: Float32Array (exact bf16 values)}] and config. */
export function llamaCheckpoint(f = LLAMA, seed = 1) {
    const random = rng(seed);
    // Sum of uniforms: roughly normal, sd about 0.02.
    const normal = () => (random() + random() + random() - 1.5) * 0.04;
    const tensor = (name, shape, base = 0) => {
        const n = shape.reduce((x, y) => x * y, 1);
        const values = new Float32Array(n);
        for (let i = 0; i < n; ++i) values[i] = bf16ToF32(toBf16Bits(base + normal()));
        return { name, shape, values };
    };
    const hd = f.nEmbd / f.nHead;
    const ts = [tensor("model.embed_tokens.weight", [f.nVocab, f.nEmbd])];
    for (let l = 0; l < f.nLayer; ++l) {
        const p = `model.layers.${l}.`;
        ts.push(tensor(`${p}input_layernorm.weight`, [f.nEmbd], 1));
        ts.push(tensor(`${p}self_attn.q_proj.weight`, [f.nHead * hd, f.nEmbd]));
        ts.push(tensor(`${p}self_attn.k_proj.weight`, [f.nHeadKv * hd, f.nEmbd]));
        ts.push(tensor(`${p}self_attn.v_proj.weight`, [f.nHeadKv * hd, f.nEmbd]));
        ts.push(tensor(`${p}self_attn.o_proj.weight`, [f.nEmbd, f.nHead * hd]));
        ts.push(tensor(`${p}post_attention_layernorm.weight`, [f.nEmbd], 1));
        ts.push(tensor(`${p}mlp.gate_proj.weight`, [f.nFf, f.nEmbd]));
        ts.push(tensor(`${p}mlp.up_proj.weight`, [f.nFf, f.nEmbd]));
        ts.push(tensor(`${p}mlp.down_proj.weight`, [f.nEmbd, f.nFf]));
    }
    ts.push(tensor("model.norm.weight", [f.nEmbd], 1));
    ts.push(tensor("lm_head.weight", [f.nVocab, f.nEmbd]));
    const config = {
        architectures: ["LlamaForCausalLM"],
        model_type: "llama",
        num_attention_heads: f.nHead,
        num_key_value_heads: f.nHeadKv,
    };
    return { family: f, tensors: ts, config };
}

/** model.safetensors (BF16) of the checkpoint. */
export function hfSafetensors(checkpoint) {
    return writeSafetensors({
        tensors: checkpoint.tensors.map((t) => {
            const bits = new Uint16Array(t.values.length);
            for (let i = 0; i < bits.length; ++i) bits[i] = toBf16Bits(t.values[i]);
            return { name: t.name, dtype: "BF16", shape: t.shape, data: new Uint8Array(bits.buffer) };
        }),
    });
}

const GGUF_NAMES = [
    [/^model\.embed_tokens\.weight$/, () => "token_embd.weight"],
    [/^model\.norm\.weight$/, () => "output_norm.weight"],
    [/^lm_head\.weight$/, () => "output.weight"],
    [/^model\.layers\.(\d+)\.input_layernorm\.weight$/, (l) => `blk.${l}.attn_norm.weight`],
    [/^model\.layers\.(\d+)\.self_attn\.q_proj\.weight$/, (l) => `blk.${l}.attn_q.weight`],
    [/^model\.layers\.(\d+)\.self_attn\.k_proj\.weight$/, (l) => `blk.${l}.attn_k.weight`],
    [/^model\.layers\.(\d+)\.self_attn\.v_proj\.weight$/, (l) => `blk.${l}.attn_v.weight`],
    [/^model\.layers\.(\d+)\.self_attn\.o_proj\.weight$/, (l) => `blk.${l}.attn_output.weight`],
    [/^model\.layers\.(\d+)\.post_attention_layernorm\.weight$/, (l) => `blk.${l}.ffn_norm.weight`],
    [/^model\.layers\.(\d+)\.mlp\.gate_proj\.weight$/, (l) => `blk.${l}.ffn_gate.weight`],
    [/^model\.layers\.(\d+)\.mlp\.up_proj\.weight$/, (l) => `blk.${l}.ffn_up.weight`],
    [/^model\.layers\.(\d+)\.mlp\.down_proj\.weight$/, (l) => `blk.${l}.ffn_down.weight`],
];

function ggufName(hf) {
    for (const [re, name] of GGUF_NAMES) {
        const m = re.exec(hf);
        if (m) return name(m[1]);
    }
    throw new Error(`no GGUF name for ${hf}`);
}

// convert_hf_to_gguf.py's permute(): rows of each head reordered from [2, half] to [half, 2].
function permute(values, rows, cols, heads) {
    const out = new Float32Array(values.length);
    const half = rows / heads / 2;
    for (let h = 0; h < heads; ++h) {
        for (let two = 0; two < 2; ++two) {
            for (let j = 0; j < half; ++j) {
                const from = h * 2 * half + two * half + j;
                const to = h * 2 * half + j * 2 + two;
                out.set(values.subarray(from * cols, (from + 1) * cols), to * cols);
            }
        }
    }
    return out;
}

/**
 * The F32 GGUF of the checkpoint. mistake: undefined, "no_permute" (q/k written as in HF) or "shape" (the
 * first attn_v gets one row less, as a broken converter might write it).
 */
export function llamaGguf(checkpoint, { mistake } = {}) {
    const f = checkpoint.family;
    const tensors = checkpoint.tensors.map((t) => {
        let values = t.values;
        let shape = t.shape;
        const name = ggufName(t.name);
        if (mistake !== "no_permute" && /attn_[qk]\.weight$/.test(name)) {
            values = permute(values, shape[0], shape[1], name.includes("attn_q") ? f.nHead : f.nHeadKv);
        }
        if (mistake === "shape" && name === "blk.0.attn_v.weight") {
            shape = [shape[0] - 1, shape[1]];
            values = values.subarray(0, shape[0] * shape[1]);
        }
        const data = new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));
        return { name, type: GGML_F32, ne: [...shape].reverse(), data };
    });
    return writeGguf({
        kv: [
            { key: "general.architecture", type: "string", value: "llama" },
            { key: "general.name", type: "string", value: "tiny llama" },
            { key: "llama.attention.head_count", type: "uint32", value: f.nHead },
            { key: "llama.attention.head_count_kv", type: "uint32", value: f.nHeadKv },
            { key: "llama.embedding_length", type: "uint32", value: f.nEmbd },
        ],
        tensors,
    });
}

/**
 * A tiny Gemma checkpoint in F16 whose norm weights are not exact once + 1 is added in float32: values (1 + m /
 * 1024) * 2^-7 (m = 1, 2, ...), multiples of 2^-17, while F16 near 1 holds multiples of 2^-10. The converter
 * adds in half precision, so its + 1 rounds them: {files: {"model.safetensors", "config.json"}, norms: [{name,
 * values (the stored F16 values)}]}.
 */
export function gemmaF16Checkpoint() {
    const nEmbd = 64;
    const f16 = (m) => 0x2000 | (m % 1024); // exponent 8: (1 + m / 1024) * 2^-7
    const f16Value = (bits) => (1 + (bits & 0x3ff) / 1024) * 2 ** (((bits >> 10) & 0x1f) - 15);
    const tensors = [];
    const norms = [];
    const add = (name, shape, bitsOf) => {
        const n = shape.reduce((x, y) => x * y, 1);
        const bits = new Uint16Array(n);
        for (let i = 0; i < n; ++i) bits[i] = bitsOf(i);
        tensors.push({ name, dtype: "F16", shape, data: new Uint8Array(bits.buffer) });
        return Float32Array.from(bits, f16Value);
    };
    add("model.embed_tokens.weight", [32, nEmbd], (i) => f16(i * 7 + 3));
    for (const name of ["model.layers.0.input_layernorm.weight", "model.norm.weight"]) {
        norms.push({ name, values: add(name, [nEmbd], (i) => f16(i * 13 + 1)) });
    }
    const config = { architectures: ["GemmaForCausalLM"], model_type: "gemma", num_attention_heads: 4 };
    return {
        files: { "model.safetensors": writeSafetensors({ tensors }), "config.json": JSON.stringify(config) },
        norms,
    };
}
