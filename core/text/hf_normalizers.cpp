// SPDX-License-Identifier: MIT
// Hugging Face normalizers (the Rust crate's normalizers/*.rs), and the helpers every stage shares: UTF-8,
// patterns and split behaviours, JSON fields.
#include <algorithm>
#include <cstring>

#include "base/base64.h"
#include "text/hf_components.h"
#include "weightstream/unicode.h"
#include "weightstream/utf8.h"

namespace ws {
namespace hf {

uint32_t next_cp(const char* s, size_t n, size_t i, size_t* len) {
    const uint8_t c = uint8_t(s[i]);
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    return unicode_next_lossy(reinterpret_cast<const uint8_t*>(s) + i, n - i, len);
}

void append_utf8_lossy(const char* bytes, size_t n, std::string* out) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes);
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
            out->push_back(char(p[i++]));
            continue;
        }
        size_t len = 0;
        if (utf8_next(p + i, n - i, &len) >= 0) {
            out->append(bytes + i, len);
            i += len;
            continue;
        }
        // An ill-formed sequence: one U+FFFD for its maximal subpart (Unicode 15 section 3.9, table 3-8): the
        // longest prefix of a well-formed sequence, or the single byte when none.
        const uint8_t b = p[i];
        size_t need = 0;
        uint8_t lo = 0x80, hi = 0xBF;
        if (b >= 0xC2 && b <= 0xDF) {
            need = 1;
        } else if (b >= 0xE0 && b <= 0xEF) {
            need = 2;
            if (b == 0xE0) lo = 0xA0;
            if (b == 0xED) hi = 0x9F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            need = 3;
            if (b == 0xF0) lo = 0x90;
            if (b == 0xF4) hi = 0x8F;
        }
        size_t k = 1;
        if (need > 0 && i + 1 < n && p[i + 1] >= lo && p[i + 1] <= hi) {
            k = 2;
            while (k <= need && i + k < n && p[i + k] >= 0x80 && p[i + k] <= 0xBF) ++k;
        }
        out->append("\xEF\xBF\xBD");
        i += k;
    }
}

const nlohmann::json* field(const nlohmann::json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    const auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
}

bool bool_field(const nlohmann::json& j, const char* key, bool fallback) {
    const nlohmann::json* v = field(j, key);
    return v && v->is_boolean() ? v->get<bool>() : fallback;
}

std::string string_field(const nlohmann::json& j, const char* key, const char* fallback) {
    const nlohmann::json* v = field(j, key);
    return v && v->is_string() ? v->get<std::string>() : std::string(fallback);
}

Status pattern_from_json(const nlohmann::json& j, const char* what, Pattern* out) {
    const nlohmann::json* s = field(j, "String");
    const nlohmann::json* r = field(j, "Regex");
    if (s && s->is_string()) {
        out->is_regex = false;
        out->literal = s->get<std::string>();
        if (out->literal.size() > kMaxLiteralBytes) return make_error(Error::kTooLarge, 0, what);
        return ok_status();
    }
    if (r && r->is_string()) {
        Result<Regex> re = Regex::compile(r->get<std::string>());
        if (!re.ok()) return make_error(re.status().code, re.status().offset, what);
        out->is_regex = true;
        out->regex = std::make_shared<Regex>(std::move(re).value());
        return ok_status();
    }
    return make_error(Error::kBadJson, 0, what);
}

void find_matches(const Pattern& p, const char* s, size_t n, RegexScratch* scratch, std::vector<MatchSpan>* out) {
    out->clear();
    if (!p.is_regex && p.literal.empty()) {
        out->push_back({0, uint32_t(n), false});
        return;
    }
    if (n == 0) {
        out->push_back({0, 0, false});
        return;
    }
    size_t prev = 0;
    if (p.is_regex) {
        size_t from = 0;
        RegexMatch m;
        while (from <= n && p.regex->find(s, n, from, &m, scratch)) {
            if (m.begin != prev) out->push_back({uint32_t(prev), uint32_t(m.begin), false});
            out->push_back({uint32_t(m.begin), uint32_t(m.end), true});
            prev = m.end;
            if (m.end == m.begin) {
                if (m.end >= n) break;
                size_t len = 1;
                next_cp(s, n, m.end, &len);
                from = m.end + len;
            } else {
                from = m.end;
            }
        }
    } else {
        const std::string& lit = p.literal;
        size_t at = 0;
        while (at + lit.size() <= n) {
            // memchr for the first byte, then compare: O(text x literal) at worst, and the literals of real
            // files are a character or two.
            const char* f = static_cast<const char*>(std::memchr(s + at, lit[0], n - at));
            if (!f || size_t(f - s) + lit.size() > n) break;
            const size_t pos = size_t(f - s);
            if (std::memcmp(f, lit.data(), lit.size()) != 0) {
                at = pos + 1;
                continue;
            }
            if (pos != prev) out->push_back({uint32_t(prev), uint32_t(pos), false});
            out->push_back({uint32_t(pos), uint32_t(pos + lit.size()), true});
            prev = pos + lit.size();
            at = prev;
        }
    }
    if (prev != n) out->push_back({uint32_t(prev), uint32_t(n), false});
}

