// SPDX-License-Identifier: MIT
// hf_gpt2_vocab(): convert_hf_to_gguf.py's _set_vocab_gpt2 for a tokenizer.json (get_vocab_base,
// get_vocab_base_pre, and the merges of gguf-py's SpecialVocab). The token ids come from the same reading of the
// file as the project's Hugging Face tokenizer (text/hf_tokenizer_json.h), which also encodes the check text and
// the added tokens the converter round-trips.
#include "weightstream/hf_bpe_vocab.h"

#include <algorithm>
#include <unordered_map>

#include "base/sha256.h"
#include "text/hf_components.h"
#include "text/hf_tokenizer_json.h"

namespace ws {
namespace {

bool starts_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// does_token_look_special(): added tokens some models leave unmarked that ought to be control tokens. Python's
// startswith / endswith, so "<|>" counts (the two ends may overlap).
bool looks_special(std::string_view t) {
    if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
    if (starts_with(t, "<|") && ends_with(t, "|>")) return true;
    // <｜ ... ｜> with U+FF5C FULLWIDTH VERTICAL LINE (deepseek-coder)
    if (starts_with(t, "<\xEF\xBD\x9C") && ends_with(t, "\xEF\xBD\x9C>")) return true;
    return starts_with(t, "<unused") && ends_with(t, ">");
}

// Every occurrence of `from` in *s replaced by `to`.
void replace_all(std::string* s, std::string_view from, std::string_view to) {
    std::string out;
    size_t pos = 0;
    for (size_t hit; (hit = s->find(from.data(), pos, from.size())) != std::string::npos; pos = hit + from.size()) {
        out.append(*s, pos, hit - pos);
        out.append(to.data(), to.size());
    }
    if (pos == 0) return;
    out.append(*s, pos, std::string::npos);
    *s = std::move(out);
}

struct Added {
    std::string_view content;
    bool special = false, normalized = false;
};

}  // namespace

std::string bpe_pre_chkhsh(const std::vector<int32_t>& ids) {
    std::string text = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) text += ", ";
        text += std::to_string(ids[i]);
    }
    text += "]";
    return sha256_hex(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

std::string_view bpe_pre_from_chkhsh(std::string_view chkhsh) {
    std::string_view found;
    for (const BpePreEntry& e : bpe_pre_table()) {
        if (chkhsh == e.chkhsh) found = e.pre;
    }
    return found;
}

Result<VocabTable> hf_gpt2_vocab(const HfTokenizerFiles& files, int64_t config_vocab_size, std::string* chkhsh) {
    auto bytes = [](std::string_view v) { return reinterpret_cast<const uint8_t*>(v.data()); };
    if (files.tokenizer_json.empty()) return make_error(Error::kUnsupported, 0, "tokenizer.json");
    nlohmann::json config;
    const bool has_config = !files.tokenizer_config.empty();
    if (has_config) {
        WS_TRY(hf::parse_json_object(bytes(files.tokenizer_config), files.tokenizer_config.size(),
                                     "tokenizer_config.json", &config));
    }
    hf::TokenizerJson json;
    WS_TRY(hf::read_tokenizer_json(bytes(files.tokenizer_json), files.tokenizer_json.size(), &json));
    // The tokenizer checks the whole file (ids, merges naming tokens, components) before anything here reads it.
    WS_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tok, hf::hf_tokenizer_from(json, has_config ? &config : nullptr));
    if (tok->description() != "hf:BPE" || json.staged.vocab_form != hf::StagedModel::VocabForm::kObject) {
        return make_error(Error::kUnsupported, 0, "model.type");
    }

    // transformers' get_vocab(): each text to one id, the model's vocabulary first, the added tokens over it (a
    // text listed twice keeps its last id).
    std::unordered_map<std::string_view, int32_t> vocab;
    vocab.reserve(json.staged.vocab.size());
    for (const auto& e : json.staged.vocab) vocab[json.staged.view(e.text)] = int32_t(e.value);  // ids checked
    std::unordered_map<std::string_view, Added> added;
    if (const nlohmann::json* list = hf::field(json.root, "added_tokens"); list && list->is_array()) {
        for (const nlohmann::json& a : *list) {
            // Shapes and ids were checked by the tokenizer (hf_tokenizer()'s added_tokens errors).
            const nlohmann::json* content = hf::field(a, "content");
            const nlohmann::json* id = hf::field(a, "id");
            if (!content || !content->is_string() || !id || !id->is_number_integer()) {
                return make_error(Error::kInternal, 0, "added_tokens.entry");
            }
            Added t;
            t.content = content->get_ref<const std::string&>();
            t.special = hf::bool_field(a, "special", false);
            t.normalized = hf::bool_field(a, "normalized", !t.special);
            vocab[t.content] = int32_t(id->get<int64_t>());
            added[t.content] = t;
        }
    }
    int32_t max_id = -1;
    for (const auto& kv : vocab) max_id = std::max(max_id, kv.second);
    const int64_t n = config_vocab_size >= 0 ? config_vocab_size : int64_t(vocab.size());
    if (uint64_t(n) > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, "config.vocab_size");
    if (max_id >= n) return make_error(Error::kBadKey, uint64_t(max_id), "config.vocab_size");

    std::vector<std::string_view> by_id(static_cast<size_t>(n));
    std::vector<uint8_t> have(size_t(n), 0);
    for (const auto& kv : vocab) {
        if (have[size_t(kv.second)]) return make_error(Error::kBadKey, uint64_t(kv.second), "vocab.duplicate_id");
        have[size_t(kv.second)] = 1;
        by_id[size_t(kv.second)] = kv.first;
    }

    // get_vocab_base_pre(): encode() adds the special tokens: tokenizer.json's post-processor, except for the classes
    // whose transformers tokenizer replaces it by one made from tokenizer_config.json's add_bos_token (default
    // true) and add_eos_token (default false): LlamaTokenizerFast's update_post_processor() (DeepSeek-V3's files
    // name it and keep a post-processor that adds nothing).
    std::vector<int32_t> ids;
    const std::string cls = has_config ? hf::string_field(config, "tokenizer_class") : std::string();
    static const char* const kRebuilt[] = {"LlamaTokenizer",         "LlamaTokenizerFast", "CodeLlamaTokenizer",
                                           "CodeLlamaTokenizerFast", "GemmaTokenizer",     "GemmaTokenizerFast"};
    if (std::find(std::begin(kRebuilt), std::end(kRebuilt), cls) != std::end(kRebuilt)) {
        auto special_id = [&](const char* key) {
            const nlohmann::json* v = hf::field(config, key);
            if (v && v->is_object()) v = hf::field(*v, "content");
            if (!v || !v->is_string()) return int32_t(-1);
            const auto it = vocab.find(v->get_ref<const std::string&>());
            return it == vocab.end() ? int32_t(-1) : it->second;
        };
        const int32_t bos = special_id("bos_token"), eos = special_id("eos_token");
        if (hf::bool_field(config, "add_bos_token", true) && bos >= 0) ids.push_back(bos);
        TokenizeOptions plain;
        plain.add_special = false;
        WS_TRY(tok->tokenize(bpe_pre_check_text(), plain, &ids));
        if (hf::bool_field(config, "add_eos_token", false) && eos >= 0) ids.push_back(eos);
    } else {
        WS_TRY(tok->tokenize(bpe_pre_check_text(), TokenizeOptions(), &ids));
    }
    const std::string hash = bpe_pre_chkhsh(ids);
    if (chkhsh) *chkhsh = hash;
    const std::string_view pre = bpe_pre_from_chkhsh(hash);
    if (pre.empty()) {
        return make_error(Error::kUnsupported, 0, "BPE pre-tokenizer was not recognized - update get_vocab_base_pre()");
    }

    VocabTable t;
    t.model = "gpt2";
    t.pre = std::string(pre);
    t.tokens.reserve(size_t(n));
    t.token_types.reserve(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
        if (!have[size_t(i)]) {
            t.tokens.push_back("[PAD" + std::to_string(i) + "]");
            t.token_types.push_back(int32_t(TokenKind::kUnused));
            continue;
        }
        std::string text(by_id[size_t(i)]);
        const auto it = added.find(by_id[size_t(i)]);
        if (it == added.end()) {
            t.tokens.push_back(std::move(text));
            t.token_types.push_back(int32_t(TokenKind::kNormal));
            continue;
        }
        // llama.cpp takes CONTROL and USER_DEFINED tokens as already normalized: the converter normalizes the ones
        // the tokenizer does not, by encoding and decoding them.
        if (!it->second.normalized) {
            TokenizeOptions enc;
            enc.add_special = false;
            std::vector<int32_t> round;
            WS_TRY(tok->tokenize(text, enc, &round));
            text.clear();
            WS_TRY(tok->detokenize(round.data(), round.size(), DetokenizeOptions(), &text));
        }
        if (it->second.special || looks_special(text)) {
            t.token_types.push_back(int32_t(TokenKind::kControl));
        } else {
            replace_all(&text, "\xE2\x96\x81", " ");  // pre-normalize user-defined spaces (Gemma)
            t.token_types.push_back(int32_t(TokenKind::kUserDefined));
        }
        t.tokens.push_back(std::move(text));
    }

    // SpecialVocab: ["a", "b"] pairs are written "a b" with any space inside a part as U+0120; "a b" strings as
    // they are (their parts hold no space), so one rule serves both.
    t.merges.reserve(json.staged.merges.size());
    for (const auto& m : json.staged.merges) {
        std::string left(json.staged.view(m.left)), right(json.staged.view(m.right));
        replace_all(&left, " ", "\xC4\xA0");
        replace_all(&right, " ", "\xC4\xA0");
        t.merges.push_back(left + " " + right);
    }
    return t;
}

}  // namespace ws
