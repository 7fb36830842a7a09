// SPDX-License-Identifier: MIT
#include "weightstream/quant_recipe.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>

#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"

namespace ws {
namespace {

struct FtypeName {
    const char* name;
    Ftype ftype;
};

// llama-quantize's QUANT_OPTIONS, in its order (a numeric id names the first entry with that id).
constexpr FtypeName kFtypeNames[] = {
    {"Q4_0", Ftype::kQ4_0},       {"Q4_1", Ftype::kQ4_1},     {"MXFP4_MOE", Ftype::kMXFP4_MOE},
    {"Q5_0", Ftype::kQ5_0},       {"Q5_1", Ftype::kQ5_1},     {"IQ2_XXS", Ftype::kIQ2_XXS},
    {"IQ2_XS", Ftype::kIQ2_XS},   {"IQ2_S", Ftype::kIQ2_S},   {"IQ2_M", Ftype::kIQ2_M},
    {"IQ1_S", Ftype::kIQ1_S},     {"IQ1_M", Ftype::kIQ1_M},   {"TQ1_0", Ftype::kTQ1_0},
    {"TQ2_0", Ftype::kTQ2_0},     {"Q2_K", Ftype::kQ2_K},     {"Q2_K_S", Ftype::kQ2_K_S},
    {"IQ3_XXS", Ftype::kIQ3_XXS}, {"IQ3_S", Ftype::kIQ3_S},   {"IQ3_M", Ftype::kIQ3_M},
    {"Q3_K", Ftype::kQ3_K_M},     {"IQ3_XS", Ftype::kIQ3_XS}, {"Q3_K_S", Ftype::kQ3_K_S},
    {"Q3_K_M", Ftype::kQ3_K_M},   {"Q3_K_L", Ftype::kQ3_K_L}, {"IQ4_NL", Ftype::kIQ4_NL},
    {"IQ4_XS", Ftype::kIQ4_XS},   {"Q4_K", Ftype::kQ4_K_M},   {"Q4_K_S", Ftype::kQ4_K_S},
    {"Q4_K_M", Ftype::kQ4_K_M},   {"Q5_K", Ftype::kQ5_K_M},   {"Q5_K_S", Ftype::kQ5_K_S},
    {"Q5_K_M", Ftype::kQ5_K_M},   {"Q6_K", Ftype::kQ6_K},     {"Q8_0", Ftype::kQ8_0},
    {"F16", Ftype::kF16},         {"BF16", Ftype::kBF16},     {"F32", Ftype::kAllF32},
};

bool iequals(const std::string& a, const char* b) {
    const size_t n = std::strlen(b);
    if (a.size() != n) return false;
    for (size_t i = 0; i < n; ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

// The layer index as `sscanf(name, "blk.%d.", &i)` reads it: after "blk.", optional white space, an
// optional sign and at least one digit (what follows the digits does not matter).
bool parse_layer(const std::string& name, int* layer) {
    if (name.compare(0, 4, "blk.") != 0) return false;
    size_t i = 4;
    while (i < name.size() && std::isspace(static_cast<unsigned char>(name[i]))) ++i;
    bool negative = false;
    if (i < name.size() && (name[i] == '+' || name[i] == '-')) negative = name[i++] == '-';
    if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return false;
    int64_t v = 0;
    for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
        v = std::min<int64_t>(v * 10 + (name[i] - '0'), int64_t(1) << 40);  // saturate; glibc gives INT_MAX-ish
    }
    v = negative ? -v : v;
    *layer = static_cast<int>(std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, v)));
    return true;
}

int layer_of(const std::string& name) {
    int layer = -1;
    return parse_layer(name, &layer) ? layer : -1;
}

enum class Category {
    kTokenEmbd,
    kAttnQ,
    kAttnV,
    kAttnK,
    kAttnQkv,
    kAttnKvB,
    kAttnOutput,
    kFfnUp,
    kFfnGate,
    kFfnDown,
    kOutput,
    kOther
};

bool contains(const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
}

bool is_token_embd(const std::string& name) {
    return name == "token_embd.weight" || name == "per_layer_token_embd.weight";
}

Category category_of(const std::string& name) {
    if (name == "output.weight") return Category::kOutput;
    if (is_token_embd(name)) return Category::kTokenEmbd;
    if (contains(name, "attn_qkv.weight")) return Category::kAttnQkv;
    if (contains(name, "attn_kv_b.weight")) return Category::kAttnKvB;
    if (contains(name, "attn_v.weight")) return Category::kAttnV;
    if (contains(name, "attn_k.weight")) return Category::kAttnK;
    if (contains(name, "attn_q.weight")) return Category::kAttnQ;
    if (contains(name, "attn_output.weight")) return Category::kAttnOutput;
    if (contains(name, "ffn_up")) return Category::kFfnUp;
    if (contains(name, "ffn_gate")) return Category::kFfnGate;
    if (contains(name, "ffn_down")) return Category::kFfnDown;
    return Category::kOther;
}

bool is_attn_v_like(Category c) {
    return c == Category::kAttnV || c == Category::kAttnQkv || c == Category::kAttnKvB;
}

bool allows_quantization(const RecipeOptions& o, const TensorInfo& t) {
    return tensor_allows_quantization(t, o.leave_output_tensor);
}

struct Hparams {
    std::string arch;
    int n_layer = 0;
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;
    uint32_t n_expert = 0;
    bool is_70b = false;

