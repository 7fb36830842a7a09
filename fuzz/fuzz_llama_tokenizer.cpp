// SPDX-License-Identifier: MIT
// libFuzzer target: the GGUF tokenizer (tokenizer.h's vocab_from_gguf / llama_tokenizer). The first byte picks
// (modulo the table count + 2; the seeds in fuzz/corpus assume 16 tables)
// what is fuzzed: a text through one of a fixed set of small tables (every model kind, several pre-tokenizers,
// special tokens with strip attributes), a precompiled charsmap (t5) with a text, or a whole GGUF header whose
// tokenizer keys are read and used. Beyond "no crash": every id produced lies in the table, and detokenizing any
// in-range ids succeeds.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "weightstream/gguf.h"
#include "weightstream/tokenizer.h"

namespace {

void check(bool condition) {
    if (!condition) std::abort();
}

std::vector<std::string> with_bytes(std::vector<std::string> tokens) {
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) tokens.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
    return tokens;
}

ws::VocabTable gpt2(const char* pre) {
    ws::VocabTable t;
    t.model = "gpt2";
    t.pre = pre;
    // the 256 byte-level characters, a few merges over them, and special tokens
    for (int b = 0; b < 256; ++b) {
        uint32_t cp = uint32_t(b);
        if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
            uint32_t n = 0;
            for (int c = 0; c < b; ++c) n += !((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE);
            cp = 0x100 + n;
        }
        std::string s;
        if (cp < 0x80) {
            s.push_back(char(cp));
        } else {
            s.push_back(char(0xC0 | (cp >> 6)));
            s.push_back(char(0x80 | (cp & 0x3F)));
        }
        t.tokens.push_back(s);
    }
    const std::vector<std::string> merged = {
        "\xC4\xA0"
        "t",
        "he",
        "\xC4\xA0"
        "the",
        "in",
        "er",
        "\xC4\xA0"
        "a",
        "ll",
        "\xE2\x96\x81"};
    t.tokens.insert(t.tokens.end(), merged.begin(), merged.end());
    t.merges = {"\xC4\xA0 t", "h e", "\xC4\xA0t he", "i n", "e r", "\xC4\xA0 a", "l l"};
    t.tokens.push_back("<|endoftext|>");
    t.tokens.push_back("<mask>");
    t.token_types.assign(t.tokens.size(), 1);
    t.token_types[t.tokens.size() - 2] = 3;
    t.token_types[t.tokens.size() - 1] = 4;
    t.bos = t.sep = int32_t(t.tokens.size() - 2);  // jina-v2-code adds a SEP: a table without one is refused
    t.add_bos = 1;
    return t;
}

std::vector<std::unique_ptr<ws::Tokenizer>> make_tables() {
    std::vector<ws::VocabTable> tables;
    for (const char* pre : {"gpt-2", "llama-bpe", "deepseek-llm", "deepseek-v3", "tekken", "chameleon", "default",
                            "falcon", "qwen35", "gpt-4o", "jina-v2-code", "gemma4"}) {
        tables.push_back(gpt2(pre));
    }
    {
        // more special tokens than the partition searches for one by one (overlapping texts among them)
        ws::VocabTable t = gpt2("llama-bpe");
        for (int i = 0; i < 80; ++i) {
            t.tokens.push_back(i % 2 ? "<t" + std::to_string(i) + ">" : "t" + std::to_string(i) + "<");
            t.token_types.push_back(i % 3 ? 4 : 3);
        }
        tables.push_back(t);
    }
    {
        ws::VocabTable t;
        t.model = "llama";
        t.name = "Phi3";
        t.tokens = with_bytes({"<unk>", "<s>", "</s>", "<|end|>", "\xE2\x96\x81", "a", "b",
                               "\xE2\x96\x81"
                               "a",
                               "ab"});
        t.scores.assign(t.tokens.size(), -1.0f);
        t.token_types.assign(t.tokens.size(), 6);
        for (int i = 0; i < 9; ++i) t.token_types[size_t(i)] = i == 0 ? 2 : i < 3 ? 3 : i == 3 ? 4 : 1;
        tables.push_back(t);
    }
    {
        ws::VocabTable t;
        t.model = "bert";
        t.tokens = {"[PAD]",
                    "[UNK]",
                    "[CLS]",
                    "[SEP]",
                    "[MASK]",
                    "\xE2\x96\x81"
                    "a",
                    "##b",
                    "\xE2\x96\x81",
                    "a"};
        t.token_types = {3, 3, 3, 3, 3, 1, 1, 1, 1};
        t.unk = 1, t.bos = 2, t.sep = 3;
        tables.push_back(t);
    }
    {
        ws::VocabTable t;
        t.model = "rwkv";
        t.tokens = {"<unk>", "a", "ab", "\\n", "\\x41", "abcd", "\\xff"};
        t.unk = 0;
        tables.push_back(t);
    }
    // llama.cpp's splitters and the sessions of the whitespace, hybriddna and plamo2 models
    for (const char* pre : {"kimi-k2", "afmoe", "superbpe", "tiny_aya"}) tables.push_back(gpt2(pre));
    for (const char* model : {"whitespace", "hybriddna"}) {
        ws::VocabTable t = gpt2(model == std::string("whitespace") ? "whitespace" : "gpt-2");
        t.model = model;
        for (const char* s : {"<dna>", "</dna>", "<oov>", "ACGTAC\xEE\x80\x80", "<0x41>"}) {
            t.tokens.push_back(s);
            t.token_types.push_back(s[0] == '<' && s[1] != '0' ? 3 : 1);
        }
        tables.push_back(t);
    }
    {
        ws::VocabTable t;
        t.model = "plamo2";
        t.tokens = with_bytes({"<unk>", "<s>", "</s>", "<pad>", "a", "ab", "abc", "b", "\xE4\xB8\xAD"});
        t.scores.assign(t.tokens.size(), -1.5f);
        t.token_types.assign(t.tokens.size(), 6);
        for (int i = 0; i < 9; ++i) t.token_types[size_t(i)] = i == 0 ? 2 : i < 4 ? 3 : 1;
        tables.push_back(t);
    }
    std::vector<std::unique_ptr<ws::Tokenizer>> out;
    for (ws::VocabTable& t : tables) {
        auto r = ws::llama_tokenizer(t);
        check(r.ok());
        out.push_back(std::move(r).value());
    }
    return out;
}

