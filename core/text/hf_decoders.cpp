// SPDX-License-Identifier: MIT
// Hugging Face decoders (the Rust crate's decoders/*.rs): each rewrites the list of token strings
// (decode_chain); the tokenizer joins what the last one leaves.
#include <algorithm>
#include <cstring>

#include "text/hf_components.h"
#include "weightstream/utf8.h"

namespace ws {
namespace hf {

Status decoder_from_json(const nlohmann::json& j, Decoder* out, int depth) {
    if (depth > kMaxComponentDepth) return make_error(Error::kTooLarge, 0, "decoder.depth");
    if (!j.is_object()) return make_error(Error::kBadJson, 0, "decoder");
    const std::string type = string_field(j, "type");
    using K = Decoder::Kind;
    if (type == "Sequence") {
        out->kind = K::kSequence;
        const nlohmann::json* list = field(j, "decoders");
        if (!list || !list->is_array()) return make_error(Error::kBadJson, 0, "decoder.decoders");
        for (const nlohmann::json& c : *list) {
            if (c.is_null()) continue;
            out->children.emplace_back();
            WS_TRY(decoder_from_json(c, &out->children.back(), depth + 1));
        }
    } else if (type == "ByteLevel") {
        out->kind = K::kByteLevel;
    } else if (type == "Metaspace") {
        out->kind = K::kMetaspace;
        out->replacement = string_field(j, "replacement", "\xE2\x96\x81");
        const std::string scheme = string_field(j, "prepend_scheme", "");
        if (scheme.empty()) {
            out->prepend_scheme = bool_field(j, "add_prefix_space", true) ? 0 : 2;
        } else {
            out->prepend_scheme = scheme == "never" ? 2 : scheme == "first" ? 1 : 0;
        }
    } else if (type == "WordPiece") {
        out->kind = K::kWordPiece;
        out->prefix = string_field(j, "prefix", "##");
        out->cleanup = bool_field(j, "cleanup", true);
    } else if (type == "ByteFallback") {
        out->kind = K::kByteFallback;
    } else if (type == "Fuse") {
        out->kind = K::kFuse;
    } else if (type == "Strip") {
        out->kind = K::kStrip;
        const std::string c = string_field(j, "content", " ");
        size_t len = 0;
        if (c.empty() || (out->strip_char = next_cp(c.data(), c.size(), 0, &len), len != c.size())) {
            return make_error(Error::kBadJson, 0, "decoder.Strip.content");
        }
        const nlohmann::json* start = field(j, "start");
        const nlohmann::json* stop = field(j, "stop");
        out->start =
            start && start->is_number_unsigned() ? uint32_t(std::min<uint64_t>(start->get<uint64_t>(), 1u << 30)) : 0;
        out->stop =
            stop && stop->is_number_unsigned() ? uint32_t(std::min<uint64_t>(stop->get<uint64_t>(), 1u << 30)) : 0;
    } else if (type == "Replace") {
        out->kind = K::kReplace;
        const nlohmann::json* p = field(j, "pattern");
        if (!p) return make_error(Error::kBadJson, 0, "decoder.Replace.pattern");
        WS_TRY(pattern_from_json(*p, "decoder.Replace.pattern", &out->pattern));
        out->content = string_field(j, "content");
    } else if (type == "BPEDecoder") {
        out->kind = K::kBPE;
        out->suffix = string_field(j, "suffix", "</w>");
    } else if (type == "CTC") {
        // The crate gives these three fields no default: a file without one fails to load there.
        out->kind = K::kCTC;
        const nlohmann::json* pad = field(j, "pad_token");
        const nlohmann::json* delimiter = field(j, "word_delimiter_token");
        const nlohmann::json* cleanup = field(j, "cleanup");
        if (!pad || !pad->is_string()) return make_error(Error::kBadJson, 0, "decoder.CTC.pad_token");
        if (!delimiter || !delimiter->is_string()) {
            return make_error(Error::kBadJson, 0, "decoder.CTC.word_delimiter_token");
        }
        if (!cleanup || !cleanup->is_boolean()) return make_error(Error::kBadJson, 0, "decoder.CTC.cleanup");
        out->pad_token = pad->get<std::string>();
        out->word_delimiter_token = delimiter->get<std::string>();
        out->cleanup = cleanup->get<bool>();
    } else {
        return make_error(Error::kUnsupported, 0, "decoder.type");
    }
    return ok_status();
}

namespace {

void replace_all(std::string* s, const std::string& from, const std::string& to) {
    if (from.empty() || s->find(from) == std::string::npos) return;
    std::string out;
    size_t at = 0;
    for (size_t hit; (hit = s->find(from, at)) != std::string::npos; at = hit + from.size()) {
        out.append(*s, at, hit - at);
        out += to;
    }
    out.append(*s, at, std::string::npos);
    s->swap(out);
}

// The crate's decoders::wordpiece::cleanup (WordPiece's and CTC's): transformers' clean_up_tokenization and
// " do not" -> " don't" (neither rewrite can make or unmake a match of the other, so their order is free).
void wordpiece_cleanup(std::string* s) {
    clean_up_tokenization(s);
    replace_all(s, " do not", " don't");
}

// Rust's str::replace: an empty `from` matches at every character boundary ("ab" -> to + "a" + to + "b" + to).
void rust_replace(std::string* s, const std::string& from, const std::string& to) {
    if (!from.empty()) return replace_all(s, from, to);
    std::string out = to;
    for (size_t i = 0, len = 0; i < s->size(); i += len) {
        next_cp(s->data(), s->size(), i, &len);
        out.append(*s, i, len);
        out += to;
    }
    s->swap(out);
}

// "<0xAB>" -> 0xAB, or -1.
int byte_token(const std::string& t) {
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
    int v = 0;
    for (int i = 3; i < 5; ++i) {
        const char c = t[size_t(i)];
        const int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

}  // namespace

void decode_chain(const Decoder& d, std::vector<std::string>* tokens, bool middle) {
    using K = Decoder::Kind;
    std::vector<std::string>& t = *tokens;
    switch (d.kind) {
        case K::kSequence:
            for (const Decoder& c : d.children) decode_chain(c, tokens, middle);
            return;
        case K::kByteLevel: {
            // Every token's characters back to bytes (a token with a character outside the map stays as its
            // UTF-8), then the bytes as lossy UTF-8: one string.
            std::string bytes;
            for (const std::string& s : t) {
                const size_t mark = bytes.size();
                bool mapped = true;
                for (size_t i = 0, len = 0; i < s.size(); i += len) {
                    const int b = byte_level_byte(next_cp(s.data(), s.size(), i, &len));
                    if (b < 0) {
                        mapped = false;
                        break;
                    }
                    bytes.push_back(char(b));
                }
                if (!mapped) {
                    bytes.resize(mark);
                    bytes += s;
                }
            }
            std::string text;
            append_utf8_lossy(bytes.data(), bytes.size(), &text);
            t.assign(1, std::move(text));
            return;
        }
        case K::kMetaspace:
            for (size_t i = 0; i < t.size(); ++i) {
                // The crate drops every replacement character of the first token (not only a leading one)
                // unless prepend_scheme is "never".
                if (i == 0 && !middle && d.prepend_scheme != 2) {
                    replace_all(&t[i], d.replacement, "");
                } else {
                    replace_all(&t[i], d.replacement, " ");
                }
            }
            return;
        case K::kWordPiece:
            for (size_t i = 0; i < t.size(); ++i) {
                if (i != 0 || middle) {
                    if (t[i].compare(0, d.prefix.size(), d.prefix) == 0) {
                        t[i].erase(0, d.prefix.size());
                    } else {
                        t[i].insert(0, " ");
                    }
                }
                if (d.cleanup) wordpiece_cleanup(&t[i]);
            }
            return;
        case K::kByteFallback: {
            // Runs of <0xAB> tokens become their bytes when those are valid UTF-8, else one U+FFFD per byte.
            std::vector<std::string> out;
            std::string run;
            size_t run_count = 0;
            auto flush = [&] {
                if (run_count == 0) return;
                std::string s;
                if (utf8_valid(run)) {
                    s = run;
                } else {
                    for (size_t k = 0; k < run_count; ++k) s += "\xEF\xBF\xBD";
                }
                out.push_back(std::move(s));
                run.clear();
                run_count = 0;
            };
            for (std::string& s : t) {
                const int b = byte_token(s);
                if (b >= 0) {
                    run.push_back(char(b));
                    ++run_count;
                } else {
                    flush();
                    out.push_back(std::move(s));
                }
            }
            flush();
            t.swap(out);
            return;
        }
        case K::kFuse: {
            std::string all;
            for (const std::string& s : t) all += s;
            t.assign(1, std::move(all));
            return;
        }
        case K::kStrip:
            if (middle) return;
            for (std::string& s : t) {
                size_t b = 0, e = s.size();
                for (uint32_t k = 0; k < d.start && b < e; ++k) {
                    size_t len = 0;
                    if (next_cp(s.data(), s.size(), b, &len) != d.strip_char) break;
                    b += len;
                }
                for (uint32_t k = 0; k < d.stop && e > b; ++k) {
                    size_t p = e - 1;
                    while (p > b && (uint8_t(s[p]) & 0xC0) == 0x80) --p;
                    size_t len = 0;
                    if (next_cp(s.data(), s.size(), p, &len) != d.strip_char) break;
                    e = p;
                }
                s = s.substr(b, e - b);
            }
            return;
        case K::kReplace: {
            std::vector<MatchSpan> spans;
            RegexScratch scratch;
            for (std::string& s : t) {
                find_matches(d.pattern, s.data(), s.size(), &scratch, &spans);
                std::string out;
                for (const MatchSpan& m : spans) {
                    if (m.is_match) {
                        out += d.content;
                    } else {
                        out.append(s, m.begin, m.end - m.begin);
                    }
                }
                s.swap(out);
            }
            return;
        }
        case K::kCTC: {
            // Runs of equal tokens as one; in each, every pad_token removed, then with cleanup the crate's
            // WordPiece cleanup and every word_delimiter_token as a space; the tokens left empty dropped. Token by
            // token, as the crate (the JavaScript port joins the tokens first and trims the result).
            std::vector<std::string> out;
            for (size_t i = 0; i < t.size(); ++i) {
                if (i > 0 && t[i] == t[i - 1]) continue;
                std::string s = t[i];
                rust_replace(&s, d.pad_token, "");
                if (d.cleanup) {
                    wordpiece_cleanup(&s);
                    rust_replace(&s, d.word_delimiter_token, " ");
                }
                if (!s.empty()) out.push_back(std::move(s));
            }
            t.swap(out);
            return;
        }
        case K::kBPE:
            for (size_t i = 0; i < t.size(); ++i) {
                replace_all(&t[i], d.suffix, i + 1 == t.size() && !middle ? "" : " ");
            }
            return;
    }
}

}  // namespace hf
}  // namespace ws