    uint32_t n_gqa() const { return n_head_kv ? n_head / n_head_kv : 0; }
};

// An integer hyperparameter: any integer scalar, the first item of an integer array (per-layer values,
// llama reads layer 0 here), or a decimal string (safetensors metadata holds only strings).
bool read_int(const ModelInfo& in, const std::string& key, int64_t* out) {
    const MetadataEntry* e = in.find(key);
    if (!e) return false;
    Value v = e->value;
    if (v.type == ValueType::kArray) {
        if (v.length == 0 || v.item_type == ValueType::kString || v.item_type == ValueType::kArray) return false;
        v = v.scalar_item(0);
    }
    switch (v.type) {
        case ValueType::kUint8:
        case ValueType::kUint16:
        case ValueType::kUint32:
        case ValueType::kUint64:
        case ValueType::kInt8:
        case ValueType::kInt16:
        case ValueType::kInt32:
        case ValueType::kInt64:
            *out = v.as_int64();
            return true;
        case ValueType::kString: {
            if (v.str.empty() || v.str.size() > 18) return false;
            int64_t n = 0;
            for (char c : v.str) {
                if (c < '0' || c > '9') return false;
                n = n * 10 + (c - '0');
            }
            *out = n;
            return true;
        }
        default:
            return false;
    }
}

Status read_hparams(const ModelInfo& in, Hparams* hp) {
    const MetadataEntry* arch = in.find("general.architecture");
    if (!arch || arch->value.type != ValueType::kString || arch->value.str.empty()) {
        return make_error(Error::kBadKey, arch ? arch->offset : 0, "general.architecture");
    }
    hp->arch = arch->value.str;
    const std::string p = hp->arch + ".";
    int64_t v = 0;
    if (!read_int(in, p + "block_count", &v) || v < 0 || v > 100000) {
        const MetadataEntry* e = in.find(p + "block_count");
        return make_error(Error::kBadKey, e ? e->offset : 0, "block_count");
    }
    hp->n_layer = static_cast<int>(v);
    if (read_int(in, p + "attention.head_count", &v)) hp->n_head = static_cast<uint32_t>(v);
    hp->n_head_kv = hp->n_head;
    if (read_int(in, p + "attention.head_count_kv", &v)) hp->n_head_kv = static_cast<uint32_t>(v);
    if (read_int(in, p + "expert_count", &v)) hp->n_expert = static_cast<uint32_t>(v);
    int64_t used = 0;
    if (hp->n_expert > 0 && (!read_int(in, p + "expert_used_count", &used) || used <= 0)) {
        // llama's loader asserts n_expert_used > 0 for a model with experts.
        const MetadataEntry* e = in.find(p + "expert_count");
        return make_error(Error::kBadKey, e ? e->offset : 0, "expert_used_count");
    }
    hp->is_70b = hp->arch == "llama" && hp->n_layer == 80 && hp->n_head != hp->n_head_kv;
    return ok_status();
}

struct State {
    const RecipeOptions& o;
    const Hparams& hp;
    bool has_imatrix = false;
    bool tied_embeddings = true;
    int n_attention_wv = 0;
    int i_attention_wv = 0;
    int n_ffn_down = 0, n_ffn_gate = 0, n_ffn_up = 0;
    int i_ffn_down = 0, i_ffn_gate = 0, i_ffn_up = 0;
    int n_fallback = 0;
};

bool use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

// The layer of an ffn tensor: the running counter for dense models, the name's blk index for MoE ones.
Status layer_info(const State& qs, int counter, int n_layer, const TensorInfo& t, int* i_layer) {
    *i_layer = counter;
    if (std::max<uint32_t>(1, qs.hp.n_expert) > 1) {
        if (!parse_layer(t.name, i_layer) || *i_layer < 0 || *i_layer >= n_layer) {
            return make_error(Error::kBadShape, t.info_offset, "tensor.layer");
        }
    }
    return ok_status();
}

bool is_ftype(Ftype f, std::initializer_list<Ftype> list) {
    return std::find(list.begin(), list.end(), f) != list.end();
}

// llama_tensor_get_type_impl: the mix.
Status mix_type(State& qs, DType new_type, const TensorInfo& t, Category cat, DType* out) {
    using F = Ftype;
    const F ftype = qs.o.ftype;
    const bool falcon = qs.hp.arch == "falcon";
    const uint32_t n_gqa = qs.hp.n_gqa();
    const uint32_t n_expert = qs.hp.n_expert;

    if (cat == Category::kOutput || (qs.tied_embeddings && cat == Category::kTokenEmbd)) {
        if (qs.o.output_tensor_type != DType::kUnknown) {
            new_type = qs.o.output_tensor_type;
        } else {
            const int64_t nx = t.ne[0];
            const int64_t qk_k = dtype_traits(new_type).block_elems;
            if (ftype == F::kMXFP4_MOE) {
                new_type = DType::Q8_0;
            } else if (falcon || nx % qk_k != 0) {
                new_type = DType::Q8_0;
            } else if (is_ftype(ftype,
                                {F::kIQ2_XXS, F::kIQ2_XS, F::kIQ3_XXS, F::kIQ1_S, F::kIQ2_S, F::kIQ2_M, F::kIQ1_M})) {
                new_type = DType::Q5_K;
            } else if (new_type != DType::Q8_0) {
                new_type = DType::Q6_K;
            }
        }
    } else if (ftype == F::kMXFP4_MOE) {
        new_type = t.ne[2] > 1 ? DType::MXFP4 : DType::Q8_0;
    } else if (cat == Category::kTokenEmbd) {
        if (qs.o.token_embedding_type != DType::kUnknown) {
            new_type = qs.o.token_embedding_type;
        } else if (is_ftype(ftype, {F::kIQ2_XXS, F::kIQ2_XS, F::kIQ1_S, F::kIQ1_M})) {
            new_type = DType::Q2_K;
        } else if (is_ftype(ftype, {F::kIQ2_S, F::kIQ2_M, F::kIQ3_XXS})) {
            new_type = DType::IQ3_S;
        } else if (is_ftype(ftype, {F::kTQ1_0, F::kTQ2_0})) {
            new_type = DType::Q4_K;
        }
    } else if (is_ftype(ftype, {F::kIQ2_XXS, F::kIQ2_XS, F::kIQ1_S, F::kIQ2_S, F::kIQ2_M, F::kIQ1_M})) {
        const bool s_or_m = ftype == F::kIQ2_S || ftype == F::kIQ2_M;
        if (is_attn_v_like(cat)) {
            if (n_gqa >= 4 || n_expert >= 4) {
                new_type = DType::Q4_K;
            } else {
                new_type = s_or_m ? DType::IQ3_S : DType::Q2_K;
            }
            ++qs.i_attention_wv;
        } else if (n_expert == 8 && cat == Category::kAttnK) {
            new_type = DType::Q4_K;
        } else if (cat == Category::kFfnDown) {
            if (qs.i_ffn_down < qs.n_ffn_down / 8) new_type = s_or_m ? DType::IQ3_S : DType::Q2_K;
            ++qs.i_ffn_down;
        } else if (cat == Category::kAttnOutput) {
            if (n_expert == 8) {
                new_type = DType::Q5_K;
            } else if (ftype == F::kIQ1_S || ftype == F::kIQ1_M) {
                new_type = DType::IQ2_XXS;
            } else if (s_or_m) {
                new_type = DType::IQ3_S;
            }
        }
    } else if (is_attn_v_like(cat)) {
        if (ftype == F::kQ2_K) {
            new_type = n_gqa >= 4 ? DType::Q4_K : DType::Q3_K;
        } else if (ftype == F::kQ2_K_S && n_gqa >= 4) {
            new_type = DType::Q4_K;
        } else if (ftype == F::kIQ3_XXS) {
            new_type = n_gqa >= 4 ? DType::Q4_K : !qs.has_imatrix ? DType::IQ3_S : DType::IQ3_XXS;
        } else if ((ftype == F::kIQ3_XS || ftype == F::kIQ3_S) && n_gqa >= 4) {
            new_type = DType::Q4_K;
        } else if (ftype == F::kIQ3_M) {
            new_type = DType::Q4_K;
        } else if (ftype == F::kQ3_K_M) {
            new_type = qs.i_attention_wv < 2 ? DType::Q5_K : DType::Q4_K;
        } else if (ftype == F::kQ3_K_L) {
            new_type = DType::Q5_K;
        } else if ((ftype == F::kIQ4_NL || ftype == F::kIQ4_XS) && n_gqa >= 4) {
            new_type = DType::Q5_K;
        } else if ((ftype == F::kQ4_K_M || ftype == F::kQ5_K_M) &&
                   use_more_bits(qs.i_attention_wv, qs.n_attention_wv)) {
            new_type = DType::Q6_K;
        } else if (ftype == F::kQ4_K_S && qs.i_attention_wv < 4) {
            new_type = DType::Q5_K;
        }
        // 70B: 8 heads share attn_v, so more bits cost little.
        if (qs.hp.is_70b && (new_type == DType::Q3_K || new_type == DType::Q4_K)) new_type = DType::Q5_K;
        if (n_expert == 8) new_type = DType::Q8_0;
        ++qs.i_attention_wv;
    } else if (cat == Category::kAttnK) {
        if (n_expert == 8) {
            new_type = DType::Q8_0;
        } else if (ftype == F::kIQ3_XS) {
            new_type = DType::IQ3_XXS;
        } else if (ftype == F::kIQ3_XXS) {
            new_type = DType::IQ2_S;
        }
    } else if (cat == Category::kAttnQ) {
        if (ftype == F::kIQ3_XS) {
            new_type = DType::IQ3_XXS;
        } else if (ftype == F::kIQ3_XXS) {
            new_type = DType::IQ2_S;
        }
    } else if (cat == Category::kFfnDown) {
        int i_layer = 0;
        WS_TRY(layer_info(qs, qs.i_ffn_down, qs.n_ffn_down, t, &i_layer));
        const int n_layer = qs.n_ffn_down;
        if (ftype == F::kQ2_K) {
            new_type = DType::Q3_K;
        } else if (ftype == F::kQ2_K_S) {
            if (i_layer < n_layer / 8) new_type = DType::Q4_K;
        } else if (ftype == F::kIQ3_XXS && !qs.has_imatrix) {
            new_type = i_layer < n_layer / 8 ? DType::Q4_K : DType::Q3_K;
        } else if (ftype == F::kQ3_K_M) {
            new_type = i_layer < n_layer / 16                       ? DType::Q5_K
                       : !falcon || use_more_bits(i_layer, n_layer) ? DType::Q4_K
                                                                    : DType::Q3_K;
        } else if (ftype == F::kIQ3_M &&
                   (i_layer < n_layer / 8 || (n_expert == 8 && use_more_bits(i_layer, n_layer)))) {
            new_type = DType::Q4_K;
        } else if (ftype == F::kQ3_K_L) {
            new_type = falcon ? DType::Q4_K : DType::Q5_K;
        } else if (ftype == F::kQ4_K_M) {
            if (falcon) {
                new_type = i_layer < n_layer / 16            ? DType::Q6_K
                           : use_more_bits(i_layer, n_layer) ? DType::Q5_K
                                                             : DType::Q4_K;
            } else if (use_more_bits(i_layer, n_layer)) {
                new_type = DType::Q6_K;
            }
        } else if (i_layer < n_layer / 8 && (ftype == F::kIQ4_NL || ftype == F::kIQ4_XS) && !qs.has_imatrix) {
            new_type = DType::Q5_K;
        } else if (ftype == F::kQ5_K_M && use_more_bits(i_layer, n_layer)) {
            new_type = DType::Q6_K;
        } else if (ftype == F::kQ4_K_S && !falcon && i_layer < n_layer / 8) {
            new_type = DType::Q5_K;
        } else if ((ftype == F::kQ4_0 || ftype == F::kQ5_0) && qs.has_imatrix && i_layer < n_layer / 8) {
            new_type = ftype == F::kQ4_0 ? DType::Q4_1 : DType::Q5_1;
        }
        ++qs.i_ffn_down;
    } else if (cat == Category::kAttnOutput) {
        if (!falcon) {
            if (n_expert == 8) {
                if (is_ftype(ftype, {F::kQ2_K, F::kIQ3_XS, F::kIQ3_XXS, F::kQ3_K_S, F::kQ3_K_M, F::kIQ4_NL, F::kQ4_K_S,
                                     F::kQ4_K_M, F::kIQ3_S, F::kIQ3_M, F::kIQ4_XS})) {
                    new_type = DType::Q5_K;
                }
            } else if (ftype == F::kQ2_K) {
                new_type = DType::Q3_K;
            } else if (ftype == F::kIQ3_XXS) {
                new_type = DType::IQ3_S;
            } else if (ftype == F::kQ3_K_M) {
                new_type = DType::Q4_K;
            } else if (ftype == F::kQ3_K_L) {
                new_type = DType::Q5_K;
            } else if (ftype == F::kIQ3_M) {
                new_type = DType::Q4_K;
            }
        } else if (ftype == F::kQ3_K_L) {
            new_type = DType::Q4_K;
        }
    } else if (cat == Category::kAttnQkv) {
        if (is_ftype(ftype, {F::kQ3_K_M, F::kQ3_K_L, F::kIQ3_M})) {
            new_type = DType::Q4_K;
        } else if (ftype == F::kQ4_K_M) {
            new_type = DType::Q5_K;
        } else if (ftype == F::kQ5_K_M) {
            new_type = DType::Q6_K;
        }
    } else if (cat == Category::kFfnGate || cat == Category::kFfnUp) {
        const bool gate = cat == Category::kFfnGate;
        int i_layer = 0;
        const int n_layer = gate ? qs.n_ffn_gate : qs.n_ffn_up;
        WS_TRY(layer_info(qs, gate ? qs.i_ffn_gate : qs.i_ffn_up, n_layer, t, &i_layer));
        if (ftype == F::kIQ3_XS && i_layer >= n_layer / 8 && i_layer < 7 * n_layer / 8) new_type = DType::IQ3_XXS;
        ++(gate ? qs.i_ffn_gate : qs.i_ffn_up);
    }
    *out = new_type;
    return ok_status();
}

// tensor_type_fallback: a type whose block fits ne[0].
Status fallback_type(State& qs, const TensorInfo& t, DType target, DType* out, bool* fell_back) {
    *out = target;
    *fell_back = false;
    const int64_t ncols = t.ne[0];
    const uint32_t block = dtype_traits(target).block_elems;
    if (block == 0) return make_error(Error::kBadType, t.info_offset, "tensor.type");
    if (ncols % block == 0) return ok_status();
    ++qs.n_fallback;
    *fell_back = true;
    switch (target) {
        case DType::IQ1_S:
        case DType::IQ1_M:
        case DType::IQ2_XXS:
        case DType::IQ2_XS:
        case DType::IQ2_S:
        case DType::IQ3_XXS:
        case DType::IQ3_S:
        case DType::IQ4_XS:
            *out = DType::IQ4_NL;
            break;
        case DType::Q2_0:
        case DType::Q2_K:
        case DType::Q3_K:
        case DType::TQ1_0:
        case DType::TQ2_0:
            *out = DType::Q4_0;
            break;
        case DType::Q4_K:
            *out = DType::Q5_0;
            break;
        case DType::Q5_K:
            *out = DType::Q5_1;
            break;
        case DType::Q6_K:
            *out = DType::Q8_0;
            break;
        default:
            return make_error(Error::kBadShape, t.info_offset, "tensor.ne");  // no fallback for this type
    }
    // Rows not even a multiple of 32: F16, which fits any shape.
    if (ncols % dtype_traits(*out).block_elems != 0) *out = DType::F16;
    return ok_status();
}

// llama_tensor_get_type: the target type of a tensor that allows quantization.
Status target_type(State& qs, const TensorInfo& t, Category cat, DType default_type, DType* out, DType* wanted,
                   bool* fell_back) {
    *fell_back = false;
    const RecipeOptions& o = qs.o;
    if (o.token_embedding_type != DType::kUnknown && cat == Category::kTokenEmbd) {
        *out = *wanted = o.token_embedding_type;
        return ok_status();
    }
    if (o.output_tensor_type != DType::kUnknown && cat == Category::kOutput) {
        *out = *wanted = o.output_tensor_type;
        return ok_status();
    }
    DType new_type = default_type;
    if (!o.pure && dtype_traits(default_type).kind == DTypeKind::kQuantized) {
        bool manual = false;
        for (size_t i = 0; i < o.overrides.size(); ++i) {
            if (o.matcher(i, t.name)) {
                new_type = o.overrides[i].type;
                manual = true;
                break;
            }
        }
        if (!manual) WS_TRY(mix_type(qs, new_type, t, cat, &new_type));
        *wanted = new_type;
        return fallback_type(qs, t, new_type, out, fell_back);
    }
    *out = *wanted = new_type;
    return ok_status();
}

bool is_split_key(const std::string& key) {
    return key == "split.no" || key == "split.count" || key == "split.tensors.count";
}

// gguf_set_val_*: an existing key is removed, the new value appended.
void set_value(std::vector<MetadataEntry>* kv, const std::string& key, const Value& v) {
    kv->erase(std::remove_if(kv->begin(), kv->end(), [&](const MetadataEntry& e) { return e.key == key; }), kv->end());
    MetadataEntry e;
    e.key = key;
    e.value = v;
    kv->push_back(std::move(e));
}

Value u32_value(uint32_t v) {
    Value out;
    out.type = ValueType::kUint32;
    out.bits = v;
    return out;
}

Value str_value(const std::string& s) {
    Value out;
    out.type = ValueType::kString;
    out.str = s.substr(0, 127);  // llama-quantize copies it into a char[128] with strncpy
    return out;
}

bool decodable_input(DType t) {
    const DTypeTraits& tr = dtype_traits(t);
    return dtype_decodable(t) &&
           (t == DType::F32 || t == DType::F16 || t == DType::BF16 || tr.kind == DTypeKind::kQuantized);
}

}  // namespace

