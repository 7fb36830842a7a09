// SPDX-License-Identifier: MIT
// The regex engine of include/weightstream/regex.h: a recursive-descent parser with a nesting limit builds a
// small tree, the tree compiles to a Pike VM program (consume a code point of a set, split with priority,
// jump, assertion, one-code-point look-ahead, match), and find() runs the program over the text with two
// thread lists and an explicit stack for the epsilon closure.
#include "weightstream/regex.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "unicode/unicode_tables.h"
#include "weightstream/unicode.h"
#include "weightstream/utf8.h"

namespace ws {
namespace regex_detail {

using Range = std::pair<uint32_t, uint32_t>;  // [first, last]

// Which code points one instruction consumes. Code points below 128 are one bitmap (negation applied); above,
// membership is "the property key (unicode_property_key: category | White_Space) is in `keys`, or the code
// point is in `ranges`", negated when `negated`. Every \p, \d, \w, \s item is a set of keys, so a class of
// any of them, negated or not, costs one table lookup and one shift.
struct CharSet {
    uint64_t ascii[2] = {0, 0};
    uint64_t keys = 0;
    std::vector<Range> ranges;  // code points >= 128, sorted and disjoint
    bool negated = false;

    bool in_ranges(uint32_t cp) const {
        size_t lo = 0, hi = ranges.size();
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if (ranges[mid].second < cp) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo < ranges.size() && ranges[lo].first <= cp;
    }
    bool contains(uint32_t cp, uint8_t key) const {
        if (cp < 128) return (ascii[cp >> 6] >> (cp & 63)) & 1;
        bool in = (keys >> key) & 1;
        if (!in && !ranges.empty()) in = in_ranges(cp);
        return in != negated;
    }
    bool any_non_ascii() const { return negated || keys != 0 || !ranges.empty(); }
};

enum Op : uint8_t { kConsume, kSplit, kJmp, kAssert, kLook, kMatch };
enum AssertKind : uint8_t { kBegin, kEnd, kWordBoundary, kNotWordBoundary };

struct Inst {
    Op op;
    uint8_t arg;  // kAssert: AssertKind; kLook: 1 when negative
    uint32_t x;   // kConsume/kLook: set; kSplit: preferred target; kJmp: target
    uint32_t y;   // kSplit: the other target
};

struct Program {
    std::vector<Inst> insts;
    std::vector<CharSet> sets;
    // What a match can start with, to skip positions where none can (assertions are ignored: a superset).
    uint64_t first_ascii[2] = {0, 0};
    bool first_non_ascii = false;
    bool first_anything = false;   // an empty match is possible: no skipping
    bool word_boundaries = false;  // \b or \B somewhere: find() needs the code point before `from`
    // The closure of instruction 0 when it holds no assertion (then it is the same at every position): its
    // consume and match instructions in priority order, and per ASCII code point the ones that can proceed
    // (consume it, or match), when that table stays small. Seeding a search at a position is then a copy.
    bool seed_static = false;
    std::vector<uint32_t> seed;
    std::vector<uint32_t> seed_ascii;         // the lists of the 128 ASCII code points, one after the other
    std::vector<uint32_t> seed_ascii_offset;  // 129 offsets into seed_ascii (empty: no table)
    // The same for the instruction after each consume: the closure a thread enters once it has consumed, as
    // next_leaves[next_offset[pc] .. next_offset[pc + 1]) when it holds no assertion (next_static[pc]). The
    // total is capped (kMaxNextLeaves); past it the matcher walks the closure as usual.
    std::vector<uint32_t> next_offset;
    std::vector<uint32_t> next_leaves;
    std::vector<uint8_t> next_static;
};

}  // namespace regex_detail

namespace {

using regex_detail::CharSet;
using regex_detail::Inst;
using regex_detail::Program;
using regex_detail::Range;
namespace rd = regex_detail;

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr int kInfinite = -1;
constexpr int kMaxCount = 1000000;           // counts are clamped here while parsing; the program limit decides
constexpr size_t kMaxTotalRanges = 1 << 20;  // code point ranges of all the classes of a pattern (8 MB)

// Lu, Ll, Lt, Lm, Lo: \p{L}.
constexpr UnicodeCategoryMask kLetterCategories =
    unicode_category_bit(UnicodeCategory::kLu) | unicode_category_bit(UnicodeCategory::kLl) |
    unicode_category_bit(UnicodeCategory::kLt) | unicode_category_bit(UnicodeCategory::kLm) |
    unicode_category_bit(UnicodeCategory::kLo);

// The keys (unicode_property_key values) whose category is in `mask`, White_Space or not.
uint64_t keys_of_categories(UnicodeCategoryMask mask) {
    uint64_t keys = 0;
    for (int key = 0; key < 64; ++key) {
        if ((mask >> (key & 31)) & 1) keys |= uint64_t{1} << key;
    }
    return keys;
}
uint64_t keys_of_white_space() {
    uint64_t keys = 0;
    for (int key = 32; key < 64; ++key) keys |= uint64_t{1} << key;
    return keys;
}
UnicodeCategoryMask word_categories() {
    using C = UnicodeCategory;
    UnicodeCategoryMask m = 0;
    for (C c : {C::kLu, C::kLl, C::kLt, C::kLm, C::kLo, C::kMn, C::kMc, C::kMe, C::kNd, C::kPc}) {
        m |= unicode_category_bit(c);
    }
    return m;
}

bool is_word(uint32_t cp, uint8_t key) {
    static const uint64_t kWordKeys = keys_of_categories(word_categories());
    if (cp < 128) {
        return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
    }
    return (kWordKeys >> key) & 1;
}

// Collects a class's items, then finish() makes the CharSet.
class SetBuilder {
public:
    void add_range(uint32_t lo, uint32_t hi) {
        for (uint32_t c = lo; c <= hi && c < 128; ++c) ascii_[c >> 6] |= uint64_t{1} << (c & 63);
        if (hi >= 128) ranges_.push_back({std::max<uint32_t>(lo, 128), hi});
    }
    // The code points whose property key is in `keys`, except the ASCII code point `except` (128: none).
    void add_keys(uint64_t keys, uint32_t except = 128) {
        keys_ |= keys;
        for (uint32_t c = 0; c < 128; ++c) {
            if (c != except && ((keys >> unicode_property_key(c)) & 1)) ascii_[c >> 6] |= uint64_t{1} << (c & 63);
        }
    }
    // The complement of a sorted list of disjoint ranges.
    void add_complement(const std::vector<Range>& sorted) {
        uint32_t next = 0;
        for (const Range& r : sorted) {
            if (r.first > next) add_range(next, r.first - 1);
            next = r.second + 1;
        }
        if (next <= kMaxCodePoint) add_range(next, kMaxCodePoint);
    }

