// SPDX-License-Identifier: MIT
// Fixtures for the comparison tests: a tiny Hugging Face-style checkpoint of one family (HF names, BF16,
// config.json) and the GGUF that llama.cpp's converter would make of it, written with the project's own writers
// (safetensors_writer, gguf_writer, quantize). The conversion rules are written out here independently of
// core/hf/hf_names.cpp (the names as literal patterns, the permutation as the reshape/swapaxes of
// convert_hf_to_gguf.py), and each can be broken on purpose, one mistake at a time.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "weightstream/dequant.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/model_info.h"
#include "weightstream/quantize.h"
#include "weightstream/safetensors_writer.h"

namespace ws_test {

// One tensor of the checkpoint: HF name, shape outermost first, the values (exactly what the file holds).
struct HfTensor {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> values;
    ws::DType dtype = ws::DType::BF16;
};

struct Family {
    std::string name;  // config.json model_type and GGUF general.architecture
    int64_t n_embd = 64, n_head = 4, n_head_kv = 2, n_ff = 128, n_vocab = 96, n_layer = 2;
    int64_t head_dim() const { return n_embd / n_head; }
};

// A deliberate conversion mistake (or none).
enum class Mistake {
    kNone,
    kNoPermute,     // q/k written as in HF
    kPermuteTwice,  // q/k permuted twice
    kTransposed,    // ffn_down data transposed, shape kept
    kNoPlusOne,     // gemma norms without + 1
    kPlusOneTwice,  // gemma norms + 2
    kScaled,        // attn_output times 0.25
};

inline std::vector<float> round_trip(ws::DType t, const std::vector<float>& v) {
    uint64_t bytes = 0;
    ws::dtype_bytes_for(t, v.size(), &bytes);
    std::vector<uint8_t> enc(bytes);
    if (!ws::quantize(t, v.data(), v.size(), enc.data()).ok()) throw std::runtime_error("quantize");
    std::vector<float> out(v.size());
    if (!ws::dequantize(t, enc.data(), v.size(), out.data()).ok()) throw std::runtime_error("dequantize");
    return out;
}

inline std::vector<uint8_t> encode(ws::DType t, const std::vector<float>& v) {
    uint64_t bytes = 0;
    ws::dtype_bytes_for(t, v.size(), &bytes);
    std::vector<uint8_t> enc(bytes);
    if (!ws::quantize(t, v.data(), v.size(), enc.data()).ok()) throw std::runtime_error("quantize");
    return enc;
}

// The checkpoint of a family: seeded normal weights rounded to BF16; norms near 1 (gemma: near 0, as its
// checkpoints store w for x * (1 + w)).
inline std::vector<HfTensor> make_checkpoint(const Family& f, uint32_t seed = 1) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    const bool gemma = f.name.rfind("gemma", 0) == 0;
    auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
        HfTensor t{name, {rows, cols}, std::vector<float>(static_cast<size_t>(rows * cols)), ws::DType::BF16};
        for (float& v : t.values) v = normal(rng);
        t.values = round_trip(ws::DType::BF16, t.values);
        return t;
    };
    auto vector = [&](const std::string& name, int64_t n, bool norm) {
        HfTensor t{name, {n}, std::vector<float>(static_cast<size_t>(n)), ws::DType::BF16};
        for (float& v : t.values) v = (norm && !gemma ? 1.0f : 0.0f) + 5 * normal(rng);
        t.values = round_trip(ws::DType::BF16, t.values);
        return t;
    };
    const int64_t hd = f.head_dim(), q_rows = f.n_head * hd, kv_rows = f.n_head_kv * hd;
    std::vector<HfTensor> ts;
    ts.push_back(matrix("model.embed_tokens.weight", f.n_vocab, f.n_embd));
    for (int64_t l = 0; l < f.n_layer; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        ts.push_back(vector(p + "input_layernorm.weight", f.n_embd, true));
        if (f.name == "phi3") {
            ts.push_back(matrix(p + "self_attn.qkv_proj.weight", q_rows + 2 * kv_rows, f.n_embd));
        } else {
            ts.push_back(matrix(p + "self_attn.q_proj.weight", q_rows, f.n_embd));
            ts.push_back(matrix(p + "self_attn.k_proj.weight", kv_rows, f.n_embd));
            ts.push_back(matrix(p + "self_attn.v_proj.weight", kv_rows, f.n_embd));
        }
        if (f.name == "qwen2") {
            ts.push_back(vector(p + "self_attn.q_proj.bias", q_rows, false));
            ts.push_back(vector(p + "self_attn.k_proj.bias", kv_rows, false));
            ts.push_back(vector(p + "self_attn.v_proj.bias", kv_rows, false));
        }
        if (f.name == "gemma3") {
            ts.push_back(vector(p + "self_attn.q_norm.weight", hd, true));
            ts.push_back(vector(p + "self_attn.k_norm.weight", hd, true));
        }
        ts.push_back(matrix(p + "self_attn.o_proj.weight", f.n_embd, q_rows));
        ts.push_back(vector(p + "post_attention_layernorm.weight", f.n_embd, true));
        if (f.name == "gemma3") {
            ts.push_back(vector(p + "pre_feedforward_layernorm.weight", f.n_embd, true));
            ts.push_back(vector(p + "post_feedforward_layernorm.weight", f.n_embd, true));
        }
        if (f.name == "phi3") {
            ts.push_back(matrix(p + "mlp.gate_up_proj.weight", 2 * f.n_ff, f.n_embd));
        } else {
            ts.push_back(matrix(p + "mlp.gate_proj.weight", f.n_ff, f.n_embd));
            ts.push_back(matrix(p + "mlp.up_proj.weight", f.n_ff, f.n_embd));
        }
        ts.push_back(matrix(p + "mlp.down_proj.weight", f.n_embd, f.n_ff));
    }
    ts.push_back(vector("model.norm.weight", f.n_embd, true));
    if (!gemma) ts.push_back(matrix("lm_head.weight", f.n_vocab, f.n_embd));
    return ts;
}

