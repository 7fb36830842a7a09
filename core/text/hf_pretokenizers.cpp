// SPDX-License-Identifier: MIT
// Hugging Face pre-tokenizers (the Rust crate's pre_tokenizers/*.rs): each splits every piece of a Pieces into
// pieces, and ByteLevel and Metaspace also rewrite the bytes. Splits use the crate's NormalizedString::split
// semantics (find_matches + SplitDelimiterBehavior; empty pieces dropped).
#include <algorithm>
#include <cstdint>

#include "text/hf_components.h"
#include "weightstream/unicode.h"

namespace ws {
namespace hf {
namespace {

using Kept = std::vector<std::pair<uint32_t, uint32_t>>;

// Spans of a character predicate over s: every matching character is a match of its own.
template <typename Pred>
void char_matches(const char* s, size_t n, Pred pred, std::vector<MatchSpan>* out) {
    out->clear();
    if (n == 0) {
        out->push_back({0, 0, false});
        return;
    }
    size_t prev = 0;
    for (size_t i = 0, len = 0; i < n; i += len) {
        const uint32_t cp = next_cp(s, n, i, &len);
        if (!pred(cp)) continue;
        if (prev != i) out->push_back({uint32_t(prev), uint32_t(i), false});
        out->push_back({uint32_t(i), uint32_t(i + len), true});
        prev = i + len;
    }
    if (prev != n) out->push_back({uint32_t(prev), uint32_t(n), false});
}

// Replaces every piece by the parts cut(s, n, kept) fills `kept` with: (begin, end) offsets into the piece, in order.
template <typename Cut>
void cut_all(Pieces* p, PreTokenizeScratch* sc, Cut cut) {
    std::vector<Piece>& out = sc->other.pieces;
    out.clear();
    for (const Piece& piece : p->pieces) {
        sc->kept.clear();
        cut(p->text.data() + piece.begin, size_t(piece.end - piece.begin), &sc->kept);
        for (const auto& k : sc->kept) {
            out.push_back({piece.begin + k.first, piece.begin + k.second, piece.at_start && k.first == 0});
        }
    }
    p->pieces.swap(out);
}

// Replaces every piece by its splits: matcher(s, n, spans) fills the spans of one piece.
template <typename Matcher>
void split_all(Pieces* p, SplitBehavior behavior, bool invert, PreTokenizeScratch* sc, Matcher matcher) {
    cut_all(p, sc, [&](const char* s, size_t n, Kept* kept) {
        matcher(s, n, &sc->spans);
        apply_split_behavior(&sc->spans, behavior, invert, kept);
    });
}

bool is_bert_punct(uint32_t cp) {
    if (cp < 0x80)
        return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126);
    const UnicodeCategory c = unicode_category(cp);
    return c >= UnicodeCategory::kPc && c <= UnicodeCategory::kPo;
}

bool is_numeric(uint32_t cp) {
    const UnicodeCategory c = unicode_category(cp);
    return c == UnicodeCategory::kNd || c == UnicodeCategory::kNl || c == UnicodeCategory::kNo;
}

const Regex& whitespace_regex() {
    static const Regex re = [] {
        Result<Regex> r = Regex::compile("\\w+|[^\\w\\s]+");
        return r.ok() ? std::move(r).value() : Regex();
    }();
    return re;
}

}  // namespace

const Regex& byte_level_regex() {
    static const Regex re = [] {
        Result<Regex> r =
            Regex::compile("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");
        return r.ok() ? std::move(r).value() : Regex();
    }();
    return re;
}

Status pre_tokenizer_from_json(const nlohmann::json& j, PreTokenizer* out, int depth) {
    if (depth > kMaxComponentDepth) return make_error(Error::kTooLarge, 0, "pre_tokenizer.depth");
    if (!j.is_object()) return make_error(Error::kBadJson, 0, "pre_tokenizer");
    const std::string type = string_field(j, "type");
    using K = PreTokenizer::Kind;
    if (type == "Sequence") {
        out->kind = K::kSequence;
        const nlohmann::json* list = field(j, "pretokenizers");
        if (!list || !list->is_array()) return make_error(Error::kBadJson, 0, "pre_tokenizer.pretokenizers");
        for (const nlohmann::json& c : *list) {
            if (c.is_null()) continue;
            out->children.emplace_back();
            WS_TRY(pre_tokenizer_from_json(c, &out->children.back(), depth + 1));
        }
    } else if (type == "ByteLevel") {
        out->kind = K::kByteLevel;
        out->add_prefix_space = bool_field(j, "add_prefix_space", true);
        out->use_regex = bool_field(j, "use_regex", true);
        if (out->use_regex && !byte_level_regex().valid()) return make_error(Error::kInternal, 0, "byte_level_regex");
    } else if (type == "Split") {
        out->kind = K::kSplit;
        const nlohmann::json* p = field(j, "pattern");
        if (!p) return make_error(Error::kBadJson, 0, "pre_tokenizer.Split.pattern");
        WS_TRY(pattern_from_json(*p, "pre_tokenizer.Split.pattern", &out->pattern));
        const nlohmann::json* b = field(j, "behavior");
        if (!b) return make_error(Error::kBadJson, 0, "pre_tokenizer.Split.behavior");
        WS_TRY(split_behavior_from_json(*b, &out->behavior));
        out->invert = bool_field(j, "invert", false);
    } else if (type == "Whitespace") {
        out->kind = K::kWhitespace;
        if (!whitespace_regex().valid()) return make_error(Error::kInternal, 0, "whitespace_regex");
    } else if (type == "WhitespaceSplit") {
        out->kind = K::kWhitespaceSplit;
    } else if (type == "BertPreTokenizer") {
        out->kind = K::kBert;
    } else if (type == "Metaspace") {
        out->kind = K::kMetaspace;
        out->replacement = string_field(j, "replacement", "\xE2\x96\x81");
        size_t len = 0;
        if (out->replacement.empty() ||
            (next_cp(out->replacement.data(), out->replacement.size(), 0, &len), len != out->replacement.size())) {
            return make_error(Error::kBadJson, 0, "pre_tokenizer.Metaspace.replacement");
        }
        const std::string scheme = string_field(j, "prepend_scheme", "");
        if (scheme.empty()) {
            // Older files: add_prefix_space true/false.
            out->prepend_scheme = bool_field(j, "add_prefix_space", true) ? 0 : 2;
        } else if (scheme == "always") {
            out->prepend_scheme = 0;
        } else if (scheme == "first") {
            out->prepend_scheme = 1;
        } else if (scheme == "never") {
            out->prepend_scheme = 2;
        } else {
            return make_error(Error::kUnsupported, 0, "pre_tokenizer.Metaspace.prepend_scheme");
        }
        out->split = bool_field(j, "split", true);
    } else if (type == "Digits") {
        out->kind = K::kDigits;
        out->individual_digits = bool_field(j, "individual_digits", false);
    } else if (type == "Punctuation") {
        out->kind = K::kPunctuation;
        out->behavior = SplitBehavior::kIsolated;
        if (const nlohmann::json* b = field(j, "behavior")) WS_TRY(split_behavior_from_json(*b, &out->behavior));
    } else if (type == "CharDelimiterSplit") {
        out->kind = K::kCharDelimiterSplit;
        const std::string d = string_field(j, "delimiter");
        size_t len = 0;
        if (d.empty() || (out->delimiter = next_cp(d.data(), d.size(), 0, &len), len != d.size())) {
            return make_error(Error::kBadJson, 0, "pre_tokenizer.CharDelimiterSplit.delimiter");
        }
    } else if (type == "UnicodeScripts") {
        out->kind = K::kUnicodeScripts;
    } else if (type == "FixedLength") {
        out->kind = K::kFixedLength;
        // The crate's `length`: a usize, 5 when absent; anything but a positive integer is refused (0 would panic
        // there, in slice::chunks; null, negative, fractional or beyond 2^64 fail its deserialization).
        if (const nlohmann::json* len = field(j, "length")) {
            if (!len->is_number_unsigned() || len->get<uint64_t>() == 0) {
                return make_error(Error::kBadJson, 0, "pre_tokenizer.FixedLength.length");
            }
            out->length = uint32_t(std::min<uint64_t>(len->get<uint64_t>(), UINT32_MAX));
        }
    } else {
        return make_error(Error::kUnsupported, 0, "pre_tokenizer.type");
    }
    return ok_status();
}

void pre_tokenize(const PreTokenizer& p, Pieces* pieces, PreTokenizeScratch* sc) {
    using K = PreTokenizer::Kind;
    switch (p.kind) {
        case K::kSequence:
            for (const PreTokenizer& c : p.children) pre_tokenize(c, pieces, sc);
            return;
        case K::kSplit:
            split_all(pieces, p.behavior, p.invert, sc, [&](const char* s, size_t n, std::vector<MatchSpan>* m) {
                find_matches(p.pattern, s, n, &sc->regex, m);
            });
            return;
        case K::kWhitespace: {
            Pattern re;
            re.is_regex = true;
            // A non-owning view of the static regex: find_matches only reads it.
            re.regex = std::shared_ptr<Regex>(std::shared_ptr<Regex>(), const_cast<Regex*>(&whitespace_regex()));
            split_all(
                pieces, SplitBehavior::kRemoved, true, sc,
                [&](const char* s, size_t n, std::vector<MatchSpan>* m) { find_matches(re, s, n, &sc->regex, m); });
            return;
        }
        case K::kWhitespaceSplit:
            split_all(pieces, SplitBehavior::kRemoved, false, sc,
                      [&](const char* s, size_t n, std::vector<MatchSpan>* m) {
                          char_matches(s, n, unicode_is_white_space, m);
                      });
            return;
        case K::kBert:
            split_all(pieces, SplitBehavior::kRemoved, false, sc,
                      [&](const char* s, size_t n, std::vector<MatchSpan>* m) {
                          char_matches(s, n, unicode_is_white_space, m);
                      });
            split_all(
                pieces, SplitBehavior::kIsolated, false, sc,
                [&](const char* s, size_t n, std::vector<MatchSpan>* m) { char_matches(s, n, is_bert_punct, m); });
            return;
        case K::kPunctuation:
            split_all(pieces, p.behavior, false, sc, [&](const char* s, size_t n, std::vector<MatchSpan>* m) {
                char_matches(s, n, is_bert_punct, m);
            });
            return;
        case K::kDigits:
            split_all(pieces, p.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous, false, sc,
                      [&](const char* s, size_t n, std::vector<MatchSpan>* m) { char_matches(s, n, is_numeric, m); });
            return;
        case K::kCharDelimiterSplit: {
            const uint32_t d = p.delimiter;
            split_all(pieces, SplitBehavior::kRemoved, false, sc,
                      [&](const char* s, size_t n, std::vector<MatchSpan>* m) {
                          char_matches(
                              s, n, [d](uint32_t cp) { return cp == d; }, m);
                      });
            return;
        }
        case K::kUnicodeScripts:
            // A part starts at each character whose script is not Any and differs from the last such character's
            // before it; Any characters (spaces, code points newer than Unicode 9.0) join the part before them,
            // and those before a piece's first other character are dropped, as the crate's split does (a piece
            // of only spaces disappears).
            cut_all(pieces, sc, [](const char* s, size_t n, Kept* kept) {
                int last = -1;
                for (size_t i = 0, len = 0; i < n; i += len) {
                    const int script = unicode_scripts_script(next_cp(s, n, i, &len));
                    if (script < 0 || (!kept->empty() && script == last)) continue;
                    if (!kept->empty()) kept->back().second = uint32_t(i);
                    kept->push_back({uint32_t(i), uint32_t(n)});
                    last = script;
                }
            });
            return;
        case K::kFixedLength:
            // Parts of `length` characters, the last one shorter.
            cut_all(pieces, sc, [&p](const char* s, size_t n, Kept* kept) {
                size_t begin = 0, count = 0;
                for (size_t i = 0, len = 0; i < n; i += len) {
                    next_cp(s, n, i, &len);
                    if (count == p.length) {
                        kept->push_back({uint32_t(begin), uint32_t(i)});
                        begin = i;
                        count = 0;
                    }
                    ++count;
                }
                if (n > begin) kept->push_back({uint32_t(begin), uint32_t(n)});
            });
            return;
        case K::kByteLevel: {
            // Per piece: the optional prefix space, the GPT-2 regex split, then every byte to its character.
            Pieces& out = sc->other;
            out.clear();
            std::string piece_text;
            const Regex& re = byte_level_regex();
            for (const Piece& piece : pieces->pieces) {
                piece_text.assign(pieces->text, piece.begin, piece.end - piece.begin);
                if (p.add_prefix_space && (piece_text.empty() || piece_text[0] != ' ')) piece_text.insert(0, " ");
                auto emit = [&](size_t b, size_t e, bool first) {
                    const uint32_t begin = uint32_t(out.text.size());
                    for (size_t i = b; i < e; ++i) utf8_append(byte_level_char(uint8_t(piece_text[i])), &out.text);
                    out.pieces.push_back({begin, uint32_t(out.text.size()), piece.at_start && first});
                };
                if (!p.use_regex) {
                    if (!piece_text.empty()) emit(0, piece_text.size(), true);
                    continue;
                }
                size_t from = 0, prev = 0;
                RegexMatch m;
                bool first = true;
                while (from < piece_text.size() &&
                       re.find(piece_text.data(), piece_text.size(), from, &m, &sc->regex)) {
                    if (m.begin != prev) {
                        emit(prev, m.begin, first);
                        first = false;
                    }
                    if (m.end > m.begin) {
                        emit(m.begin, m.end, first);
                        first = false;
                    }
                    prev = m.end;
                    from = m.end;
                    if (m.end == m.begin) {  // (GPT-2's pattern never matches empty; step one character if it did)
                        size_t len = 1;
                        next_cp(piece_text.data(), piece_text.size(), m.end, &len);
                        from += len;
                    }
                }
                if (prev < piece_text.size()) emit(prev, piece_text.size(), first);
            }
            pieces->text.swap(out.text);
            pieces->pieces.swap(out.pieces);
            return;
        }
        case K::kMetaspace: {
            Pieces& out = sc->other;
            out.clear();
            const std::string& rep = p.replacement;
            for (const Piece& piece : pieces->pieces) {
                const uint32_t begin = uint32_t(out.text.size());
                const bool starts_with_rep =
                    pieces->text.compare(piece.begin, rep.size(), rep) == 0 && piece.end - piece.begin >= rep.size();
                const bool starts_with_space = piece.end > piece.begin && pieces->text[piece.begin] == ' ';
                bool prepend = false;
                if (!starts_with_rep && !starts_with_space) {
                    prepend = p.prepend_scheme == 0 || (p.prepend_scheme == 1 && piece.at_start);
                }
                if (prepend) out.text += rep;
                for (uint32_t i = piece.begin; i < piece.end; ++i) {
                    if (pieces->text[i] == ' ') {
                        out.text += rep;
                    } else {
                        out.text.push_back(pieces->text[i]);
                    }
                }
                const uint32_t end = uint32_t(out.text.size());
                if (!p.split) {
                    if (end > begin) out.pieces.push_back({begin, end, piece.at_start});
                    continue;
                }
                // Split on the replacement, MergedWithNext: each piece starts with one.
                uint32_t start = begin;
                for (uint32_t i = begin + 1; i + rep.size() <= end; ++i) {
                    if (out.text.compare(i, rep.size(), rep) == 0) {
                        if (i > start) out.pieces.push_back({start, i, piece.at_start && start == begin});
                        start = i;
                        i += uint32_t(rep.size()) - 1;
                    }
                }
                if (end > start) out.pieces.push_back({start, end, piece.at_start && start == begin});
            }
            pieces->text.swap(out.text);
            pieces->pieces.swap(out.pieces);
            return;
        }
    }
}

}  // namespace hf
}  // namespace ws
