// SPDX-License-Identifier: MIT
// vocab_from_gguf(): a GGUF's tokenizer.ggml.* keys into a VocabTable, with the type checks of llama.cpp's model
// loader (GGUFMeta: a key of another type than the one asked for is an error, not a conversion) and the checks
// llama.cpp leaves out (it reads scores[i] and token_type[i] for every token without comparing the lengths).
#include <cstdint>
#include <cstring>

#include "weightstream/tokenizer.h"

namespace ws {
namespace {

Status bad(const MetadataEntry& e, const char* what) {
    return make_error(Error::kBadKey, e.offset, what);
}

Status get_string(const ModelInfo& info, const char* key, std::string* out) {
    const MetadataEntry* e = info.find(key);
    if (!e) return ok_status();
    if (e->value.type != ValueType::kString) return bad(*e, key);
    *out = e->value.str;
    return ok_status();
}

Status get_id(const ModelInfo& info, const char* key, int32_t* out) {
    const MetadataEntry* e = info.find(key);
    if (!e) return ok_status();
    if (e->value.type != ValueType::kUint32) return bad(*e, key);
    // An id past the table is ignored later (llama.cpp warns and keeps the model's default); past int32, the
    // same: it stays out of range.
    *out = e->value.bits > uint64_t(INT32_MAX) ? INT32_MAX : int32_t(e->value.bits);
    return ok_status();
}

Status get_flag(const ModelInfo& info, const char* key, int8_t* out) {
    const MetadataEntry* e = info.find(key);
    if (!e) return ok_status();
    if (e->value.type != ValueType::kBool) return bad(*e, key);
    *out = e->value.bits ? 1 : 0;
    return ok_status();
}

}  // namespace

Result<VocabTable> vocab_from_gguf(const ModelInfo& info) {
    VocabTable t;
    const MetadataEntry* model = info.find("tokenizer.ggml.model");
    if (!model) return make_error(Error::kUnsupported, 0, "tokenizer.ggml.model");
    WS_TRY(get_string(info, "tokenizer.ggml.model", &t.model));
    WS_TRY(get_string(info, "tokenizer.ggml.pre", &t.pre));
    WS_TRY(get_string(info, "tokenizer.chat_template", &t.chat_template));
    WS_TRY(get_string(info, "general.name", &t.name));
    WS_TRY(get_string(info, "general.architecture", &t.architecture));

    const MetadataEntry* tokens = info.find("tokenizer.ggml.tokens");
    if (tokens) {
        const Value& v = tokens->value;
        if (v.type != ValueType::kArray || v.item_type != ValueType::kString)
            return bad(*tokens, "tokenizer.ggml.tokens");
        if (v.length > kTokenizerMaxTokens) {
            return make_error(Error::kTooLarge, tokens->offset, "tokenizer.ggml.tokens");
        }
        if (v.strings.size() != v.length) return bad(*tokens, "tokenizer.ggml.tokens");
        for (const std::string& s : v.strings) {
            if (s.size() > kTokenizerMaxTokenBytes) {
                return make_error(Error::kTooLarge, tokens->offset, "tokenizer.ggml.tokens (a token's bytes)");
            }
        }
        t.tokens = v.strings;
    } else if (t.model != "no_vocab" && t.model != "none") {
        return make_error(Error::kBadKey, model->offset, "tokenizer.ggml.tokens (missing)");
    }
    const size_t n = t.tokens.size();

    if (const MetadataEntry* e = info.find("tokenizer.ggml.scores")) {
        const Value& v = e->value;
        // f32, or i32 (llama.cpp now takes integer scores too, as floats)
        const bool ints = v.item_type == ValueType::kInt32;
        if (v.type != ValueType::kArray || (v.item_type != ValueType::kFloat32 && !ints)) {
            return bad(*e, "tokenizer.ggml.scores");
        }
        if (v.length != n || v.raw.size() != n * 4) return bad(*e, "tokenizer.ggml.scores (length)");
        t.scores.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const uint32_t bits = uint32_t(v.item_bits(i));
            if (ints) {
                t.scores[i] = float(int32_t(bits));
            } else {
                std::memcpy(&t.scores[i], &bits, 4);
            }
        }
    }
    if (const MetadataEntry* e = info.find("tokenizer.ggml.token_type")) {
        const Value& v = e->value;
        // llama.cpp reads the items as int32 whatever the array's type says; i32 is what every converter writes.
        if (v.type != ValueType::kArray || (v.item_type != ValueType::kInt32 && v.item_type != ValueType::kUint32)) {
            return bad(*e, "tokenizer.ggml.token_type");
        }
        if (v.length != n || v.raw.size() != n * 4) return bad(*e, "tokenizer.ggml.token_type (length)");
        t.token_types.resize(n);
        for (size_t i = 0; i < n; ++i) t.token_types[i] = int32_t(uint32_t(v.item_bits(i)));
    }
    if (const MetadataEntry* e = info.find("tokenizer.ggml.merges")) {
        const Value& v = e->value;
        if (v.type != ValueType::kArray || v.item_type != ValueType::kString) return bad(*e, "tokenizer.ggml.merges");
        if (v.length > kTokenizerMaxMerges) return make_error(Error::kTooLarge, e->offset, "tokenizer.ggml.merges");
        if (v.strings.size() != v.length) return bad(*e, "tokenizer.ggml.merges");
        t.merges = v.strings;
    }
    if (const MetadataEntry* e = info.find("tokenizer.ggml.precompiled_charsmap")) {
        const Value& v = e->value;
        if (v.type != ValueType::kArray || (v.item_type != ValueType::kUint8 && v.item_type != ValueType::kInt8) ||
            v.raw.size() != v.length) {
            return bad(*e, "tokenizer.ggml.precompiled_charsmap");
        }
        t.precompiled_charsmap.assign(v.raw.begin(), v.raw.end());
    }