inline std::string config_json(const Family& f) {
    return "{\"architectures\": [\"X\"], \"model_type\": \"" + f.name +
           "\", \"num_attention_heads\": " + std::to_string(f.n_head) +
           ", \"num_key_value_heads\": " + std::to_string(f.n_head_kv) + "}";
}

inline ws::TensorInfo info_of(const std::string& name, ws::DType t, const std::vector<int64_t>& shape) {
    ws::TensorInfo info;
    info.name = name;
    info.dtype = t;
    info.n_dims = static_cast<uint32_t>(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) info.ne[i] = shape[shape.size() - 1 - i];
    return info;
}

inline std::vector<uint8_t> write_safetensors(const std::vector<HfTensor>& ts) {
    std::vector<ws::TensorInfo> infos;
    std::vector<std::vector<uint8_t>> data;
    for (const HfTensor& t : ts) {
        infos.push_back(info_of(t.name, t.dtype, t.shape));
        data.push_back(encode(t.dtype, t.values));
    }
    auto bytes = ws::safetensors_write({}, infos, data);
    if (!bytes.ok()) throw std::runtime_error("safetensors_write");
    return bytes.value();
}

// convert_hf_to_gguf.py's permute: rows viewed as (heads, 2, hd/2, cols), axes 1 and 2 swapped.
inline std::vector<float> permute_rows(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t heads) {
    const int64_t hd = rows / heads;
    std::vector<float> out(w.size());
    for (int64_t h = 0; h < heads; ++h) {
        for (int64_t s = 0; s < 2; ++s) {
            for (int64_t j = 0; j < hd / 2; ++j) {
                const int64_t from = h * hd + s * (hd / 2) + j, to = h * hd + j * 2 + s;
                std::memcpy(&out[static_cast<size_t>(to * cols)], &w[static_cast<size_t>(from * cols)],
                            static_cast<size_t>(cols) * sizeof(float));
            }
        }
    }
    return out;
}

