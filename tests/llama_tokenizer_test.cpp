// SPDX-License-Identifier: MIT
// The GGUF tokenizer (tokenizer.h: vocab_from_gguf, llama_tokenizer) against llama.cpp's own tokenizer tests: the
// vocabulary GGUFs of ../shared/testdata/ggml/vocab with their .inp texts and .out ids (test-tokenizer-0's mode:
// add_special = false, parse_special = false), plus hostile tables and texts.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "support/parse_model.h"
#include "support/test_util.h"
#include "weightstream/tokenizer.h"

namespace {

std::unique_ptr<ws::Tokenizer> load_vocab(const std::string& path) {
    const std::vector<uint8_t> bytes = ws_test::read_file(path);
    REQUIRE(!bytes.empty());
    const ws::ModelInfo info = ws_test::parse_model_bytes(bytes);
    auto r = ws::gguf_tokenizer(info);
    INFO(path << ": " << ws::error_name(r.status().code) << " " << r.status().what << " @" << r.status().offset);
    REQUIRE(r.ok());
    return std::move(r).value();
}

struct VocabCase {
    std::string text;
    std::vector<int32_t> ids;
};

// test-tokenizer-0's reader: texts separated by "\n__ggml_vocab_test__\n", one line of ids per text.
std::vector<VocabCase> read_cases(const std::string& base) {
    const std::vector<uint8_t> inp = ws_test::read_file(base + ".inp");
    const std::vector<uint8_t> outp = ws_test::read_file(base + ".out");
    const std::string raw(inp.begin(), inp.end());
    std::vector<std::string> texts;
    const std::string sep = "\n__ggml_vocab_test__\n";
    for (size_t pos = 0; pos < raw.size();) {
        const size_t next = raw.find(sep, pos);
        if (next == std::string::npos) {
            texts.push_back(raw.substr(pos));
            break;
        }
        texts.push_back(raw.substr(pos, next - pos));
        pos = next + sep.size();
    }
    std::vector<VocabCase> cases;
    std::istringstream lines(std::string(outp.begin(), outp.end()));
    std::string line;
    size_t i = 0;
    while (std::getline(lines, line)) {
        REQUIRE(i < texts.size());
        VocabCase c;
        c.text = texts[i++];
        std::istringstream nums(line);
        int32_t v;
        while (nums >> v) c.ids.push_back(v);
        cases.push_back(c);
    }
    REQUIRE(i == texts.size());
    return cases;
}

const char* const kVocabs[] = {"bert-bge", "deepseek-coder", "deepseek-llm", "falcon", "gpt-2",
                               "llama-spm", "mpt",      "phi-3",          "refact",       "starcoder"};

}  // namespace

TEST_CASE("llama.cpp's test-tokenizer-0 cases give the .out ids", "[tokenizer][gguf]") {
    for (const char* name : kVocabs) {
        const std::string base = ws_test::shared_path(std::string("ggml/vocab/ggml-vocab-") + name + ".gguf");
        if (!ws_test::file_exists(base)) {
            WARN("missing " << base);
            continue;
        }
        auto tok = load_vocab(base);
        const auto cases = read_cases(base);
        size_t passed = 0;
        for (const VocabCase& c : cases) {
            std::vector<int32_t> ids;
            ws::TokenizeOptions o;
            o.add_special = false;
            o.parse_special = false;
            REQUIRE(tok->tokenize(c.text, o, &ids).ok());
            INFO(name << ": '" << c.text << "'");
            CHECK(ids == c.ids);
            if (ids == c.ids) ++passed;
        }
        INFO(name);
        CHECK(passed == cases.size());
    }
}