    CharSet finish(bool negate, bool case_insensitive) {
        normalize();
        if (case_insensitive) add_case_variants();
        CharSet set;
        set.ascii[0] = negate ? ~ascii_[0] : ascii_[0];
        set.ascii[1] = negate ? ~ascii_[1] : ascii_[1];
        set.keys = keys_;
        set.ranges = std::move(ranges_);
        set.negated = negate;
        return set;
    }

private:
    void normalize() {
        std::sort(ranges_.begin(), ranges_.end());
        std::vector<Range> merged;
        for (const Range& r : ranges_) {
            if (!merged.empty() && r.first <= merged.back().second + 1) {
                merged.back().second = std::max(merged.back().second, r.second);
            } else {
                merged.push_back(r);
            }
        }
        ranges_ = std::move(merged);
    }
    bool member(uint32_t cp) const {  // ranges_ normalized
        if (cp < 128) return (ascii_[cp >> 6] >> (cp & 63)) & 1;
        auto it = std::lower_bound(ranges_.begin(), ranges_.end(), cp,
                                   [](const Range& r, uint32_t c) { return r.second < c; });
        return it != ranges_.end() && it->first <= cp;
    }
    // Adds every code point whose simple case folding equals that of a member (the explicit characters and
    // ranges; \p items stay as they are). Folding is a many-to-one map: collect F, the folds of the members,
    // then add everything that folds into F. Only the folding pairs that touch the class are visited (binary
    // searches by source and by target), so a pattern of many case-insensitive classes compiles in time
    // proportional to its classes' sizes, not to their number times the folding table.
    void add_case_variants() {
        namespace ut = unicode_tables;
        const ut::CodePointPair* pairs = ut::kFold;
        const ut::CodePointPair* pairs_end = ut::kFold + ut::kFoldSize;
        const std::vector<ut::CodePointPair>& by_target = folds_by_target();
        auto targets_in = [&](uint32_t lo, uint32_t hi, std::vector<uint32_t>* out, bool sources) {
            auto it = std::lower_bound(by_target.begin(), by_target.end(), lo,
                                       [](const ut::CodePointPair& p, uint32_t c) { return p.to < c; });
            for (; it != by_target.end() && it->to <= hi; ++it) out->push_back(sources ? it->from : it->to);
        };
        std::vector<uint32_t> folds;  // F
        for (uint32_t c = 0; c < 128; ++c) {
            if (member(c)) folds.push_back(unicode_simple_fold(c));
        }
        for (const Range& r : ranges_) {
            // Members with a folding give their target; members that are a target fold to themselves. (Others
            // have no case variants.)
            auto it = std::lower_bound(pairs, pairs_end, r.first,
                                       [](const ut::CodePointPair& p, uint32_t c) { return p.from < c; });
            for (; it != pairs_end && it->from <= r.second; ++it) folds.push_back(it->to);
            targets_in(r.first, r.second, &folds, false);
        }
        std::sort(folds.begin(), folds.end());
        folds.erase(std::unique(folds.begin(), folds.end()), folds.end());
        // Everything that folds into F: F itself (folding is idempotent) and the sources of each target.
        std::vector<uint32_t> add = folds;
        for (uint32_t f : folds) targets_in(f, f, &add, true);
        for (uint32_t c : add) add_range(c, c);
        normalize();
    }

    // kFold sorted by target (then source), built once.
    static const std::vector<unicode_tables::CodePointPair>& folds_by_target() {
        static const std::vector<unicode_tables::CodePointPair> table = [] {
            std::vector<unicode_tables::CodePointPair> t(unicode_tables::kFold,
                                                         unicode_tables::kFold + unicode_tables::kFoldSize);
            std::sort(t.begin(), t.end(),
                      [](const auto& a, const auto& b) { return a.to < b.to || (a.to == b.to && a.from < b.from); });
            return t;
        }();
        return table;
    }

    uint64_t ascii_[2] = {0, 0};
    uint64_t keys_ = 0;
    std::vector<Range> ranges_;
};

struct Node {
    enum Kind : uint8_t { kEmpty, kSet, kConcat, kAlt, kRepeat, kAssert, kLook } kind = kEmpty;
    uint8_t arg = 0;  // kAssert: AssertKind; kLook: 1 when negative
    bool greedy = true;
    uint32_t set = 0;
    int min = 0, max = 0;  // kRepeat; max kInfinite
    std::vector<int> kids;
};

class Parser {
public:
    Parser(const std::string& pattern, const RegexOptions& options, Program* program)
        : p_(pattern),
          icase_(options.case_insensitive),
          llama_categories_(options.llama_categories),
          program_(program) {}

    Status parse(int* root) {
        *root = parse_alt();
        if (!status_.ok()) return status_;
        if (i_ < p_.size()) fail(Error::kUnsupported, i_, "regex: unmatched )");
        return status_;
    }
    const std::vector<Node>& nodes() const { return nodes_; }

private:
    // Records the first error; the parse then unwinds (every step checks status_).
    void fail(Error code, size_t at, const char* what) {
        if (status_.ok()) status_ = make_error(code, at, what);
    }
    bool more() const { return i_ < p_.size() && status_.ok(); }
    char peek() const { return p_[i_]; }
    bool starts_with(const char* s) const { return p_.compare(i_, std::strlen(s), s) == 0; }

    // Memory while parsing is bounded like the program: a node per item, and the ranges of all classes (which
    // case folding can multiply) within kMaxTotalRanges.
    int add(Node n) {
        if (nodes_.size() >= kRegexMaxProgram) {
            fail(Error::kTooLarge, i_, "regex: the pattern is too large");
            return -1;
        }
        nodes_.push_back(std::move(n));
        return static_cast<int>(nodes_.size() - 1);
    }
    int add_set(CharSet set) {
        total_ranges_ += set.ranges.size();
        if (total_ranges_ > kMaxTotalRanges || nodes_.size() >= kRegexMaxProgram) {
            fail(Error::kTooLarge, i_, "regex: the pattern is too large");
            return -1;
        }
        program_->sets.push_back(std::move(set));
        Node n;
        n.kind = Node::kSet;
        n.set = static_cast<uint32_t>(program_->sets.size() - 1);
        return add(std::move(n));
    }
    int add_assert(rd::AssertKind kind) {
        Node n;
        n.kind = Node::kAssert;
        n.arg = kind;
        return add(std::move(n));
    }

