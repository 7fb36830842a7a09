// SPDX-License-Identifier: MIT
#include "weightstream/hf_names.h"

#include <initializer_list>

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
// The norm before the MLP is called post_attention_layernorm (every family but the sandwich-norm ones).
constexpr ModuleName kPreMlpNorm[] = {{"post_attention_layernorm", "ffn_norm"}};
// gemma2, gemma3: four norms per block ("sandwich" norms); post_attention_layernorm is the one after attention.
constexpr ModuleName kSandwichNorms[] = {
    {"post_attention_layernorm", "post_attention_norm"},
    {"pre_feedforward_layernorm", "ffn_norm"},
    {"post_feedforward_layernorm", "post_ffw_norm"},
};
// qwen3, qwen3moe, gemma3: RMS norms of q and k per head.
constexpr ModuleName kQkNorms[] = {{"self_attn.q_norm", "attn_q_norm"}, {"self_attn.k_norm", "attn_k_norm"}};
// phi3: fused projections, kept fused by the converter.
constexpr ModuleName kPhi3Fused[] = {{"self_attn.qkv_proj", "attn_qkv"}, {"mlp.gate_up_proj", "ffn_up"}};
// mixtral: the router.
constexpr ModuleName kMixtralMoe[] = {{"block_sparse_moe.gate", "ffn_gate_inp"}};
// qwen2moe: the router and the shared expert with its gate.
constexpr ModuleName kQwen2Moe[] = {
    {"mlp.gate", "ffn_gate_inp"},
    {"mlp.shared_expert_gate", "ffn_gate_inp_shexp"},
    {"mlp.shared_expert.gate_proj", "ffn_gate_shexp"},
    {"mlp.shared_expert.up_proj", "ffn_up_shexp"},
    {"mlp.shared_expert.down_proj", "ffn_down_shexp"},
};
// qwen3moe: the router only.
constexpr ModuleName kQwen3Moe[] = {{"mlp.gate", "ffn_gate_inp"}};
// The per-expert matrices (inside <experts>.E), in the order the converter stacks and emits them.
constexpr ModuleName kMixtralExperts[] = {{"w1", "ffn_gate_exps"}, {"w2", "ffn_down_exps"}, {"w3", "ffn_up_exps"}};
constexpr ModuleName kQwenExperts[] = {
    {"down_proj", "ffn_down_exps"}, {"gate_proj", "ffn_gate_exps"}, {"up_proj", "ffn_up_exps"}};

struct Modules {
    const ModuleName* names = nullptr;
    size_t size = 0;
};
template <size_t N>
constexpr Modules modules(const ModuleName (&table)[N]) {
    return {table, N};
}

// One family: the names that select it, the block's modules beyond kCommon, what the converter does to values,
// and the keys its model class writes.
struct Family {
    const char* name;                            // the GGUF architecture
    std::initializer_list<const char*> aliases;  // config.json model_types that convert as it (besides name)
    bool sandwich_norms;                         // kSandwichNorms instead of kPreMlpNorm
    Modules extra;                               // modules of the block beyond the norms and kCommon
    bool qk_norms;                               // kQkNorms
    const char* experts;                         // the experts' module path inside model.layers.N, or nullptr
    Modules expert_kinds;                        // the per-expert matrices, in emission order
    bool permute_qk;                             // LlamaModel: q/k rows permuted for ggml's rotary layout
    bool plus_one;                               // Gemma*Model: norm weights + 1
    bool tied_output;                            // the output is the embedding: an lm_head is dropped
    HfFamilyKeys keys;
};

// clang-format off
const Family kFamilies[] = {
    {"llama",    {"mistral", "mixtral"}, false, modules(kMixtralMoe), false, "block_sparse_moe.experts",
                 modules(kMixtralExperts), true,  false, false, {true, true, false}},
    {"qwen2",    {},              false, {},                    false, nullptr, {}, false, false, false, {false, true, false}},
    {"qwen3",    {},              false, {},                    true,  nullptr, {}, false, false, false, {false, true, false}},
    {"qwen2moe", {"qwen2_moe"},   false, modules(kQwen2Moe),    false, "mlp.experts", modules(kQwenExperts),
                 false, false, false, {false, true, true}},
    {"qwen3moe", {"qwen3_moe"},   false, modules(kQwen3Moe),    true,  "mlp.experts", modules(kQwenExperts),
                 false, false, false, {false, true, true}},
    {"gemma",    {},              false, {},                    false, nullptr, {}, false, true,  true,  {false, false, false}},
    {"gemma2",   {},              true,  {},                    false, nullptr, {}, false, true,  true,  {false, true, false}},
    {"gemma3",   {"gemma3_text"}, true,  {},                    true,  nullptr, {}, false, true,  true,  {false, true, false}},
    {"phi3",     {},              false, modules(kPhi3Fused),   false, nullptr, {}, false, false, false, {false, true, false}},
};
// clang-format on

const Family* find_family(const std::string& arch) {
    for (const Family& f : kFamilies) {
        if (arch == f.name) return &f;
        for (const char* alias : f.aliases) {
            if (arch == alias) return &f;
        }
    }
    return nullptr;
}