// tensor_allows_quantization.
bool tensor_allows_quantization(const TensorInfo& t, bool leave_output_tensor) {
    return gguf_n_dims(t.ne) >= 2 && tensor_name_allows_quantization(t.name, leave_output_tensor);
}

bool tensor_name_allows_quantization(const std::string& name, bool leave_output_tensor) {
    bool q = name.size() >= 6 && name.compare(name.size() - 6, 6, "weight") == 0;
    q = q && !contains(name, "_norm.weight");
    q = q && (!leave_output_tensor || name != "output.weight");
    static const char* const kNever[] = {
        "ffn_gate_inp.weight",
        "ffn_gate_tid2eid.weight",
        "altup",
        "laurel",
        "per_layer_model_proj",
        "ssm_conv1d",
        "shortconv.conv.weight",
        "indexer.k_proj.weight",
        "indexer.q_proj.weight",
        "time_mix_first.weight",
        "time_mix_w0.weight",
        "time_mix_w1.weight",
        "time_mix_w2.weight",
        "time_mix_v0.weight",
        "time_mix_v1.weight",
        "time_mix_v2.weight",
        "time_mix_a0.weight",
        "time_mix_a1.weight",
        "time_mix_a2.weight",
        "time_mix_g1.weight",
        "time_mix_g2.weight",
        "time_mix_decay_w1.weight",
        "time_mix_decay_w2.weight",
        "time_mix_lerp_fused.weight",
        "attn_rel_b.weight",
        ".position_embd",
        "sam.pos_embd",
        "sam.neck.",
        "sam.net_",
        ".rel_pos",
        ".patch_embd",
        ".patch_merger",
        "a.rvq.codebook",
        "mm.a.code_embd",
    };
    for (const char* part : kNever) q = q && !contains(name, part);
    q = q && name != "position_embd.weight" && name != "token_types.weight";
    return q;
}

