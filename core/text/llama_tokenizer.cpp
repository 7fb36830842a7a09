// SPDX-License-Identifier: MIT
// llama_tokenizer(): a GGUF's vocabulary tokenized as llama.cpp's src/llama-vocab.cpp does (the 2025-02 snapshot
// c392e50 the test vocabularies come from): the same special-token partition, the same five algorithms (SPM
// bigram merging by score with byte fallback, BPE with the pre-tokenizer's regexes and byte-level symbols, WPM
// greedy longest match, UGM Viterbi with SentencePiece's precompiled normalizer, RWKV greedy trie match), the
// same BOS/EOS rules and the same detokenizer. Written from reading that code. Taken from llama.cpp as it is
// now: the pre-tokenizers added since (llama_pretokenizers.cpp), SentencePiece-style BPE (gemma4), the whitespace
// and hybriddna BPE sessions, the plamo2 model and UGM's double-precision scores. Where llama.cpp would crash, loop,
// hang or read out of bounds on a hostile table or text, this returns an error or does the nearest safe thing, and the
// comment there says so.
//
// Cost: linear in the text for real vocabularies. BPE merging is O(n log n) per word (bpe.h); the regexes run
// on regex.h's Pike VM, whose scratch keeps a split loop linear even where a pattern cuts a long run into
// bounded pieces behind an alternative that scans the whole run (jais-2's whitespace cascade); the longest-token
// walks are on a step budget (WalkBudget).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/bpe.h"
#include "text/byte_level.h"
#include "text/charsmap.h"
#include "text/llama_pretokenizers.h"
#include "text/prefix_index.h"
#include "weightstream/regex.h"
#include "weightstream/tokenizer.h"
#include "weightstream/unicode.h"
#include "weightstream/utf8.h"

