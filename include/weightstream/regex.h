// SPDX-License-Identifier: MIT
// A regular expression engine over Unicode code points, linear in the text: the pre-tokenizer patterns of
// llama.cpp and Hugging Face tokenizers (`Split` regexes) and the CLI's name filters.
//
// Matching is a Pike VM (Thompson's NFA simulation with thread priorities): leftmost-first results, the match
// a backtracking engine (Oniguruma, PCRE, ECMAScript) returns, without backtracking. One search costs
// O(program size x text length) time and O(program size) memory, with no recursion per character; all the
// searches of one text with one scratch (find() below) cost O(program size x text length) together.
// Safe on untrusted patterns and texts: a pattern beyond the limits or outside the syntax below is an error
// with its byte offset, never a crash; compiling allocates in proportion to the pattern, bounded by
// kRegexMaxProgram.
//
// Syntax (Oniguruma's, as Hugging Face's tokenizers use it, where it agrees with ECMAScript):
//   literals (UTF-8), escapes \t \n \r \f \v \a \e \0 \xHH \x{H..} \uHHHH \u{H..} and an escaped
//   punctuation character; . (any code point but \n); classes [...] / [^...] with ranges, escapes and
//   \p inside; \d \D (Nd), \w \W (L, M, Nd, Pc), \s \S (White_Space, see unicode.h); \p{..} \P{..} \pL:
//   general categories (L, Lu, Letter, ...), Any and scripts (\p{Han}); groups ( ), (?: ), (?<name> ),
//   (?i: ) (?-i: ) and (?i) to the end of the group (case-insensitive: simple case folding); alternation |;
//   quantifiers * + ? {n} {n,} {n,m}, greedy or lazy (suffix ?); anchors ^ \A (start of text) $ \z (end
//   of text), \b \B (word boundary, \w as above); a look-ahead of one code point, (?=X) or (?!X) where X is a
//   single character, escape or class, as in \s+(?!\S).
// Groups do not capture: a match is its byte range only. One known difference from backtracking engines: a
// quantifier whose body can match the empty string ((a*?)*, (a|)+, (\b|x){2}) may end a match elsewhere than
// they do (ECMAScript rejects an empty iteration and backtracks into the body; the NFA here does not, and
// std::regex and V8 disagree with each other there too). No tokenizer pattern has such a loop. Errors (kUnsupported)
// for backreferences, look-behind, longer look-aheads, atomic groups and possessive quantifiers; kTooLarge past the
// limits.
//
// The text is UTF-8 bytes, decoded as unicode_next_lossy() does (unicode.h): a byte that does not start a
// well-formed sequence is one code point, U+FFFD (llama.cpp's rule). Match offsets are byte offsets in the
// text and always fall between code points so decoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/status.h"

namespace ws {

constexpr size_t kRegexMaxProgram = 100000;  // instructions; a{100000} is kTooLarge
constexpr int kRegexMaxNesting = 200;        // groups inside groups

struct RegexOptions {
    bool case_insensitive = false;  // as if the whole pattern were in (?i: )
    // \p{..} as llama.cpp's unicode_regex_split reads it in a pre-tokenizer pattern (it runs such a pattern over a
    // "collapsed" text, one byte per category, with its own ASCII list per category): \p{Lu}, \p{Ll}, \p{Lt},
    // \p{Lm} and \p{Lo} mean any letter, and U+007E '~' is in no category (its ASCII list for \p{S} is
    // "$+<=>^`|"). Elsewhere llama.cpp's reading is Unicode's. For the GGUF tokenizer's patterns only.
    bool llama_categories = false;
};

struct RegexMatch {
    size_t begin = 0;  // byte offsets in the text: [begin, end)
    size_t end = 0;
};

namespace regex_detail {
struct Program;
}

class RegexScratch;

class Regex {
public:
    Regex();
    ~Regex();
    Regex(Regex&&) noexcept;
    Regex& operator=(Regex&&) noexcept;
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // Compiles a UTF-8 pattern. Errors: kUnsupported (syntax outside the list above, or malformed: the
    // Status's `what` says which, its offset is the byte offset in the pattern), kTooLarge (nesting or program
    // size beyond the limits).
    static Result<Regex> compile(const std::string& pattern, RegexOptions options = {});

    // The leftmost-first match that starts at or after byte `from` of text[0 .. size), or false. Looks at the
    // text before `from` only for \b, \B and ^ (which holds at 0 only). `from` must lie between code points
    // (a previous match's end does). scratch: reusable working memory (none: allocated for this call).
    // Successive calls with one scratch, this pattern, the same text pointer and size and a growing `from` are
    // taken as one scan of one unchanged text: the scratch remembers where threads died after the last match,
    // so that a split loop (find again from each match's end) costs linear time in all, even when an earlier
    // alternative scans far past the matches a later one cuts (jais-2's \s*[\r\n]+ before \s{512}(?!\S)|...).
    // A call with another text, size or pattern, or a `from` not past the last one, starts the memo afresh; a
    // caller who changes a text's bytes in place and searches on further must use another scratch.
    bool find(const char* text, size_t size, size_t from, RegexMatch* match, RegexScratch* scratch = nullptr) const;
    // The CLI's name filters: does the pattern match anywhere in text.
    bool search(const char* text, size_t size) const;
    bool search(const std::string& text) const { return search(text.data(), text.size()); }

    // Every match, left to right, not overlapping: after an empty match the next search starts one code point
    // further (JavaScript's matchAll with the u flag, Oniguruma's and Rust's iteration).
    std::vector<RegexMatch> find_all(const char* text, size_t size) const;

    bool valid() const { return program_ != nullptr; }
    size_t program_size() const;  // instructions, for the limits' tests

private:
    regex_detail::Program* program_ = nullptr;
    friend class RegexScratch;
};

// Working memory of find(): thread lists and a stack, O(program size). One per thread of execution; reused
// across calls (the tokenizer's splitting calls find() once per piece).
class RegexScratch {
public:
    RegexScratch();
    ~RegexScratch();
    RegexScratch(const RegexScratch&) = delete;
    RegexScratch& operator=(const RegexScratch&) = delete;

    struct Impl;
    Impl* impl_;
};

}  // namespace ws