bool find_module(Modules table, const std::string& module, std::string* gguf) {
    for (size_t k = 0; k < table.size; ++k) {
        if (module == table.names[k].hf) {
            *gguf = table.names[k].gguf;
            return true;
        }
    }
    return false;
}

bool starts_with(const std::string& s, const char* prefix) {
    return s.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
}

bool ends_with(const std::string& s, const char* suffix) {
    const size_t n = std::char_traits<char>::length(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Decimal digits at s[at...] as the converter writes an index: no leading zero, at most 9 digits, followed by a
// dot. Returns the index of the dot, or 0 when there is no such number.
size_t index_end(const std::string& s, size_t at) {
    size_t end = at;
    while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
    if (end == at || end - at > 9 || end >= s.size() || s[end] != '.') return 0;
    if (s[at] == '0' && end - at > 1) return 0;
    return end;
}

// The GGUF module of `module` (the path inside model.layers.N) in family f; for a per-expert matrix also its
// place (when `expert` is given).
bool block_module(const Family& f, const std::string& module, std::string* gguf, HfExpert* expert) {
    if (find_module(modules(kCommon), module, gguf)) return true;
    if (find_module(f.sandwich_norms ? modules(kSandwichNorms) : modules(kPreMlpNorm), module, gguf)) return true;
    if (f.qk_norms && find_module(modules(kQkNorms), module, gguf)) return true;
    if (find_module(f.extra, module, gguf)) return true;
    if (!f.experts || !expert || !starts_with(module, f.experts) ||
        module.size() <= std::char_traits<char>::length(f.experts) + 1 ||
        module[std::char_traits<char>::length(f.experts)] != '.') {
        return false;
    }
    const size_t first = std::char_traits<char>::length(f.experts) + 1;
    const size_t end = index_end(module, first);
    if (end == 0) return false;
    const std::string kind = module.substr(end + 1);
    for (uint32_t k = 0; k < f.expert_kinds.size; ++k) {
        if (kind == f.expert_kinds.names[k].hf) {
            *gguf = f.expert_kinds.names[k].gguf;
            expert->index = std::stoull(module.substr(first, end - first));
            expert->order = k;
            expert->kinds = static_cast<uint32_t>(f.expert_kinds.size);
            return true;
        }
    }
    return false;
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
        case Transform::kExpert:
            return "expert";
    }
    return nullptr;
}

bool transform_from_name(const std::string& name, Transform* out) {
    for (Transform t :
         {Transform::kPermuteQ, Transform::kPermuteK, Transform::kPlusOne, Transform::kSplitQ, Transform::kSplitK,
          Transform::kSplitV, Transform::kSplitGate, Transform::kSplitUp, Transform::kVocabTrim, Transform::kExpert}) {
        if (name == transform_name(t)) {
            *out = t;
            return true;
        }
    }
    return false;
}

std::string hf_family(const std::string& arch) {
    const Family* f = find_family(arch);
    return f ? f->name : "";
}

std::string hf_known_model_types() {
    std::string list;
    for (const Family& f : kFamilies) {
        list += (list.empty() ? "" : ", ") + std::string(f.name);
        for (const char* alias : f.aliases) list += std::string(", ") + alias;
    }
    return list;
}

HfFamilyKeys hf_family_keys(const std::string& family) {
    const Family* f = find_family(family);
    return f && family == f->name ? f->keys : HfFamilyKeys{false, false, false};
}

bool hf_to_gguf_name(const std::string& family, const std::string& hf_name, std::string* gguf_name,
                     Transform* transform, HfExpert* expert) {
    const Family* f = find_family(family);
    if (!f || family != f->name) return false;
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
    HfExpert place;
    bool per_expert = false;
    if (base == "model.embed_tokens") {
        gguf = "token_embd";
    } else if (base == "model.norm") {
        gguf = "output_norm";
    } else if (base == "lm_head") {
        // Gemma ties the output to the embedding; the converter drops an lm_head some exporters add.
        if (f->tied_output) return false;
        gguf = "output";
    } else if (starts_with(base, "model.layers.")) {
        const size_t first = std::char_traits<char>::length("model.layers.");
        const size_t end = index_end(base, first);
        if (end == 0) return false;
        std::string module;
        place.index = ~uint64_t(0);
        if (!block_module(*f, base.substr(end + 1), &module, expert ? &place : nullptr)) return false;
        per_expert = place.index != ~uint64_t(0);
        // The converter stacks only the experts' weights.
        if (per_expert && std::string(suffix) != ".weight") return false;
        gguf = "blk." + base.substr(first, end - first) + "." + module;
    } else {
        return false;
    }

    *transform = Transform::kNone;
    // LlamaModel.modify_tensors: q_proj and k_proj (weights and biases) are permuted for ggml's rotary layout.
    if (f->permute_qk && ends_with(gguf, ".attn_q")) *transform = Transform::kPermuteQ;
    if (f->permute_qk && ends_with(gguf, ".attn_k")) *transform = Transform::kPermuteK;
    // Gemma*Model.modify_tensors: every tensor whose name ends in "norm.weight" gets + 1.
    if (f->plus_one && ends_with(name, "norm.weight")) *transform = Transform::kPlusOne;
    if (per_expert) *expert = place;
    *gguf_name = gguf + suffix;
    return true;
}

}  // namespace ws