    struct IdKey {
        const char* key;
        int32_t* id;
    };
    const IdKey ids[] = {
        {"tokenizer.ggml.bos_token_id", &t.bos},
        {"tokenizer.ggml.eos_token_id", &t.eos},
        {"tokenizer.ggml.eot_token_id", &t.eot},
        {"tokenizer.ggml.eom_token_id", &t.eom},
        {"tokenizer.ggml.unknown_token_id", &t.unk},
        {"tokenizer.ggml.seperator_token_id", &t.sep},
        {"tokenizer.ggml.padding_token_id", &t.pad},
        {"tokenizer.ggml.mask_token_id", &t.mask},
        {"tokenizer.ggml.fim_pre_token_id", &t.fim_pre},
        {"tokenizer.ggml.fim_suf_token_id", &t.fim_suf},
        {"tokenizer.ggml.fim_mid_token_id", &t.fim_mid},
        {"tokenizer.ggml.fim_pad_token_id", &t.fim_pad},
        {"tokenizer.ggml.fim_rep_token_id", &t.fim_rep},
        {"tokenizer.ggml.fim_sep_token_id", &t.fim_sep},
        // llama.cpp's deprecated names of the FIM keys, read after the new ones (so they win, as there)
        {"tokenizer.ggml.prefix_token_id", &t.fim_pre},
        {"tokenizer.ggml.suffix_token_id", &t.fim_suf},
        {"tokenizer.ggml.middle_token_id", &t.fim_mid},
    };
    for (const IdKey& k : ids) WS_TRY(get_id(info, k.key, k.id));

    WS_TRY(get_flag(info, "tokenizer.ggml.add_bos_token", &t.add_bos));
    WS_TRY(get_flag(info, "tokenizer.ggml.add_eos_token", &t.add_eos));
    WS_TRY(get_flag(info, "tokenizer.ggml.add_sep_token", &t.add_sep));
    WS_TRY(get_flag(info, "tokenizer.ggml.add_space_prefix", &t.add_space_prefix));
    WS_TRY(get_flag(info, "tokenizer.ggml.remove_extra_whitespaces", &t.remove_extra_whitespaces));
    WS_TRY(get_flag(info, "tokenizer.ggml.normalizer.lowercase", &t.normalizer_lowercase));
    WS_TRY(get_flag(info, "tokenizer.ggml.normalizer.strip_accents", &t.normalizer_strip_accents));
    return t;
}

Result<std::unique_ptr<Tokenizer>> gguf_tokenizer(const ModelInfo& info) {
    WS_ASSIGN_OR_RETURN(VocabTable table, vocab_from_gguf(info));
    return llama_tokenizer(std::move(table));
}

}  // namespace ws