    int parse_alt() {
        std::vector<int> kids;
        kids.push_back(parse_concat());
        while (more() && peek() == '|') {
            ++i_;
            kids.push_back(parse_concat());
        }
        if (!status_.ok()) return -1;
        if (kids.size() == 1) return kids[0];
        Node n;
        n.kind = Node::kAlt;
        n.kids = std::move(kids);
        return add(std::move(n));
    }

    int parse_concat() {
        Node n;
        n.kind = Node::kConcat;
        while (more() && peek() != '|' && peek() != ')') {
            const int kid = parse_repeat();
            if (kid < 0) return -1;
            n.kids.push_back(kid);
        }
        if (n.kids.size() == 1) return n.kids[0];
        return add(std::move(n));
    }

    // A quantifier at i_: true and its bounds, or false (then a '{' is a literal, as in Oniguruma and
    // ECMAScript without the u flag).
    bool parse_quantifier(int* min, int* max) {
        const char c = peek();
        if (c == '*' || c == '+' || c == '?') {
            *min = c == '+' ? 1 : 0;
            *max = c == '?' ? 1 : kInfinite;
            ++i_;
            return true;
        }
        if (c != '{') return false;
        size_t j = i_ + 1;
        auto number = [&](int* out) {
            const size_t start = j;
            long v = 0;
            while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') {
                v = std::min<long>(v * 10 + (p_[j] - '0'), kMaxCount);
                ++j;
            }
            *out = static_cast<int>(v);
            return j > start;
        };
        int lo = 0, hi = 0;
        if (!number(&lo)) return false;
        if (j < p_.size() && p_[j] == '}') {
            hi = lo;
        } else if (j < p_.size() && p_[j] == ',') {
            ++j;
            if (j < p_.size() && p_[j] == '}') {
                hi = kInfinite;
            } else if (!number(&hi) || j >= p_.size() || p_[j] != '}') {
                return false;
            }
        } else {
            return false;
        }
        if (hi != kInfinite && hi < lo) {
            fail(Error::kUnsupported, i_, "regex: {n,m} with m < n");
            return false;
        }
        i_ = j + 1;
        *min = lo;
        *max = hi;
        return true;
    }

    int parse_repeat() {
        const int atom = parse_atom();
        if (atom < 0 || !more()) return atom;
        int min = 0, max = 0;
        if (!parse_quantifier(&min, &max)) return status_.ok() ? atom : -1;
        Node n;
        n.kind = Node::kRepeat;
        n.min = min;
        n.max = max;
        n.kids.push_back(atom);
        if (more() && peek() == '?') {
            n.greedy = false;
            ++i_;
        } else if (more() && peek() == '+') {
            fail(Error::kUnsupported, i_, "regex: possessive quantifiers are not supported");
            return -1;
        }
        int unused_min = 0, unused_max = 0;
        const size_t at = i_;
        if (more() && parse_quantifier(&unused_min, &unused_max)) {
            fail(Error::kUnsupported, at, "regex: a quantifier after a quantifier");
            return -1;
        }
        if (!status_.ok()) return -1;
        return add(std::move(n));
    }

    // One UTF-8 code point of the pattern.
    bool literal(uint32_t* cp) {
        size_t len = 0;
        const int32_t c = utf8_next(reinterpret_cast<const uint8_t*>(p_.data()) + i_, p_.size() - i_, &len);
        if (c < 0) {
            fail(Error::kUnsupported, i_, "regex: invalid UTF-8 in the pattern");
            return false;
        }
        i_ += len;
        *cp = static_cast<uint32_t>(c);
        return true;
    }

    int literal_node(uint32_t cp) {
        SetBuilder b;
        b.add_range(cp, cp);
        return add_set(b.finish(false, icase_));
    }

    // Hex digits for \x and \u: exactly `count` of them, or {H..} when braces are allowed.
    bool hex(size_t count, bool braces, uint32_t* out) {
        uint32_t v = 0;
        auto digit = [](char c) -> int {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        };
        if (braces && i_ < p_.size() && p_[i_] == '{') {
            size_t j = i_ + 1, n = 0;
            while (j < p_.size() && digit(p_[j]) >= 0 && n < 8) {
                v = v * 16 + digit(p_[j]);
                ++j;
                ++n;
            }
            if (n == 0 || j >= p_.size() || p_[j] != '}' || v > kMaxCodePoint) return false;
            i_ = j + 1;
            *out = v;
            return true;
        }
        for (size_t k = 0; k < count; ++k) {
            if (i_ + k >= p_.size() || digit(p_[i_ + k]) < 0) return false;
            v = v * 16 + digit(p_[i_ + k]);
        }
        i_ += count;
        *out = v;
        return true;
    }

    // \p{NAME}, \P{NAME}, \pL after the backslash and the letter; adds the property to b.
    bool property(bool negated, SetBuilder* b) {
        const size_t at = i_ - 2;
        size_t name_at = i_, name_len = 0;
        if (i_ < p_.size() && p_[i_] == '{') {
            const size_t close = p_.find('}', i_);
            if (close == std::string::npos) {
                fail(Error::kUnsupported, at, "regex: \\p{ without }");
                return false;
            }
            name_at = i_ + 1;
            name_len = close - name_at;
            i_ = close + 1;
        } else if (i_ < p_.size() && static_cast<unsigned char>(p_[i_]) < 128) {
            name_len = 1;
            ++i_;
        } else {
            fail(Error::kUnsupported, at, "regex: \\p without a property name");
            return false;
        }
        const char* name = p_.data() + name_at;
        if (name_len > 0 && name[0] == '^') {  // Oniguruma's \p{^L}
            negated = !negated;
            ++name;
            --name_len;
        }
        const char* eq = static_cast<const char*>(std::memchr(name, '=', name_len));
        bool want_script = false, want_category = false;
        if (eq != nullptr) {  // gc=L, General_Category=L, sc=Han, Script=Han
            const std::string key(name, static_cast<size_t>(eq - name));
            want_category = key == "gc" || key == "General_Category";
            want_script = key == "sc" || key == "Script";  // not scx: Script_Extensions is not in the tables
            if (!want_category && !want_script) {
                fail(Error::kUnsupported, at, "regex: unknown Unicode property");
                return false;
            }
            name_len -= static_cast<size_t>(eq + 1 - name);
            name = eq + 1;
        }
        UnicodeCategoryMask mask = 0;
        if (!want_script && unicode_category_mask_from_name(name, name_len, &mask)) {
            uint32_t except = 128;
            if (llama_categories_) {
                const UnicodeCategoryMask letters = kLetterCategories;
                if ((mask & letters) != 0 && (mask & ~letters) == 0) mask = letters;  // \p{Lu} .. \p{Lo}: \p{L}
                if (!negated) except = '~';
            }
            const uint64_t keys = keys_of_categories(mask);
            b->add_keys(negated ? ~keys : keys, except);
            return true;
        }
        const int script = want_category ? -1 : unicode_script_from_name(name, name_len);
        if (script < 0) {
            fail(Error::kUnsupported, at, "regex: unknown Unicode property");
            return false;
        }
        std::vector<Range> ranges;
        unicode_script_ranges(script, [&](uint32_t first, uint32_t last) { ranges.push_back({first, last}); });
        if (negated) {
            b->add_complement(ranges);
        } else {
            for (const Range& r : ranges) b->add_range(r.first, r.second);
        }
        return true;
    }

