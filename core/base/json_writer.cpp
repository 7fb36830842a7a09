// SPDX-License-Identifier: MIT
#include "weightstream/json_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "weightstream/utf8.h"

namespace ws {
namespace {

// The bytes a JSON string escapes: control characters, '"' and '\\'.
struct ByteClasses {
    bool escape[256];
    constexpr ByteClasses() : escape() {
        for (int c = 0; c < 0x20; ++c) escape[c] = true;
        escape[static_cast<uint8_t>('"')] = true;
        escape[static_cast<uint8_t>('\\')] = true;
    }
};
constexpr ByteClasses kByteClasses;

}  // namespace

JsonWriter::JsonWriter(int indent, Sink sink, void* context) : indent_(indent), sink_(sink), context_(context) {}

char* JsonWriter::make_room(size_t n) {
    if (sink_ && !held_ && size_ > 0) {
        sink_(context_, text_.data(), size_);
        size_ = 0;
    }
    if (capacity_ - size_ < n) {
        capacity_ = std::max({capacity_ * 2, size_ + n, kChunkBytes + kChunkBytes / 4});
        text_.resize(capacity_);
    }
    return &text_[size_];
}

void JsonWriter::put(const char* p, size_t n) {
    std::memcpy(room(n), p, n);
    size_ += n;
}

std::string JsonWriter::finish() {
    if (!sink_) {
        text_.resize(size_);
        capacity_ = size_ = 0;
        return std::move(text_);
    }
    if (size_ > 0) sink_(context_, text_.data(), size_);
    size_ = 0;
    return std::string();
}

void JsonWriter::newline_indent(size_t depth) {
    static const char kSpaces[] = "                                                                ";  // 64
    size_t spaces = depth * static_cast<size_t>(indent_);
    put('\n');
    while (spaces > 0) {
        const size_t n = std::min(spaces, sizeof kSpaces - 1);
        put(kSpaces, n);
        spaces -= n;
    }
}

JsonWriter::Mark JsonWriter::hold() {
    held_ = true;
    return {size_, counts_.size(), counts_.empty() ? 0 : counts_.back(), after_key_};
}

void JsonWriter::release() {
    held_ = false;
}

void JsonWriter::rewind(const Mark& m) {
    size_ = m.size;
    counts_.resize(m.depth);
    if (!counts_.empty()) counts_.back() = m.count;
    after_key_ = m.after_key;
    held_ = false;
}

void JsonWriter::before_value() {
    if (sink_ && !held_ && size_ >= kChunkBytes) {
        sink_(context_, text_.data(), size_);
        size_ = 0;
    }
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (counts_.empty()) return;
    if (counts_.back()++ > 0) put(',');
    if (indent_ >= 0) newline_indent(counts_.size());
}

void JsonWriter::begin_object() {
    before_value();
    put('{');
    counts_.push_back(0);
}

void JsonWriter::begin_array() {
    before_value();
    put('[');
    counts_.push_back(0);
}

void JsonWriter::end_object() {
    const uint64_t n = counts_.back();
    counts_.pop_back();
    if (n > 0 && indent_ >= 0) newline_indent(counts_.size());
    put('}');
}

void JsonWriter::end_array() {
    const uint64_t n = counts_.back();
    counts_.pop_back();
    if (n > 0 && indent_ >= 0) newline_indent(counts_.size());
    put(']');
}

void JsonWriter::key(const std::string& k) {
    before_value();
    escaped(k.data(), k.size(), false);
    put(':');
    if (indent_ >= 0) put(' ');
    after_key_ = true;
}

void JsonWriter::key(const char* k) {
    before_value();
    escaped(k, std::strlen(k), false);
    put(':');
    if (indent_ >= 0) put(' ');
    after_key_ = true;
}

bool JsonWriter::string(const std::string& s) {
    before_value();
    return escaped(s.data(), s.size(), false);
}

void JsonWriter::string(const char* s) {
    before_value();
    escaped(s, std::strlen(s), false);
}

void JsonWriter::valid_string(const std::string& s) {
    before_value();
    escaped(s.data(), s.size(), true);
}

void JsonWriter::uint(uint64_t v) {
    before_value();
    char* p = room(24);
    size_ += static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - p);
}

void JsonWriter::int64(int64_t v) {
    before_value();
    char* p = room(24);
    size_ += static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - p);
}

void JsonWriter::number(double v) {
    before_value();
    if (!std::isfinite(v)) {
        put("null", 4);
        return;
    }
    char* p = room(64);  // nlohmann's number buffer
    size_ += static_cast<size_t>(nlohmann::detail::to_chars(p, p + 64, v) - p);
}

void JsonWriter::boolean(bool v) {
    before_value();
    if (v) {
        put("true", 4);
    } else {
        put("false", 5);
    }
}

void JsonWriter::null() {
    before_value();
    put("null", 4);
}

void JsonWriter::append_escape(uint8_t c) {
    static const char kHex[] = "0123456789abcdef";
    switch (c) {
        case '\b':
            return put("\\b", 2);
        case '\t':
            return put("\\t", 2);
        case '\n':
            return put("\\n", 2);
        case '\f':
            return put("\\f", 2);
        case '\r':
            return put("\\r", 2);
        case '"':
            return put("\\\"", 2);
        case '\\':
            return put("\\\\", 2);
        default: {
            const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};  // nlohmann's "\\u%04x"
            return put(u, 6);
        }
    }
}

bool JsonWriter::escaped(const char* s, size_t n, bool known_valid) {
    const auto* p = reinterpret_cast<const uint8_t*>(s);
    if (!known_valid) {
        size_t i = 0;
        while (i < n && p[i] < 0x80) ++i;
        if (i < n && !utf8_valid(s + i, n - i)) {
            // Rare (a few tokens of a byte-level vocabulary at most): nlohmann's own replacement, so the bytes
            // are its bytes.
            const std::string replaced =
                nlohmann::json(std::string(s, n)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            put(replaced.data(), replaced.size());
            return false;
        }
    }
    // Well-formed: code points from U+0080 are copied as they are (dump's ensure_ascii = false).
    put('"');
    size_t copied = 0;  // p[0 .. copied) is written
    for (size_t i = 0; i < n; ++i) {
        const uint8_t c = p[i];
        if (!kByteClasses.escape[c]) continue;
        put(s + copied, i - copied);
        append_escape(c);
        copied = i + 1;
    }
    put(s + copied, n - copied);
    put('"');
    return true;
}

}  // namespace ws
