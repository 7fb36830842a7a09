// SPDX-License-Identifier: MIT
#include "weightstream/hf_names.h"

namespace ws {
namespace {

struct ModuleName {
    const char* hf;    // module path inside model.layers.N
    const char* gguf;  // tensor base inside blk.N
};

// Shared by every family here (tensor_mapping.py: the llama-hf names).
constexpr ModuleName kCommon[] = {
    {"input_layernorm", "attn_norm"}, {"self_attn.q_proj", "attn_q"},      {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},   {"self_attn.o_proj", "attn_output"}, {"mlp.gate_proj", "ffn_gate"},
    {"mlp.up_proj", "ffn_up"},        {"mlp.down_proj", "ffn_down"},
};
// llama, qwen2, qwen3, gemma, phi3: the norm before the MLP is called post_attention_layernorm.
constexpr ModuleName kPreMlpNorm[] = {{"post_attention_layernorm", "ffn_norm"}};
// gemma2, gemma3: four norms per block ("sandwich" norms); post_attention_layernorm is the one after attention.
constexpr ModuleName kSandwichNorms[] = {
    {"post_attention_layernorm", "post_attention_norm"},
    {"pre_feedforward_layernorm", "ffn_norm"},
    {"post_feedforward_layernorm", "post_ffw_norm"},
};
// qwen3, gemma3: RMS norms of q and k per head.
constexpr ModuleName kQkNorms[] = {{"self_attn.q_norm", "attn_q_norm"}, {"self_attn.k_norm", "attn_k_norm"}};
// phi3: fused projections, kept fused by the converter.
constexpr ModuleName kPhi3Fused[] = {{"self_attn.qkv_proj", "attn_qkv"}, {"mlp.gate_up_proj", "ffn_up"}};

template <size_t N>
bool find_module(const ModuleName (&table)[N], const std::string& module, std::string* gguf) {
    for (const ModuleName& m : table) {
        if (module == m.hf) {
            *gguf = m.gguf;
            return true;
        }
    }
    return false;
}

bool block_module(const std::string& family, const std::string& module, std::string* gguf) {
    if (find_module(kCommon, module, gguf)) return true;
    const bool sandwich = family == "gemma2" || family == "gemma3";
    if (sandwich ? find_module(kSandwichNorms, module, gguf) : find_module(kPreMlpNorm, module, gguf)) return true;
    if ((family == "qwen3" || family == "gemma3") && find_module(kQkNorms, module, gguf)) return true;
    return family == "phi3" && find_module(kPhi3Fused, module, gguf);
}

bool starts_with(const std::string& s, const char* prefix) {
    return s.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
}

bool ends_with(const std::string& s, const char* suffix) {
    const size_t n = std::char_traits<char>::length(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

const char* transform_name(Transform t) {
    switch (t) {
        case Transform::kNone:
            return nullptr;
        case Transform::kPermuteQ:
            return "permute_q";
        case Transform::kPermuteK:
            return "permute_k";
        case Transform::kPlusOne:
            return "plus_one";
        case Transform::kSplitQ:
            return "split_q";
        case Transform::kSplitK:
            return "split_k";
        case Transform::kSplitV:
            return "split_v";
        case Transform::kSplitGate:
            return "split_gate";
        case Transform::kSplitUp:
            return "split_up";
        case Transform::kVocabTrim:
            return "vocab_trim";
    }
    return nullptr;
}

bool transform_from_name(const std::string& name, Transform* out) {
    for (Transform t :
         {Transform::kPermuteQ, Transform::kPermuteK, Transform::kPlusOne, Transform::kSplitQ, Transform::kSplitK,
          Transform::kSplitV, Transform::kSplitGate, Transform::kSplitUp, Transform::kVocabTrim}) {
        if (name == transform_name(t)) {
            *out = t;
            return true;
        }
    }
    return false;
}

std::string hf_family(const std::string& arch) {
    if (arch == "llama" || arch == "mistral") return "llama";
    if (arch == "gemma3_text") return "gemma3";
    for (const char* f : {"qwen2", "qwen3", "gemma", "gemma2", "gemma3", "phi3"}) {
        if (arch == f) return f;
    }
    return "";
}

bool hf_to_gguf_name(const std::string& family, const std::string& hf_name, std::string* gguf_name,
                     Transform* transform) {
    if (family.empty() || hf_family(family) != family) return false;
    std::string name = hf_name;
    // Gemma 3 checkpoints with a vision tower nest the text model under language_model (in either position);
    // the converter removes that part of the name and skips the vision tensors.
    if (family == "gemma3") {
        const size_t at = name.find("language_model.");
        if (at != std::string::npos) name.erase(at, std::char_traits<char>::length("language_model."));
    }
    const char* suffix = ends_with(name, ".weight") ? ".weight" : ends_with(name, ".bias") ? ".bias" : nullptr;
    if (!suffix) return false;
    const std::string base = name.substr(0, name.size() - std::char_traits<char>::length(suffix));

    std::string gguf;
    if (base == "model.embed_tokens") {
        gguf = "token_embd";
    } else if (base == "model.norm") {
        gguf = "output_norm";
    } else if (base == "lm_head") {
        // Gemma ties the output to the embedding; the converter drops an lm_head some exporters add.
        if (starts_with(family, "gemma")) return false;
        gguf = "output";
    } else if (starts_with(base, "model.layers.")) {
        const size_t first = std::char_traits<char>::length("model.layers.");
        size_t end = first;
        while (end < base.size() && base[end] >= '0' && base[end] <= '9') ++end;
        // A block number as the converter writes it: decimal digits without a leading zero, then a dot.
        if (end == first || end - first > 9 || end >= base.size() || base[end] != '.') return false;
        if (base[first] == '0' && end - first > 1) return false;
        std::string module;
        if (!block_module(family, base.substr(end + 1), &module)) return false;
        gguf = "blk." + base.substr(first, end - first) + "." + module;
    } else {
        return false;
    }

    *transform = Transform::kNone;
    // LlamaModel.modify_tensors: q_proj and k_proj (weights and biases) are permuted for ggml's rotary layout.
    if (family == "llama" && ends_with(gguf, ".attn_q")) *transform = Transform::kPermuteQ;
    if (family == "llama" && ends_with(gguf, ".attn_k")) *transform = Transform::kPermuteK;
    // Gemma*Model.modify_tensors: every tensor whose name ends in "norm.weight" gets + 1.
    if (starts_with(family, "gemma") && ends_with(name, "norm.weight")) *transform = Transform::kPlusOne;
    *gguf_name = gguf + suffix;
    return true;
}

}  // namespace ws