    enum class Escape { kChar, kSet, kAssert, kError };
    // An escape after the backslash (i_ is past it): one code point (*cp), set items (added to b) or, outside
    // classes, an assertion (*assertion).
    Escape escape(bool in_class, uint32_t* cp, SetBuilder* b, rd::AssertKind* assertion) {
        const size_t at = i_ - 1;
        if (i_ >= p_.size()) {
            fail(Error::kUnsupported, at, "regex: a trailing backslash");
            return Escape::kError;
        }
        const char c = p_[i_++];
        switch (c) {
            case 't':
                *cp = '\t';
                return Escape::kChar;
            case 'n':
                *cp = '\n';
                return Escape::kChar;
            case 'r':
                *cp = '\r';
                return Escape::kChar;
            case 'f':
                *cp = '\f';
                return Escape::kChar;
            case 'v':
                *cp = '\v';
                return Escape::kChar;
            case 'a':
                *cp = 0x07;
                return Escape::kChar;
            case 'e':
                *cp = 0x1B;
                return Escape::kChar;
            case '0':
                if (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') break;  // octal: not supported
                *cp = 0;
                return Escape::kChar;
            case 'x':
            case 'u':
                if (hex(c == 'x' ? 2 : 4, true, cp)) return Escape::kChar;
                fail(Error::kUnsupported, at, "regex: malformed \\x or \\u escape");
                return Escape::kError;
            case 'd':
                b->add_keys(keys_of_categories(unicode_category_bit(UnicodeCategory::kNd)));
                return Escape::kSet;
            case 'D':
                b->add_keys(~keys_of_categories(unicode_category_bit(UnicodeCategory::kNd)));
                return Escape::kSet;
            case 'w':
                b->add_keys(keys_of_categories(word_categories()));
                return Escape::kSet;
            case 'W':
                b->add_keys(~keys_of_categories(word_categories()));
                return Escape::kSet;
            case 's':
                b->add_keys(keys_of_white_space());
                return Escape::kSet;
            case 'S':
                b->add_keys(~keys_of_white_space());
                return Escape::kSet;
            case 'p':
            case 'P':
                return property(c == 'P', b) ? Escape::kSet : Escape::kError;
            case 'b':
            case 'B':
            case 'A':
            case 'z':
                if (in_class) {
                    if (c == 'b') {  // [\b] is a backspace in ECMAScript and Oniguruma
                        *cp = 0x08;
                        return Escape::kChar;
                    }
                    break;
                }
                *assertion = c == 'b'   ? rd::kWordBoundary
                             : c == 'B' ? rd::kNotWordBoundary
                             : c == 'A' ? rd::kBegin
                                        : rd::kEnd;
                return Escape::kAssert;
            default:
                break;
        }
        if (c >= '1' && c <= '9') {
            fail(Error::kUnsupported, at, "regex: backreferences are not supported");
            return Escape::kError;
        }
        const unsigned char u = static_cast<unsigned char>(c);
        if (u >= 128) {  // an escaped non-ASCII character is itself
            --i_;
            return literal(cp) ? Escape::kChar : Escape::kError;
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            fail(Error::kUnsupported, at, "regex: unknown escape");
            return Escape::kError;
        }
        *cp = u;  // escaped punctuation, space or control: itself
        return Escape::kChar;
    }

    // One class member that can end a range: a literal or a one-code-point escape.
    int parse_class() {
        const size_t open = i_;
        ++i_;  // '['
        bool negate = false;
        if (i_ < p_.size() && p_[i_] == '^') {
            negate = true;
            ++i_;
        }
        SetBuilder b;
        bool first = true;
        for (;;) {
            if (i_ >= p_.size()) {
                fail(Error::kUnsupported, open, "regex: [ without ]");
                return -1;
            }
            if (p_[i_] == ']' && !first) {
                ++i_;
                break;
            }
            first = false;
            uint32_t lo = 0;
            bool single = false;
            if (p_[i_] == '\\') {
                ++i_;
                rd::AssertKind unused;
                const Escape e = escape(true, &lo, &b, &unused);
                if (e == Escape::kError) return -1;
                if (e == Escape::kAssert) {
                    fail(Error::kUnsupported, i_ - 2, "regex: an assertion inside a class");
                    return -1;
                }
                single = e == Escape::kChar;
            } else if (p_[i_] == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
                fail(Error::kUnsupported, i_, "regex: POSIX classes [:name:] are not supported");
                return -1;
            } else {
                if (!literal(&lo)) return -1;
                single = true;
            }
            if (!single) continue;
            // A range lo-hi, unless the '-' is the last character of the class.
            if (i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']') {
                const size_t dash = i_;
                ++i_;
                uint32_t hi = 0;
                if (p_[i_] == '\\') {
                    ++i_;
                    SetBuilder items;
                    rd::AssertKind unused;
                    const Escape e = escape(true, &hi, &items, &unused);
                    if (e == Escape::kError) return -1;
                    if (e != Escape::kChar) {
                        fail(Error::kUnsupported, dash, "regex: a range ending in a class escape");
                        return -1;
                    }
                } else if (!literal(&hi)) {
                    return -1;
                }
                if (hi < lo) {
                    fail(Error::kUnsupported, dash, "regex: a range out of order");
                    return -1;
                }
                b.add_range(lo, hi);
            } else {
                b.add_range(lo, lo);
            }
        }
        return add_set(b.finish(negate, icase_));
    }

    // The single set a look-ahead's body is, or -1.
    int single_set(int node) const {
        while (node >= 0) {
            const Node& n = nodes_[node];
            if (n.kind == Node::kSet) return static_cast<int>(n.set);
            if ((n.kind == Node::kConcat || n.kind == Node::kAlt) && n.kids.size() == 1) {
                node = n.kids[0];
                continue;
            }
            return -1;
        }
        return -1;
    }

    int parse_group() {
        const size_t open = i_;
        if (++depth_ > kRegexMaxNesting) {
            fail(Error::kTooLarge, open, "regex: groups nested too deeply");
            return -1;
        }
        ++i_;           // '('
        int look = -1;  // 0 positive, 1 negative
        const bool saved_icase = icase_;
        if (starts_with("?")) {
            ++i_;
            if (starts_with("=") || starts_with("!")) {
                look = p_[i_] == '!' ? 1 : 0;
                ++i_;
            } else if (starts_with("<=") || starts_with("<!")) {
                fail(Error::kUnsupported, open, "regex: look-behind is not supported");
                return -1;
            } else if (starts_with("<") || starts_with("P<")) {
                const size_t close = p_.find('>', i_);
                if (close == std::string::npos) {
                    fail(Error::kUnsupported, open, "regex: a group name without >");
                    return -1;
                }
                i_ = close + 1;
            } else if (starts_with(":")) {
                ++i_;
            } else {
                // Flags: (?i) (?-i) (?i: ) (?-i: ); only i is supported.
                bool on = true, any = false;
                while (i_ < p_.size() && (p_[i_] == 'i' || p_[i_] == '-')) {
                    if (p_[i_] == '-') {
                        on = false;
                    } else {
                        icase_ = on;
                        any = true;
                    }
                    ++i_;
                }
                if (!any || i_ >= p_.size() || (p_[i_] != ':' && p_[i_] != ')')) {
                    fail(Error::kUnsupported, open, "regex: unsupported group or flag");
                    return -1;
                }
                if (p_[i_] == ')') {  // (?i): to the end of the enclosing group, so icase_ is not restored
                    ++i_;
                    --depth_;
                    return add(Node{});
                }
                ++i_;
            }
        }
        const int body = parse_alt();
        if (body < 0) return -1;
        if (i_ >= p_.size() || p_[i_] != ')') {
            fail(Error::kUnsupported, open, "regex: ( without )");
            return -1;
        }
        ++i_;
        --depth_;
        icase_ = saved_icase;
        if (look < 0) return body;
        const int set = single_set(body);
        if (set < 0) {
            fail(Error::kUnsupported, open, "regex: a look-ahead longer than one code point");
            return -1;
        }
        Node n;
        n.kind = Node::kLook;
        n.arg = static_cast<uint8_t>(look);
        n.set = static_cast<uint32_t>(set);
        return add(std::move(n));
    }

    int parse_atom() {
        const char c = peek();
        switch (c) {
            case '(':
                return parse_group();
            case '[':
                return parse_class();
            case '.': {
                ++i_;
                SetBuilder b;
                b.add_range('\n', '\n');
                return add_set(b.finish(true, false));
            }
            case '^':
                ++i_;
                return add_assert(rd::kBegin);
            case '$':
                ++i_;
                return add_assert(rd::kEnd);
            case '*':
            case '+':
            case '?':
                fail(Error::kUnsupported, i_, "regex: nothing to repeat");
                return -1;
            case '{': {
                int lo = 0, hi = 0;
                const size_t at = i_;
                if (parse_quantifier(&lo, &hi)) {
                    fail(Error::kUnsupported, at, "regex: nothing to repeat");
                    return -1;
                }
                if (!status_.ok()) return -1;
                ++i_;
                return literal_node('{');
            }
            case '\\': {
                ++i_;
                SetBuilder b;
                uint32_t cp = 0;
                rd::AssertKind assertion = rd::kBegin;
                const Escape e = escape(false, &cp, &b, &assertion);
                if (e == Escape::kError) return -1;
                if (e == Escape::kAssert) return add_assert(assertion);
                if (e == Escape::kChar) return literal_node(cp);
                return add_set(b.finish(false, false));
            }
            default: {
                uint32_t cp = 0;
                if (!literal(&cp)) return -1;
                return literal_node(cp);
            }
        }
    }

    const std::string& p_;
    size_t i_ = 0;
    bool icase_;
    bool llama_categories_;  // RegexOptions::llama_categories
    int depth_ = 0;
    Program* program_;
    std::vector<Node> nodes_;
    size_t total_ranges_ = 0;
    Status status_;
};

class Compiler {
public:
    Compiler(const std::vector<Node>& nodes, Program* program) : nodes_(nodes), prog_(program) {}