Status split_behavior_from_json(const nlohmann::json& j, SplitBehavior* out) {
    if (!j.is_string()) return make_error(Error::kBadJson, 0, "pre_tokenizer.behavior");
    const std::string b = j.get<std::string>();
    if (b == "Removed") {
        *out = SplitBehavior::kRemoved;
    } else if (b == "Isolated") {
        *out = SplitBehavior::kIsolated;
    } else if (b == "MergedWithPrevious") {
        *out = SplitBehavior::kMergedWithPrevious;
    } else if (b == "MergedWithNext") {
        *out = SplitBehavior::kMergedWithNext;
    } else if (b == "Contiguous") {
        *out = SplitBehavior::kContiguous;
    } else {
        return make_error(Error::kUnsupported, 0, "pre_tokenizer.behavior");
    }
    return ok_status();
}

void apply_split_behavior(std::vector<MatchSpan>* spans, SplitBehavior behavior, bool invert,
                          std::vector<std::pair<uint32_t, uint32_t>>* out) {
    std::vector<MatchSpan>& m = *spans;
    if (invert) {
        for (MatchSpan& s : m) s.is_match = !s.is_match;
    }
    // The crate's fold over (offsets, is_match): a list of (offsets, remove) where only kRemoved removes.
    struct Kept {
        uint32_t begin, end;
        bool remove;
    };
    std::vector<Kept> acc;
    acc.reserve(m.size());
    switch (behavior) {
        case SplitBehavior::kIsolated:
            for (const MatchSpan& s : m) acc.push_back({s.begin, s.end, false});
            break;
        case SplitBehavior::kRemoved:
            for (const MatchSpan& s : m) acc.push_back({s.begin, s.end, s.is_match});
            break;
        case SplitBehavior::kContiguous: {
            bool previous = false;
            for (const MatchSpan& s : m) {
                if (s.is_match == previous && !acc.empty()) {
                    acc.back().end = s.end;
                } else {
                    acc.push_back({s.begin, s.end, false});
                }
                previous = s.is_match;
            }
            break;
        }
        case SplitBehavior::kMergedWithPrevious: {
            bool previous = false;
            for (const MatchSpan& s : m) {
                if (s.is_match && !previous && !acc.empty()) {
                    acc.back().end = s.end;
                } else {
                    acc.push_back({s.begin, s.end, false});
                }
                previous = s.is_match;
            }
            break;
        }
        case SplitBehavior::kMergedWithNext: {
            bool previous = false;
            for (size_t k = m.size(); k-- > 0;) {
                const MatchSpan& s = m[k];
                if (s.is_match && !previous && !acc.empty()) {
                    acc.back().begin = s.begin;
                } else {
                    acc.push_back({s.begin, s.end, false});
                }
                previous = s.is_match;
            }
            std::reverse(acc.begin(), acc.end());
            break;
        }
    }
    for (const Kept& k : acc) {
        if (!k.remove && k.end > k.begin) out->push_back({k.begin, k.end});
    }
}

