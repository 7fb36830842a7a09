// SPDX-License-Identifier: MIT
// The regex engine's speed on the tokenizers' hot path: the llama-3 pre-tokenizer pattern splitting a ~1 MB
// multilingual text (generated: Latin with contractions and accents, Cyrillic, Greek, CJK, kana, Hangul, Arabic,
// Devanagari with marks, Thai, emoji, digits, punctuation, whitespace runs). Verifies before timing that the
// pieces cover the text without gaps or overlaps (this pattern splits any text completely), then prints
// MB/s (best of N) per pattern. Usage: regex_bench [MEGABYTES] [RUNS] [--dump FILE] (FILE: the text, for
// timing other splitters on the same bytes).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "weightstream/regex.h"
#include "weightstream/utf8.h"

namespace {

// A deterministic multilingual text of about `bytes` bytes.
std::string make_text(size_t bytes) {
    struct Script {
        uint32_t first, last;  // letters
        int word_min, word_max;
        uint32_t mark_first, mark_last;  // combining marks mixed in (0: none)
    };
    const Script scripts[] = {
        {'a', 'z', 2, 9, 0, 0},                  // English-like (with capitals, contractions)
        {0x00E0, 0x00FF, 2, 8, 0, 0},            // Latin-1 letters
        {0x0430, 0x044F, 3, 10, 0, 0},           // Cyrillic
        {0x03B1, 0x03C9, 3, 9, 0, 0},            // Greek
        {0x4E00, 0x9FFF, 1, 4, 0, 0},            // CJK
        {0x3041, 0x3096, 2, 6, 0, 0},            // Hiragana
        {0xAC00, 0xD7A3, 1, 4, 0, 0},            // Hangul syllables
        {0x0627, 0x064A, 3, 7, 0, 0},            // Arabic
        {0x0915, 0x0939, 2, 6, 0x093E, 0x094C},  // Devanagari with vowel signs
        {0x0E01, 0x0E30, 3, 8, 0x0E31, 0x0E3A},  // Thai with marks
    };
    static const char* const kContractions[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL"};
    static const char* const kPunct[] = {".", ",", "!", "?", ";", ":", "...", " -", " (", ")", "\"", " #", " &&"};
    std::mt19937 rng(12345);
    // rng() % n, not a distribution: mt19937's output is specified, distributions are not (libstdc++ and
    // Emscripten's libc++ differ), and native and wasm must time the same bytes.
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    std::string text;
    while (text.size() < bytes) {
        const Script& s = scripts[pick(10) < 4 ? 0 : pick(10)];
        const int words = 4 + pick(12);
        for (int w = 0; w < words; ++w) {
            const int r = pick(40);
            if (r == 0) {
                text += std::to_string(rng() % 100000000);
            } else if (r == 1) {
                ws::utf8_append(0x1F600 + static_cast<uint32_t>(pick(80)), &text);  // emoji
            } else {
                const int len = s.word_min + pick(s.word_max - s.word_min + 1);
                for (int k = 0; k < len; ++k) {
                    uint32_t cp = s.first + static_cast<uint32_t>(pick(static_cast<int>(s.last - s.first + 1)));
                    if (s.first == 'a' && k == 0 && pick(4) == 0) cp -= 32;  // a capital
                    ws::utf8_append(cp, &text);
                    if (s.mark_first != 0 && pick(3) == 0) {
                        ws::utf8_append(s.mark_first + static_cast<uint32_t>(
                                                           pick(static_cast<int>(s.mark_last - s.mark_first + 1))),
                                        &text);
                    }
                }
                if (s.first == 'a' && pick(12) == 0) text += kContractions[pick(9)];
            }
            if (pick(8) == 0) text += kPunct[pick(13)];
            const int gap = pick(30);
            text += gap == 0 ? "   " : gap == 1 ? "\n" : gap == 2 ? "\n\n" : gap == 3 ? "\t" : " ";
        }
        text += pick(3) == 0 ? "\n\n" : "\n";
    }
    return text;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
    const double megabytes = argc > 1 ? std::atof(argv[1]) : 1.0;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
    const std::string text = make_text(static_cast<size_t>(megabytes * 1e6));
    if (argc > 4 && std::strcmp(argv[3], "--dump") == 0) {
        FILE* f = std::fopen(argv[4], "wb");
        if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
            std::fprintf(stderr, "regex_bench: cannot write %s\n", argv[4]);
            return 1;
        }
    }
    struct Pattern {
        const char* name;
        const char* pattern;
    };
    const Pattern patterns[] = {
        {"llama3 (tokenizer.json, (?i:...))",
         "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
         "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
        {"llama3 (llama.cpp's adapted form)",
         "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
         "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
        {"gpt2", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"},
    };
    std::printf("text: %zu bytes, best of %d runs\n", text.size(), runs);
    for (const Pattern& p : patterns) {
        auto compiled = ws::Regex::compile(p.pattern);
        if (!compiled.ok()) {
            std::fprintf(stderr, "regex_bench: %s: %s\n", p.name, compiled.status().what);
            return 1;
        }
        const ws::Regex& re = compiled.value();
        ws::RegexScratch scratch;
        // Verify: consecutive, gap-free pieces.
        size_t pieces = 0, at = 0;
        ws::RegexMatch m;
        while (at < text.size() && re.find(text.data(), text.size(), at, &m, &scratch)) {
            if (m.begin != at || m.end <= m.begin) {
                std::fprintf(stderr, "regex_bench: %s: a gap or an empty piece at byte %zu\n", p.name, at);
                return 1;
            }
            at = m.end;
            ++pieces;
        }
        if (at != text.size()) {
            std::fprintf(stderr, "regex_bench: %s: the pieces end at %zu of %zu\n", p.name, at, text.size());
            return 1;
        }
        double best = 1e30;
        for (int r = 0; r < runs; ++r) {
            const auto start = std::chrono::steady_clock::now();
            size_t count = 0;
            at = 0;
            while (at < text.size() && re.find(text.data(), text.size(), at, &m, &scratch)) {
                at = m.end;
                ++count;
            }
            const double s = seconds_since(start);
            if (count != pieces) return 1;
            if (s < best) best = s;
        }
        std::printf("%-36s %8zu pieces  %7.2f MB/s  (%.1f ms, program %zu instructions)\n", p.name, pieces,
                    static_cast<double>(text.size()) / best / 1e6, best * 1e3, re.program_size());
    }
    return 0;
}