    bool emit(int index) {
        if (prog_->insts.size() > kRegexMaxProgram) return false;
        const Node& n = nodes_[index];
        switch (n.kind) {
            case Node::kEmpty:
                return true;
            case Node::kSet:
                put({rd::kConsume, 0, n.set, 0});
                return true;
            case Node::kAssert:
                put({rd::kAssert, n.arg, 0, 0});
                return true;
            case Node::kLook:
                put({rd::kLook, n.arg, n.set, 0});
                return true;
            case Node::kConcat:
                for (int kid : n.kids) {
                    if (!emit(kid)) return false;
                }
                return true;
            case Node::kAlt: {
                std::vector<uint32_t> jumps;
                for (size_t k = 0; k < n.kids.size(); ++k) {
                    uint32_t split = 0;
                    if (k + 1 < n.kids.size()) split = put({rd::kSplit, 0, here() + 1, 0});
                    if (!emit(n.kids[k])) return false;
                    if (k + 1 < n.kids.size()) {
                        jumps.push_back(put({rd::kJmp, 0, 0, 0}));
                        prog_->insts[split].y = here();
                    }
                }
                for (uint32_t j : jumps) prog_->insts[j].x = here();
                return true;
            }
            case Node::kRepeat:
                return emit_repeat(n);
        }
        return false;
    }

private:
    uint32_t here() const { return static_cast<uint32_t>(prog_->insts.size()); }
    uint32_t put(Inst inst) {
        prog_->insts.push_back(inst);
        return here() - 1;
    }
    // A split whose targets patch_split() fills in once the body is emitted.
    uint32_t put_split() { return put({rd::kSplit, 0, 0, 0}); }
    void patch_split(uint32_t split, uint32_t body, uint32_t out, bool greedy) {
        prog_->insts[split].x = greedy ? body : out;
        prog_->insts[split].y = greedy ? out : body;
    }

