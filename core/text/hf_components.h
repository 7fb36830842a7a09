// SPDX-License-Identifier: MIT
// The pipeline stages of a Hugging Face tokenizer.json (normalizers, pre-tokenizers, decoders), each read from its
// JSON object into a small plain description and applied by a free function, with the semantics of the Rust
// `tokenizers` crate (the reference the JavaScript port follows). Internal to core/text/hf_*.cpp.
//
// Text is UTF-8 throughout and well-formed: hf_tokenizer() replaces ill-formed bytes before any stage runs, so
// the stages never check. No stage allocates per character; a pre-tokenized text is one byte buffer and a list
// of spans (Pieces), not a string per piece.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "text/byte_level.h"
#include "text/charsmap.h"
#include "weightstream/regex.h"
#include "weightstream/status.h"
#include "weightstream/utf8.h"

namespace ws {
namespace hf {

// UTF-8 helpers shared by the stages (utf8_append is utf8.h's). The code point at s[i] of well-formed UTF-8 and
// its length.
uint32_t next_cp(const char* s, size_t n, size_t i, size_t* len);
// bytes with each ill-formed sequence replaced by U+FFFD, one per maximal subpart (WHATWG's decoder, Rust's
// String::from_utf8_lossy): what a JavaScript string or a Rust &str holds for those bytes.
void append_utf8_lossy(const char* bytes, size_t n, std::string* out);

// A `pattern` of Split, Replace (normalizer, pre-tokenizer, decoder): {"String": s} or {"Regex": r}.
struct Pattern {
    bool is_regex = false;
    std::string literal;  // String
    std::shared_ptr<Regex> regex;
};
// kBadJson when the object is neither form; kUnsupported (what: `what`) when the regex engine refuses it.
Status pattern_from_json(const nlohmann::json& j, const char* what, Pattern* out);

// One match or gap of a pattern over a text: find_matches() covers the text with these, in order, as the
// Pattern::find_matches of the Rust crate does (an empty text is one gap; empty matches are kept).
struct MatchSpan {
    uint32_t begin, end;
    bool is_match;
};
void find_matches(const Pattern& p, const char* s, size_t n, RegexScratch* scratch, std::vector<MatchSpan>* out);

// Split behaviours (SplitDelimiterBehavior).
enum class SplitBehavior : uint8_t { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
Status split_behavior_from_json(const nlohmann::json& j, SplitBehavior* out);
// Applies a behaviour to find_matches()'s spans (after `invert`), appending the kept non-empty [begin, end).
void apply_split_behavior(std::vector<MatchSpan>* spans, SplitBehavior behavior, bool invert,
                          std::vector<std::pair<uint32_t, uint32_t>>* out);

// ---- normalizers ----
struct Normalizer {
    enum class Kind : uint8_t {
        kSequence,
        kNFC,
        kNFD,
        kNFKC,
        kNFKD,
        kLowercase,
        kStrip,
        kStripAccents,
        kReplace,
        kPrepend,
        kBert,
        kByteLevel,
        kNmt,
        kPrecompiled,
    };
    Kind kind = Kind::kSequence;
    std::vector<Normalizer> children;  // kSequence
    bool left = false, right = false;  // kStrip
    Pattern pattern;                   // kReplace
    std::string content;               // kReplace: the replacement; kPrepend: the prefix
    // kBert
    bool clean_text = true, handle_chinese_chars = true, lowercase = true;
    int8_t strip_accents = -1;                 // -1: as `lowercase` (null in the JSON)
    std::shared_ptr<const Charsmap> charsmap;  // kPrecompiled: checked complete (Charsmap::check_complete)
};
// null -> *present false. kUnsupported naming a type this build lacks.
Status normalizer_from_json(const nlohmann::json& j, Normalizer* out, int depth = 0);
// Normalizes *text in place (scratch: reusable working memory).
struct NormalizeScratch {
    std::string tmp;
    std::vector<uint32_t> cps, cps2;
    std::vector<MatchSpan> spans;
    RegexScratch regex;
};
void normalize(const Normalizer& n, std::string* text, NormalizeScratch* scratch);

// ---- pre-tokenizers ----
// A pre-tokenized text: pieces [begin, end) of `text`. at_start: the piece begins where the whole input began
// (Metaspace's prepend_scheme "first").
struct Piece {
    uint32_t begin, end;
    bool at_start;
};
struct Pieces {
    std::string text;
    std::vector<Piece> pieces;
    void clear() {
        text.clear();
        pieces.clear();
    }
};

struct PreTokenizer {
    enum class Kind : uint8_t {
        kSequence,
        kByteLevel,
        kSplit,
        kWhitespace,
        kWhitespaceSplit,
        kBert,
        kMetaspace,
        kDigits,
        kPunctuation,
        kCharDelimiterSplit,
        kUnicodeScripts,
        kFixedLength,
    };
    Kind kind = Kind::kSequence;
    std::vector<PreTokenizer> children;  // kSequence
    // kByteLevel
    bool add_prefix_space = false, use_regex = true;
    // kSplit, kPunctuation
    Pattern pattern;
    SplitBehavior behavior = SplitBehavior::kIsolated;
    bool invert = false;
    // kMetaspace
    std::string replacement;     // UTF-8 of the replacement character
    uint8_t prepend_scheme = 0;  // 0 always, 1 first, 2 never
    bool split = true;
    // kDigits
    bool individual_digits = false;
    // kCharDelimiterSplit
    uint32_t delimiter = 0;
    // kFixedLength: characters per piece, > 0 (a piece holds at most 2^32 bytes, so larger lengths are capped)
    uint32_t length = 5;
};
Status pre_tokenizer_from_json(const nlohmann::json& j, PreTokenizer* out, int depth = 0);
struct PreTokenizeScratch {
    Pieces other;
    std::vector<MatchSpan> spans;
    std::vector<std::pair<uint32_t, uint32_t>> kept;
    RegexScratch regex;
};
// The script UnicodeScripts gives a code point: an index of unicode_script_from_name, or -1 for the crate's
// Script::Any (the space, and every code point Unicode 9.0 had not assigned), which joins the piece before it.
int unicode_scripts_script(uint32_t cp);
// The byte-level regex of ByteLevel (GPT-2's), compiled once.
const Regex& byte_level_regex();
void pre_tokenize(const PreTokenizer& p, Pieces* pieces, PreTokenizeScratch* scratch);

// ---- decoders ----
struct Decoder {
    enum class Kind : uint8_t {
        kSequence,
        kByteLevel,
        kMetaspace,
        kWordPiece,
        kByteFallback,
        kFuse,
        kStrip,
        kReplace,
        kBPE,
        kCTC,
    };
    Kind kind = Kind::kSequence;
    std::vector<Decoder> children;
    std::string replacement;  // kMetaspace
    uint8_t prepend_scheme = 0;
    std::string prefix = "##";  // kWordPiece
    bool cleanup = true;        // kWordPiece, kCTC
    uint32_t strip_char = ' ';  // kStrip
    uint32_t start = 0, stop = 0;
    Pattern pattern;  // kReplace
    std::string content;
    std::string suffix = "</w>";                  // kBPE
    std::string pad_token, word_delimiter_token;  // kCTC
};
Status decoder_from_json(const nlohmann::json& j, Decoder* out, int depth = 0);
// Rewrites the token strings as the decoder chain does (each decoder's decode_chain). middle: the tokens stand inside
// a longer text, so no decoder applies its rules for the text's first or last token (Metaspace's dropped leading
// replacement, WordPiece's first token, BPEDecoder's last suffix, Strip).
void decode_chain(const Decoder& d, std::vector<std::string>* tokens, bool middle = false);

// transformers' clean_up_tokenization (" ." -> ".", " n't" -> "n't", ...).
void clean_up_tokenization(std::string* text);

// JSON field helpers (nlohmann without at() or exceptions).
const nlohmann::json* field(const nlohmann::json& j, const char* key);
bool bool_field(const nlohmann::json& j, const char* key, bool fallback);
std::string string_field(const nlohmann::json& j, const char* key, const char* fallback = "");

constexpr int kMaxComponentDepth = 16;  // Sequence inside Sequence
// Matching a literal or an added token costs O(text x its length) at worst (a near match at every position); the
// caps keep that linear in the text. Real files: literals of a character or two, added tokens under 100 bytes.
constexpr size_t kMaxLiteralBytes = 1024;
constexpr size_t kMaxAddedTokenBytes = 1024;
constexpr size_t kMaxPrefixSearchBytes = 1024;  // a WordPiece or Unigram vocabulary entry

}  // namespace hf
}  // namespace ws
