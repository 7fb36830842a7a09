// SPDX-License-Identifier: MIT
// SentencePiece's precompiled charsmap: the normalizer a SentencePiece model embeds (its normalizer_spec, GGUF's
// tokenizer.ggml.precompiled_charsmap, tokenizer.json's Precompiled normalizer). One reader for both users:
// llama.cpp's UGM normalizer (longest match, llama_tokenizer.cpp) and Hugging Face's Precompiled normalizer
// (first match per grapheme, hf_normalizers.cpp).
//
// Layout: [u32 LE trie size in bytes][the trie: that many bytes of u32 LE units][the normalized strings, each
// ended by a NUL]. The trie is darts-clone's double array: a unit holds LABEL (bits 0..7, and bit 31 set on value
// units so that no byte matches them), HAS_LEAF (bit 8) and OFFSET (bits 10..30, shifted left by 8 when bit 9 is
// set). From node p, the child for byte c is at p ^ OFFSET(p) ^ c when that unit's LABEL is c; a node with HAS_LEAF
// has its value unit at p ^ OFFSET(p), whose low 31 bits are the offset of a replacement in the strings. darts-clone
// shares suffixes (a DAWG): two paths may reach the same unit, so the nodes form a DAG, not a tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weightstream/status.h"

namespace ws {

class Charsmap {
public:
    // Splits a charsmap. Errors (code `code`, what naming the fault): shorter than its size field, a trie size that
    // is not a multiple of 4 (the units are u32) or runs past the end. Safe on untrusted input; allocates the trie's
    // units (bounded by the blob).
    static Status parse(std::string_view blob, Error code, Charsmap* out);

    // Hugging Face's reader (spm_precompiled) indexes the array without bounds checks and panics on a unit outside
    // it; this refuses, at load, every charsmap on which some input would: no root unit, a node reachable from the
    // root whose 256 child slots reach past the array, a reachable leaf whose value is past the strings or inside a
    // UTF-8 sequence, strings that are not UTF-8 (the crate's NormalizedInvalidUtf8). It also refuses a trie whose
    // reachable nodes form a cycle (no darts-clone trie does). Real charsmaps are 256-unit blocks and pass.
    // Time O(reachable nodes x 256): at most 64 steps per byte of the blob; memory O(units).
    Status check_complete(Error code) const;

    // Walks the trie along s[0 .. n): calls on_key(length, value) for each key that is a prefix of s, shortest
    // first, until on_key returns false. The walk ends at a NUL byte, at a byte no key continues with, or at an
    // index outside the array (never reached after check_complete). Returns the number of bytes walked (<= n), so
    // that a caller can budget walks over long texts.
    template <typename OnKey>
    size_t walk(const char* s, size_t n, OnKey on_key) const;

    // The replacement at `offset`: the strings from there to the next NUL or their end; empty when offset is past
    // them.
    std::string_view replacement(uint32_t offset) const;
    bool empty() const { return units_.empty(); }
    size_t strings_size() const { return strings_.size(); }

private:
    static uint32_t offset_of(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
    static uint32_t label_of(uint32_t u) { return u & ((1u << 31) | 0xFF); }
    static bool has_leaf(uint32_t u) { return (u >> 8) & 1; }

    std::vector<uint32_t> units_;
    std::string strings_;
};

template <typename OnKey>
size_t Charsmap::walk(const char* s, size_t n, OnKey on_key) const {
    if (units_.empty()) return 0;
    size_t p = offset_of(units_[0]);
    for (size_t k = 0; k < n; ++k) {
        const uint8_t c = uint8_t(s[k]);
        if (c == 0) return k;
        p ^= c;
        if (p >= units_.size()) return k + 1;
        const uint32_t unit = units_[p];
        if (label_of(unit) != c) return k + 1;
        p ^= offset_of(unit);
        if (has_leaf(unit)) {
            if (p >= units_.size()) return k + 1;
            if (!on_key(k + 1, units_[p] & ((1u << 31) - 1))) return k + 1;
        }
    }
    return n;
}

}  // namespace ws
