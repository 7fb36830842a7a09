// SPDX-License-Identifier: MIT
// A yardstick, never built by CMake nor run in CI: llama.cpp's hand-written llama-3 and GPT-2 pre-tokenizer
// splitters (src/unicode.cpp) against weightstream's regex engine on the same text: the piece boundaries must be
// equal, and each side's MB/s (best of 5). Build it by hand against a llama.cpp checkout, for example:
//   ./build/bin/regex_bench 1 1 --dump /tmp/text.txt
//   g++ -std=c++17 -O3 -DNDEBUG -Iinclude -I$LLAMA/src bench/llama_split_compare.cpp $LLAMA/src/unicode-data.cpp \
//       build/native/core/libws_core.a -o /tmp/llama_split_compare && /tmp/llama_split_compare /tmp/text.txt
// unicode.cpp is included, not linked: its splitters are static functions.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "unicode.cpp"  // NOLINT: llama.cpp's, from -I$LLAMA/src
#include "weightstream/regex.h"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: llama_split_compare TEXT_FILE\n");
        return 2;
    }
    std::ifstream f(argv[1], std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    const char* const patterns[2] = {
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
        "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"};
    const auto cpts = unicode_cpts_from_utf8(text);
    int status = 0;
    for (int which = 0; which < 2; ++which) {
        auto split = [&] {
            return which == 0 ? unicode_regex_split_custom_llama3(text, {cpts.size()})
                              : unicode_regex_split_custom_gpt2(text, {cpts.size()});
        };
        // llama.cpp's pieces as byte ends (its offsets count code points).
        std::vector<size_t> theirs;
        size_t cp = 0, byte = 0;
        for (size_t n : split()) {
            for (size_t k = 0; k < n; ++k) byte += unicode_cpt_to_utf8(cpts[cp++]).size();
            theirs.push_back(byte);
        }
        const ws::Regex re = ws::Regex::compile(patterns[which]).value();
        std::vector<size_t> ours;
        for (const ws::RegexMatch& m : re.find_all(text.data(), text.size())) ours.push_back(m.end);
        const bool same = ours == theirs;
        status |= same ? 0 : 1;
        double best_theirs = 1e30, best_ours = 1e30;
        ws::RegexScratch scratch;
        for (int r = 0; r < 5; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            const size_t n = split().size();
            best_theirs =
                std::min(best_theirs, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            t0 = std::chrono::steady_clock::now();
            ws::RegexMatch m;
            size_t at = 0, count = 0;
            while (at < text.size() && re.find(text.data(), text.size(), at, &m, &scratch)) {
                at = m.end;
                ++count;
            }
            best_ours =
                std::min(best_ours, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            if (count != n) status |= 1;
        }
        std::printf(
            "%s: %zu pieces, boundaries %s; llama.cpp %.1f MB/s (unicode_regex_split_custom_%s, code points "
            "decoded inside), weightstream %.1f MB/s\n",
            which == 0 ? "llama3" : "gpt2", theirs.size(), same ? "equal" : "DIFFER", text.size() / best_theirs / 1e6,
            which == 0 ? "llama3" : "gpt2", text.size() / best_ours / 1e6);
    }
    return status;
}