    bool emit_repeat(const Node& n) {
        const int kid = n.kids[0];
        for (int k = 0; k < n.min; ++k) {
            if (!emit(kid)) return false;
        }
        if (n.max == kInfinite) {
            const uint32_t loop = put_split();
            if (!emit(kid)) return false;
            put({rd::kJmp, 0, loop, 0});
            patch_split(loop, loop + 1, here(), n.greedy);
            return true;
        }
        // x{0,k}: (x(x(...)?)?)?, each split skipping to the common end.
        std::vector<uint32_t> splits;
        for (int k = n.min; k < n.max; ++k) {
            splits.push_back(put_split());
            if (!emit(kid)) return false;
        }
        for (uint32_t s : splits) patch_split(s, s + 1, here(), n.greedy);
        return true;
    }

    const std::vector<Node>& nodes_;
    Program* prog_;
};

// The first-code-point filter: the epsilon closure of instruction 0, assertions passed through.
void compute_first(Program* prog) {
    for (const Inst& in : prog->insts) {
        if (in.op == rd::kAssert && (in.arg == rd::kWordBoundary || in.arg == rd::kNotWordBoundary)) {
            prog->word_boundaries = true;
        }
    }
    std::vector<uint8_t> seen(prog->insts.size(), 0);
    std::vector<uint32_t> stack{0};
    while (!stack.empty()) {
        const uint32_t pc = stack.back();
        stack.pop_back();
        if (seen[pc]) continue;
        seen[pc] = 1;
        const Inst& in = prog->insts[pc];
        switch (in.op) {
            case rd::kConsume: {
                const CharSet& s = prog->sets[in.x];
                prog->first_ascii[0] |= s.ascii[0];
                prog->first_ascii[1] |= s.ascii[1];
                prog->first_non_ascii |= s.any_non_ascii();
                break;
            }
            case rd::kSplit:
                stack.push_back(in.y);
                stack.push_back(in.x);
                break;
            case rd::kJmp:
                stack.push_back(in.x);
                break;
            case rd::kAssert:
            case rd::kLook:
                stack.push_back(pc + 1);
                break;
            case rd::kMatch:
                prog->first_anything = true;
                break;
        }
    }
}

// The consume and match instructions of the closure of `start` in priority order (the matcher's depth-first
// walk), appended to *leaves; false (and *leaves as it was) when the closure holds an assertion.
bool static_closure(const Program& prog, uint32_t start, std::vector<uint8_t>* seen, std::vector<uint32_t>* stack,
                    std::vector<uint32_t>* leaves) {
    const size_t size_before = leaves->size();
    std::vector<uint32_t> visited;
    stack->assign(1, start);
    bool ok = true;
    while (!stack->empty() && ok) {
        const uint32_t pc = stack->back();
        stack->pop_back();
        if ((*seen)[pc]) continue;
        (*seen)[pc] = 1;
        visited.push_back(pc);
        const Inst& in = prog.insts[pc];
        switch (in.op) {
            case rd::kConsume:
            case rd::kMatch:
                leaves->push_back(pc);
                break;
            case rd::kSplit:
                stack->push_back(in.y);
                stack->push_back(in.x);
                break;
            case rd::kJmp:
                stack->push_back(in.x);
                break;
            case rd::kAssert:
            case rd::kLook:
                ok = false;
                break;
        }
    }
    for (uint32_t pc : visited) (*seen)[pc] = 0;
    if (!ok) leaves->resize(size_before);
    return ok;
}

// The static closures (Program::seed_static, next_static).
void compute_seed(Program* prog) {
    constexpr size_t kMaxSeedTable = 1 << 16;  // entries of the per-ASCII table
    const size_t kMaxNextLeaves = 16 * prog->insts.size() + 1024;
    std::vector<uint8_t> seen(prog->insts.size(), 0);
    std::vector<uint32_t> stack;
    const size_t n = prog->insts.size();
    prog->next_static.assign(n, 0);
    prog->next_offset.assign(n + 1, 0);
    for (uint32_t pc = 0; pc < n; ++pc) {
        prog->next_offset[pc] = static_cast<uint32_t>(prog->next_leaves.size());
        if (prog->insts[pc].op != rd::kConsume || prog->next_leaves.size() > kMaxNextLeaves) continue;
        prog->next_static[pc] = static_closure(*prog, pc + 1, &seen, &stack, &prog->next_leaves) ? 1 : 0;
    }
    prog->next_offset[n] = static_cast<uint32_t>(prog->next_leaves.size());
    if (!static_closure(*prog, 0, &seen, &stack, &prog->seed)) return;
    prog->seed_static = true;
    if (prog->seed.size() * 128 > kMaxSeedTable) return;
    prog->seed_ascii_offset.push_back(0);
    for (uint32_t c = 0; c < 128; ++c) {
        for (uint32_t pc : prog->seed) {
            const Inst& in = prog->insts[pc];
            if (in.op == rd::kMatch || prog->sets[in.x].contains(c, 0)) prog->seed_ascii.push_back(pc);
        }
        prog->seed_ascii_offset.push_back(static_cast<uint32_t>(prog->seed_ascii.size()));
    }
}

struct Position {
    uint32_t cp = 0;  // the code point at this position (valid when has_cp)
    uint8_t key = 0;  // its property key (code points >= 128)
    uint8_t len = 0;  // its length in bytes
    bool has_cp = false;
};

inline Position decode_at(const uint8_t* text, size_t size, size_t pos) {
    Position p;
    if (pos >= size) return p;
    p.has_cp = true;
    const uint8_t b = text[pos];
    if (b < 0x80) {
        p.cp = b;
        p.len = 1;
        return p;
    }
    size_t len = 1;
    p.cp = unicode_next_lossy(text + pos, size - pos, &len);
    p.len = static_cast<uint8_t>(len);
    p.key = unicode_property_key(p.cp);
    return p;
}

}  // namespace

struct RegexScratch::Impl {
    struct Thread {
        uint32_t pc;
        size_t start;
    };
    // A thread list: a fixed array (a program of n instructions has at most n threads in a list) and its
    // length. Fields are stored one by one: pushing a braced Thread made the compiler build it on the stack and
    // reload it whole, a store-forwarding stall that took a third of the matching time.
    struct List {
        std::vector<Thread> threads;
        size_t size = 0;
        bool empty() const { return size == 0; }
        void clear() { size = 0; }
        void push(uint32_t pc, size_t start) {
            Thread& t = threads[size++];
            t.pc = pc;
            t.start = start;
        }
    };
    List cur, next;
    std::vector<uint32_t> mark;  // pc -> the generation of the list it is on
    uint32_t generation = 0;
    std::vector<uint32_t> stack;

