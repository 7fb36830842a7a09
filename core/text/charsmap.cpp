// SPDX-License-Identifier: MIT
#include "text/charsmap.h"

#include "base/le_bytes.h"
#include "weightstream/utf8.h"

namespace ws {

Status Charsmap::parse(std::string_view blob, Error code, Charsmap* out) {
    if (blob.size() < 4) return make_error(code, 0, "precompiled_charsmap (shorter than its trie size)");
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(blob.data());
    const uint32_t trie_bytes = load_le32(bytes);
    // spm_precompiled reads trie_bytes / 4 units and leaves the rest to the strings, llama.cpp skips it: no
    // SentencePiece writes such a size, so neither reading is taken.
    if (trie_bytes % 4 != 0) return make_error(code, 0, "precompiled_charsmap (trie size not a multiple of 4)");
    if (uint64_t(trie_bytes) > blob.size() - 4) {
        return make_error(code, 0, "precompiled_charsmap (trie size past the end)");
    }
    out->units_.resize(trie_bytes / 4);
    for (size_t i = 0; i < out->units_.size(); ++i) out->units_[i] = load_le32(bytes + 4 + i * 4);
    out->strings_.assign(blob.substr(4 + size_t(trie_bytes)));
    return ok_status();
}

Status Charsmap::check_complete(Error code) const {
    const uint8_t* str = reinterpret_cast<const uint8_t*>(strings_.data());
    for (size_t i = 0, len = 0; i < strings_.size(); i += len) {
        if (utf8_next(str + i, strings_.size() - i, &len) < 0) {
            return make_error(code, 4 + units_.size() * 4 + i, "precompiled_charsmap (strings not UTF-8)");
        }
    }
    if (units_.empty()) return make_error(code, 0, "precompiled_charsmap (no root unit)");
    // Depth-first over the nodes reachable from the root, iteratively (a path may be as long as the array).
    // state: 0 unseen, 1 on the current path, 2 done. A node on the current path reached again is a cycle.
    std::vector<uint8_t> state(units_.size(), 0);
    struct Frame {
        uint32_t node;
        uint32_t block;  // node ^ OFFSET(node): its children are block ^ c
        uint32_t next;   // the next label to try
    };
    std::vector<Frame> stack;
    auto enter = [&](uint32_t node) -> Status {
        const uint32_t block = uint32_t(node ^ offset_of(units_[node]));
        if ((uint64_t(block) | 0xFF) >= units_.size()) {
            return make_error(code, 4 + uint64_t(node) * 4, "precompiled_charsmap (a node's children past the end)");
        }
        // The node's own HAS_LEAF is read by its parent's step; its value unit is the block's slot 0.
        state[node] = 1;
        stack.push_back({node, block, 1});
        return ok_status();
    };
    WS_TRY(enter(0));
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next > 0xFF) {
            state[f.node] = 2;
            stack.pop_back();
            continue;
        }
        const uint32_t c = f.next++;
        const uint32_t child = f.block ^ c;
        const uint32_t unit = units_[child];
        if (label_of(unit) != c) continue;
        if (has_leaf(unit)) {
            const uint32_t value_at = uint32_t(child ^ offset_of(unit));
            if (value_at >= units_.size()) {
                return make_error(code, 4 + uint64_t(child) * 4, "precompiled_charsmap (a leaf past the end)");
            }
            const uint32_t value = units_[value_at] & ((1u << 31) - 1);
            if (value > strings_.size() || (value < strings_.size() && (str[value] & 0xC0) == 0x80)) {
                return make_error(code, 4 + uint64_t(value_at) * 4,
                                  "precompiled_charsmap (a replacement offset outside the strings)");
            }
        }
        if (state[child] == 1) return make_error(code, 4 + uint64_t(child) * 4, "precompiled_charsmap (a cycle)");
        if (state[child] == 0) WS_TRY(enter(child));
    }
    return ok_status();
}

std::string_view Charsmap::replacement(uint32_t offset) const {
    if (offset >= strings_.size()) return {};
    const size_t end = strings_.find('\0', offset);
    return std::string_view(strings_).substr(offset, (end == std::string::npos ? strings_.size() : end) - offset);
}

}  // namespace ws
