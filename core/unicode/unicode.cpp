// SPDX-License-Identifier: MIT
#include "weightstream/unicode.h"

#include <algorithm>
#include <cstring>

#include "unicode/unicode_tables.h"
#include "weightstream/utf8.h"

namespace ws {
namespace {

namespace ut = unicode_tables;

uint32_t lookup_pair(const ut::CodePointPair* table, size_t size, uint32_t cp) {
    const ut::CodePointPair* end = table + size;
    const auto* it = std::partition_point(table, end, [cp](const ut::CodePointPair& p) { return p.from < cp; });
    return it != end && it->from == cp ? it->to : cp;
}

// The range of `ranges` (sorted, disjoint (first, last, ...) rows) that holds cp, or nullptr.
template <typename Range>
const Range* find_range(const Range* ranges, size_t count, uint32_t cp) {
    const Range* end = ranges + count;
    const Range* it = std::partition_point(ranges, end, [cp](const Range& r) { return r.last < cp; });
    return it != end && it->first <= cp ? it : nullptr;
}

bool name_is(const char* name, size_t n, const char* want) {
    return std::strlen(want) == n && std::memcmp(name, want, n) == 0;
}

constexpr UnicodeCategoryMask bit(UnicodeCategory c) {
    return unicode_category_bit(c);
}
using C = UnicodeCategory;
constexpr UnicodeCategoryMask kLetters = bit(C::kLu) | bit(C::kLl) | bit(C::kLt) | bit(C::kLm) | bit(C::kLo);
constexpr UnicodeCategoryMask kCased = bit(C::kLu) | bit(C::kLl) | bit(C::kLt);
constexpr UnicodeCategoryMask kMarks = bit(C::kMn) | bit(C::kMc) | bit(C::kMe);
constexpr UnicodeCategoryMask kNumbers = bit(C::kNd) | bit(C::kNl) | bit(C::kNo);
constexpr UnicodeCategoryMask kPunct =
    bit(C::kPc) | bit(C::kPd) | bit(C::kPs) | bit(C::kPe) | bit(C::kPi) | bit(C::kPf) | bit(C::kPo);
constexpr UnicodeCategoryMask kSymbols = bit(C::kSm) | bit(C::kSc) | bit(C::kSk) | bit(C::kSo);
constexpr UnicodeCategoryMask kSeparators = bit(C::kZs) | bit(C::kZl) | bit(C::kZp);
constexpr UnicodeCategoryMask kOthers = bit(C::kCc) | bit(C::kCf) | bit(C::kCs) | bit(C::kCo) | bit(C::kCn);
constexpr UnicodeCategoryMask kAll = (UnicodeCategoryMask{1} << kUnicodeCategoryCount) - 1;

struct CategoryName {
    const char* short_name;
    const char* long_name;
    UnicodeCategoryMask mask;
};
// Short names as UnicodeData.txt and PropertyValueAliases.txt spell them, long names as the latter does.
const CategoryName kCategoryNames[] = {
    {"L", "Letter", kLetters},
    {"LC", "Cased_Letter", kCased},
    {"L&", "L&", kCased},
    {"Lu", "Uppercase_Letter", bit(C::kLu)},
    {"Ll", "Lowercase_Letter", bit(C::kLl)},
    {"Lt", "Titlecase_Letter", bit(C::kLt)},
    {"Lm", "Modifier_Letter", bit(C::kLm)},
    {"Lo", "Other_Letter", bit(C::kLo)},
    {"M", "Mark", kMarks},
    {"Mn", "Nonspacing_Mark", bit(C::kMn)},
    {"Mc", "Spacing_Mark", bit(C::kMc)},
    {"Me", "Enclosing_Mark", bit(C::kMe)},
    {"N", "Number", kNumbers},
    {"Nd", "Decimal_Number", bit(C::kNd)},
    {"Nl", "Letter_Number", bit(C::kNl)},
    {"No", "Other_Number", bit(C::kNo)},
    {"P", "Punctuation", kPunct},
    {"Pc", "Connector_Punctuation", bit(C::kPc)},
    {"Pd", "Dash_Punctuation", bit(C::kPd)},
    {"Ps", "Open_Punctuation", bit(C::kPs)},
    {"Pe", "Close_Punctuation", bit(C::kPe)},
    {"Pi", "Initial_Punctuation", bit(C::kPi)},
    {"Pf", "Final_Punctuation", bit(C::kPf)},
    {"Po", "Other_Punctuation", bit(C::kPo)},
    {"S", "Symbol", kSymbols},
    {"Sm", "Math_Symbol", bit(C::kSm)},
    {"Sc", "Currency_Symbol", bit(C::kSc)},
    {"Sk", "Modifier_Symbol", bit(C::kSk)},
    {"So", "Other_Symbol", bit(C::kSo)},
    {"Z", "Separator", kSeparators},
    {"Zs", "Space_Separator", bit(C::kZs)},
    {"Zl", "Line_Separator", bit(C::kZl)},
    {"Zp", "Paragraph_Separator", bit(C::kZp)},
    {"C", "Other", kOthers},
    {"Cc", "Control", bit(C::kCc)},
    {"Cf", "Format", bit(C::kCf)},
    {"Cs", "Surrogate", bit(C::kCs)},
    {"Co", "Private_Use", bit(C::kCo)},
    {"Cn", "Unassigned", bit(C::kCn)},
    {"Any", "Any", kAll},
};

}  // namespace

uint8_t unicode_property_key(uint32_t cp) {
    if (cp >= 0x110000) return 0;
    return ut::kStage2[static_cast<size_t>(ut::kStage1[cp / ut::kBlockSize]) * ut::kBlockSize + cp % ut::kBlockSize];
}

UnicodeCategory unicode_category(uint32_t cp) {
    return static_cast<UnicodeCategory>(unicode_property_key(cp) & ut::kCategoryMask);
}

bool unicode_is_white_space(uint32_t cp) {
    return (unicode_property_key(cp) & ut::kWhiteSpaceBit) != 0;
}

uint32_t unicode_to_lower(uint32_t cp) {
    return lookup_pair(ut::kLower, ut::kLowerSize, cp);
}
uint32_t unicode_to_upper(uint32_t cp) {
    return lookup_pair(ut::kUpper, ut::kUpperSize, cp);
}
uint32_t unicode_to_title(uint32_t cp) {
    return lookup_pair(ut::kTitle, ut::kTitleSize, cp);
}
uint32_t unicode_simple_fold(uint32_t cp) {
    return lookup_pair(ut::kFold, ut::kFoldSize, cp);
}

bool unicode_category_mask_from_name(const char* name, size_t n, UnicodeCategoryMask* mask) {
    for (const CategoryName& c : kCategoryNames) {
        if (name_is(name, n, c.short_name) || name_is(name, n, c.long_name)) {
            *mask = c.mask;
            return true;
        }
    }
    return false;
}

int unicode_script_from_name(const char* name, size_t n) {
    for (size_t i = 0; i < ut::kScriptCount; ++i) {
        if (name_is(name, n, ut::kScriptNames[i])) return static_cast<int>(i);
    }
    return -1;
}

int unicode_script(uint32_t cp) {
    const auto* range = find_range(ut::kScriptRanges, ut::kScriptRangeCount, cp);
    return range ? static_cast<int>(range->script) : -1;
}

bool unicode_age_at_most_9_0(uint32_t cp) {
    return find_range(ut::kAgeAtMost9Ranges, ut::kAgeAtMost9RangeCount, cp) != nullptr;
}

uint32_t unicode_next_lossy(const uint8_t* p, size_t n, size_t* len) {
    if (p[0] < 0x80) {
        *len = 1;
        return p[0];
    }
    const int32_t cp = utf8_next(p, n, len);
    return cp < 0 ? 0xFFFD : static_cast<uint32_t>(cp);
}

GraphemeBreak unicode_grapheme_break(uint32_t cp) {
    const auto* range = find_range(ut::kGraphemeRanges, ut::kGraphemeRangeCount, cp);
    return range ? static_cast<GraphemeBreak>(range->value) : GraphemeBreak::kOther;
}

size_t unicode_grapheme_length(const uint8_t* p, size_t n) {
    using G = GraphemeBreak;
    size_t len = 0;
    G prev = unicode_grapheme_break(unicode_next_lossy(p, n, &len));
    size_t at = len;
    // GB11's state: the cluster so far ends in Extended_Pictographic Extend* (pict) or in that and a ZWJ
    // (pict_zwj). GB12/13's: how many Regional_Indicators the cluster ends in.
    bool pict = prev == G::kExtendedPictographic, pict_zwj = false;
    size_t ri = prev == G::kRegionalIndicator ? 1 : 0;
    while (at < n) {
        const G cur = unicode_grapheme_break(unicode_next_lossy(p + at, n - at, &len));
        const bool prev_control = prev == G::kControl || prev == G::kCR || prev == G::kLF;
        const bool cur_control = cur == G::kControl || cur == G::kCR || cur == G::kLF;
        bool join;
        if (prev == G::kCR && cur == G::kLF) {
            join = true;  // GB3
        } else if (prev_control || cur_control) {
            join = false;  // GB4, GB5
        } else {
            join = (prev == G::kL && (cur == G::kL || cur == G::kV || cur == G::kLV || cur == G::kLVT)) ||  // GB6
                   ((prev == G::kLV || prev == G::kV) && (cur == G::kV || cur == G::kT)) ||                 // GB7
                   ((prev == G::kLVT || prev == G::kT) && cur == G::kT) ||                                  // GB8
                   cur == G::kExtend || cur == G::kZWJ ||                                                   // GB9
                   cur == G::kSpacingMark ||                                                                // GB9a
                   prev == G::kPrepend ||                                                                   // GB9b
                   (pict_zwj && cur == G::kExtendedPictographic) ||                                         // GB11
                   (cur == G::kRegionalIndicator && ri % 2 == 1);                                           // GB12/13
        }
        if (!join) return at;  // GB999
        pict_zwj = pict && cur == G::kZWJ;
        pict = cur == G::kExtendedPictographic || (pict && cur == G::kExtend);
        ri = cur == G::kRegionalIndicator ? ri + 1 : 0;
        prev = cur;
        at += len;
    }
    return n;
}

namespace unicode_detail {
size_t script_range_count() {
    return ut::kScriptRangeCount;
}
ScriptRangeView script_range(size_t i) {
    const ut::ScriptRange& r = ut::kScriptRanges[i];
    return {r.first, r.last, r.script};
}
}  // namespace unicode_detail

}  // namespace ws
