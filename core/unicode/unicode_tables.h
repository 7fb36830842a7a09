// SPDX-License-Identifier: MIT
// The tables that cmake/gen_unicode_tables.py generates at build time from Debian's unicode-data
// (the Unicode Character Database, 15.0.0): internal, read through include/weightstream/unicode.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ws {
namespace unicode_tables {

constexpr uint32_t kBlockSize = 128;     // code points per stage-2 block
constexpr uint32_t kCategoryCount = 30;  // UnicodeCategory's values
constexpr uint8_t kWhiteSpaceBit = 0x20;
constexpr uint8_t kCategoryMask = 0x1f;

// The byte of code point c is kStage2[kStage1[c / kBlockSize] * kBlockSize + c % kBlockSize]: its general
// category (low 5 bits) | kWhiteSpaceBit when it has the White_Space property.
extern const uint16_t kStage1[0x110000 / kBlockSize];
extern const uint8_t kStage2[];

struct CodePointPair {
    uint32_t from;
    uint32_t to;
};
// Sorted by `from`. Simple (one code point) mappings only: the full ones (SpecialCasing.txt) are not here.
extern const CodePointPair kLower[];  // UnicodeData.txt field 13
extern const size_t kLowerSize;
extern const CodePointPair kUpper[];  // field 12
extern const size_t kUpperSize;
extern const CodePointPair kTitle[];  // field 14
extern const size_t kTitleSize;
extern const CodePointPair kFold[];  // CaseFolding.txt, statuses C and S (simple case folding)
extern const size_t kFoldSize;

struct ScriptRange {
    uint32_t first;
    uint32_t last;
    uint32_t script;  // index in kScriptNames
};
extern const char* const kScriptNames[];  // Scripts.txt's names: "Latin", "Han", ...
extern const size_t kScriptCount;
extern const ScriptRange kScriptRanges[];  // sorted, disjoint
extern const size_t kScriptRangeCount;

struct CodePointRange {
    uint32_t first;
    uint32_t last;
};
// The code points DerivedAge.txt dates 9.0 or earlier (those Unicode 9.0 assigned or set aside: surrogates,
// private use, noncharacters): sorted, disjoint, adjacent ranges merged.
extern const CodePointRange kAgeAtMost9Ranges[];
extern const size_t kAgeAtMost9RangeCount;
constexpr uint32_t kGraphemeBreakCount = 15;  // GraphemeBreak's values
struct GraphemeRange {
    uint32_t first;
    uint32_t last;
    uint32_t value;  // a GraphemeBreak, never kOther
};
extern const GraphemeRange kGraphemeRanges[];  // sorted, disjoint
extern const size_t kGraphemeRangeCount;

// Normalization (unicode_norm_tables.cpp, generated beside).
struct CccRange {
    uint32_t first;
    uint32_t last;
    uint8_t ccc;  // canonical combining class, not 0
};
extern const CccRange kCccRanges[];  // sorted, disjoint
extern const size_t kCccRangeCount;
struct Decomposition {
    uint32_t cp;
    uint16_t canonical_offset;  // full canonical decomposition: kDecompositionPool[offset .. offset + length)
    uint8_t canonical_length;   // 0: none (a compatibility decomposition only)
    uint16_t compat_offset;     // full compatibility decomposition (canonical ones included)
    uint8_t compat_length;
};
extern const Decomposition kDecompositions[];  // sorted by cp; Hangul syllables are algorithmic
extern const size_t kDecompositionCount;
extern const uint32_t kDecompositionPool[];
struct Composition {
    uint32_t first;
    uint32_t second;
    uint32_t composite;
};
extern const Composition kCompositions[];  // sorted by (first, second): primary composites only
extern const size_t kCompositionCount;

}  // namespace unicode_tables
}  // namespace ws
