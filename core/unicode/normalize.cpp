// SPDX-License-Identifier: MIT
// Unicode normalization (UAX #15) over the generated tables (unicode_norm_tables.cpp): full decomposition by
// table lookup (the generator expands decompositions recursively) or Hangul arithmetic, canonical ordering by a
// stable sort of each run of non-starters, and canonical composition with the blocking rule.
#include <algorithm>

#include "unicode/unicode_tables.h"
#include "weightstream/unicode.h"

namespace ws {
namespace {

namespace ut = unicode_tables;

// Hangul syllables (Unicode 15, section 3.12).
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

const ut::Decomposition* find_decomposition(uint32_t cp) {
    const ut::Decomposition* end = ut::kDecompositions + ut::kDecompositionCount;
    const ut::Decomposition* it =
        std::lower_bound(ut::kDecompositions, end, cp, [](const ut::Decomposition& d, uint32_t c) { return d.cp < c; });
    return it != end && it->cp == cp ? it : nullptr;
}

void decompose(uint32_t cp, bool compat, std::vector<uint32_t>* out) {
    if (cp >= kSBase && cp < kSBase + kSCount) {
        const uint32_t s = cp - kSBase;
        out->push_back(kLBase + s / kNCount);
        out->push_back(kVBase + (s % kNCount) / kTCount);
        if (s % kTCount != 0) out->push_back(kTBase + s % kTCount);
        return;
    }
    const ut::Decomposition* d = cp < 0xA0 ? nullptr : find_decomposition(cp);  // U+00A0: the first
    if (d != nullptr) {
        const uint16_t offset = compat ? d->compat_offset : d->canonical_offset;
        const uint8_t length = compat ? d->compat_length : d->canonical_length;
        if (length != 0) {
            out->insert(out->end(), ut::kDecompositionPool + offset, ut::kDecompositionPool + offset + length);
            return;
        }
    }
    out->push_back(cp);
}

uint32_t compose_pair(uint32_t a, uint32_t b) {
    if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
        return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    }
    if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount) {
        return a + (b - kTBase);
    }
    const ut::Composition* end = ut::kCompositions + ut::kCompositionCount;
    const ut::Composition* it =
        std::lower_bound(ut::kCompositions, end, std::make_pair(a, b), [](const ut::Composition& c, const auto& key) {
            return c.first < key.first || (c.first == key.first && c.second < key.second);
        });
    return it != end && it->first == a && it->second == b ? it->composite : 0;
}

}  // namespace

uint8_t unicode_combining_class(uint32_t cp) {
    const ut::CccRange* end = ut::kCccRanges + ut::kCccRangeCount;
    const ut::CccRange* it =
        std::lower_bound(ut::kCccRanges, end, cp, [](const ut::CccRange& r, uint32_t c) { return r.last < c; });
    return it != end && it->first <= cp ? it->ccc : 0;
}

void unicode_normalize(const uint32_t* cps, size_t n, UnicodeNormalization form, std::vector<uint32_t>* out) {
    const bool compat = form == UnicodeNormalization::kNFKC || form == UnicodeNormalization::kNFKD;
    const bool compose = form == UnicodeNormalization::kNFC || form == UnicodeNormalization::kNFKC;
    const size_t base = out->size();
    for (size_t i = 0; i < n; ++i) decompose(cps[i], compat, out);

    // Canonical ordering: each maximal run of non-starters sorted by class, stably.
    std::vector<std::pair<uint8_t, uint32_t>> run;
    for (size_t i = base; i < out->size();) {
        if (unicode_combining_class((*out)[i]) == 0) {
            ++i;
            continue;
        }
        size_t j = i;
        run.clear();
        while (j < out->size()) {
            const uint8_t c = unicode_combining_class((*out)[j]);
            if (c == 0) break;
            run.push_back({c, (*out)[j]});
            ++j;
        }
        if (run.size() > 1) {
            std::stable_sort(run.begin(), run.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
            for (size_t k = 0; k < run.size(); ++k) (*out)[i + k] = run[k].second;
        }
        i = j;
    }
    if (!compose || out->size() == base) return;

    // Canonical composition: a character joins the last starter unless blocked (a character between them has
    // class 0 or a class >= its own).
    std::vector<uint32_t>& v = *out;
    size_t starter = base;
    int last_class = unicode_combining_class(v[base]);
    if (last_class != 0) last_class = 256;  // a leading non-starter composes with nothing
    size_t write = base + 1;
    for (size_t i = base + 1; i < v.size(); ++i) {
        const uint32_t ch = v[i];
        const int ch_class = unicode_combining_class(ch);
        const uint32_t composite = last_class == 256 ? 0 : compose_pair(v[starter], ch);
        if (composite != 0 && (last_class < ch_class || last_class == 0)) {
            v[starter] = composite;
            continue;
        }
        if (ch_class == 0) starter = write;
        last_class = ch_class;
        v[write++] = ch;
    }
    v.resize(write);
}

}  // namespace ws
