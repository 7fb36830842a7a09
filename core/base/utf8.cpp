// SPDX-License-Identifier: MIT
#include "weightstream/utf8.h"

#include <cstring>

#include "weightstream/model_json.h"

namespace ws {
namespace {

// The length of the run of all-ASCII 8-byte words at p[0 .. n): model strings are mostly ASCII (tokens, keys).
size_t ascii_words(const uint8_t* p, size_t n) {
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t word;
        std::memcpy(&word, p + i, 8);
        if ((word & 0x8080808080808080ull) != 0) break;
    }
    return i;
}

}  // namespace

void utf8_append(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
        out->push_back(char(cp));
    } else if (cp < 0x800) {
        out->push_back(char(0xC0 | (cp >> 6)));
        out->push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out->push_back(char(0xE0 | (cp >> 12)));
        out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(char(0x80 | (cp & 0x3F)));
    } else {
        out->push_back(char(0xF0 | (cp >> 18)));
        out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
        out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(char(0x80 | (cp & 0x3F)));
    }
}

int32_t utf8_next(const uint8_t* p, size_t n, size_t* len) {
    *len = 1;
    const uint8_t b = p[0];
    if (b < 0x80) return b;
    size_t need = 0;
    uint8_t lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
    int32_t cp = 0;
    if (b >= 0xc2 && b <= 0xdf) {
        need = 2;
        cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
        need = 3;
        cp = b & 0x0f;
        if (b == 0xe0) lo = 0xa0;
        if (b == 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
        need = 4;
        cp = b & 0x07;
        if (b == 0xf0) lo = 0x90;
        if (b == 0xf4) hi = 0x8f;
    } else {
        return -1;
    }
    if (n < need || p[1] < lo || p[1] > hi) return -1;
    cp = (cp << 6) | (p[1] & 0x3f);
    for (size_t k = 2; k < need; ++k) {
        if ((p[k] & 0xc0) != 0x80) return -1;
        cp = (cp << 6) | (p[k] & 0x3f);
    }
    *len = need;
    return cp;
}

bool utf8_valid(const std::string& s) {
    return utf8_valid(s.data(), s.size());
}

bool utf8_valid(const char* s, size_t n) {
    const auto* p = reinterpret_cast<const uint8_t*>(s);
    size_t i = 0;
    while (i < n) {
        i += ascii_words(p + i, n - i);
        if (i == n) break;
        const uint8_t b = p[i];
        if (b < 0x80) {
            ++i;
            continue;
        }
        // The two-byte forms inline (U+0080 .. U+07FF: byte-level BPE tokens are mostly these), the rest by
        // utf8_next.
        if (b >= 0xc2 && b <= 0xdf && n - i >= 2 && (p[i + 1] & 0xc0) == 0x80) {
            i += 2;
            continue;
        }
        size_t len = 0;
        if (utf8_next(p + i, n - i, &len) < 0) return false;
        i += len;
    }
    return true;
}

std::string utf8_replace_invalid(const std::string& s) {
    if (utf8_valid(s)) return s;
    // The serializer's own replacement, read back: valid UTF-8 JSON, so the parse cannot fail.
    const nlohmann::json replaced = nlohmann::json::parse(json_dump(nlohmann::json(s), -1), nullptr, false);
    return replaced.is_string() ? replaced.get<std::string>() : std::string();
}

ptrdiff_t utf8_to_utf16(const std::string& s, uint16_t* dst) {
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    const size_t n = s.size();
    uint16_t* const first = dst;
    size_t i = 0;
    while (i < n) {
        const size_t ascii = ascii_words(p + i, n - i);
        for (size_t k = 0; k < ascii; ++k) dst[k] = p[i + k];
        dst += ascii;
        i += ascii;
        if (i == n) break;
        size_t len = 0;
        int32_t cp = utf8_next(p + i, n - i, &len);
        if (cp < 0) return -1;
        i += len;
        if (cp >= 0x10000) {  // a surrogate pair
            cp -= 0x10000;
            *dst++ = static_cast<uint16_t>(0xd800 | (cp >> 10));
            *dst++ = static_cast<uint16_t>(0xdc00 | (cp & 0x3ff));
        } else {
            *dst++ = static_cast<uint16_t>(cp);
        }
    }
    return dst - first;
}

}  // namespace ws