bool ftype_of_majority_type(DType t, Ftype* out) {
    static const struct {
        DType type;
        Ftype ftype;
    } kMap[] = {
        {DType::F32, Ftype::kAllF32},      {DType::F16, Ftype::kF16},       {DType::BF16, Ftype::kBF16},
        {DType::Q4_0, Ftype::kQ4_0},       {DType::Q4_1, Ftype::kQ4_1},     {DType::Q5_0, Ftype::kQ5_0},
        {DType::Q5_1, Ftype::kQ5_1},       {DType::Q8_0, Ftype::kQ8_0},     {DType::Q2_K, Ftype::kQ2_K},
        {DType::Q3_K, Ftype::kQ3_K_M},     {DType::Q4_K, Ftype::kQ4_K_M},   {DType::Q5_K, Ftype::kQ5_K_M},
        {DType::Q6_K, Ftype::kQ6_K},       {DType::TQ1_0, Ftype::kTQ1_0},   {DType::TQ2_0, Ftype::kTQ2_0},
        {DType::IQ2_XXS, Ftype::kIQ2_XXS}, {DType::IQ2_XS, Ftype::kIQ2_XS}, {DType::IQ2_S, Ftype::kIQ2_S},
        {DType::IQ3_XXS, Ftype::kIQ3_XXS}, {DType::IQ1_S, Ftype::kIQ1_S},   {DType::IQ1_M, Ftype::kIQ1_M},
        {DType::IQ4_NL, Ftype::kIQ4_NL},   {DType::IQ4_XS, Ftype::kIQ4_XS}, {DType::IQ3_S, Ftype::kIQ3_S},
    };
    for (const auto& m : kMap) {
        if (m.type == t) {
            *out = m.ftype;
            return true;
        }
    }
    return false;
}