namespace {

bool is_chinese_char(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_mark(uint32_t cp) {
    const UnicodeCategory c = unicode_category(cp);
    return c == UnicodeCategory::kMn || c == UnicodeCategory::kMc || c == UnicodeCategory::kMe;
}

bool all_ascii(const std::string& s) {
    for (char c : s) {
        if (uint8_t(c) >= 0x80) return false;
    }
    return true;
}

void to_cps(const std::string& s, std::vector<uint32_t>* cps) {
    cps->clear();
    for (size_t i = 0, len = 0; i < s.size(); i += len) cps->push_back(next_cp(s.data(), s.size(), i, &len));
}

void from_cps(const std::vector<uint32_t>& cps, std::string* s) {
    s->clear();
    for (uint32_t cp : cps) utf8_append(cp, s);
}

// Lowercase as Rust's char::to_lowercase: the simple mapping, and SpecialCasing's one unconditional
// multi-character lowercase (U+0130 -> i + U+0307).
void lowercase(const std::string& in, std::string* out) {
    out->clear();
    for (size_t i = 0, len = 0; i < in.size(); i += len) {
        const uint32_t cp = next_cp(in.data(), in.size(), i, &len);
        if (cp < 0x80) {
            out->push_back(char(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
        } else if (cp == 0x130) {
            out->append("i\xCC\x87");
        } else {
            utf8_append(unicode_to_lower(cp), out);
        }
    }
}

void unicode_form(UnicodeNormalization form, std::string* text, NormalizeScratch* sc) {
    if (all_ascii(*text)) return;  // ASCII is invariant under every form
    to_cps(*text, &sc->cps);
    sc->cps2.clear();
    unicode_normalize(sc->cps.data(), sc->cps.size(), form, &sc->cps2);
    from_cps(sc->cps2, text);
}

void replace(const Pattern& p, const std::string& content, std::string* text, NormalizeScratch* sc) {
    find_matches(p, text->data(), text->size(), &sc->regex, &sc->spans);
    sc->tmp.clear();
    for (const MatchSpan& s : sc->spans) {
        if (s.is_match) {
            sc->tmp += content;
        } else {
            sc->tmp.append(*text, s.begin, s.end - s.begin);
        }
    }
    text->swap(sc->tmp);
}

// spm_precompiled's transform(): the replacement of the trie's FIRST (shortest) key that prefixes the chunk, even
// when the key does not cover it all (the rest of the chunk is then dropped); false when no key does.
bool charsmap_transform(const Charsmap& cm, const char* s, size_t n, std::string_view* out) {
    bool found = false;
    cm.walk(s, n, [&](size_t, uint32_t value) {
        *out = cm.replacement(value);
        found = true;
        return false;
    });
    return found;
}

// Hugging Face's Precompiled normalizer (normalizers/precompiled.rs): per extended grapheme cluster, one of under 6
// bytes is replaced whole when a key prefixes it; otherwise each of its characters is replaced, or kept, on its own.
void precompiled(const Charsmap& cm, std::string* text, NormalizeScratch* sc) {
    sc->tmp.clear();
    const uint8_t* p = reinterpret_cast<const uint8_t*>(text->data());
    std::string_view rep;
    for (size_t g = 0; g < text->size();) {
        const size_t glen = unicode_grapheme_length(p + g, text->size() - g);
        if (glen < 6 && charsmap_transform(cm, text->data() + g, glen, &rep)) {
            sc->tmp.append(rep.data(), rep.size());
        } else {
            for (size_t i = g, len = 0; i < g + glen; i += len) {
                next_cp(text->data(), g + glen, i, &len);
                if (charsmap_transform(cm, text->data() + i, len, &rep)) {
                    sc->tmp.append(rep.data(), rep.size());
                } else {
                    sc->tmp.append(*text, i, len);
                }
            }
        }
        g += glen;
    }
    text->swap(sc->tmp);
}

}  // namespace

Status normalizer_from_json(const nlohmann::json& j, Normalizer* out, int depth) {
    if (depth > kMaxComponentDepth) return make_error(Error::kTooLarge, 0, "normalizer.depth");
    if (!j.is_object()) return make_error(Error::kBadJson, 0, "normalizer");
    const std::string type = string_field(j, "type");
    using K = Normalizer::Kind;
    if (type == "Sequence") {
        out->kind = K::kSequence;
        const nlohmann::json* list = field(j, "normalizers");
        if (!list || !list->is_array()) return make_error(Error::kBadJson, 0, "normalizer.normalizers");
        for (const nlohmann::json& c : *list) {
            if (c.is_null()) continue;
            out->children.emplace_back();
            WS_TRY(normalizer_from_json(c, &out->children.back(), depth + 1));
        }
    } else if (type == "NFC") {
        out->kind = K::kNFC;
    } else if (type == "NFD") {
        out->kind = K::kNFD;
    } else if (type == "NFKC") {
        out->kind = K::kNFKC;
    } else if (type == "NFKD") {
        out->kind = K::kNFKD;
    } else if (type == "Lowercase") {
        out->kind = K::kLowercase;
    } else if (type == "Strip") {
        out->kind = K::kStrip;
        out->left = bool_field(j, "strip_left", true);
        out->right = bool_field(j, "strip_right", true);
    } else if (type == "StripAccents") {
        out->kind = K::kStripAccents;
    } else if (type == "Replace") {
        out->kind = K::kReplace;
        const nlohmann::json* p = field(j, "pattern");
        if (!p) return make_error(Error::kBadJson, 0, "normalizer.Replace.pattern");
        WS_TRY(pattern_from_json(*p, "normalizer.Replace.pattern", &out->pattern));
        out->content = string_field(j, "content");
    } else if (type == "Prepend") {
        out->kind = K::kPrepend;
        out->content = string_field(j, "prepend");
    } else if (type == "BertNormalizer") {
        out->kind = K::kBert;
        out->clean_text = bool_field(j, "clean_text", true);
        out->handle_chinese_chars = bool_field(j, "handle_chinese_chars", true);
        out->lowercase = bool_field(j, "lowercase", true);
        const nlohmann::json* sa = field(j, "strip_accents");
        out->strip_accents = sa && sa->is_boolean() ? int8_t(sa->get<bool>()) : int8_t(-1);
    } else if (type == "ByteLevel") {
        out->kind = K::kByteLevel;
    } else if (type == "Precompiled") {
        out->kind = K::kPrecompiled;
        const nlohmann::json* b = field(j, "precompiled_charsmap");
        if (!b || !b->is_string()) return make_error(Error::kBadJson, 0, "normalizer.Precompiled.precompiled_charsmap");
        std::string blob;
        if (!base64_decode(b->get_ref<const std::string&>(), &blob)) {
            return make_error(Error::kBadKey, 0, "normalizer.Precompiled.precompiled_charsmap (base64)");
        }
        auto cm = std::make_shared<Charsmap>();
        WS_TRY(Charsmap::parse(blob, Error::kBadKey, cm.get()));
        WS_TRY(cm->check_complete(Error::kBadKey));
        out->charsmap = std::move(cm);
    } else if (type == "Nmt") {
        out->kind = K::kNmt;
    } else {
        return make_error(Error::kUnsupported, 0, "normalizer.type");
    }
    return ok_status();
}

void normalize(const Normalizer& n, std::string* text, NormalizeScratch* sc) {
    using K = Normalizer::Kind;
    switch (n.kind) {
        case K::kSequence:
            for (const Normalizer& c : n.children) normalize(c, text, sc);
            break;
        case K::kNFC:
            unicode_form(UnicodeNormalization::kNFC, text, sc);
            break;
        case K::kNFD:
            unicode_form(UnicodeNormalization::kNFD, text, sc);
            break;
        case K::kNFKC:
            unicode_form(UnicodeNormalization::kNFKC, text, sc);
            break;
        case K::kNFKD:
            unicode_form(UnicodeNormalization::kNFKD, text, sc);
            break;
        case K::kLowercase:
            lowercase(*text, &sc->tmp);
            text->swap(sc->tmp);
            break;
        case K::kStrip: {
            size_t b = 0, e = text->size();
            if (n.left) {
                while (b < e) {
                    size_t len = 1;
                    if (!unicode_is_white_space(next_cp(text->data(), text->size(), b, &len))) break;
                    b += len;
                }
            }
            if (n.right) {
                while (e > b) {
                    size_t s = e - 1;
                    while (s > b && (uint8_t((*text)[s]) & 0xC0) == 0x80) --s;
                    size_t len = 1;
                    if (!unicode_is_white_space(next_cp(text->data(), text->size(), s, &len))) break;
                    e = s;
                }
            }
            *text = text->substr(b, e - b);
            break;
        }
        case K::kStripAccents: {
            sc->tmp.clear();
            for (size_t i = 0, len = 0; i < text->size(); i += len) {
                const uint32_t cp = next_cp(text->data(), text->size(), i, &len);
                if (!is_mark(cp)) sc->tmp.append(*text, i, len);
            }
            text->swap(sc->tmp);
            break;
        }
        case K::kReplace:
            replace(n.pattern, n.content, text, sc);
            break;
        case K::kPrepend:
            if (!text->empty()) text->insert(0, n.content);
            break;
        case K::kBert: {
            if (n.clean_text) {
                sc->tmp.clear();
                for (size_t i = 0, len = 0; i < text->size(); i += len) {
                    const uint32_t cp = next_cp(text->data(), text->size(), i, &len);
                    if (cp == '\t' || cp == '\n' || cp == '\r') {
                        sc->tmp.push_back(' ');
                        continue;
                    }
                    const UnicodeCategory c = unicode_category(cp);
                    const bool other = c == UnicodeCategory::kCc || c == UnicodeCategory::kCf ||
                                       c == UnicodeCategory::kCn || c == UnicodeCategory::kCo ||
                                       c == UnicodeCategory::kCs;
                    if (cp == 0 || cp == 0xFFFD || other) continue;
                    if (unicode_is_white_space(cp)) {
                        sc->tmp.push_back(' ');
                    } else {
                        sc->tmp.append(*text, i, len);
                    }
                }
                text->swap(sc->tmp);
            }
            if (n.handle_chinese_chars) {
                sc->tmp.clear();
                for (size_t i = 0, len = 0; i < text->size(); i += len) {
                    const uint32_t cp = next_cp(text->data(), text->size(), i, &len);
                    if (is_chinese_char(cp)) sc->tmp.push_back(' ');
                    sc->tmp.append(*text, i, len);
                    if (is_chinese_char(cp)) sc->tmp.push_back(' ');
                }
                text->swap(sc->tmp);
            }
            const bool strip = n.strip_accents < 0 ? n.lowercase : n.strip_accents != 0;
            if (strip) {
                unicode_form(UnicodeNormalization::kNFD, text, sc);
                sc->tmp.clear();
                for (size_t i = 0, len = 0; i < text->size(); i += len) {
                    const uint32_t cp = next_cp(text->data(), text->size(), i, &len);
                    if (unicode_category(cp) != UnicodeCategory::kMn) sc->tmp.append(*text, i, len);
                }
                text->swap(sc->tmp);
            }
            if (n.lowercase) {
                lowercase(*text, &sc->tmp);
                text->swap(sc->tmp);
            }
            break;
        }
        case K::kNmt:
            // SentencePiece's NMT rules (the crate's do_nmt): control characters removed, other spaces to ' '.
            sc->tmp.clear();
            for (size_t i = 0, len = 0; i < text->size(); i += len) {
                const uint32_t cp = next_cp(text->data(), text->size(), i, &len);
                if ((cp >= 0x01 && cp <= 0x08) || cp == 0x0B || (cp >= 0x0E && cp <= 0x1F) || cp == 0x7F ||
                    cp == 0x8F || cp == 0x9F) {
                    continue;
                }
                if (cp == 0x09 || cp == 0x0A || cp == 0x0C || cp == 0x0D || cp == 0x1680 ||
                    (cp >= 0x200B && cp <= 0x200F) || cp == 0x2028 || cp == 0x2029 || cp == 0x2581 || cp == 0xFEFF ||
                    cp == 0xFFFD) {
                    sc->tmp.push_back(' ');
                } else {
                    sc->tmp.append(*text, i, len);
                }
            }
            text->swap(sc->tmp);
            break;
        case K::kPrecompiled:
            precompiled(*n.charsmap, text, sc);
            break;
        case K::kByteLevel:
            sc->tmp.clear();
            for (char c : *text) utf8_append(byte_level_char(uint8_t(c)), &sc->tmp);
            text->swap(sc->tmp);
            break;
    }
}

void clean_up_tokenization(std::string* text) {
    static const char* const kFrom[] = {" .", " ?", " !", " ,", " ' ", " n't", " 'm", " 's", " 've", " 're"};
    static const char* const kTo[] = {".", "?", "!", ",", "'", "n't", "'m", "'s", "'ve", "'re"};
    for (size_t r = 0; r < sizeof(kFrom) / sizeof(kFrom[0]); ++r) {
        const size_t flen = std::strlen(kFrom[r]);
        if (text->find(kFrom[r]) == std::string::npos) continue;
        std::string out;
        size_t at = 0;
        for (size_t hit; (hit = text->find(kFrom[r], at)) != std::string::npos; at = hit + flen) {
            out.append(*text, at, hit - at);
            out += kTo[r];
        }
        out.append(*text, at, std::string::npos);
        text->swap(out);
    }
}

}  // namespace hf
}  // namespace ws
