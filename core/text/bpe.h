// SPDX-License-Identifier: MIT
// Byte-pair merging over token ids: the one merge loop of every BPE tokenizer here (llama.cpp's gpt2 models and
// Hugging Face's BPE model). Both references merge the same way: repeatedly the adjacent pair whose rule has the
// lowest rank, the leftmost of equal ranks, until no adjacent pair has a rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ws {

// Merge rules: (left id, right id) -> (rank, merged id). An open-addressing table sized to its rules.
class BpeMerges {
public:
    struct Rule {
        int32_t rank = -1;
        int32_t merged = -1;
    };

    void reserve(size_t rules);
    // Sets the rule of a pair (ids >= 0). A pair that has a rule keeps it unless `replace`: llama.cpp keeps the
    // first of duplicate merges, Hugging Face the last. Returns whether the rule was stored.
    bool insert(int32_t left, int32_t right, Rule rule, bool replace);
    // The rule of a pair, or nullptr.
    const Rule* find(int32_t left, int32_t right) const;
    size_t size() const { return count_; }

private:
    struct Slot {
        uint64_t key = ~uint64_t(0);  // left << 32 | right; all ones: empty
        Rule rule;
    };
    void grow();
    std::vector<Slot> slots_;
    size_t count_ = 0;
};

// Reusable working memory of bpe_merge(): one per thread of execution.
struct BpeScratch {
    struct Symbol {
        int32_t id;
        int32_t prev;  // index of the previous live symbol, -1 at the start
        int32_t next;  // index of the next live symbol, -1 at the end
    };
    struct Candidate {
        int32_t rank;
        int32_t left;  // index of the left symbol (its original position: leftmost = smallest)
        int32_t left_id;
        int32_t right_id;
    };
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap;
};

// Merges *ids (one word's symbols, in order) in place by the rules, as described above. Ids < 0 (a piece the
// vocabulary lacks) never merge. O(n log n) in the number of symbols: a word of a megabyte costs no more per
// symbol than a short one.
void bpe_merge(const BpeMerges& merges, std::vector<int32_t>* ids, BpeScratch* scratch);

}  // namespace ws