DType majority_tensor_type(const std::vector<TensorInfo>& tensors) {
    std::vector<std::pair<DType, uint64_t>> counts;
    DType best = DType::kUnknown;
    uint64_t best_count = 0;
    for (const TensorInfo& t : tensors) {
        auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == t.dtype; });
        if (it == counts.end()) it = counts.insert(counts.end(), {t.dtype, 0});
        if (++it->second > best_count) {
            best_count = it->second;
            best = t.dtype;
        }
    }
    return best;
}

bool ftype_from_name(const std::string& name, Ftype* out) {
    for (const FtypeName& f : kFtypeNames) {
        if (iequals(name, f.name)) {
            *out = f.ftype;
            return true;
        }
    }
    // std::stoi: leading white space, a sign, digits; the rest is ignored.
    size_t i = 0;
    while (i < name.size() && std::isspace(static_cast<unsigned char>(name[i]))) ++i;
    bool negative = false;
    if (i < name.size() && (name[i] == '+' || name[i] == '-')) negative = name[i++] == '-';
    if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return false;
    int64_t v = 0;
    for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
        v = v * 10 + (name[i] - '0');
        if (v > INT32_MAX) return false;  // stoi throws
    }
    if (negative) return false;  // no ftype is negative
    for (const FtypeName& f : kFtypeNames) {
        if (static_cast<int64_t>(f.ftype) == v) {
            *out = f.ftype;
            return true;
        }
    }
    return false;
}