    // The failure memo, which keeps a split loop (find() again from each match's end) linear. Whether a thread
    // at (pc, position) can still reach a match depends on the text alone, not on where its match began. After a
    // search's last match was found at `end`, every thread still alive at a position past `end` died without
    // matching (a match would have been a later one), and so would any thread that reaches the same (pc,
    // position) in a later search of the same text. Per pc, one range of positions [dead_lo, dead_hi] (every code
    // point boundary in it) known dead; while a search runs, per pc the latest run of consecutive positions it
    // was alive at after a match (run_*), made dead ranges when the search ends. Without it, jais-2's
    // \s*[\r\n]+ scans a whole run of spaces again for each 512-space piece the lower alternatives cut from it.
    std::vector<size_t> dead_lo, dead_hi;
    std::vector<uint32_t> dead_pcs;  // the pcs with a dead range, to forget them
    std::vector<size_t> run_lo, run_hi;
    std::vector<uint32_t> run_search;  // the search run_lo/run_hi belong to
    std::vector<uint32_t> run_pcs;     // the pcs with a run in this search
    uint32_t search = 0;
    // What the memo is of: a pattern, a text (pointer and size), and the `from` of the last search.
    const void* memo_program = nullptr;
    const uint8_t* memo_text = nullptr;
    size_t memo_size = 0, memo_from = 0;

