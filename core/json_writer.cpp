// SPDX-License-Identifier: MIT
#include "json_writer.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "utf8.h"

namespace ws {
namespace {

// What a byte needs in a JSON string: 0 nothing, 1 an escape (control characters, '"', '\\'), 2 a check
// that the string is well-formed UTF-8 (bytes from 0x80).
struct ByteClasses {
    uint8_t of[256];
    constexpr ByteClasses() : of() {
        for (int c = 0; c < 0x20; ++c) of[c] = 1;
        of[static_cast<uint8_t>('"')] = 1;
        of[static_cast<uint8_t>('\\')] = 1;
        for (int c = 0x80; c < 0x100; ++c) of[c] = 2;
    }
};
constexpr ByteClasses kByteClasses;

void append_escape(std::string* out, uint8_t c) {
    static const char kHex[] = "0123456789abcdef";
    switch (c) {
        case '\b':
            out->append("\\b", 2);
            return;
        case '\t':
            out->append("\\t", 2);
            return;
        case '\n':
            out->append("\\n", 2);
            return;
        case '\f':
            out->append("\\f", 2);
            return;
        case '\r':
            out->append("\\r", 2);
            return;
        case '"':
            out->append("\\\"", 2);
            return;
        case '\\':
            out->append("\\\\", 2);
            return;
        default: {
            const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};  // nlohmann's "\\u%04x"
            out->append(u, 6);
            return;
        }
    }
}

}  // namespace

JsonWriter::JsonWriter(int indent, Sink sink, void* context) : indent_(indent), sink_(sink), context_(context) {
    if (sink_) text_.reserve(kChunkBytes + kChunkBytes / 4);
}

std::string JsonWriter::finish() {
    if (!sink_) return std::move(text_);
    if (!text_.empty()) sink_(context_, text_.data(), text_.size());
    text_.clear();
    return std::string();
}

void JsonWriter::newline_indent(size_t depth) {
    out_->push_back('\n');
    out_->append(depth * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::before_value() {
    if (sink_ && text_.size() >= kChunkBytes) {
        sink_(context_, text_.data(), text_.size());
        text_.clear();
    }
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (counts_.empty()) return;
    if (counts_.back()++ > 0) out_->push_back(',');
    if (indent_ >= 0) newline_indent(counts_.size());
}

void JsonWriter::begin_object() {
    before_value();
    out_->push_back('{');
    counts_.push_back(0);
}

void JsonWriter::begin_array() {
    before_value();
    out_->push_back('[');
    counts_.push_back(0);
}

void JsonWriter::end_object() {
    const uint64_t n = counts_.back();
    counts_.pop_back();
    if (n > 0 && indent_ >= 0) newline_indent(counts_.size());
    out_->push_back('}');
}

void JsonWriter::end_array() {
    const uint64_t n = counts_.back();
    counts_.pop_back();
    if (n > 0 && indent_ >= 0) newline_indent(counts_.size());
    out_->push_back(']');
}

void JsonWriter::key(const std::string& k) {
    before_value();
    escaped(k, false);
    out_->push_back(':');
    if (indent_ >= 0) out_->push_back(' ');
    after_key_ = true;
}

void JsonWriter::string(const std::string& s) {
    before_value();
    escaped(s, false);
}

void JsonWriter::valid_string(const std::string& s) {
    before_value();
    escaped(s, true);
}

void JsonWriter::string(const char* s) {
    string(std::string(s));
}

void JsonWriter::uint(uint64_t v) {
    before_value();
    char buf[24];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
    out_->append(buf, static_cast<size_t>(r.ptr - buf));
}

void JsonWriter::int64(int64_t v) {
    before_value();
    char buf[24];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
    out_->append(buf, static_cast<size_t>(r.ptr - buf));
}

void JsonWriter::number(double v) {
    before_value();
    if (!std::isfinite(v)) {
        out_->append("null", 4);
        return;
    }
    char buf[64];  // nlohmann's number buffer
    const char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
    out_->append(buf, static_cast<size_t>(end - buf));
}

void JsonWriter::boolean(bool v) {
    before_value();
    if (v) {
        out_->append("true", 4);
    } else {
        out_->append("false", 5);
    }
}

void JsonWriter::null() {
    before_value();
    out_->append("null", 4);
}

void JsonWriter::escaped(const std::string& s, bool known_valid) {
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    const size_t n = s.size();
    const size_t start = out_->size();
    out_->push_back('"');
    bool checked = known_valid;  // the string is known to be well-formed UTF-8
    size_t copied = 0;           // p[0 .. copied) is in *out_
    for (size_t i = 0; i < n; ++i) {
        const uint8_t c = p[i];
        const uint8_t cls = kByteClasses.of[c];
        if (cls == 0) continue;
        if (cls == 2) {
            if (checked) continue;
            if (!utf8_valid(s)) {
                // Rare (a few tokens of a byte-level vocabulary at most): nlohmann's own replacement, so the
                // bytes are its bytes.
                out_->resize(start);
                out_->append(nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
                return;
            }
            checked = true;  // well-formed code points are copied as they are (dump's ensure_ascii = false)
            continue;
        }
        out_->append(s, copied, i - copied);
        append_escape(out_, c);
        copied = i + 1;
    }
    out_->append(s, copied, n - copied);
    out_->push_back('"');
}

}  // namespace ws