namespace ws {
namespace {

// llama_token_attr bits (llama.h).
enum : uint32_t {
    kAttrUndefined = 0,
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
    kAttrLstrip = 1u << 7,
    kAttrRstrip = 1u << 8,
};

enum class VocabType { kSpm, kBpe, kWpm, kUgm, kRwkv, kPlamo2 };

// Past this many special tokens (deepseek's vocabularies have 2,400) the partition first finds which of them
// occur in the text at all, in one walk, instead of searching the text once for each.
constexpr size_t kManySpecialTokens = 64;

const char kEscapedSpace[] = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space
// llm_tokenizer_plamo2's score constants
constexpr int32_t kPlamo2InvalidScore = -20000000;
constexpr int32_t kPlamo2UnknownScore = -10000000;
// hybriddna: the suffix (U+E000) of the k-mer tokens, which llama.cpp erases from their text once loaded.
constexpr std::string_view kDnaMarker = "\xEE\x80\x80";

// llama.cpp's unicode_len_utf8: the length a lead byte announces (1 for a continuation byte).
size_t utf8_len_of_lead(uint8_t b) {
    static const uint8_t lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lookup[b >> 4];
}

// llama.cpp's unicode_cpt_from_utf8: lax (overlong forms and surrogates decode; only the lead bits and the
// continuation bytes' top bits are checked). Returns false where it throws. Values above U+10FFFF (F5..F7
// leads) are refused here too: llama.cpp decodes them and then throws re-encoding them, out of llama_tokenize.
bool lax_decode(const uint8_t* p, size_t n, uint32_t* cp, size_t* len) {
    const uint8_t b = p[0];
    if (!(b & 0x80)) {
        *cp = b;
        *len = 1;
        return true;
    }
    if (!(b & 0x40)) return false;
    auto cont = [&](size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
    if (!(b & 0x20)) {
        if (!cont(1)) return false;
        *cp = uint32_t(b & 0x1F) << 6 | (p[1] & 0x3F);
        *len = 2;
        return true;
    }
    if (!(b & 0x10)) {
        if (!cont(1) || !cont(2)) return false;
        *cp = uint32_t(b & 0x0F) << 12 | uint32_t(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
        *len = 3;
        return true;
    }
    if (!(b & 0x08)) {
        if (!cont(1) || !cont(2) || !cont(3)) return false;
        const uint32_t v =
            uint32_t(b & 0x07) << 18 | uint32_t(p[1] & 0x3F) << 12 | uint32_t(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
        if (v > 0x10FFFF) return false;
        *cp = v;
        *len = 4;
        return true;
    }
    return false;
}

// unicode_cpts_from_utf8: every byte that does not decode is one U+FFFD.
void lax_code_points(std::string_view s, std::vector<uint32_t>* out) {
    out->clear();
    const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
    size_t i = 0;
    while (i < s.size()) {
        uint32_t cp;
        size_t len;
        if (lax_decode(p + i, s.size() - i, &cp, &len)) {
            out->push_back(cp);
            i += len;
        } else {
            out->push_back(0xFFFD);
            i += 1;
        }
    }
}

// A hexadecimal digit's value, or -1.
int hex_digit(char c) {
    return (c >= '0' && c <= '9')   ? c - '0'
           : (c >= 'a' && c <= 'f') ? c - 'a' + 10
           : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                    : -1;
}

// "<0xXX>": its byte, else -1.
int hex_byte_name(std::string_view s) {
    if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
    const int hi = hex_digit(s[3]), lo = hex_digit(s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

bool c_isspace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// The first code point of a code point's canonical decomposition: llama.cpp's unicode_cpts_normalize_nfd,
// whose table keeps only that (so "é" becomes "e").
uint32_t nfd_first(uint32_t cp, std::vector<uint32_t>* scratch) {
    if (cp < 0xC0) return cp;
    scratch->clear();
    unicode_normalize(&cp, 1, UnicodeNormalization::kNFD, scratch);
    return scratch->empty() ? cp : (*scratch)[0];
}

// llama.cpp's unicode_cpt_flags categories.
bool is_punctuation(UnicodeCategory c) {
    return c >= UnicodeCategory::kPc && c <= UnicodeCategory::kPo;
}
bool is_symbol(UnicodeCategory c) {
    return c >= UnicodeCategory::kSm && c <= UnicodeCategory::kSo;
}
bool is_mark(UnicodeCategory c) {
    return c == UnicodeCategory::kMn || c == UnicodeCategory::kMc || c == UnicodeCategory::kMe;
}
bool is_control(UnicodeCategory c) {
    return c == UnicodeCategory::kCc || c == UnicodeCategory::kCf || c == UnicodeCategory::kCs ||
           c == UnicodeCategory::kCo;
}

// BERT's "Chinese character" ranges as llama.cpp's WPM has them (0x2B920, not 0x2B820, as Hugging Face's Rust).
bool is_chinese_char(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// llama_unescape_rwkv_token: \t \n \r \xHH and \<c>.
std::string unescape_rwkv(const std::string& escaped) {
    std::string out;
    out.reserve(escaped.size());
    bool escaping = false;
    int hex_remaining = 0;
    uint8_t hex_acc = 0;
    for (char c : escaped) {
        if (hex_remaining != 0) {
            // llama.cpp's digit rule, as is: 'a'.. counts from 10, anything below 'a' as c - '0'.
            const uint8_t value = uint8_t(c >= 'a' ? c - 'a' + 10 : c - '0');
            hex_acc = uint8_t(hex_acc << 4) + value;
            if (--hex_remaining == 0) {
                out.push_back(char(hex_acc));
                hex_acc = 0;
            }
            continue;
        }
        if (escaping) {
            if (c == 't') {
                out.push_back('\t');
            } else if (c == 'n') {
                out.push_back('\n');
            } else if (c == 'r') {
                out.push_back('\r');
            } else if (c == 'x') {
                hex_remaining = 2;
            } else {
                out.push_back(c);
            }
            escaping = false;
            continue;
        }
        if (c == '\\') {
            escaping = true;
            continue;
        }
        out.push_back(c);
    }
    return out;
}

// The longest-token walks (WPM, UGM and its charsmap, RWKV) cost, at each position, the length of the longest token
// prefix the text continues: a few bytes in real vocabularies, but up to a token's length (64 KB) in one built to make
// a long text hang (tokens "a" and "aaa...ab", a text of "a"s). llama.cpp walks the same way. A budget of steps in
// proportion to the text turns such a table into an error instead of hours.
struct WalkBudget {
    explicit WalkBudget(size_t text_size) : left(text_size * 256 + (size_t(1) << 20)) {}
    bool spend(size_t steps = 1) {
        if (steps > left) return false;
        left -= steps;
        return true;
    }
    size_t left;
};

Status walk_too_costly(size_t offset) {
    return make_error(Error::kTooLarge, offset, "tokenizer.ggml.tokens (token prefixes make this text too costly)");
}

struct Fragment {
    int32_t token;  // >= 0: a special token; -1: text [offset, offset + length) of the input
    size_t offset, length;
};

// A token-producing error: the text needs a token the table lacks and llama.cpp would throw or push -1.
Status missing_token(size_t offset, const char* what) {
    return make_error(Error::kBadKey, offset, what);
}

class LlamaTokenizer final : public Tokenizer {
public:
    Status init(VocabTable table);

    Status tokenize(std::string_view text, const TokenizeOptions& options, std::vector<int32_t>* ids) const override;
    Status detokenize(const int32_t* ids, size_t count, const DetokenizeOptions& options,
                      std::string* text) const override;
    Status token_text(int32_t id, std::string* text) const override {
        if (id < 0 || size_t(id) >= pieces_.size()) return make_error(Error::kBadKey, 0, "id");
        *text += pieces_[size_t(id)];
        return ok_status();
    }
    size_t size() const override { return text_.size(); }
    std::string_view piece(int32_t id) const override {
        return id >= 0 && size_t(id) < text_.size() ? shown_text(id) : std::string_view();
    }
    TokenKind kind(int32_t id) const override;
    std::string description() const override { return description_; }

private:
    // A token's text as llama.cpp's id_to_token has it: hybriddna's k-mers (the tokens after <oov>) without their
    // marker. Lookups use the stored text, marker included.
    std::string_view shown_text(int32_t id) const {
        std::string_view t = text_[size_t(id)];
        if (session_ == BpeSession::kHybridDna && dna_oov_ >= 0 && id > dna_oov_ && t.size() > kDnaMarker.size() &&
            t.substr(t.size() - kDnaMarker.size()) == kDnaMarker) {
            t.remove_suffix(kDnaMarker.size());
        }
        return t;
    }
    int32_t find(std::string_view s) const {
        auto it = to_id_.find(s);
        return it == to_id_.end() ? -1 : it->second;
    }
    void partition(std::string_view text, bool parse_special, std::vector<Fragment>* out) const;
    Status tokenize_spm(std::string_view text, std::vector<int32_t>* out) const;
    Status tokenize_bpe(std::string_view text, std::vector<int32_t>* out, BpeScratch* scratch,
                        LlamaSplitScratch* split_scratch) const;
    // A raw text fragment of a BPE vocabulary through the model's session.
    Status tokenize_bpe_session(std::string_view text, std::vector<int32_t>* out, BpeScratch* scratch,
                                LlamaSplitScratch* split_scratch) const;
    void tokenize_dna(std::string_view content, std::vector<int32_t>* out) const;
    Status tokenize_wpm(std::string_view text, std::vector<int32_t>* out) const;
    Status tokenize_ugm(std::string_view text, size_t base, std::vector<int32_t>* out) const;
    Status tokenize_rwkv(std::string_view text, size_t base, std::vector<int32_t>* out) const;
    Status tokenize_plamo2(std::string_view text, size_t base, std::vector<int32_t>* out) const;
    Status spm_byte_tokens(const char* p, size_t n, size_t offset, std::vector<int32_t>* out) const;
    std::string compute_piece(int32_t id) const;
    // UGM: the normalization of the text at `at`: the replacement (or the text itself) and how much it consumed.
    // false: a replacement offset outside the charsmap (*consumed 0), or the budget spent (*consumed 1).
    bool ugm_normalize_prefix(std::string_view input, size_t at, std::string_view* replacement, size_t* consumed,
                              WalkBudget* budget) const;
    Status ugm_normalize(std::string_view input, std::string* out, WalkBudget* budget) const;

    VocabType type_ = VocabType::kSpm;
    std::string description_;
    std::vector<std::string> text_;
    std::vector<float> score_;
    std::vector<uint32_t> attr_;
    std::unordered_map<std::string_view, int32_t> to_id_;
    std::vector<int32_t> special_;     // control, user-defined and unknown tokens, longest text first
    PrefixIndex special_index_;        // their texts -> index in special_ (when there are many of them)
    std::vector<std::string> pieces_;  // token_to_piece(id, special = true)

    int32_t bos_ = -1, eos_ = -1, unk_ = -1, sep_ = -1;
    // add_bos_ and add_eos_ imply a bos_ and an eos_ (init() refuses a table otherwise)
    bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false, clean_spaces_ = false;
    bool ignore_merges_ = false, remove_extra_whitespaces_ = false;
    bool wpm_lowercase_ = true, wpm_strip_accents_ = true;  // WPM: BertNormalizer's lowercase and strip_accents
    // SentencePiece-style BPE (gemma4): see LlamaPreTokenizer
    bool byte_encode_ = true, escape_whitespaces_ = false, newline_runs_ = false;
    // llama.cpp's BPE sessions by tokenizer.ggml.model: gpt2's; whitespace's, which cuts the text at whitespace
    // (dropped) and lower-cases it before BPE; hybriddna's, which writes the text between <dna> and </dna> as
    // k-mer tokens.
    enum class BpeSession : uint8_t { kPlain, kWhitespace, kHybridDna };
    BpeSession session_ = BpeSession::kPlain;
    bool lowercase_ = false;                                 // the whitespace session's
    int32_t dna_open_ = -1, dna_close_ = -1, dna_oov_ = -1;  // hybriddna: <dna>, </dna>, <oov>

    // BPE
    LlamaSplitter splitter_;  // the pre-tokenizer's regexes and splitters
    BpeMerges merges_;
    int32_t byte_symbol_[256] = {};                    // the token of each byte's byte-level character, or -1
    std::vector<int32_t> byte_fallback_[256];          // when it has none: the tokens of that character's single bytes
    std::string byte_char_[256];                       // each byte's byte-level character, UTF-8
    std::unordered_map<uint32_t, uint8_t> char_byte_;  // the reverse (llama_decode_text)

    // SPM/UGM byte tokens: <0xXX>, else the byte itself as a token (llama_vocab::byte_to_token), or -1
    int32_t byte_token_[256] = {};
    int32_t hex_byte_token_[256] = {};  // <0xXX> only (SentencePiece-style BPE's fallback)
    // plamo2: its byte tokens and its pieces' scores (x 10^4, kPlamo2InvalidScore for no piece)
    int32_t plamo2_byte_[256] = {};
    std::vector<int32_t> plamo2_score_;

    // WPM, UGM, RWKV
    PrefixIndex all_tokens_;    // WPM: every token; UGM: normal, user-defined and unused; RWKV: unescaped
    PrefixIndex user_defined_;  // UGM
    size_t max_token_len_ = 0;
    Charsmap charsmap_;
    float ugm_unknown_score_ = 0;
};

TokenKind LlamaTokenizer::kind(int32_t id) const {
    if (id < 0 || size_t(id) >= attr_.size()) return TokenKind::kUndefined;
    const uint32_t a = attr_[size_t(id)];
    if (a & kAttrControl) return TokenKind::kControl;
    if (a & kAttrUserDefined) return TokenKind::kUserDefined;
    if (a & kAttrUnknown) return TokenKind::kUnknown;
    if (a & kAttrByte) return TokenKind::kByte;
    if (a & kAttrUnused) return TokenKind::kUnused;
    if (a & kAttrNormal) return TokenKind::kNormal;
    return TokenKind::kUndefined;
}

Status LlamaTokenizer::init(VocabTable t) {
    // The model and its defaults (llama_vocab::impl::load).
    int32_t bos = -1, eos = -1, unk = -1, sep = -1;
    bool add_bos = false, add_eos = false, add_sep = false, add_space_prefix = false;
    LlamaPreTokenizer pre;
    // tokenizer.ggml.model "gemma4" (today's llama.cpp): a gpt2 vocabulary whose pre-tokenizer is gemma4 whatever
    // tokenizer.ggml.pre says, without default special ids (they come from the keys).
    const bool gemma4_model = t.model == "gemma4";
    if (gemma4_model) t.model = "gpt2", t.pre = "gemma4";
    if (t.model == "llama") {
        type_ = VocabType::kSpm;
        bos = 1, eos = 2, unk = 0;
        add_space_prefix = true, add_bos = true;
        description_ = "llama";
    } else if (t.model == "bert") {
        type_ = VocabType::kWpm;
        bos = 101, unk = 100, sep = 102;
        add_bos = true, add_sep = true, clean_spaces_ = true;
        description_ = "bert";
    } else if (t.model == "gpt2" || t.model == "whitespace" || t.model == "hybriddna") {
        // whitespace and hybriddna: BPE tokenized through their own sessions (see tokenize())
        type_ = VocabType::kBpe;
        session_ = t.model == "whitespace"  ? BpeSession::kWhitespace
                   : t.model == "hybriddna" ? BpeSession::kHybridDna
                                            : BpeSession::kPlain;
        bos = gemma4_model ? -1 : 11, eos = gemma4_model ? -1 : 11;
        if (!llama_pre_tokenizer(t.pre, &pre)) return make_error(Error::kUnsupported, 0, "tokenizer.ggml.pre");
        clean_spaces_ = pre.clean_spaces;
        ignore_merges_ = pre.ignore_merges;
        byte_encode_ = pre.byte_encode;
        escape_whitespaces_ = pre.escape_whitespaces;
        newline_runs_ = pre.newline_runs;
        add_bos = pre.add_bos;
        add_sep = pre.add_sep;
        if (pre.bos_none) bos = -1;
        lowercase_ = t.normalizer_lowercase >= 0 ? t.normalizer_lowercase != 0 : pre.lowercase;
        description_ = gemma4_model ? "gemma4" : t.model + "/" + (t.pre.empty() ? std::string("default") : t.pre);
    } else if (t.model == "t5") {
        type_ = VocabType::kUgm;
        eos = 1, unk = 2;
        add_eos = true;
        description_ = "t5";
    } else if (t.model == "rwkv") {
        type_ = VocabType::kRwkv;
        description_ = "rwkv";
    } else if (t.model == "plamo2") {
        type_ = VocabType::kPlamo2;
        bos = 1, eos = 2, unk = 0;
        description_ = "plamo2";
    } else {
        // "no_vocab"/"none" (a model without a tokenizer) and names llama.cpp does not know.
        return make_error(Error::kUnsupported, 0, "tokenizer.ggml.model");
    }
    if (t.add_space_prefix >= 0) add_space_prefix = t.add_space_prefix != 0;
    if (t.remove_extra_whitespaces >= 0) remove_extra_whitespaces_ = t.remove_extra_whitespaces != 0;
    // BertNormalizer options (today's llama.cpp; the snapshot always lower-cased and decomposed, and kept marks).
    if (t.normalizer_lowercase >= 0) wpm_lowercase_ = t.normalizer_lowercase != 0;
    wpm_strip_accents_ = wpm_lowercase_;
    if (t.normalizer_strip_accents >= 0) wpm_strip_accents_ = t.normalizer_strip_accents != 0;

    const size_t n = t.tokens.size();
    if (n > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, "tokenizer.ggml.tokens");
    if (!t.scores.empty() && t.scores.size() != n) return make_error(Error::kBadKey, 0, "tokenizer.ggml.scores");
    if (!t.token_types.empty() && t.token_types.size() != n) {
        return make_error(Error::kBadKey, 0, "tokenizer.ggml.token_type");
    }
    text_ = std::move(t.tokens);
    score_.assign(n, 0.0f);
    if (!t.scores.empty()) score_ = std::move(t.scores);
    attr_.assign(n, kAttrNormal);
    for (size_t i = 0; i < n; ++i) {
        if (text_[i].size() > kTokenizerMaxTokenBytes) return make_error(Error::kTooLarge, i, "tokenizer.ggml.tokens");
        // llama.cpp renames an empty token, so that no special token is the empty string.
        if (text_[i].empty()) text_[i] = "[EMPTY_" + std::to_string(i) + "]";
        if (!t.token_types.empty()) {
            // llama_token_type (0 undefined .. 6 byte) as llama_vocab's token attributes; anything else: undefined.
            static const uint32_t kAttrOfType[] = {kAttrUndefined,   kAttrNormal, kAttrUnknown, kAttrControl,
                                                   kAttrUserDefined, kAttrUnused, kAttrByte};
            const int32_t type = t.token_types[i];
            attr_[i] = type >= 0 && type <= 6 ? kAttrOfType[type] : kAttrUndefined;
        }
        max_token_len_ = std::max(max_token_len_, text_[i].size());
    }
    to_id_.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        // llama.cpp asserts that the texts are distinct (GGML_ASSERT(id_to_token.size() == token_to_id.size())).
        if (!to_id_.emplace(std::string_view(text_[i]), int32_t(i)).second) {
            return make_error(Error::kBadKey, i, "tokenizer.ggml.tokens (duplicate token)");
        }
    }

    // Special ids: a key inside the table replaces the default; one outside is ignored (llama.cpp warns).
    auto apply = [&](int32_t key, int32_t* id) {
        if (key >= 0 && size_t(key) < n) *id = key;
    };
    apply(t.bos, &bos);
    apply(t.eos, &eos);
    apply(t.unk, &unk);
    apply(t.sep, &sep);
    if (t.add_bos >= 0) add_bos = t.add_bos != 0;
    if (t.add_eos >= 0) add_eos = t.add_eos != 0;
    if (t.add_sep >= 0) add_sep = t.add_sep != 0;
    // Gemma 4's GGUFs say add_bos false; today's llama.cpp adds the BOS anyway (its pull 21500).
    if (std::string(pre.type) == "gemma4") add_bos = true;
    // A default the table is too small for would be pushed as is by llama.cpp and crash its detokenizer.
    auto valid = [&](int32_t id) { return id >= 0 && size_t(id) < n ? id : -1; };
    bos_ = valid(bos), eos_ = valid(eos), unk_ = valid(unk), sep_ = valid(sep);
    add_bos_ = add_bos, add_eos_ = add_eos, add_space_prefix_ = add_space_prefix;
    // Today's llama.cpp refuses the table when it is to add a token it has none of (check_add_special_token).
    // add_sep appends nothing in llama_tokenize (WPM appends its SEP whatever the flag says); llama.cpp's
    // reranking reads it. Here it is this check only.
    if (add_bos && bos_ < 0) return missing_token(0, "tokenizer.ggml.bos_token_id (add_bos_token is true)");
    if (add_eos && eos_ < 0) return missing_token(0, "tokenizer.ggml.eos_token_id (add_eos_token is true)");
    if (add_sep && sep_ < 0) return missing_token(0, "tokenizer.ggml.seperator_token_id (add_sep_token is true)");

    // Tokens whose text names them end-of-turn or fill-in-the-middle become control tokens (llama.cpp's
    // "auto-detect special tokens by text"; the lists are today's). The first group only when its id key is
    // absent. Control is added to the token's attributes (the snapshot replaced them).
    {
        // clang-format off
        struct Group {
            std::vector<const char*> texts;
            int32_t key;
        };
        const Group groups[] = {
            {{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
              "_<EOT>", "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",
              "<end_of_utterance>"}, t.eot},
            {{"<|eom_id|>"}, t.eom},
            {{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
              "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"}, t.fim_pre},
            {{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>",
              "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"}, t.fim_suf},
            {{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
              "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"}, t.fim_mid},
            {{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}, t.fim_pad},
            {{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}, t.fim_rep},
            {{"<|file_sep|>"}, t.fim_sep},
        };
        // End-of-generation texts: control, always.
        const char* const eog[] = {
            "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
            "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
            "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
            "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>", "[e~["};
        // clang-format on
        for (const Group& g : groups) {
            if (g.key >= 0 && size_t(g.key) < n) continue;
            // llama.cpp takes the first match of its hash map's order; of several, the lowest id here.
            int32_t found = -1;
            for (const char* s : g.texts) {
                const int32_t id = find(s);
                if (id >= 0 && (found < 0 || id < found)) found = id;
            }
            if (found >= 0) attr_[size_t(found)] |= kAttrControl;
        }
        for (const char* s : eog) {
            const int32_t id = find(s);
            if (id >= 0) attr_[size_t(id)] |= kAttrControl;
        }
        // gpt-oss: these are always written out, as user-defined tokens.
        for (const char* s : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
            const int32_t id = find(s);
            if (id >= 0) attr_[size_t(id)] = kAttrUserDefined;
        }
        // o200k_harmony and solar-open: <|end|> ends no generation there, and is user-defined.
        auto has = [&](const char* s) { return find(s) >= 0; };
        const bool call = has("<|call|>") || has("<|calls|>");
        const int32_t end = find("<|end|>");
        if (end >= 0 && call && (has("<|return|>") || has("<|flush|>"))) attr_[size_t(end)] = kAttrUserDefined;
        // Gemma 4 and PaddleOCR: </s> is a normal token where <|tool_response> is an end-of-generation one.
        const int32_t s_end = find("</s>");
        if (s_end >= 0 && has("<|tool_response>")) attr_[size_t(s_end)] = kAttrNormal;
    }

    // The special-token cache: longest first (llama.cpp's std::sort leaves equal lengths unordered; by id here).
    for (size_t i = 0; i < n; ++i) {
        if (attr_[i] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) special_.push_back(int32_t(i));
    }
    std::stable_sort(special_.begin(), special_.end(),
                     [&](int32_t a, int32_t b) { return text_[size_t(a)].size() > text_[size_t(b)].size(); });
    if (special_.size() > kManySpecialTokens) {
        for (size_t i = 0; i < special_.size(); ++i) special_index_.add(text_[size_t(special_[i])], int32_t(i));
        special_index_.build();
    }

    // Per-model strip attributes (llama.cpp sets them by tokenizer.ggml.pre, general.architecture or general.name).
    {
        auto lower = t.name;
        for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
        auto contains = [](const std::string& s, std::initializer_list<const char*> subs) {
            for (const char* sub : subs) {
                if (s.find(sub) != std::string::npos) return true;
            }
            return false;
        };
        auto set = [&](const char* token, uint32_t bit, bool on) {
            const int32_t id = find(token);
            if (id < 0) return;  // llama.cpp's token_to_id.at() would throw and fail the load
            attr_[size_t(id)] = on ? (attr_[size_t(id)] | bit) : (attr_[size_t(id)] & ~bit);
        };
        if (contains(t.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
            contains(t.architecture, {"nomic-bert-moe", "jina-bert-v3"})) {
            set("<mask>", kAttrLstrip, true);
        } else if (contains(lower, {"phi-3", "phi3"})) {
            for (int32_t id : special_) attr_[size_t(id)] |= kAttrRstrip;
            set("</s>", kAttrRstrip, true);
            for (const char* s : {"<unk>", "<s>", "<|endoftext|>"}) set(s, kAttrRstrip, false);
        } else if (contains(lower, {"modern-bert"})) {
            set("[MASK]", kAttrLstrip, true);
        }
    }

    // Byte tokens (SPM and UGM byte fallback).
    for (int b = 0; b < 256; ++b) {
        static const char hex[] = "0123456789ABCDEF";
        const char name[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
        int32_t id = find(std::string_view(name, 6));
        hex_byte_token_[b] = id;
        // The fallback is the byte as a one-byte token; for byte 0 llama.cpp looks up "" (a C string), never found.
        const char byte = char(b);
        if (id < 0 && b != 0) id = find(std::string_view(&byte, 1));
        byte_token_[b] = id;
    }

    if (type_ == VocabType::kBpe) {
        for (int b = 0; b < 256; ++b) {
            const uint32_t cp = byte_level_char(uint8_t(b));
            byte_char_[b].clear();
            utf8_append(cp, &byte_char_[b]);
            char_byte_[cp] = uint8_t(b);
            byte_symbol_[b] = find(byte_char_[b]);
            byte_fallback_[b].clear();
            for (char c : byte_char_[b]) {
                const int32_t id = find(std::string_view(&c, 1));
                if (id >= 0) byte_fallback_[b].push_back(id);
            }
        }
        WS_TRY(splitter_.init(pre.regexes));
        if (t.merges.size() > kTokenizerMaxMerges) return make_error(Error::kTooLarge, 0, "tokenizer.ggml.merges");
        merges_.reserve(t.merges.size());
        std::string joined;
        for (size_t i = 0; i < t.merges.size(); ++i) {
            const std::string& m = t.merges[i];
            const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
            if (space == std::string::npos) return make_error(Error::kBadKey, i, "tokenizer.ggml.merges (no space)");
            const std::string_view left(m.data(), space), right(m.data() + space + 1, m.size() - space - 1);
            const int32_t l = find(left), r = find(right);
            joined.assign(left.data(), left.size());
            joined.append(right.data(), right.size());
            const int32_t merged = find(joined);
            // Hugging Face refuses such merges (MergeTokenOutOfVocabulary); llama.cpp would merge into a text that
            // is no token and then fall back to single bytes. Every real vocabulary names its own tokens.
            if (l < 0 || r < 0 || merged < 0) {
                return make_error(Error::kBadKey, i, "tokenizer.ggml.merges (a token the vocabulary lacks)");
            }
            merges_.insert(l, r, BpeMerges::Rule{int32_t(i), merged}, false);  // the first of duplicates wins
        }
    }

    if (type_ == VocabType::kWpm) {
        for (size_t i = 0; i < n; ++i) all_tokens_.add(text_[i], int32_t(i));
        all_tokens_.build();
    }
    if (type_ == VocabType::kRwkv) {
        for (size_t i = 0; i < n; ++i) all_tokens_.add(unescape_rwkv(text_[i]), int32_t(i));
        all_tokens_.build();
    }
    if (type_ == VocabType::kPlamo2) {
        // llm_tokenizer_plamo2::build: the byte tokens ("<0xXX>" with the byte type; llama.cpp refuses a table
        // that lacks one, or whose only one is id 0), and the pieces its DP may take: every other token whose
        // score, times 10^4 rounded to an int32, is above INVALID_SCORE and whose text is its own UTF-8 as
        // llama.cpp decodes and re-encodes it (its table is built from the re-encoded code points).
        for (int32_t& b : plamo2_byte_) b = 0;
        plamo2_score_.assign(n, kPlamo2InvalidScore);
        std::vector<uint32_t> cps;
        std::string reencoded;
        for (size_t i = 0; i < n; ++i) {
            const std::string& s = text_[i];
            if (attr_[i] & kAttrByte) {
                const int b = hex_byte_name(s);
                if (b >= 0) plamo2_byte_[b] = int32_t(i);
                continue;
            }
            const double scaled = std::round(double(score_[i]) * 1e4);
            // out of range: x86's conversion gives INT32_MIN, which is below INVALID_SCORE
            if (!(scaled > double(kPlamo2InvalidScore) && scaled < 2147483648.0)) continue;
            lax_code_points(s, &cps);
            reencoded.clear();
            for (uint32_t cp : cps) utf8_append(cp, &reencoded);
            if (reencoded != s) continue;
            all_tokens_.add(s, int32_t(i));
            plamo2_score_[i] = int32_t(scaled);
        }
        for (int b = 0; b < 256; ++b) {
            if (plamo2_byte_[b] == 0)
                return make_error(Error::kBadKey, size_t(b), "tokenizer.ggml.tokens (plamo2 byte token)");
        }
        all_tokens_.build();
    }
    if (type_ == VocabType::kUgm) {
        const std::string& cm = t.precompiled_charsmap;
        if (!cm.empty()) {
            WS_TRY(Charsmap::parse(cm, Error::kBadKey, &charsmap_));
            // llama.cpp also refuses a charsmap without strings.
            if (charsmap_.strings_size() == 0) {
                return make_error(Error::kBadKey, 0, "tokenizer.ggml.precompiled_charsmap (no strings)");
            }
        }
        float min_score = FLT_MAX;
        for (size_t i = 0; i < n; ++i) {
            const uint32_t a = attr_[i];
            if (a & kAttrNormal) min_score = std::min(min_score, score_[i]);
            if (a & (kAttrNormal | kAttrUserDefined | kAttrUnused)) all_tokens_.add(text_[i], int32_t(i));
            if (a & kAttrUserDefined) user_defined_.add(text_[i], int32_t(i));
        }
        all_tokens_.build();
        user_defined_.build();
        ugm_unknown_score_ = min_score - 10.0f;
    }

    if (session_ == BpeSession::kHybridDna) {
        dna_open_ = find("<dna>");
        dna_close_ = find("</dna>");
        dna_oov_ = find("<oov>");
    }
    pieces_.resize(n);
    for (size_t i = 0; i < n; ++i) pieces_[i] = compute_piece(int32_t(i));
    return ok_status();
}

// token_to_piece(special = true) without the cache (llama_vocab::impl::token_to_piece's switch).
std::string LlamaTokenizer::compute_piece(int32_t id) const {
    const std::string s(shown_text(id));
    const uint32_t a = attr_[size_t(id)];
    const uint32_t special = kAttrUnknown | kAttrControl;
    switch (type_) {
        case VocabType::kSpm:
        case VocabType::kWpm:
        case VocabType::kUgm: {
            if (a & (special | kAttrUserDefined)) return s;
            if (a & kAttrNormal) {
                std::string out;
                for (size_t i = 0; i < s.size();) {
                    if (s.compare(i, 3, kEscapedSpace) == 0) {
                        out.push_back(' ');
                        i += 3;
                    } else {
                        out.push_back(s[i++]);
                    }
                }
                return out;
            }
            if (a & kAttrByte) {
                // llama.cpp's token_to_byte: strtol of the two characters after "<0x" (0 when they are no hex).
                const std::string digits = s.size() >= 5 ? s.substr(3, 2) : (s.size() > 3 ? s.substr(3) : "");
                long v = 0;
                for (char c : digits) {
                    int d = (c >= '0' && c <= '9')   ? c - '0'
                            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                     : -1;
                    if (d < 0) break;
                    v = v * 16 + d;
                }
                return std::string(1, char(uint8_t(v)));
            }
            return std::string();
        }
        case VocabType::kBpe: {
            if (a & (special | kAttrUserDefined)) return s;
            if ((a & kAttrNormal) && escape_whitespaces_) {
                std::string out;
                for (size_t i = 0; i < s.size();) {
                    if (s.compare(i, 3, kEscapedSpace) == 0) {
                        out.push_back(' ');
                        i += 3;
                    } else {
                        out.push_back(s[i++]);
                    }
                }
                return out;
            }
            if ((a & kAttrByte) && !byte_encode_) {
                // SentencePiece-style BPE's byte tokens, "<0xXX>" (llama.cpp reads any BPE byte token so now; the
                // snapshot wrote none for byte-level vocabularies, which this keeps).
                long v = 0;
                for (size_t i = 3; i < s.size() && i < 5; ++i) {
                    const char c = s[i];
                    const int d = (c >= '0' && c <= '9')   ? c - '0'
                                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                           : -1;
                    if (d < 0) break;
                    v = v * 16 + d;
                }
                return std::string(1, char(uint8_t(v)));
            }
            if (a & kAttrNormal) {
                // llama_decode_text: each character back to its byte; one without a byte is written out.
                std::string out;
                std::vector<uint32_t> cps;
                lax_code_points(s, &cps);
                for (uint32_t cp : cps) {
                    auto it = char_byte_.find(cp);
                    if (it != char_byte_.end()) {
                        out.push_back(char(it->second));
                        continue;
                    }
                    std::string utf8;
                    utf8_append(cp, &utf8);
                    out += "[UNK_BYTE_0x";
                    static const char hex[] = "0123456789abcdef";
                    for (char c : utf8) {
                        out.push_back(hex[uint8_t(c) >> 4]);
                        out.push_back(hex[uint8_t(c) & 15]);
                    }
                    out += s + "]";
                }
                return out;
            }
            return std::string();
        }
        case VocabType::kRwkv:
            return unescape_rwkv(s);
        case VocabType::kPlamo2: {
            // a byte token "<0xXX>" is its byte; every other token (special ones too) its text
            const int b = (a & kAttrByte) ? hex_byte_name(s) : -1;
            return b >= 0 ? std::string(1, char(uint8_t(b))) : s;
        }
    }
    return std::string();
}

// tokenizer_st_partition: for each special token, longest first, every occurrence in the text not yet taken
// becomes that token; lstrip/rstrip tokens swallow the ASCII whitespace before/after them. Each token's pass
// searches only inside the fragments still text (llama.cpp searches the rest of the whole text each time).
void LlamaTokenizer::partition(std::string_view text, bool parse_special, std::vector<Fragment>* out) const {
    std::vector<Fragment> frags, next;
    if (!text.empty()) frags.push_back({-1, 0, text.size()});
    // A token that does not occur in the text occurs in none of its fragments: skip it. The walk is on a budget
    // (a table of long look-alike tokens could make it costly); spent, every token is searched for as before.
    std::vector<uint8_t> occurs;
    if (!special_index_.empty()) {
        occurs.assign(special_.size(), 0);
        WalkBudget budget(text.size());
        for (size_t i = 0; i < text.size() && !occurs.empty(); ++i) {
            PrefixIndex::Cursor c = special_index_.start();
            for (size_t k = i; k < text.size(); ++k) {
                if (!budget.spend()) {
                    occurs.clear();
                    break;
                }
                special_index_.step(&c, uint8_t(text[k]));
                if (!c.alive()) break;
                const int32_t v = special_index_.value(c);
                if (v >= 0) occurs[size_t(v)] = 1;
            }
        }
    }
    for (size_t si = 0; si < special_.size(); ++si) {
        const int32_t id = special_[si];
        if (!occurs.empty() && !occurs[si]) continue;
        const uint32_t a = attr_[size_t(id)];
        if (!parse_special && (a & (kAttrControl | kAttrUnknown))) continue;
        const std::string& tok = text_[size_t(id)];
        next.clear();
        for (const Fragment& f : frags) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            size_t base = f.offset, len = f.length;
            while (true) {
                const size_t hit = len >= tok.size() ? text.substr(base, len).find(tok) : std::string_view::npos;
                if (hit == std::string_view::npos) {
                    if (len > 0) next.push_back({-1, base, len});
                    break;
                }
                const size_t match = base + hit;
                size_t left = hit;
                if (a & kAttrLstrip) {
                    while (left > 0 && c_isspace(text[base + left - 1])) --left;
                }
                if (left > 0) next.push_back({-1, base, left});
                next.push_back({id, 0, 0});
                size_t right = match + tok.size();
                size_t right_len = base + len - right;
                if (right_len == 0) break;
                if (a & kAttrRstrip) {
                    while (right_len > 0 && c_isspace(text[right])) ++right, --right_len;
                }
                base = right;
                len = right_len;
            }
        }
        frags.swap(next);
    }
    *out = std::move(frags);
}

Status LlamaTokenizer::tokenize(std::string_view text, const TokenizeOptions& options,
                                std::vector<int32_t>* ids) const {
    std::vector<Fragment> frags;
    partition(text, options.parse_special, &frags);
    std::vector<int32_t>& out = *ids;
    const bool add_special = options.add_special;
    switch (type_) {
        case VocabType::kSpm: {
            bool prev_special = true;  // the first text gets the space prefix
            if (add_special && options.add_bos && add_bos_) {
                out.push_back(bos_);
            }
            std::string piece;
            for (const Fragment& f : frags) {
                if (f.token >= 0) {
                    out.push_back(f.token);
                    prev_special = true;
                    continue;
                }
                piece.clear();
                if (add_space_prefix_ && prev_special) piece.push_back(' ');
                piece.append(text.data() + f.offset, f.length);
                // llama_escape_whitespace: every space becomes U+2581
                std::string escaped;
                escaped.reserve(piece.size() + piece.size() / 2);
                for (char c : piece) {
                    if (c == ' ') {
                        escaped += kEscapedSpace;
                    } else {
                        escaped.push_back(c);
                    }
                }
                WS_TRY(tokenize_spm(escaped, &out));
                prev_special = false;
            }
            if (add_special && add_eos_) {
                out.push_back(eos_);
            }
            break;
        }
        case VocabType::kBpe: {
            if (add_special && options.add_bos && add_bos_) {
                out.push_back(bos_);
            }
            BpeScratch scratch;
            LlamaSplitScratch split_scratch;
            for (const Fragment& f : frags) {
                if (f.token >= 0) {
                    out.push_back(f.token);
                } else if (escape_whitespaces_) {
                    std::string escaped;
                    for (char c : text.substr(f.offset, f.length)) {
                        if (c == ' ') {
                            escaped += kEscapedSpace;
                        } else {
                            escaped.push_back(c);
                        }
                    }
                    WS_TRY(tokenize_bpe_session(escaped, &out, &scratch, &split_scratch));
                } else {
                    WS_TRY(tokenize_bpe_session(text.substr(f.offset, f.length), &out, &scratch, &split_scratch));
                }
            }
            if (add_special && add_eos_) {
                out.push_back(eos_);
            }
            break;
        }
        case VocabType::kWpm: {
            // WPM adds its BOS ([CLS]) and SEP whenever add_special, whatever the table's add_bos says.
            if (add_special && options.add_bos) {
                if (bos_ < 0) return missing_token(0, "tokenizer.ggml.bos_token_id");
                out.push_back(bos_);
            }
            for (const Fragment& f : frags) {
                if (f.token >= 0) {
                    out.push_back(f.token);
                } else {
                    WS_TRY(tokenize_wpm(text.substr(f.offset, f.length), &out));
                }
            }
            if (add_special) {
                if (sep_ < 0) return missing_token(0, "tokenizer.ggml.seperator_token_id");
                out.push_back(sep_);
            }
            break;
        }
        case VocabType::kUgm: {
            if (add_special && options.add_bos && add_bos_) {
                out.push_back(bos_);
            }
            for (const Fragment& f : frags) {
                if (f.token >= 0) {
                    out.push_back(f.token);
                } else {
                    WS_TRY(tokenize_ugm(text.substr(f.offset, f.length), f.offset, &out));
                }
            }
            if (add_special && add_eos_) {
                out.push_back(eos_);
            }
            break;
        }
        case VocabType::kRwkv: {
            for (const Fragment& f : frags) {
                if (f.token >= 0) {
                    out.push_back(f.token);
                } else {
                    WS_TRY(tokenize_rwkv(text.substr(f.offset, f.length), f.offset, &out));
                }
            }
            break;
        }
        case VocabType::kPlamo2: {
            // llama.cpp adds no BOS or EOS to a plamo2 text, whatever the table asks for.
            for (const Fragment& f : frags) {
                if (f.token >= 0) {
                    out.push_back(f.token);
                } else {
                    WS_TRY(tokenize_plamo2(text.substr(f.offset, f.length), f.offset, &out));
                }
            }
            break;
        }
    }
    return ok_status();
}

// llm_tokenizer_plamo2::encode: the code points (a leading U+FEFF dropped), and from the last to the first, the
// cheapest way to write the rest: a piece that starts here (longest first; ties keep the longer) costs its
// scaled score subtracted, a code point as byte tokens costs 10^7 (UNKNOWN_SCORE). llama.cpp walks a table of
// every suffix of every token for the pieces; this walks the pieces' prefix index, which finds the same ones.
// A piece scored exactly UNKNOWN_SCORE ends the candidates at a position, as its table row does there.
Status LlamaTokenizer::tokenize_plamo2(std::string_view text, size_t base, std::vector<int32_t>* out) const {
    std::vector<uint32_t> cps;
    lax_code_points(text, &cps);
    size_t first = !cps.empty() && cps[0] == 0xFEFF ? 1 : 0;
    const size_t n = cps.size() - first;
    if (n == 0) return ok_status();
    std::string norm;  // the code points re-encoded; at[k]: where code point k starts
    std::vector<size_t> at(n + 1);
    for (size_t k = 0; k < n; ++k) {
        at[k] = norm.size();
        utf8_append(cps[first + k], &norm);
    }
    at[n] = norm.size();
    struct Best {
        int64_t score;
        int32_t token;    // -1: byte tokens
        uint32_t length;  // code points
    };
    std::vector<Best> best(n + 1, Best{int64_t(1) << 60, -1, 0});
    best[n].score = 0;
    WalkBudget budget(norm.size());
    std::vector<std::pair<int32_t, uint32_t>> found;  // (token, code points), shortest first
    for (size_t i = n; i-- > 0;) {
        found.clear();
        PrefixIndex::Cursor c = all_tokens_.start();
        uint32_t length = 0;
        for (size_t j = at[i]; j < norm.size(); ++j) {
            if (!budget.spend()) return walk_too_costly(base);
            all_tokens_.step(&c, uint8_t(norm[j]));
            if (!c.alive()) break;
            if (j + 1 < norm.size() && (uint8_t(norm[j + 1]) & 0xC0) == 0x80) continue;
            ++length;
            const int32_t id = all_tokens_.value(c);
            if (id >= 0) found.push_back({id, length});
        }
        bool stop = false;
        for (size_t k = found.size(); k-- > 0;) {
            const int32_t score = plamo2_score_[size_t(found[k].first)];
            const int64_t s = best[i + found[k].second].score - score;
            if (s < best[i].score) best[i] = Best{s, found[k].first, found[k].second};
            if (score == kPlamo2UnknownScore) {
                stop = true;
                break;
            }
        }
        if (!stop) {
            const int64_t s = best[i + 1].score - kPlamo2UnknownScore;
            if (s < best[i].score) best[i] = Best{s, -1, 1};
        }
    }
    for (size_t i = 0; i < n; i += best[i].length) {
        if (best[i].token >= 0) {
            out->push_back(best[i].token);
            continue;
        }
        for (size_t j = at[i]; j < at[i + 1]; ++j) out->push_back(plamo2_byte_[uint8_t(norm[j])]);
    }
    return ok_status();
}

// SPM: byte fallback of a symbol that is no token.
Status LlamaTokenizer::spm_byte_tokens(const char* p, size_t n, size_t offset, std::vector<int32_t>* out) const {
    for (size_t j = 0; j < n; ++j) {
        const int32_t id = byte_token_[uint8_t(p[j])];
        // llama.cpp's byte_to_token throws (token_to_id.at) for a byte the vocabulary has no token for.
        if (id < 0) return missing_token(offset, "tokenizer.ggml.tokens (no byte token)");
        out->push_back(id);
    }
    return ok_status();
}

// llm_tokenizer_spm_session::tokenize: symbols are UTF-8 characters (by their lead byte only); repeatedly the
// adjacent pair whose concatenation is the token of highest score (leftmost of equal scores) merges.
Status LlamaTokenizer::tokenize_spm(std::string_view text, std::vector<int32_t>* out) const {
    struct Symbol {
        int32_t prev, next;
        size_t offset, n;
    };
    struct Bigram {
        int32_t left, right;
        float score;
        size_t size;
    };
    std::vector<Symbol> sym;
    for (size_t off = 0; off < text.size();) {
        const size_t len = std::min(utf8_len_of_lead(uint8_t(text[off])), text.size() - off);
        const int32_t index = int32_t(sym.size());
        sym.push_back({index - 1, off + len == text.size() ? -1 : index + 1, off, len});
        off += len;
    }
    auto worse = [](const Bigram& l, const Bigram& r) {
        return l.score < r.score || (l.score == r.score && l.left > r.left);
    };
    std::vector<Bigram> queue;
    auto try_add = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = sym[size_t(left)];
        const Symbol& r = sym[size_t(right)];
        const int32_t id = find(text.substr(l.offset, l.n + r.n));
        if (id < 0) return;
        queue.push_back({left, right, score_[size_t(id)], l.n + r.n});
        std::push_heap(queue.begin(), queue.end(), worse);
    };
    for (size_t i = 1; i < sym.size(); ++i) try_add(int32_t(i - 1), int32_t(i));
    while (!queue.empty()) {
        std::pop_heap(queue.begin(), queue.end(), worse);
        const Bigram b = queue.back();
        queue.pop_back();
        Symbol& l = sym[size_t(b.left)];
        Symbol& r = sym[size_t(b.right)];
        if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) sym[size_t(r.next)].prev = b.left;
        try_add(l.prev, b.left);
        try_add(b.left, l.next);
    }
    if (sym.empty()) return ok_status();
    for (int32_t i = 0; i != -1; i = sym[size_t(i)].next) {
        const Symbol& s = sym[size_t(i)];
        const int32_t id = find(text.substr(s.offset, s.n));
        if (id >= 0) {
            out->push_back(id);
        } else {
            // Every merged symbol is a token, so this is one character: its bytes as byte tokens.
            WS_TRY(spm_byte_tokens(text.data() + s.offset, s.n, s.offset, out));
        }
    }
    return ok_status();
}

Status LlamaTokenizer::tokenize_bpe_session(std::string_view text, std::vector<int32_t>* out, BpeScratch* scratch,
                                            LlamaSplitScratch* split_scratch) const {
    switch (session_) {
        case BpeSession::kPlain:
            return tokenize_bpe(text, out, scratch, split_scratch);
        case BpeSession::kWhitespace: {
            // llm_tokenizer_whitespace_session: the code points (invalid bytes are U+FFFD) cut at White_Space,
            // which is dropped, each segment lower-cased (simple mapping) when the normalizer says so.
            std::string segment;
            const uint8_t* p = reinterpret_cast<const uint8_t*>(text.data());
            for (size_t i = 0; i <= text.size();) {
                uint32_t cp = 0x20;
                size_t len = 1;
                if (i < text.size()) cp = unicode_next_lossy(p + i, text.size() - i, &len);
                i += len;
                if (unicode_is_white_space(cp)) {
                    if (!segment.empty()) WS_TRY(tokenize_bpe(segment, out, scratch, split_scratch));
                    segment.clear();
                    continue;
                }
                utf8_append(lowercase_ ? unicode_to_lower(cp) : cp, &segment);
            }
            return ok_status();
        }
        case BpeSession::kHybridDna: {
            // llm_tokenizer_hybriddna_session: without its three tokens, plain BPE.
            if (dna_open_ < 0 || dna_close_ < 0 || dna_oov_ < 0) return tokenize_bpe(text, out, scratch, split_scratch);
            static constexpr std::string_view kOpen = "<dna>", kClose = "</dna>";
            size_t pos = 0;
            while (pos < text.size()) {
                const size_t start = text.find(kOpen, pos);
                if (start == std::string_view::npos) {
                    WS_TRY(tokenize_bpe(text.substr(pos), out, scratch, split_scratch));
                    break;
                }
                if (start > pos) WS_TRY(tokenize_bpe(text.substr(pos, start - pos), out, scratch, split_scratch));
                out->push_back(dna_open_);
                const size_t content = start + kOpen.size();
                const size_t end = text.find(kClose, content);
                tokenize_dna(text.substr(content, (end == std::string_view::npos ? text.size() : end) - content), out);
                if (end == std::string_view::npos) break;
                out->push_back(dna_close_);
                pos = end + kClose.size();
            }
            return ok_status();
        }
    }
    return ok_status();
}

// emit_dna_kmers: ASCII letters upper-cased, cut into 6-byte k-mers (the last padded with 'A'), each the token of
// the k-mer with the marker U+E000 appended (what keeps k-mer tokens apart from the same letters in the BPE
// vocabulary), else <oov>.
void LlamaTokenizer::tokenize_dna(std::string_view content, std::vector<int32_t>* out) const {
    constexpr size_t k = 6;
    std::string kmer;
    for (size_t i = 0; i < content.size(); i += k) {
        kmer.assign(content.substr(i, k));
        for (char& c : kmer) {
            if (c >= 'a' && c <= 'z') c = char(c - 32);
        }
        kmer.append(k - kmer.size(), 'A');
        kmer += kDnaMarker;
        const int32_t id = find(kmer);
        out->push_back(id >= 0 ? id : dna_oov_);
    }
}

// llm_tokenizer_bpe_session::tokenize with unicode_regex_split: the text as llama.cpp sees it (its code points,
// re-encoded), split by each regex in turn inside the pieces of the last (the gaps between matches are pieces
// too), each piece in GPT-2's byte-level alphabet merged by the ranks of the merges.
Status LlamaTokenizer::tokenize_bpe(std::string_view text, std::vector<int32_t>* out, BpeScratch* scratch,
                                    LlamaSplitScratch* split_scratch) const {
    // `norm`: the code points of the text (invalid bytes are U+FFFD, overlong forms shortened) re-encoded, the
    // bytes llama.cpp's words are made of. `rx`: the same with each surrogate (which llama.cpp's decoder lets
    // through as a code point of category Cs) written as U+E000 (Co, three bytes too), which every pattern
    // treats alike, so that the regex engine sees one code point where llama.cpp does.
    std::string norm, rx;
    norm.reserve(text.size());
    rx.reserve(text.size());
    const uint8_t* p = reinterpret_cast<const uint8_t*>(text.data());
    for (size_t i = 0; i < text.size();) {
        uint32_t cp;
        size_t len;
        if (!lax_decode(p + i, text.size() - i, &cp, &len)) {
            cp = 0xFFFD;
            len = 1;
        }
        i += len;
        utf8_append(cp, &norm);
        utf8_append(cp >= 0xD800 && cp <= 0xDFFF ? 0xE000 : cp, &rx);
    }

    // Pieces as [begin, end) byte ranges of norm.
    std::vector<std::pair<size_t, size_t>> pieces;
    splitter_.split(rx.data(), rx.size(), &pieces, split_scratch);

    std::vector<int32_t> word;
    std::string encoded;
    if (!byte_encode_) {
        // SentencePiece-style: the symbols are the piece's own UTF-8 characters.
        for (const auto& pc : pieces) {
            const std::string_view piece(norm.data() + pc.first, pc.second - pc.first);
            if (ignore_merges_ || (newline_runs_ && piece.find_first_not_of('\n') == std::string_view::npos)) {
                const int32_t id = find(piece);
                if (id >= 0) {
                    out->push_back(id);
                    continue;
                }
            }
            size_t i = 0;
            while (i < piece.size()) {
                word.clear();
                size_t unknown = 0, unknown_len = 0;
                while (i < piece.size()) {
                    const size_t len = std::min(utf8_len_of_lead(uint8_t(piece[i])), piece.size() - i);
                    const int32_t id = find(piece.substr(i, len));
                    if (id < 0) {
                        unknown = i;
                        unknown_len = len;
                        i += len;
                        break;
                    }
                    word.push_back(id);
                    i += len;
                }
                bpe_merge(merges_, &word, scratch);
                out->insert(out->end(), word.begin(), word.end());
                // a character that is no token: its bytes as <0xXX> tokens, those the vocabulary has
                for (size_t k = 0; k < unknown_len; ++k) {
                    const int32_t id = hex_byte_token_[uint8_t(piece[unknown + k])];
                    if (id >= 0) out->push_back(id);
                }
            }
        }
        return ok_status();
    }
    for (const auto& pc : pieces) {
        if (ignore_merges_) {
            encoded.clear();
            for (size_t i = pc.first; i < pc.second; ++i) encoded += byte_char_[uint8_t(norm[i])];
            const int32_t id = find(encoded);
            if (id >= 0) {
                out->push_back(id);
                continue;
            }
        }
        // A byte whose character is no token never merges (no merge may name it): it splits the word, and
        // stands for the one-byte tokens of its character's bytes (llama.cpp's fallback for a symbol that is no
        // token; usually none).
        size_t i = pc.first;
        while (i < pc.second) {
            word.clear();
            while (i < pc.second && byte_symbol_[uint8_t(norm[i])] >= 0)
                word.push_back(byte_symbol_[uint8_t(norm[i++])]);
            bpe_merge(merges_, &word, scratch);
            out->insert(out->end(), word.begin(), word.end());
            if (i < pc.second) {
                const std::vector<int32_t>& fb = byte_fallback_[uint8_t(norm[i++])];
                out->insert(out->end(), fb.begin(), fb.end());
            }
        }
    }
    return ok_status();
}

// llm_tokenizer_wpm_session: with strip_accents NFD (first code point) and marks dropped, with lowercase lower
// case; split on whitespace and around punctuation, ASCII symbols and CJK; each word "▁word" greedily by longest
// tokens, or [UNK] when any part has none.
Status LlamaTokenizer::tokenize_wpm(std::string_view text, std::vector<int32_t>* out) const {
    std::vector<uint32_t> cps, scratch;
    lax_code_points(text, &cps);
    std::vector<std::string> words(1);
    for (uint32_t cp0 : cps) {
        const uint32_t cp = wpm_strip_accents_ ? nfd_first(cp0, &scratch) : cp0;
        const UnicodeCategory cat = unicode_category(cp);
        if (unicode_is_white_space(cp)) {
            if (!words.back().empty()) words.emplace_back();
            continue;
        }
        if (cp == 0 || cp == 0xFFFD || is_control(cat)) continue;
        if (wpm_strip_accents_ && is_mark(cat)) continue;
        std::string s;
        utf8_append(wpm_lowercase_ ? unicode_to_lower(cp) : cp, &s);
        if (is_punctuation(cat) || (cp < 0x7F && is_symbol(cat)) || is_chinese_char(cp)) {
            if (!words.back().empty()) words.emplace_back();
            words.back() = s;
            words.emplace_back();
        } else {
            words.back() += s;
        }
    }
    if (words.back().empty()) words.pop_back();

    std::string word;
    WalkBudget budget(text.size());
    for (const std::string& w : words) {
        if (w.empty()) continue;
        word = kEscapedSpace + w;
        const size_t start = out->size();
        for (size_t i = 0; i < word.size();) {
            // The longest token at i (llama.cpp tries lengths from max_token_len down).
            PrefixIndex::Cursor c = all_tokens_.start();
            int32_t best = -1;
            size_t best_len = 0;
            for (size_t j = i; j < word.size() && j - i < max_token_len_; ++j) {
                if (!budget.spend()) return walk_too_costly(0);
                all_tokens_.step(&c, uint8_t(word[j]));
                if (!c.alive()) break;
                const int32_t v = all_tokens_.value(c);
                if (v >= 0) best = v, best_len = j - i + 1;
            }
            if (best < 0) {
                out->resize(start);  // discard the word's tokens
                break;
            }
            out->push_back(best);
            i += best_len;
        }
        if (out->size() == start) {
            if (unk_ < 0) return missing_token(0, "tokenizer.ggml.unknown_token_id");
            out->push_back(unk_);
        }
    }
    return ok_status();
}

// The precompiled charsmap's longest match at `at` (SentencePiece's normalizer, llama.cpp's normalize_prefix).
bool LlamaTokenizer::ugm_normalize_prefix(std::string_view input, size_t at, std::string_view* replacement,
                                          size_t* consumed, WalkBudget* budget) const {
    // A user-defined token's prefix passes unchanged. llama.cpp takes the longest path in its trie of them,
    // whether or not a token ends there.
    {
        PrefixIndex::Cursor c = user_defined_.start();
        size_t longest = 0;
        for (size_t j = at; j < input.size() && !user_defined_.empty(); ++j) {
            if (!budget->spend()) {
                *consumed = 1;
                return false;
            }
            user_defined_.step(&c, uint8_t(input[j]));
            if (!c.alive()) break;
            longest = j - at + 1;
        }
        if (longest > 0) {
            *replacement = input.substr(at, longest);
            *consumed = longest;
            return true;
        }
    }
    // The longest key of the charsmap at `at`. A walk costs up to the rest of the text (a hostile trie of long
    // keys), hence the budget.
    size_t longest_len = 0;
    uint32_t longest_off = 0;
    const size_t walked = charsmap_.walk(input.data() + at, input.size() - at, [&](size_t len, uint32_t value) {
        longest_len = len;
        longest_off = value;
        return true;
    });
    if (!budget->spend(walked)) {
        *consumed = 1;
        return false;
    }
    if (longest_len > 0) {
        if (longest_off >= charsmap_.strings_size()) {  // llama.cpp throws
            *consumed = 0;
            return false;
        }
        *replacement = charsmap_.replacement(longest_off);
        *consumed = longest_len;
        return true;
    }
    uint32_t cp;
    size_t len;
    if (lax_decode(reinterpret_cast<const uint8_t*>(input.data()) + at, input.size() - at, &cp, &len)) {
        *replacement = input.substr(at, len);
        *consumed = len;
    } else {
        *replacement = "\xEF\xBF\xBD";
        *consumed = 1;
    }
    return true;
}

Status LlamaTokenizer::ugm_normalize(std::string_view input, std::string* out, WalkBudget* budget) const {
    out->clear();
    const std::string_view space = kEscapedSpace;  // escape_whitespaces is always true in llama.cpp
    const bool prepend = add_space_prefix_;        // treat_whitespace_as_suffix is always false
    const bool merge = remove_extra_whitespaces_;
    bool prepended = false, in_word = false;
    for (size_t at = 0; at < input.size();) {
        std::string_view rep;
        size_t consumed = 0;
        if (!ugm_normalize_prefix(input, at, &rep, &consumed, budget)) {
            if (consumed != 0) return walk_too_costly(at);
            return make_error(Error::kBadKey, at, "tokenizer.ggml.precompiled_charsmap (replacement offset)");
        }
        for (char c : rep) {
            if (c != ' ') {
                if (!in_word) {
                    in_word = true;
                    if ((prepend && !prepended) || merge) {
                        out->append(space.data(), space.size());
                        prepended = true;
                    }
                }
                out->push_back(c);
            } else {
                in_word = false;
                if (!merge) out->append(space.data(), space.size());
            }
        }
        at += consumed;
    }
    return ok_status();
}

// llm_tokenizer_ugm_session::tokenize: Viterbi over the normalized text, unknown characters at the lowest score
// minus 10, runs of unknowns as one. The sums are doubles, as llama.cpp keeps them since it matched Hugging Face's
// SentencePiece exactly (the 2025-02 snapshot rounded each sum to float).
Status LlamaTokenizer::tokenize_ugm(std::string_view text, size_t base, std::vector<int32_t>* out) const {
    std::string norm;
    WalkBudget budget(text.size());
    WS_TRY(ugm_normalize(text, &norm, &budget));
    const size_t n = norm.size();
    if (n == 0) return ok_status();
    struct Best {
        int32_t id;
        size_t from;
        double score;
    };
    std::vector<Best> best(n + 1, Best{unk_, 0, -DBL_MAX});
    best[0] = Best{unk_, 0, 0};
    for (size_t at = 0; at < n;) {
        const size_t cp_len = std::min(utf8_len_of_lead(uint8_t(norm[at])), n - at);
        const Best current = best[at];
        bool single_found = false;
        PrefixIndex::Cursor c = all_tokens_.start();
        for (size_t k = at; k < n; ++k) {
            if (!budget.spend()) return walk_too_costly(base);
            all_tokens_.step(&c, uint8_t(norm[k]));
            if (!c.alive()) break;
            const int32_t id = all_tokens_.value(c);
            if (id < 0) continue;
            if (k + 1 - at == cp_len) single_found = true;
            const double token_score = (attr_[size_t(id)] & kAttrUserDefined) ? 0.0 : double(score_[size_t(id)]);
            const double challenger = current.score + token_score;
            Best& champ = best[k + 1];
            if (challenger > champ.score) champ = Best{id, at, challenger};
        }
        if (!single_found) {
            const double challenger = current.score + double(ugm_unknown_score_);
            Best& champ = best[at + cp_len];
            if (challenger > champ.score) champ = Best{unk_, at, challenger};
        }
        at += cp_len;
    }
    const size_t start = out->size();
    bool prev_unknown = false;
    for (size_t at = n;;) {
        const Best& b = best[at];
        const bool unknown = b.id == unk_;
        if (!(prev_unknown && unknown)) {
            if (b.id < 0) return missing_token(base, "tokenizer.ggml.unknown_token_id");
            out->push_back(b.id);
        }
        if (b.from == 0) break;
        prev_unknown = unknown;
        at = b.from;
    }
    std::reverse(out->begin() + ptrdiff_t(start), out->end());
    return ok_status();
}

// llm_tokenizer_rwkv_session: the longest token at each position, or the unknown token for one byte.
Status LlamaTokenizer::tokenize_rwkv(std::string_view text, size_t base, std::vector<int32_t>* out) const {
    WalkBudget budget(text.size());
    for (size_t pos = 0; pos < text.size();) {
        PrefixIndex::Cursor c = all_tokens_.start();
        int32_t id = -1;
        size_t end = pos;
        for (size_t k = pos; k < text.size(); ++k) {
            if (!budget.spend()) return walk_too_costly(base + pos);
            all_tokens_.step(&c, uint8_t(text[k]));
            if (!c.alive()) break;
            const int32_t v = all_tokens_.value(c);
            if (v >= 0) id = v, end = k + 1;
        }
        if (id < 0) {
            // No token starts here. llama.cpp pushes its unknown id (-1 for RWKV: garbage) and, when a token's
            // prefix but no whole token matches, restarts from the text's beginning forever; both are one
            // unknown byte here.
            if (unk_ < 0)
                return missing_token(base + pos, "tokenizer.ggml.unknown_token_id (rwkv: no token for a byte)");
            out->push_back(unk_);
            ++pos;
            continue;
        }
        out->push_back(id);
        pos = end;
    }
    return ok_status();
}

// llama_vocab::impl::detokenize: pieces (special ones unless !unparse_special), the first one's leading space
// dropped for add_space_prefix models, then clean_up_tokenization_spaces for the models that want it.
Status LlamaTokenizer::detokenize(const int32_t* ids, size_t count, const DetokenizeOptions& options,
                                  std::string* text) const {
    for (size_t i = 0; i < count; ++i) {
        if (ids[i] < 0 || size_t(ids[i]) >= text_.size()) return make_error(Error::kBadKey, i, "token id");
    }
    bool remove_space = add_space_prefix_;
    if (options.remove_special && add_bos_ && count > 0 && ids[0] == bos_) {
        remove_space = false;
        ++ids;
        --count;
    }
    if (options.remove_special && add_eos_ && count > 0 && ids[count - 1] == eos_) --count;
    std::string s;
    for (size_t i = 0; i < count; ++i) {
        const int32_t id = ids[i];
        const uint32_t a = attr_[size_t(id)];
        if (!options.unparse_special && (a & (kAttrUnknown | kAttrControl))) {
            remove_space = false;
            continue;
        }
        const std::string& piece = pieces_[size_t(id)];
        size_t skip = 0;
        if (remove_space && !piece.empty() && piece[0] == ' ') skip = 1;
        s.append(piece, skip, std::string::npos);
        remove_space = false;
    }
    if (clean_spaces_ && !s.empty()) {
        // " ?", " !", " .", " ," lose the space.
        std::string a;
        a.push_back(s[0]);
        for (size_t i = 1; i < s.size(); ++i) {
            const char x = s[i];
            if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) a.pop_back();
            a.push_back(x);
        }
        // " ' " becomes "'" (the spaces on both sides go). llama.cpp blanks the dropped space in place, so the
        // character after it sees a NUL before it, not a space: `prev` keeps that.
        std::string b;
        b.push_back(a[0]);
        char prev = a[0];
        for (size_t i = 1; i < a.size(); ++i) {
            const char x = a[i];
            if (x == '\'' && i + 1 < a.size() && prev == ' ' && a[i + 1] == ' ') {
                b.pop_back();
                b.push_back(x);
                ++i;  // the next space is dropped
                prev = '\0';
                continue;
            }
            b.push_back(x);
            prev = x;
        }
        // " 's", " 'm", " 're", " 've" lose the space.
        std::string c;
        c.push_back(b[0]);
        for (size_t i = 1; i < b.size(); ++i) {
            const char x = b[i];
            if (b[i - 1] == ' ' && x == '\'' && i + 1 < b.size()) {
                const char x1 = b[i + 1];
                if (x1 == 's' || x1 == 'm') {
                    c.pop_back();
                } else if (i + 2 < b.size()) {
                    const char x2 = b[i + 2];
                    if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) c.pop_back();
                }
            }
            c.push_back(x);
        }
        s.swap(c);
    }
    text->append(s);
    return ok_status();
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> llama_tokenizer(VocabTable table) {
    std::unique_ptr<LlamaTokenizer> t(new LlamaTokenizer());
    WS_TRY(t->init(std::move(table)));
    return std::unique_ptr<Tokenizer>(std::move(t));
}

}  // namespace ws
