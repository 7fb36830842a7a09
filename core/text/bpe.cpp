// SPDX-License-Identifier: MIT
#include "text/bpe.h"

#include <algorithm>

namespace ws {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
    return uint64_t(uint32_t(left)) << 32 | uint32_t(right);
}

size_t slot_of(uint64_t key, size_t mask) {
    key ^= key >> 33;  // splitmix64's finaliser: ids are small and dense, spread them
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return size_t(key) & mask;
}

// The heap's order: a min-heap on (rank, left position) through std::push_heap's max-heap.
bool later(const BpeScratch::Candidate& a, const BpeScratch::Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
}

}  // namespace

void BpeMerges::reserve(size_t rules) {
    size_t capacity = 16;
    while (capacity < rules * 2) capacity *= 2;  // load factor at most 1/2
    if (capacity <= slots_.size()) return;
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    count_ = 0;
    for (const Slot& s : old) {
        if (s.key == ~uint64_t(0)) continue;
        size_t mask = slots_.size() - 1;
        size_t i = slot_of(s.key, mask);
        while (slots_[i].key != ~uint64_t(0)) i = (i + 1) & mask;
        slots_[i] = s;
        ++count_;
    }
}

void BpeMerges::grow() {
    reserve(std::max<size_t>(count_ + 1, slots_.size()));
}

bool BpeMerges::insert(int32_t left, int32_t right, Rule rule, bool replace) {
    if (left < 0 || right < 0) return false;
    if ((count_ + 1) * 2 > slots_.size()) grow();
    uint64_t key = pair_key(left, right);
    size_t mask = slots_.size() - 1;
    for (size_t i = slot_of(key, mask);; i = (i + 1) & mask) {
        Slot& s = slots_[i];
        if (s.key == key) {
            if (!replace) return false;
            s.rule = rule;
            return true;
        }
        if (s.key == ~uint64_t(0)) {
            s.key = key;
            s.rule = rule;
            ++count_;
            return true;
        }
    }
}

const BpeMerges::Rule* BpeMerges::find(int32_t left, int32_t right) const {
    if (slots_.empty() || left < 0 || right < 0) return nullptr;
    uint64_t key = pair_key(left, right);
    size_t mask = slots_.size() - 1;
    for (size_t i = slot_of(key, mask);; i = (i + 1) & mask) {
        const Slot& s = slots_[i];
        if (s.key == key) return &s.rule;
        if (s.key == ~uint64_t(0)) return nullptr;
    }
}

void bpe_merge(const BpeMerges& merges, std::vector<int32_t>* ids, BpeScratch* scratch) {
    std::vector<int32_t>& word = *ids;
    const size_t n = word.size();
    if (n < 2) return;
    if (n <= 24) {
        // Short words (nearly all of them): scan for the best pair each round. Same order as the heap below.
        size_t live = n;
        while (live > 1) {
            int32_t best_rank = -1, best_merged = -1;
            size_t best = 0;
            for (size_t i = 0; i + 1 < live; ++i) {
                const BpeMerges::Rule* r = merges.find(word[i], word[i + 1]);
                if (r && (best_rank < 0 || r->rank < best_rank)) {
                    best_rank = r->rank;
                    best_merged = r->merged;
                    best = i;
                }
            }
            if (best_rank < 0) break;
            word[best] = best_merged;
            word.erase(word.begin() + ptrdiff_t(best) + 1);
            --live;
        }
        return;
    }
    std::vector<BpeScratch::Symbol>& sym = scratch->symbols;
    std::vector<BpeScratch::Candidate>& heap = scratch->heap;
    sym.resize(n);
    heap.clear();
    for (size_t i = 0; i < n; ++i) sym[i] = {word[i], int32_t(i) - 1, i + 1 < n ? int32_t(i + 1) : -1};
    auto push = [&](int32_t left) {
        if (left < 0 || sym[size_t(left)].next < 0) return;
        int32_t right = sym[size_t(left)].next;
        const BpeMerges::Rule* r = merges.find(sym[size_t(left)].id, sym[size_t(right)].id);
        if (!r) return;
        heap.push_back({r->rank, left, sym[size_t(left)].id, sym[size_t(right)].id});
        std::push_heap(heap.begin(), heap.end(), later);
    };
    for (size_t i = 0; i + 1 < n; ++i) push(int32_t(i));
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        BpeScratch::Candidate c = heap.back();
        heap.pop_back();
        BpeScratch::Symbol& left = sym[size_t(c.left)];
        // A stale candidate: its left symbol was merged away or changed, or its right neighbour did. A merged-away
        // symbol has id -2 (below), so it never matches.
        if (left.id != c.left_id || left.next < 0 || sym[size_t(left.next)].id != c.right_id) continue;
        BpeScratch::Symbol& right = sym[size_t(left.next)];
        left.id = merges.find(c.left_id, c.right_id)->merged;
        right.id = -2;
        left.next = right.next;
        if (right.next >= 0) sym[size_t(right.next)].prev = c.left;
        push(left.prev);
        push(c.left);
    }
    size_t out = 0;
    for (int32_t i = 0; i >= 0; i = sym[size_t(i)].next) word[out++] = sym[size_t(i)].id;
    word.resize(out);
}

}  // namespace ws