// The GGUF name of an HF tensor, spelled out per family as llama.cpp's tensor_mapping.py has them.
inline std::string gguf_name_of(const Family& f, const std::string& hf) {
    const bool sandwich = f.name == "gemma2" || f.name == "gemma3";
    if (hf == "model.embed_tokens.weight") return "token_embd.weight";
    if (hf == "model.norm.weight") return "output_norm.weight";
    if (hf == "lm_head.weight") return "output.weight";
    const size_t dot = hf.find('.', 13);
    const std::string blk = "blk." + hf.substr(13, dot - 13) + ".";
    const std::string rest = hf.substr(dot + 1);
    const std::pair<const char*, const char*> table[] = {
        {"input_layernorm.weight", "attn_norm.weight"},
        {"self_attn.q_proj.weight", "attn_q.weight"},
        {"self_attn.k_proj.weight", "attn_k.weight"},
        {"self_attn.v_proj.weight", "attn_v.weight"},
        {"self_attn.q_proj.bias", "attn_q.bias"},
        {"self_attn.k_proj.bias", "attn_k.bias"},
        {"self_attn.v_proj.bias", "attn_v.bias"},
        {"self_attn.q_norm.weight", "attn_q_norm.weight"},
        {"self_attn.k_norm.weight", "attn_k_norm.weight"},
        {"self_attn.qkv_proj.weight", "attn_qkv.weight"},
        {"self_attn.o_proj.weight", "attn_output.weight"},
        {"post_attention_layernorm.weight", sandwich ? "post_attention_norm.weight" : "ffn_norm.weight"},
        {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
        {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
        {"mlp.gate_proj.weight", "ffn_gate.weight"},
        {"mlp.up_proj.weight", "ffn_up.weight"},
        {"mlp.gate_up_proj.weight", "ffn_up.weight"},
        {"mlp.down_proj.weight", "ffn_down.weight"},
    };
    for (const auto& e : table) {
        if (rest == e.first) return blk + e.second;
    }
    throw std::runtime_error("no GGUF name for " + hf);
}

// One converted tensor: GGUF name, shape outermost first, the float32 values before encoding, the type.
struct GgufTensor {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> values;
    ws::DType dtype;
};

// What the converter makes of the checkpoint: matrices in `matrix_type` (Q8_0 by default), vectors F32.
// `split_phi3` writes phi3's fused projections as separate attn_q/k/v and ffn_gate/ffn_up tensors.
inline std::vector<GgufTensor> convert(const Family& f, const std::vector<HfTensor>& hf, Mistake mistake,
                                       ws::DType matrix_type = ws::DType::Q8_0, bool split_phi3 = false) {
    std::vector<GgufTensor> out;
    const bool gemma = f.name.rfind("gemma", 0) == 0;
    for (const HfTensor& t : hf) {
        GgufTensor g{gguf_name_of(f, t.name), t.shape, t.values, t.shape.size() == 2 ? matrix_type : ws::DType::F32};
        const bool is_q = t.name.find("q_proj") != std::string::npos;
        const bool is_k = t.name.find("k_proj") != std::string::npos;
        if (f.name == "llama" && (is_q || is_k)) {
            const int64_t heads = is_q ? f.n_head : f.n_head_kv;
            const int64_t cols = t.shape.size() == 2 ? t.shape[1] : 1;
            const int times = mistake == Mistake::kNoPermute ? 0 : mistake == Mistake::kPermuteTwice ? 2 : 1;
            for (int k = 0; k < times; ++k) g.values = permute_rows(g.values, t.shape[0], cols, heads);
        }
        const bool norm = t.name.size() > 11 && t.name.compare(t.name.size() - 11, 11, "norm.weight") == 0;
        if (gemma && norm) {
            const int times = mistake == Mistake::kNoPlusOne ? 0 : mistake == Mistake::kPlusOneTwice ? 2 : 1;
            for (int k = 0; k < times; ++k) {
                for (float& v : g.values) v = v + 1.0f;
            }
        }
        if (mistake == Mistake::kTransposed && t.name == "model.layers.0.mlp.down_proj.weight") {
            const int64_t rows = t.shape[0], cols = t.shape[1];
            std::vector<float> tr(g.values.size());
            for (int64_t r = 0; r < rows; ++r) {
                for (int64_t c = 0; c < cols; ++c) tr[static_cast<size_t>(c * rows + r)] = g.values[r * cols + c];
            }
            g.values = tr;
        }
        if (mistake == Mistake::kScaled && t.name == "model.layers.1.self_attn.o_proj.weight") {
            for (float& v : g.values) v *= 0.25f;
        }
        if (f.name == "phi3" && split_phi3 && t.name.find("qkv_proj") != std::string::npos) {
            const int64_t q = f.n_head * f.head_dim(), kv = f.n_head_kv * f.head_dim(), cols = t.shape[1];
            const std::string blk = g.name.substr(0, g.name.size() - std::string("attn_qkv.weight").size());
            int64_t row0 = 0;
            for (const auto& part : {std::make_pair("attn_q.weight", q), std::make_pair("attn_k.weight", kv),
                                     std::make_pair("attn_v.weight", kv)}) {
                out.push_back(
                    {blk + part.first,
                     {part.second, cols},
                     std::vector<float>(g.values.begin() + row0 * cols, g.values.begin() + (row0 + part.second) * cols),
                     matrix_type});
                row0 += part.second;
            }
            continue;
        }
        if (f.name == "phi3" && split_phi3 && t.name.find("gate_up_proj") != std::string::npos) {
            const int64_t half = t.shape[0] / 2, cols = t.shape[1];
            const std::string blk = g.name.substr(0, g.name.size() - std::string("ffn_up.weight").size());
            out.push_back({blk + "ffn_gate.weight",
                           {half, cols},
                           std::vector<float>(g.values.begin(), g.values.begin() + half * cols),
                           matrix_type});
            out.push_back({blk + "ffn_up.weight",
                           {half, cols},
                           std::vector<float>(g.values.begin() + half * cols, g.values.end()),
                           matrix_type});
            continue;
        }
        out.push_back(std::move(g));
    }
    return out;
}

inline ws::MetadataEntry u32_entry(const std::string& key, uint32_t v) {
    ws::MetadataEntry e;
    e.key = key;
    e.value.type = ws::ValueType::kUint32;
    e.value.bits = v;
    return e;
}

inline std::vector<uint8_t> write_gguf(const Family& f, const std::vector<GgufTensor>& ts,
                                       std::vector<ws::MetadataEntry> extra = {}) {
    std::vector<ws::MetadataEntry> meta = {
        ws::string_entry("general.architecture", f.name), u32_entry(f.name + ".attention.head_count", f.n_head),
        u32_entry(f.name + ".attention.head_count_kv", f.n_head_kv), u32_entry(f.name + ".embedding_length", f.n_embd)};
    for (auto& e : extra) meta.push_back(e);
    std::vector<ws::TensorInfo> infos;
    std::vector<std::vector<uint8_t>> data;
    for (const GgufTensor& t : ts) {
        infos.push_back(info_of(t.name, t.dtype, t.shape));
        data.push_back(encode(t.dtype, t.values));
    }
    auto bytes = ws::gguf_write(meta, infos, data);
    if (!bytes.ok()) throw std::runtime_error("gguf_write");
    return bytes.value();
}

}  // namespace ws_test
