// SPDX-License-Identifier: MIT
// The models of a Hugging Face tokenizer.json (BPE, WordPiece, Unigram, WordLevel) over one compact string table,
// with the Rust crate's semantics. Internal to core/text/hf_*.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe.h"
#include "weightstream/status.h"

namespace ws {
namespace hf {

// Strings with ids: one byte arena, an open-addressing index (no heap object per string). FNV-1a hashing, so a
// prefix's hash extends byte by byte (Unigram's prefix search).
class StringTable {
public:
    static uint64_t hash_init() { return 0xcbf29ce484222325ULL; }
    static uint64_t hash_step(uint64_t h, uint8_t b) { return (h ^ b) * 0x100000001b3ULL; }
    static uint64_t hash(std::string_view s) {
        uint64_t h = hash_init();
        for (char c : s) h = hash_step(h, uint8_t(c));
        return h;
    }

    void reserve(size_t strings, size_t bytes);
    // Adds s with id (>= 0). A string already present gets the new id (the last of duplicate keys wins, as a
    // JSON object read into a map).
    void insert(std::string_view s, int32_t id);
    // The id of s, or -1.
    int32_t find(std::string_view s) const { return find(s, hash(s)); }
    int32_t find(std::string_view s, uint64_t h) const;
    size_t size() const { return entries_.size(); }
    size_t max_length() const { return max_length_; }
    // Every (string, id), in insertion order.
    template <typename Fn>
    void for_each(Fn fn) const {
        for (const Entry& e : entries_) fn(std::string_view(arena_.data() + e.offset, e.length), e.id);
    }

private:
    struct Entry {
        uint32_t offset, length;
        int32_t id;
        uint32_t hash_low;
    };
    void rehash(size_t slots);
    std::string arena_;
    std::vector<Entry> entries_;
    std::vector<int32_t> slots_;  // entry index, -1 empty
    size_t max_length_ = 0;
};

struct ModelScratch {
    std::vector<int32_t> word;
    std::string tmp;
    BpeScratch bpe;
    std::vector<double> best_score;
    std::vector<int32_t> best_id;
    std::vector<uint32_t> best_start;
    std::vector<std::pair<uint32_t, uint32_t>> spans;
};

// model.vocab and model.merges of a tokenizer.json as the streaming reader (hf_tokenizer.cpp) hands them over,
// without a JSON tree: the strings in one arena. Most of a tokenizer.json's bytes are these two lists (Gemma 3's:
// 262,144 tokens and 514,906 merges in 33 MB), and a tree of them costs several times the file.
struct StagedModel {
    struct Str {
        uint32_t offset, length;
    };
    enum class VocabForm : uint8_t { kAbsent, kObject, kPairs };  // {"token": id} / [["piece", score], ...]
    VocabForm vocab_form = VocabForm::kAbsent;
    bool has_merges = false;
    std::string arena;
    struct VocabEntry {
        Str text;
        double value;  // the id (kObject) or the score (kPairs)
    };
    std::vector<VocabEntry> vocab;
    struct Merge {
        Str left, right;
        uint32_t index;  // in the JSON list (error offsets)
    };
    std::vector<Merge> merges;

    Str add(const std::string& s) {
        const Str r{uint32_t(arena.size()), uint32_t(s.size())};
        arena += s;
        return r;
    }
    std::string_view view(Str s) const { return std::string_view(arena.data() + s.offset, s.length); }
};

class Model {
public:
    enum class Kind : uint8_t { kBPE, kWordPiece, kUnigram, kWordLevel };

    // The "model" object of tokenizer.json (its vocab and merges staged apart). kBadJson / kBadKey / kTooLarge /
    // kUnsupported with what naming the field.
    Status load(const nlohmann::json& j, const StagedModel& staged);
    // Appends the ids of one pre-tokenized piece (well-formed UTF-8, non-empty).
    void tokenize(const char* s, size_t n, ModelScratch* scratch, std::vector<int32_t>* ids) const;

    Kind kind() const { return kind_; }
    const StringTable& vocab() const { return vocab_; }
    int32_t unk_id() const { return unk_id_; }
    bool byte_fallback() const { return byte_fallback_; }
    const char* name() const;
    size_t merges() const { return merges_.size(); }
    const std::vector<double>& scores() const { return scores_; }

private:
    Status load_bpe(const nlohmann::json& j, const StagedModel& staged);
    Status load_vocab_object(const StagedModel& staged);
    void tokenize_bpe(const char* s, size_t n, ModelScratch* sc, std::vector<int32_t>* ids) const;
    void tokenize_wordpiece(const char* s, size_t n, ModelScratch* sc, std::vector<int32_t>* ids) const;
    void tokenize_unigram(const char* s, size_t n, ModelScratch* sc, std::vector<int32_t>* ids) const;
    int32_t char_id(const char* s, size_t len, uint32_t cp) const;

    Kind kind_ = Kind::kBPE;
    StringTable vocab_;
    int32_t unk_id_ = -1;
    bool byte_fallback_ = false;
    int32_t byte_ids_[256];
    // BPE
    BpeMerges merges_;
    std::string prefix_, suffix_;  // continuing_subword_prefix, end_of_word_suffix
    bool fuse_unk_ = false, ignore_merges_ = false;
    std::vector<int32_t> char_ids_;  // id of the one-character token of code points below its size, -1 none
    // WordPiece
    size_t max_input_chars_per_word_ = 100;
    // Unigram
    std::vector<double> scores_;
    double min_score_ = 0;
};

}  // namespace hf
}  // namespace ws
