// SPDX-License-Identifier: MIT
// Unicode character properties for the tokenizers and the regex engine, from the Unicode Character Database
// (Debian's unicode-data, 15.0.0; tables generated at build time by cmake/gen_unicode_tables.py).
// Pure lookups: no allocation, safe for any uint32_t (values above U+10FFFF are unassigned, Cn).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ws {

// The general category (UnicodeData.txt field 2). The order is the tables' and never changes.
enum class UnicodeCategory : uint8_t {
    kCn,  // unassigned (also every value above U+10FFFF)
    kLu,
    kLl,
    kLt,
    kLm,
    kLo,
    kMn,
    kMc,
    kMe,
    kNd,
    kNl,
    kNo,
    kPc,
    kPd,
    kPs,
    kPe,
    kPi,
    kPf,
    kPo,
    kSm,
    kSc,
    kSk,
    kSo,
    kZs,
    kZl,
    kZp,
    kCc,
    kCf,
    kCs,
    kCo,
};
constexpr int kUnicodeCategoryCount = 30;

// A set of categories, bit (1 << category): what \p{L} and friends name.
using UnicodeCategoryMask = uint32_t;
constexpr UnicodeCategoryMask unicode_category_bit(UnicodeCategory c) {
    return UnicodeCategoryMask{1} << static_cast<int>(c);
}

UnicodeCategory unicode_category(uint32_t cp);
// The White_Space property (PropList.txt): the 25 code points of llama.cpp's unicode_set_whitespace and of
// \s in Oniguruma, Rust's regex and Python's re (JavaScript's \s differs: it adds U+FEFF and lacks U+0085).
bool unicode_is_white_space(uint32_t cp);
// The category (low 5 bits) and, in bit 0x20, White_Space, in one lookup: the key the regex engine's classes
// are indexed by.
uint8_t unicode_property_key(uint32_t cp);

// Simple (one code point) case mappings of UnicodeData.txt, as llama.cpp's unicode_tolower(): cp itself when
// it has none. Full mappings (SpecialCasing.txt: U+0130 lowercases to two code points) are not applied.
uint32_t unicode_to_lower(uint32_t cp);
uint32_t unicode_to_upper(uint32_t cp);
uint32_t unicode_to_title(uint32_t cp);
// Simple case folding (CaseFolding.txt, statuses C and S): what case-insensitive matching compares.
uint32_t unicode_simple_fold(uint32_t cp);

// The categories a \p{NAME} names: a one- or two-letter category ("L", "Lu", "LC"/"L&"), its long name
// ("Letter", "Uppercase_Letter", ...) or "Any"; false for other names (scripts: unicode_script_from_name).
bool unicode_category_mask_from_name(const char* name, size_t n, UnicodeCategoryMask* mask);
// A script of Scripts.txt by its name ("Han", "Latin", "Hiragana"), or -1.
int unicode_script_from_name(const char* name, size_t n);
// The script of a code point (Script property, Scripts.txt): its index, as unicode_script_from_name gives, or -1
// for Unknown (unassigned, private use, surrogates, noncharacters, values above U+10FFFF).
int unicode_script(uint32_t cp);
// Whether DerivedAge.txt dates the code point 9.0 or earlier: Unicode 9.0 had assigned it or set it aside
// (surrogates, private use, noncharacters). Ages never change, so this holds with any later data.
bool unicode_age_at_most_9_0(uint32_t cp);
// Calls fn(first, last) for each range of code points of a script, in order.
template <typename Fn>
void unicode_script_ranges(int script, Fn fn);

// The code point of the text at p[0 .. n) (n > 0) and its length in *len: a well-formed UTF-8 sequence
// (Unicode table 3-7, as utf8_next) gives its code point; a byte that does not start one gives U+FFFD with
// *len = 1, so that every byte belongs to exactly one code point. This is llama.cpp's
// unicode_cpts_from_utf8() (one U+FFFD per byte that does not decode), except that llama.cpp accepts
// overlong forms, surrogates and values above U+10FFFF as code points where this gives U+FFFD for each byte.
uint32_t unicode_next_lossy(const uint8_t* p, size_t n, size_t* len);

// UAX #29's Grapheme_Cluster_Break values (GraphemeBreakProperty.txt), with Extended_Pictographic (emoji-data.txt)
// as one more: no code point has both. The order is the tables' and never changes.
enum class GraphemeBreak : uint8_t {
    kOther,
    kCR,
    kLF,
    kControl,
    kExtend,
    kZWJ,
    kRegionalIndicator,
    kPrepend,
    kSpacingMark,
    kL,
    kV,
    kT,
    kLV,
    kLVT,
    kExtendedPictographic,
};
GraphemeBreak unicode_grapheme_break(uint32_t cp);
// The length in bytes of the extended grapheme cluster that starts p[0 .. n) (n > 0): UAX #29 of Unicode 15.0,
// rules GB3 to GB999. Code points are read as unicode_next_lossy does (a byte that does not start a well-formed
// sequence is one U+FFFD, a Control-free Other). Unicode 15.1's GB9c (Indic conjuncts, by the InCB property that
// the 15.0 database lacks) is not applied. O(length of the cluster).
size_t unicode_grapheme_length(const uint8_t* p, size_t n);

// The canonical combining class (UnicodeData.txt field 3); 0 for starters and out-of-range values.
uint8_t unicode_combining_class(uint32_t cp);

// Unicode normalization forms (UAX #15), as Hugging Face's NFC/NFD/NFKC/NFKD normalizers apply them.
enum class UnicodeNormalization : uint8_t { kNFC, kNFD, kNFKC, kNFKD };
// Appends the normalization of cps[0 .. n) to *out. Time O(n log n) at worst (canonical ordering sorts each run
// of combining marks), memory O(n): a text of one starter and a million marks is no hazard. Values above
// U+10FFFF pass through unchanged.
void unicode_normalize(const uint32_t* cps, size_t n, UnicodeNormalization form, std::vector<uint32_t>* out);

namespace unicode_detail {
struct ScriptRangeView {
    uint32_t first, last, script;
};
size_t script_range_count();
ScriptRangeView script_range(size_t i);
}  // namespace unicode_detail

template <typename Fn>
void unicode_script_ranges(int script, Fn fn) {
    const size_t n = unicode_detail::script_range_count();
    for (size_t i = 0; i < n; ++i) {
        const unicode_detail::ScriptRangeView r = unicode_detail::script_range(i);
        if (static_cast<int>(r.script) == script) fn(r.first, r.last);
    }
}

}  // namespace ws