const char* ftype_name(Ftype f) {
    // The canonical name: the last entry with this id is the explicit one ("Q4_K_M", not the alias "Q4_K").
    const char* name = "unknown";
    for (const FtypeName& n : kFtypeNames) {
        if (n.ftype == f) name = n.name;
    }
    return name;
}

std::vector<Ftype> ftype_list() {
    std::vector<Ftype> list;
    for (const FtypeName& n : kFtypeNames) {
        if (std::strcmp(n.name, ftype_name(n.ftype)) == 0) list.push_back(n.ftype);
    }
    return list;
}

DType ftype_default_type(Ftype f) {
    switch (f) {
        case Ftype::kQ4_0:
            return DType::Q4_0;
        case Ftype::kQ4_1:
            return DType::Q4_1;
        case Ftype::kQ5_0:
            return DType::Q5_0;
        case Ftype::kQ5_1:
            return DType::Q5_1;
        case Ftype::kQ8_0:
            return DType::Q8_0;
        case Ftype::kF16:
            return DType::F16;
        case Ftype::kBF16:
            return DType::BF16;
        case Ftype::kAllF32:
            return DType::F32;
        case Ftype::kMXFP4_MOE:
            return DType::MXFP4;
        case Ftype::kQ2_K_S:
        case Ftype::kQ2_K:
            return DType::Q2_K;
        case Ftype::kIQ3_XS:
            return DType::IQ3_S;
        case Ftype::kQ3_K_S:
        case Ftype::kQ3_K_M:
        case Ftype::kQ3_K_L:
            return DType::Q3_K;
        case Ftype::kQ4_K_S:
        case Ftype::kQ4_K_M:
            return DType::Q4_K;
        case Ftype::kQ5_K_S:
        case Ftype::kQ5_K_M:
            return DType::Q5_K;
        case Ftype::kQ6_K:
            return DType::Q6_K;
        case Ftype::kTQ1_0:
            return DType::TQ1_0;
        case Ftype::kTQ2_0:
            return DType::TQ2_0;
        case Ftype::kIQ2_XXS:
            return DType::IQ2_XXS;
        case Ftype::kIQ2_XS:
            return DType::IQ2_XS;
        case Ftype::kIQ2_S:
            return DType::IQ2_XS;
        case Ftype::kIQ2_M:
            return DType::IQ2_S;
        case Ftype::kIQ3_XXS:
            return DType::IQ3_XXS;
        case Ftype::kIQ1_S:
            return DType::IQ1_S;
        case Ftype::kIQ1_M:
            return DType::IQ1_M;
        case Ftype::kIQ4_NL:
            return DType::IQ4_NL;
        case Ftype::kIQ4_XS:
            return DType::IQ4_XS;
        case Ftype::kIQ3_S:
        case Ftype::kIQ3_M:
            return DType::IQ3_S;
    }
    return DType::kUnknown;
}

bool ggml_type_from_name(const std::string& name, DType* out) {
    for (uint32_t id = 0; id < static_cast<uint32_t>(DType::kGgmlCount); ++id) {
        const DType t = static_cast<DType>(id);
        const DTypeTraits& tr = dtype_traits(t);
        if (tr.kind == DTypeKind::kRemoved || tr.kind == DTypeKind::kUnknown) continue;
        if (iequals(name, tr.name)) {
            *out = t;
            return true;
        }
    }
    return false;
}

bool parse_tensor_type_override(const std::string& arg, TensorTypeOverride* out) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) return false;
    std::string name = arg.substr(0, eq);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    DType t;
    if (!ggml_type_from_name(arg.substr(eq + 1), &t)) return false;
    out->pattern = std::move(name);
    out->type = t;
    return true;
}