    void prepare(size_t n) {
        if (mark.size() < n) {  // a larger program than this scratch has served: grow once
            mark.assign(n, 0);
            generation = 0;
            cur.threads.resize(n);
            next.threads.resize(n);
            stack.reserve(2 * n + 2);
            forget();
            dead_lo.assign(n, SIZE_MAX);
            dead_hi.assign(n, 0);
            run_lo.assign(n, 0);
            run_hi.assign(n, 0);
            run_search.assign(n, 0);
            search = 0;
        }
        cur.clear();
        next.clear();
    }
    void forget() {
        for (uint32_t pc : dead_pcs) dead_lo[pc] = SIZE_MAX, dead_hi[pc] = 0;
        dead_pcs.clear();
        memo_program = nullptr;
    }
    // Starts a search: keeps the memo when it is of the same pattern and text, searched further on.
    void begin_search(const void* program, const uint8_t* text, size_t size, size_t from) {
        if (program != memo_program || text != memo_text || size != memo_size || from <= memo_from) {
            forget();
            memo_program = program, memo_text = text, memo_size = size;
        }
        memo_from = from;
        run_pcs.clear();
        if (++search == 0) {  // wrapped: forget every old run
            std::fill(run_search.begin(), run_search.end(), 0);
            search = 1;
        }
    }
    bool dead(uint32_t pc, size_t pos) const { return pos >= dead_lo[pc] && pos <= dead_hi[pc]; }
    // A thread at pc alive at `pos` after a match; `last` is the position of the previous step.
    void alive(uint32_t pc, size_t pos, size_t last) {
        if (run_search[pc] != search) {
            run_search[pc] = search;
            run_pcs.push_back(pc);
        } else if (run_hi[pc] == last) {
            run_hi[pc] = pos;
            return;
        }
        run_lo[pc] = run_hi[pc] = pos;
    }
    // The search ended with its last match ending at `end`: the runs past it are dead.
    void end_search(size_t end) {
        for (uint32_t pc : run_pcs) {
            if (run_hi[pc] <= end) continue;
            size_t lo = std::max(run_lo[pc], end + 1), hi = run_hi[pc];
            if (dead_lo[pc] == SIZE_MAX) {
                dead_pcs.push_back(pc);
            } else if (lo <= dead_hi[pc] && dead_lo[pc] <= hi) {  // overlapping: one range
                lo = std::min(lo, dead_lo[pc]);
                hi = std::max(hi, dead_hi[pc]);
            }
            dead_lo[pc] = lo, dead_hi[pc] = hi;
        }
    }
    uint32_t new_generation() {
        if (++generation == 0) {  // wrapped: forget every old mark
            std::fill(mark.begin(), mark.end(), 0);
            generation = 1;
        }
        return generation;
    }
};

RegexScratch::RegexScratch() : impl_(new Impl) {}
RegexScratch::~RegexScratch() {
    delete impl_;
}

Regex::Regex() = default;
Regex::~Regex() {
    delete program_;
}
Regex::Regex(Regex&& other) noexcept : program_(other.program_) {
    other.program_ = nullptr;
}
Regex& Regex::operator=(Regex&& other) noexcept {
    if (this != &other) {
        delete program_;
        program_ = other.program_;
        other.program_ = nullptr;
    }
    return *this;
}

size_t Regex::program_size() const {
    return program_ ? program_->insts.size() : 0;
}

Result<Regex> Regex::compile(const std::string& pattern, RegexOptions options) {
    Program* prog = new Program;
    Regex re;
    re.program_ = prog;  // owned from here: freed with re on every return
    Parser parser(pattern, options, prog);
    int root = -1;
    WS_TRY(parser.parse(&root));
    Compiler compiler(parser.nodes(), prog);
    if (!compiler.emit(root) || prog->insts.size() + 1 > kRegexMaxProgram) {
        return make_error(Error::kTooLarge, 0, "regex: the compiled pattern is too large (counted repetition?)");
    }
    prog->insts.push_back({rd::kMatch, 0, 0, 0});
    prog->insts.shrink_to_fit();
    compute_first(prog);
    compute_seed(prog);
    return Result<Regex>(std::move(re));
}

bool Regex::find(const char* text_chars, size_t size, size_t from, RegexMatch* match, RegexScratch* scratch) const {
    if (program_ == nullptr || from > size) return false;
    std::unique_ptr<RegexScratch> local;
    if (scratch == nullptr) {
        local.reset(new RegexScratch);
        scratch = local.get();
    }
    RegexScratch::Impl& s = *scratch->impl_;
    const Program& prog = *program_;
    const Inst* insts = prog.insts.data();
    const uint8_t* text = reinterpret_cast<const uint8_t*>(text_chars);
    s.prepare(prog.insts.size());
    s.begin_search(&prog, text, size, from);
    const bool memo = !s.dead_pcs.empty();

    // The code point before `from`, for \b.
    Position prev;
    if (from > 0 && prog.word_boundaries) {
        size_t j = from - 1;
        while (j > 0 && from - j < 4 && (text[j] & 0xC0) == 0x80) --j;
        Position p = decode_at(text, size, j);
        if (j + p.len != from) p = decode_at(text, size, from - 1);
        prev = p;
    }

    size_t pos = from;
    size_t last_pos = SIZE_MAX;  // the position of the previous step (for the memo's runs)
    Position cur = decode_at(text, size, pos);
    bool matched = false;
    RegexMatch best;

    // Adds the closure of pc (at position `at`, between code points `before` and `after`) to `list`.
    auto add_thread = [&](RegexScratch::Impl::List& list, uint32_t gen, uint32_t pc0, size_t start, size_t at,
                          const Position& before, const Position& after) {
        s.stack.clear();
        s.stack.push_back(pc0);
        while (!s.stack.empty()) {
            const uint32_t pc = s.stack.back();
            s.stack.pop_back();
            if (s.mark[pc] == gen) continue;
            s.mark[pc] = gen;
            const Inst& in = insts[pc];
            switch (in.op) {
                case rd::kConsume:
                case rd::kMatch:
                    list.push(pc, start);
                    break;
                case rd::kJmp:
                    s.stack.push_back(in.x);
                    break;
                case rd::kSplit:
                    s.stack.push_back(in.y);
                    s.stack.push_back(in.x);
                    break;
                case rd::kAssert: {
                    bool holds = false;
                    switch (in.arg) {
                        case rd::kBegin:
                            holds = at == 0;
                            break;
                        case rd::kEnd:
                            holds = at == size;
                            break;
                        default: {
                            const bool w1 = before.has_cp && is_word(before.cp, before.key);
                            const bool w2 = after.has_cp && is_word(after.cp, after.key);
                            holds = (w1 != w2) == (in.arg == rd::kWordBoundary);
                        }
                    }
                    if (holds) s.stack.push_back(pc + 1);
                    break;
                }
                case rd::kLook: {
                    const bool in_set = after.has_cp && prog.sets[in.x].contains(after.cp, after.key);
                    if (in_set != (in.arg != 0)) s.stack.push_back(pc + 1);
                    break;
                }
            }
        }
    };

    uint32_t gen = s.new_generation();
    for (;;) {
        if (!matched) {
            // An empty list may hold marks of an earlier position (an assertion that failed there): start afresh.
            if (s.cur.empty()) gen = s.new_generation();
            if (s.cur.empty() && !prog.first_anything) {
                // Skip the positions where no match can start.
                while (cur.has_cp) {
                    const bool may = cur.cp < 128 ? ((prog.first_ascii[cur.cp >> 6] >> (cur.cp & 63)) & 1) != 0
                                                  : prog.first_non_ascii;
                    if (may) break;
                    pos += cur.len;
                    prev = cur;
                    cur = decode_at(text, size, pos);
                }
                if (!cur.has_cp) break;
            }
            if (prog.seed_static) {
                // The closure of instruction 0 without its walk, keeping only what can proceed at this code point
                // (the others would die in this step anyway). Nothing is added to this list after the seed, so
                // marking the kept instructions is all the deduplication needed.
                const uint32_t* list = prog.seed.data();
                size_t n = prog.seed.size();
                const bool table = cur.has_cp && cur.cp < 128 && !prog.seed_ascii_offset.empty();
                if (table) {
                    list = prog.seed_ascii.data() + prog.seed_ascii_offset[cur.cp];
                    n = prog.seed_ascii_offset[cur.cp + 1] - prog.seed_ascii_offset[cur.cp];
                }
                for (size_t k = 0; k < n; ++k) {
                    const uint32_t pc = list[k];
                    if (s.mark[pc] == gen) continue;
                    const Inst& in = insts[pc];
                    if (!table && in.op == rd::kConsume && !(cur.has_cp && prog.sets[in.x].contains(cur.cp, cur.key))) {
                        continue;
                    }
                    s.mark[pc] = gen;
                    s.cur.push(pc, pos);
                }
            } else {
                add_thread(s.cur, gen, 0, pos, pos, prev, cur);
            }
        }
        if (s.cur.empty()) {
            if (matched || !cur.has_cp) break;
            // Nothing alive: move on one code point (the next seed starts there).
            pos += cur.len;
            prev = cur;
            cur = decode_at(text, size, pos);
            continue;
        }
        const Position nxt = cur.has_cp ? decode_at(text, size, pos + cur.len) : Position{};
        const size_t next_pos = pos + cur.len;
        const uint32_t next_gen = s.new_generation();
        const bool after_match = matched;
        s.next.clear();
        for (size_t k = 0; k < s.cur.size; ++k) {
            const RegexScratch::Impl::Thread& t = s.cur.threads[k];
            const Inst& in = insts[t.pc];
            if (in.op == rd::kMatch) {
                matched = true;
                best.begin = t.start;
                best.end = pos;
                break;  // threads of lower priority are cut
            }
            if (memo && s.dead(t.pc, pos)) continue;
            if (after_match) s.alive(t.pc, pos, last_pos);
            if (!cur.has_cp || !prog.sets[in.x].contains(cur.cp, cur.key)) continue;
            if (prog.next_static[t.pc]) {
                // The precomputed closure, keeping only what can proceed at the next code point (a consume that
                // cannot would die in the next step: dropping it now changes nothing, whoever adds it later).
                const uint32_t* leaf = prog.next_leaves.data() + prog.next_offset[t.pc];
                const uint32_t* end = prog.next_leaves.data() + prog.next_offset[t.pc + 1];
                for (; leaf != end; ++leaf) {
                    const uint32_t pc = *leaf;
                    if (s.mark[pc] == next_gen) continue;
                    const Inst& leaf_inst = insts[pc];
                    if (leaf_inst.op == rd::kConsume &&
                        !(nxt.has_cp && prog.sets[leaf_inst.x].contains(nxt.cp, nxt.key))) {
                        continue;
                    }
                    s.mark[pc] = next_gen;
                    s.next.push(pc, t.start);
                }
            } else {
                add_thread(s.next, next_gen, t.pc + 1, t.start, next_pos, cur, nxt);
            }
        }
        std::swap(s.cur, s.next);
        gen = next_gen;
        if (!cur.has_cp) break;
        last_pos = pos;
        pos = next_pos;
        prev = cur;
        cur = nxt;
    }
    s.cur.clear();
    if (matched) s.end_search(best.end);
    if (matched && match != nullptr) *match = best;
    return matched;
}

bool Regex::search(const char* text, size_t size) const {
    RegexMatch m;
    return find(text, size, 0, &m);
}

std::vector<RegexMatch> Regex::find_all(const char* text, size_t size) const {
    std::vector<RegexMatch> out;
    RegexScratch scratch;
    RegexMatch m;
    size_t from = 0;
    while (from <= size && find(text, size, from, &m, &scratch)) {
        out.push_back(m);
        if (m.end > m.begin) {
            from = m.end;
        } else {
            if (m.end >= size) break;
            from = m.end + decode_at(reinterpret_cast<const uint8_t*>(text), size, m.end).len;
        }
    }
    return out;
}

}  // namespace ws