ws::VocabTable t5_table(std::string charsmap) {
    ws::VocabTable t;
    t.model = "t5";
    t.tokens = {"<pad>",
                "</s>",
                "<unk>",
                "\xE2\x96\x81",
                "\xE2\x96\x81"
                "ab",
                "a",
                "b",
                "c",
                "<extra_id_0>"};
    t.scores = {0, 0, 0, -2, -1, -3, -3, -3, 0};
    t.token_types = {3, 3, 2, 1, 1, 1, 1, 1, 4};
    t.add_space_prefix = 1;
    t.remove_extra_whitespaces = 1;
    t.precompiled_charsmap = std::move(charsmap);
    return t;
}

void exercise(const ws::Tokenizer& tok, const std::string& text, uint8_t flags) {
    ws::TokenizeOptions o;
    o.add_special = flags & 1;
    o.parse_special = flags & 2;
    std::vector<int32_t> ids;
    if (!tok.tokenize(text, o, &ids).ok()) return;
    for (int32_t id : ids) check(id >= 0 && size_t(id) < tok.size());
    ws::DetokenizeOptions d;
    d.remove_special = flags & 4;
    d.unparse_special = flags & 8;
    std::string back;
    check(tok.detokenize(ids.data(), ids.size(), d, &back).ok());
    // ids straight from the text's bytes
    std::vector<int32_t> raw;
    for (size_t i = 0; i < text.size() && i < 64; ++i) raw.push_back(int32_t(uint8_t(text[i]) % tok.size()));
    check(tok.detokenize(raw.data(), raw.size(), d, &back).ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    static const std::vector<std::unique_ptr<ws::Tokenizer>> tables = make_tables();
    const uint8_t mode = data[0], flags = data[1];
    const std::string rest(reinterpret_cast<const char*>(data) + 2, size - 2);
    const size_t n_tables = tables.size();
    if (mode % (n_tables + 2) < n_tables) {
        exercise(*tables[mode % (n_tables + 2)], rest, flags);
    } else if (mode % (n_tables + 2) == n_tables) {
        // t5: the first bytes are the charsmap (length in flags' high bits), the rest the text
        const size_t cut = std::min(rest.size(), size_t(flags >> 4) * 8 + 4);
        auto r = ws::llama_tokenizer(t5_table(rest.substr(0, cut)));
        if (r.ok()) exercise(*r.value(), rest.substr(cut), flags);
    } else {
        ws::ParseOptions options;
        options.file_size = rest.size();
        options.max_header_bytes = 1 << 24;
        options.max_string_bytes = 1 << 20;
        options.max_array_length = 1 << 20;
        ws::GgufParser parser(options);
        if (!parser.feed(reinterpret_cast<const uint8_t*>(rest.data()), rest.size()).ok()) return 0;
        auto r = ws::gguf_tokenizer(parser.info());
        if (r.ok()) exercise(*r.value(), "Hello <s> world\n\xE4\xB8\x80 <|endoftext|> [CLS]", flags);
    }
    return 0;
}