Result<QuantPlan> plan_quantization(const ModelInfo& in, const RecipeOptions& o) {
    const DType default_type = ftype_default_type(o.ftype);
    if (default_type == DType::kUnknown) return make_error(Error::kBadType, 0, "ftype");
    if (!o.overrides.empty() && !o.matcher) return make_error(Error::kInternal, 0, "overrides.matcher");
    Hparams hp;
    WS_TRY(read_hparams(in, &hp));
    const bool has_imatrix = o.imatrix && !o.imatrix->entries.empty();

    // weights_map order: by layer, then by name.
    std::vector<size_t> order(in.tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::vector<int> layers(in.tensors.size());
    for (size_t i = 0; i < order.size(); ++i) layers[i] = layer_of(in.tensors[i].name);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (layers[a] != layers[b]) return layers[a] < layers[b];
        return in.tensors[a].name < in.tensors[b].name;
    });

    State qs{o, hp};
    qs.has_imatrix = has_imatrix;
    for (const TensorInfo& t : in.tensors) {
        const Category c = category_of(t.name);
        if (is_attn_v_like(c)) ++qs.n_attention_wv;
        if (c == Category::kOutput) qs.tied_embeddings = false;
    }
    qs.n_ffn_down = qs.n_ffn_gate = qs.n_ffn_up = hp.n_layer;

    QuantPlan plan;
    // The preliminary pass: every target type, and the imatrix requirement when none is given.
    for (size_t idx : order) {
        const TensorInfo& t = in.tensors[idx];
        PlannedTensor p;
        p.input_index = idx;
        p.in_type = t.dtype;
        p.out = t;
        p.out.n_dims = gguf_n_dims(t.ne);
        p.out.offset = 0;
        p.out.nbytes = 0;
        p.out.file_index = 0;
        DType target = t.dtype;
        p.wanted = t.dtype;
        const bool allowed = allows_quantization(o, t);
        if (allowed) WS_TRY(target_type(qs, t, category_of(t.name), default_type, &target, &p.wanted, &p.fallback));
        p.out.dtype = target;
        p.out.type_id = static_cast<uint32_t>(target);
        p.quantize = target != t.dtype;
        const bool requires = !is_token_embd(t.name) && t.name != "output.weight" &&
                              (target == DType::IQ3_XXS || target == DType::IQ2_XXS || target == DType::IQ2_XS ||
                               target == DType::IQ2_S || target == DType::IQ1_M || target == DType::IQ1_S ||
                               (target == DType::Q2_K && o.ftype == Ftype::kQ2_K_S));
        if (!o.imatrix && allowed && requires)
            return make_error(Error::kUnsupported, t.info_offset, "imatrix.required");
        p.requantize = requires;  // reused below as "requires an imatrix" until the main pass
        plan.tensors.push_back(std::move(p));
    }

    // The main pass, in llama's order of checks: the importance matrix, then the input type.
    std::vector<DType> requantized;
    for (PlannedTensor& p : plan.tensors) {
        const TensorInfo& t = in.tensors[p.input_index];
        const bool requires = p.requantize;
        p.requantize = false;
        if (!p.quantize) continue;
        if (has_imatrix) {
            const ImatrixEntry* e = o.imatrix->find(t.name);
            if (!e) {
                plan.warnings.push_back("did not find importance matrix weights for " + t.name);
            } else if (e->values.size() == static_cast<uint64_t>(t.ne[0]) * static_cast<uint64_t>(t.ne[2])) {
                p.imatrix = e;
            } else if (is_token_embd(t.name)) {
                plan.warnings.push_back("importance matrix size for " + t.name + " does not match; not used");
            } else {
                return make_error(Error::kBadShape, t.info_offset, "imatrix.size");
            }
        }
        if (!p.imatrix && requires) return make_error(Error::kUnsupported, t.info_offset, "imatrix.required");
        if (!decodable_input(t.dtype)) return make_error(Error::kUnsupported, t.info_offset, "tensor.type");
        if (dtype_traits(t.dtype).kind == DTypeKind::kQuantized) {
            if (!o.allow_requantize) return make_error(Error::kUnsupported, t.info_offset, "tensor.type");
            p.requantize = true;
            if (std::find(requantized.begin(), requantized.end(), t.dtype) == requantized.end()) {
                requantized.push_back(t.dtype);
                plan.warnings.push_back(std::string("requantizing from ") + dtype_name(t.dtype) +
                                        ": quality is lower than quantizing from 16 or 32 bit floats");
            }
        }
        if (t.ne[3] != 1) return make_error(Error::kBadShape, t.info_offset, "tensor.n_dims");
        if (t.ne[0] % dtype_traits(p.out.dtype).block_elems != 0) {
            return make_error(Error::kBadShape, t.info_offset, "tensor.ne");
        }
    }
    plan.n_fallback = qs.n_fallback;

    // Metadata: the input's, file type and quantization version last, split keys dropped, imatrix keys.
    for (const MetadataEntry& e : in.metadata) {
        MetadataEntry copy = e;
        copy.offset = 0;
        plan.metadata.push_back(std::move(copy));
    }
    set_value(&plan.metadata, "general.quantization_version", u32_value(2));  // GGML_QNT_VERSION
    set_value(&plan.metadata, "general.file_type", u32_value(static_cast<uint32_t>(o.ftype)));
    plan.metadata.erase(std::remove_if(plan.metadata.begin(), plan.metadata.end(),
                                       [](const MetadataEntry& e) { return is_split_key(e.key); }),
                        plan.metadata.end());
    if (has_imatrix) {
        set_value(&plan.metadata, "quantize.imatrix.file", str_value(o.imatrix_path));
        if (!o.imatrix->datasets.empty()) {
            set_value(&plan.metadata, "quantize.imatrix.dataset", str_value(o.imatrix->datasets[0]));
        }
        set_value(&plan.metadata, "quantize.imatrix.entries_count",
                  u32_value(static_cast<uint32_t>(o.imatrix->entries.size())));
        if (o.imatrix->chunk_count > 0) {
            set_value(&plan.metadata, "quantize.imatrix.chunks_count",
                      u32_value(static_cast<uint32_t>(o.imatrix->chunk_count)));
        }
    }

    std::vector<TensorInfo> out_tensors;
    out_tensors.reserve(plan.tensors.size());
    for (const PlannedTensor& p : plan.tensors) out_tensors.push_back(p.out);
    WS_ASSIGN_OR_RETURN(plan.layout, gguf_layout(plan.metadata, out_tensors));
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        plan.tensors[i].out.offset = plan.layout.tensor_offsets[i];
        plan.tensors[i].out.nbytes = plan.layout.tensor_nbytes[i];
    }
    return plan;
}

