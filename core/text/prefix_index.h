// SPDX-License-Identifier: MIT
// Longest-prefix lookups over a set of byte strings, the trie walks of llama.cpp's tokenizers (naive_trie in
// src/llama-vocab.cpp) without a node per byte: the keys sorted once, and a walk narrows a range of them one
// byte at a time by binary search. Memory is one index per key; a step costs O(log keys).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ws {

class PrefixIndex {
public:
    // Keys and their values; equal keys keep the value added last (naive_trie's insert overwrites).
    void add(std::string key, int32_t value) { entries_.push_back({std::move(key), value}); }
    void build() {
        std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
            return a.key < b.key;  // std::string compares bytes as unsigned char
        });
        std::vector<Entry> unique;
        unique.reserve(entries_.size());
        for (Entry& e : entries_) {
            if (!unique.empty() && unique.back().key == e.key) {
                unique.back().value = e.value;
            } else {
                unique.push_back(std::move(e));
            }
        }
        entries_.swap(unique);
    }
    bool empty() const { return entries_.empty(); }

    // A walk: the keys that start with the bytes consumed so far.
    struct Cursor {
        size_t lo = 0, hi = 0, depth = 0;
        bool alive() const { return lo < hi; }
    };
    Cursor start() const { return Cursor{0, entries_.size(), 0}; }
    // Consumes one byte.
    void step(Cursor* c, uint8_t byte) const {
        const size_t d = c->depth;
        // Inside the range every key shares the first d bytes; keys of length d sort first.
        auto rank = [d](const Entry& e) -> int { return e.key.size() > d ? int(uint8_t(e.key[d])) : -1; };
        auto first = entries_.begin() + ptrdiff_t(c->lo), last = entries_.begin() + ptrdiff_t(c->hi);
        auto lo = std::lower_bound(first, last, int(byte), [&](const Entry& e, int b) { return rank(e) < b; });
        auto hi = std::upper_bound(lo, last, int(byte), [&](int b, const Entry& e) { return b < rank(e); });
        c->lo = size_t(lo - entries_.begin());
        c->hi = size_t(hi - entries_.begin());
        c->depth = d + 1;
    }
    // The value of the key equal to the bytes consumed, or -1 (none; also for the empty walk).
    int32_t value(const Cursor& c) const {
        if (c.depth == 0 || !c.alive()) return -1;
        const Entry& e = entries_[c.lo];
        return e.key.size() == c.depth ? e.value : -1;
    }

private:
    struct Entry {
        std::string key;
        int32_t value;
    };
    std::vector<Entry> entries_;
};

}  // namespace ws
