// SPDX-License-Identifier: MIT
#include "weightstream/hf_checkpoint.h"

#include <cmath>
#include <cstring>
#include <initializer_list>

#include "base/json_depth.h"
#include "weightstream/dequant.h"
#include "weightstream/model_json.h"

namespace ws {
namespace {

std::string string_field(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The first of `keys` that the hyperparameters have as a number (TextModel.find_hparam's order), or nullptr.
const nlohmann::json* find_hparam(const nlohmann::json& hp, std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
        const auto it = hp.find(k);
        if (it != hp.end() && it->is_number()) return &*it;
    }
    return nullptr;
}

int64_t int_hparam(const nlohmann::json& hp, std::initializer_list<const char*> keys) {
    const nlohmann::json* v = find_hparam(hp, keys);
    return v && v->is_number_integer() ? v->get<int64_t>() : 0;
}

Value u32_value(uint64_t v) {
    Value out;
    out.type = ValueType::kUint32;
    out.bits = v;
    return out;
}

Value f32_value(double v) {
    const float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    Value out;
    out.type = ValueType::kFloat32;
    out.bits = bits;
    return out;
}

void append(std::vector<MetadataEntry>* kv, const std::string& key, Value v) {
    MetadataEntry e;
    e.key = key;
    e.value = std::move(v);
    kv->push_back(std::move(e));
}

}  // namespace

Result<HfConfig> parse_hf_config(const uint8_t* data, size_t size) {
    const char* text = reinterpret_cast<const char*>(data);
    if (size > kHfConfigMaxBytes) return make_error(Error::kTooLarge, 0, "config.json.size");
    if (json_nests_deeper_than(text, size, kHfConfigMaxDepth))
        return make_error(Error::kTooLarge, 0, "config.json.depth");
    nlohmann::json j = nlohmann::json::parse(text, text + size, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error(Error::kBadJson, 0, "config.json");
    HfConfig c;
    c.model_type = string_field(j, "model_type");
    const auto archs = j.find("architectures");
    if (archs != j.end() && archs->is_array() && !archs->empty() && archs->front().is_string()) {
        c.architecture = archs->front().get<std::string>();
    }
    c.hparams = j;
    const auto text_config = j.find("text_config");
    if (text_config != j.end() && text_config->is_object()) {
        c.text_model_type = string_field(*text_config, "model_type");
        for (auto it = text_config->begin(); it != text_config->end(); ++it) c.hparams[it.key()] = it.value();
    }
    c.family = hf_family(c.model_type);
    if (c.family.empty()) c.family = hf_family(c.text_model_type);
    c.n_head = int_hparam(c.hparams, {"num_attention_heads", "n_head", "n_heads"});
    c.n_head_kv = int_hparam(c.hparams, {"num_key_value_heads", "n_head_kv"});
    c.n_expert = int_hparam(c.hparams, {"num_local_experts", "num_experts"});
    return c;
}

std::string hf_config_problem(const Status& refused, const std::string& name) {
    if (refused.what == std::string("config.json.size")) {
        return name + " is over " + std::to_string(kHfConfigMaxBytes >> 20) + " MiB; ignored";
    }
    if (refused.what == std::string("config.json.depth")) {
        return name + " nests arrays or objects over " + std::to_string(kHfConfigMaxDepth) + " deep; ignored";
    }
    return name + " is not a JSON object; ignored";
}

namespace {

// A hyperparameter that is a uint32 (an integer from 0 to 2^32 - 1), into *out.
bool u32_of(const nlohmann::json& v, uint64_t* out) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > 0xffffffffull) return false;
    *out = v.get<uint64_t>();
    return true;
}

// A hyperparameter that a float32 holds: finite, not beyond float's range, not so small that it becomes 0.
bool f32_of(const nlohmann::json& v, double* out) {
    const double d = v.get<double>();
    const float f = static_cast<float>(d);
    if (!std::isfinite(f) || (f == 0 && d != 0)) return false;
    *out = d;
    return true;
}

}  // namespace

std::vector<MetadataEntry> hf_hparams(const HfConfig& config, std::vector<std::string>* warnings) {
    std::vector<MetadataEntry> out;
    const std::string& arch = config.family;
    const nlohmann::json& hp = config.hparams;
    // A value the GGUF type cannot hold is not written (rather than wrapped or made Inf), and said.
    auto out_of_range = [&](const char* name, const nlohmann::json& v, const std::string& key, const char* type) {
        warnings->push_back("config.json's " + std::string(name) + " (" + json_dump(v, -1) + ") is not a " + type +
                            ": " + key + " not written");
    };
    MetadataEntry architecture;
    architecture.key = "general.architecture";
    architecture.value.type = ValueType::kString;
    architecture.value.str = arch;
    out.push_back(std::move(architecture));
    // The name find_hparam took v from (for the warning).
    auto name_of = [&](std::initializer_list<const char*> names, const nlohmann::json* v) {
        for (const char* n : names) {
            const auto it = hp.find(n);
            if (it != hp.end() && &*it == v) return n;
        }
        return *names.begin();
    };
    auto add_u32 = [&](const char* key, std::initializer_list<const char*> names, bool required) {
        const nlohmann::json* v = find_hparam(hp, names);
        uint64_t n = 0;
        if (v && u32_of(*v, &n)) {
            append(&out, arch + "." + key, u32_value(n));
        } else if (v) {
            out_of_range(name_of(names, v), *v, arch + "." + key, "uint32");
        } else if (required) {
            warnings->push_back("config.json has no " + std::string(*names.begin()) + ": " + arch + "." + key +
                                " not written (llama.cpp requires it)");
        }
    };
    auto add_f32 = [&](const char* key, std::initializer_list<const char*> names) {
        const nlohmann::json* v = find_hparam(hp, names);
        double d = 0;
        if (v && f32_of(*v, &d)) {
            append(&out, arch + "." + key, f32_value(d));
        } else if (v) {
            out_of_range(name_of(names, v), *v, arch + "." + key, "float32");
        }
    };
    // general.file_type where the converter writes it among the hyperparameters; convert_plan sets its value.
    auto add_file_type = [&] { append(&out, "general.file_type", u32_value(0)); };
    if (arch == "gemma") {
        // GemmaModel.set_gguf_parameters: its own list and order, no rope base (testdata/convert/tiny-gemma).
        add_u32("context_length", {"max_position_embeddings"}, true);
        add_u32("embedding_length", {"hidden_size"}, true);
        add_u32("block_count", {"num_hidden_layers"}, true);
        add_u32("feed_forward_length", {"intermediate_size"}, true);
        add_u32("attention.head_count", {"num_attention_heads"}, true);
        add_u32("attention.head_count_kv", {"num_key_value_heads", "num_attention_heads"}, true);
        add_f32("attention.layer_norm_rms_epsilon", {"rms_norm_eps"});
        add_u32("attention.key_length", {"head_dim"}, true);
        add_u32("attention.value_length", {"head_dim"}, true);
        add_file_type();
        return out;
    }
    if (arch == "phi3") {
        // Phi3MiniModel.set_gguf_parameters (testdata/convert/tiny-phi3); rope.dimension_count is n_embd // n_head.
        add_u32("context_length", {"n_positions", "max_position_embeddings"}, true);
        add_u32("rope.scaling.original_context_length", {"original_max_position_embeddings"}, true);
        add_u32("embedding_length", {"hidden_size", "n_embd"}, true);
        add_u32("feed_forward_length", {"intermediate_size"}, true);
        add_u32("block_count", {"num_hidden_layers", "n_layer"}, true);
        add_u32("attention.head_count", {"num_attention_heads", "n_head"}, true);
        add_u32("attention.head_count_kv", {"num_key_value_heads", "n_head_kv"}, true);
        add_f32("attention.layer_norm_rms_epsilon", {"rms_norm_eps"});
        const nlohmann::json* hidden = find_hparam(hp, {"hidden_size", "n_embd"});
        if (hidden && hidden->is_number_unsigned() && config.n_head > 0) {
            append(&out, "phi3.rope.dimension_count",
                   u32_value((hidden->get<uint64_t>() / static_cast<uint64_t>(config.n_head)) & 0xffffffffull));
        }
        add_f32("rope.freq_base", {"rope_theta"});
        add_file_type();
        // The converter writes 0 for a missing sliding_window (how llama.cpp tells Phi-4 from the other Phi-3s).
        if (find_hparam(hp, {"sliding_window"})) {
            add_u32("attention.sliding_window", {"sliding_window"}, false);
        } else {
            append(&out, "phi3.attention.sliding_window", u32_value(0));
        }
        return out;
    }
    add_u32("block_count", {"num_hidden_layers", "n_layers", "n_layer", "num_layers"}, true);
    add_u32(
        "context_length",
        {"max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length", "model_max_length"},
        true);
    add_u32("embedding_length", {"hidden_size", "n_embd", "dim"}, true);
    add_u32("feed_forward_length", {"intermediate_size", "n_inner", "hidden_dim"}, true);
    add_u32("attention.head_count", {"num_attention_heads", "n_head", "n_heads"}, true);
    add_u32("attention.head_count_kv", {"num_key_value_heads", "n_head_kv"}, false);
    const HfFamilyKeys family_keys = hf_family_keys(arch);
    // GemmaModel.set_gguf_parameters writes its own list, without the rope base (testdata/convert/tiny-gemma).
    if (family_keys.rope_base) add_f32("rope.freq_base", {"rope_theta"});
    add_f32("attention.layer_norm_rms_epsilon", {"rms_norm_eps"});
    add_f32("attention.layer_norm_epsilon", {"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"});
    add_u32("expert_count", {"num_local_experts", "num_experts"}, false);
    add_u32("expert_used_count", {"num_experts_per_tok", "num_experts_per_token", "top_k_experts"}, false);
    add_u32("attention.key_length", {"head_dim"}, false);
    add_u32("attention.value_length", {"head_dim"}, false);
    add_file_type();
    // Qwen2MoeModel (and Qwen3MoeModel, its subclass) after TextModel's keys: the experts' and the shared
    // expert's feed-forward lengths.
    if (family_keys.moe_lengths) {
        add_u32("expert_feed_forward_length", {"moe_intermediate_size"}, false);
        add_u32("expert_shared_feed_forward_length", {"shared_expert_intermediate_size"}, false);
    }
    if (family_keys.llama) {
        add_u32("vocab_size", {"vocab_size"}, false);
        const nlohmann::json* head_dim = find_hparam(hp, {"head_dim"});
        const nlohmann::json* hidden = find_hparam(hp, {"hidden_size"});
        uint64_t n = 0;
        if (head_dim && head_dim->is_number_integer() && head_dim->get<int64_t>() > 0) {
            if (u32_of(*head_dim, &n)) {
                append(&out, "llama.rope.dimension_count", u32_value(n));
            } else {
                out_of_range("head_dim", *head_dim, "llama.rope.dimension_count", "uint32");
            }
        } else if (hidden && hidden->is_number_unsigned() && config.n_head > 0 && hidden->get<uint64_t>() > 0) {
            n = hidden->get<uint64_t>() / static_cast<uint64_t>(config.n_head);
            if (n <= 0xffffffffull) {
                append(&out, "llama.rope.dimension_count", u32_value(n));
            } else {
                out_of_range("hidden_size / num_attention_heads", nlohmann::json(n), "llama.rope.dimension_count",
                             "uint32");
            }
        }
    }
    return out;
}

Result<uint64_t> hf_head_rows(uint64_t rows, uint64_t heads) {
    if (heads == 0 || rows == 0 || rows % heads != 0 || (rows / heads) % 2 != 0) {
        return make_error(Error::kBadShape, 0, "tensor.ne");
    }
    return rows / heads;
}

Status hf_permute_rows(const uint8_t* src, uint64_t n_rows, uint64_t head_rows, uint64_t row_bytes, uint8_t* dst) {
    if (head_rows == 0 || head_rows % 2 != 0 || n_rows % head_rows != 0) {
        return make_error(Error::kInternal, 0, "hf_permute_rows");
    }
    const uint64_t half = head_rows / 2;
    for (uint64_t h = 0; h < n_rows; h += head_rows) {
        for (uint64_t j = 0; j < half; ++j) {
            for (uint64_t i = 0; i < 2; ++i) {
                std::memcpy(dst + (h + 2 * j + i) * row_bytes, src + (h + i * half + j) * row_bytes,
                            static_cast<size_t>(row_bytes));
            }
        }
    }
    return ok_status();
}

Status hf_convert_rows(Transform transform, DType source, uint64_t heads, const HfRows& window, const float* src,
                       float* dst) {
    if (window.first_row > window.rows || window.n_rows > window.rows - window.first_row) {
        return make_error(Error::kBadShape, window.first_row, "rows");
    }
    const uint64_t n = window.n_rows * window.row_elements;
    if (transform == Transform::kPermuteQ || transform == Transform::kPermuteK) {
        Result<uint64_t> head_rows = hf_head_rows(window.rows, heads);
        if (!head_rows.ok()) return head_rows.status();
        const uint64_t hd = head_rows.value();
        if (window.first_row % hd != 0 || window.n_rows % hd != 0) {
            return make_error(Error::kBadShape, window.first_row, "rows");
        }
        return hf_permute_rows(reinterpret_cast<const uint8_t*>(src), window.n_rows, hd,
                               window.row_elements * sizeof(float), reinterpret_cast<uint8_t*>(dst));
    }
    if (transform == Transform::kPlusOne) {
        // torch adds in the tensor's dtype: an F16 sum is rounded to F16 (BF16 was widened to float32 first).
        for (uint64_t i = 0; i < n; ++i) {
            const float v = src[i] + 1.0f;
            dst[i] = source == DType::F16 ? fp16_to_fp32(fp32_to_fp16(v)) : v;
        }
        return ok_status();
    }
    if (dst != src) std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float));
    return ok_status();
}

DType hf_auto_dtype(const ModelInfo& checkpoint) {
    const TensorInfo* first = nullptr;
    for (const TensorInfo& t : checkpoint.tensors) {
        if (!first || t.file_index < first->file_index || (t.file_index == first->file_index && t.name < first->name)) {
            first = &t;
        }
    }
    if (!first) return DType::kUnknown;
    return first->dtype == DType::F16 ? DType::F16 : DType::BF16;
}

}  // namespace ws