namespace {

bool f16_finite(const uint8_t* p) {
    const uint16_t h = static_cast<uint16_t>(p[0] | p[1] << 8);
    return (h & 0x7c00u) != 0x7c00u;
}

// Every block of `block_bytes` has f16 scales at the given offsets.
bool f16_scales_finite(const uint8_t* data, uint64_t nb, uint32_t block_bytes, std::initializer_list<size_t> at) {
    for (uint64_t i = 0; i < nb; ++i) {
        for (size_t off : at) {
            if (!f16_finite(data + i * block_bytes + off)) return false;
        }
    }
    return true;
}

// No 16-bit little-endian value of the n at data has all the bits of exp_mask set (binary16: 0x7c00, bfloat16:
// 0x7f80). In runs of 256 with no early exit inside, a loop the compilers vectorize.
bool all_finite_16(const uint8_t* data, uint64_t n, uint16_t exp_mask) {
    uint64_t i = 0;
    for (; i + 256 <= n; i += 256) {
        uint16_t bad = 0;
        for (int j = 0; j < 256; ++j) {
            uint16_t h;
            std::memcpy(&h, data + 2 * (i + j), 2);
            bad |= static_cast<uint16_t>((h & exp_mask) == exp_mask);
        }
        if (bad) return false;
    }
    for (; i < n; ++i) {
        const uint16_t h = static_cast<uint16_t>(data[2 * i] | data[2 * i + 1] << 8);
        if ((h & exp_mask) == exp_mask) return false;
    }
    return true;
}

// No float32 of the n at data is NaN or infinite; as all_finite_16.
bool all_finite_32(const uint8_t* data, uint64_t n) {
    uint64_t i = 0;
    for (; i + 256 <= n; i += 256) {
        uint32_t bad = 0;
        for (int j = 0; j < 256; ++j) {
            uint32_t u;
            std::memcpy(&u, data + 4 * (i + j), 4);
            bad |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
        }
        if (bad) return false;
    }
    for (; i < n; ++i) {
        uint32_t u;
        std::memcpy(&u, data + 4 * i, 4);
        if ((u & 0x7f800000u) == 0x7f800000u) return false;
    }
    return true;
}

}  // namespace

bool validate_row_data(DType t, const uint8_t* data, uint64_t nbytes) {
    const DTypeTraits& tr = dtype_traits(t);
    if (tr.block_bytes == 0 || nbytes % tr.block_bytes != 0) return false;
    const uint64_t nb = nbytes / tr.block_bytes;
    const uint32_t bb = tr.block_bytes;
    switch (t) {
        case DType::F32:
            return all_finite_32(data, nb);
        case DType::F64:
            for (uint64_t i = 0; i < nb; ++i) {
                uint64_t u;
                std::memcpy(&u, data + 8 * i, 8);
                if ((u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull) return false;
            }
            return true;
        case DType::F16:
            return all_finite_16(data, nb, 0x7c00u);
        case DType::BF16:
            return all_finite_16(data, nb, 0x7f80u);
        case DType::Q4_0:
        case DType::Q5_0:
        case DType::Q8_0:
        case DType::IQ4_NL:
        case DType::Q1_0:
        case DType::Q2_0:
        case DType::IQ1_S:
        case DType::IQ2_XXS:
        case DType::IQ2_XS:
        case DType::IQ2_S:
        case DType::IQ3_XXS:
        case DType::IQ3_S:
        case DType::IQ4_XS:
            return f16_scales_finite(data, nb, bb, {0});
        case DType::Q4_1:
        case DType::Q5_1:
        case DType::Q8_1:
        case DType::Q4_K:
        case DType::Q5_K:
            return f16_scales_finite(data, nb, bb, {0, 2});
        case DType::Q2_K:
            return f16_scales_finite(data, nb, bb, {offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)});
        case DType::Q3_K:
            return f16_scales_finite(data, nb, bb, {offsetof(block_q3_K, d)});
        case DType::Q6_K:
            return f16_scales_finite(data, nb, bb, {offsetof(block_q6_K, d)});
        case DType::TQ1_0:
            return f16_scales_finite(data, nb, bb, {offsetof(block_tq1_0, d)});
        case DType::TQ2_0:
            return f16_scales_finite(data, nb, bb, {offsetof(block_tq2_0, d)});
        case DType::Q8_K:
            for (uint64_t i = 0; i < nb; ++i) {
                uint32_t u;
                std::memcpy(&u, data + i * bb, 4);
                if ((u & 0x7f800000u) == 0x7f800000u) return false;
            }
            return true;
        case DType::IQ1_M:
            // The f16 scale is packed in the top nibbles of the four 16-bit scale words.
            for (uint64_t i = 0; i < nb; ++i) {
                const uint8_t* sc = data + i * bb + offsetof(block_iq1_m, scales);
                uint16_t w[4];
                for (int k = 0; k < 4; ++k) w[k] = static_cast<uint16_t>(sc[2 * k] | sc[2 * k + 1] << 8);
                const uint16_t h = static_cast<uint16_t>((w[0] >> 12) | ((w[1] >> 8) & 0x00f0) |
                                                         ((w[2] >> 4) & 0x0f00) | (w[3] & 0xf000));
                if ((h & 0x7c00u) == 0x7c00u) return false;
            }
            return true;
        case DType::MXFP4:
            for (uint64_t i = 0; i < nb; ++i) {
                if (data[i * bb] == 0xff) return false;
            }
            return true;
        default:
            return true;
    }
}

}  // namespace ws
