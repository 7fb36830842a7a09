// SPDX-License-Identifier: MIT
#include "info_transfer.h"

#include <cstddef>
#include <cstring>
#include <utility>

#include "model_json.h"

namespace ws {
namespace {

// Writes s as UTF-16 at dst (room for s.size() units) if it is well-formed UTF-8 (Unicode 15, table 3-7: no
// overlong forms, no surrogates, nothing above U+10FFFF) and returns the units written; -1 if it is not.
ptrdiff_t utf8_to_utf16(const std::string& s, uint16_t* dst) {
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    const size_t n = s.size();
    uint16_t* const first = dst;
    size_t i = 0;
    while (i < n) {
        // Tokens are mostly ASCII: widen 8 ASCII bytes at a time.
        if (n - i >= 8) {
            uint64_t word;
            std::memcpy(&word, p + i, 8);
            if ((word & 0x8080808080808080ull) == 0) {
                for (int k = 0; k < 8; ++k) dst[k] = p[i + k];
                dst += 8;
                i += 8;
                continue;
            }
        }
        const uint8_t b = p[i];
        if (b < 0x80) {
            *dst++ = b;
            ++i;
            continue;
        }
        size_t len = 0;
        uint8_t lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
        uint32_t cp = 0;
        if (b >= 0xc2 && b <= 0xdf) {
            len = 2;
            cp = b & 0x1f;
        } else if (b >= 0xe0 && b <= 0xef) {
            len = 3;
            cp = b & 0x0f;
            if (b == 0xe0) lo = 0xa0;
            if (b == 0xed) hi = 0x9f;
        } else if (b >= 0xf0 && b <= 0xf4) {
            len = 4;
            cp = b & 0x07;
            if (b == 0xf0) lo = 0x90;
            if (b == 0xf4) hi = 0x8f;
        } else {
            return -1;
        }
        if (n - i < len || p[i + 1] < lo || p[i + 1] > hi) return -1;
        cp = (cp << 6) | (p[i + 1] & 0x3f);
        for (size_t k = 2; k < len; ++k) {
            if ((p[i + k] & 0xc0) != 0x80) return -1;
            cp = (cp << 6) | (p[i + k] & 0x3f);
        }
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

// Moves the items of one flat array out of v (and back): v then prints as an empty array.
struct ArrayItems {
    uint64_t length = 0;
    std::vector<uint8_t> raw;
    std::vector<std::string> strings;

    void take(Value& v) {
        length = v.length;
        raw = std::move(v.raw);
        strings = std::move(v.strings);
        v.length = 0;
        v.raw.clear();
        v.strings.clear();
    }
    void give_back(Value& v) {
        v.length = length;
        v.raw = std::move(raw);
        v.strings = std::move(strings);
    }
};

}  // namespace

bool is_flat_array(const Value& v) {
    return v.type == ValueType::kArray && v.item_type != ValueType::kArray;
}

std::string info_json_without_flat_arrays(ModelInfo& info) {
    std::vector<ArrayItems> moved(info.metadata.size());
    for (size_t i = 0; i < info.metadata.size(); ++i) {
        if (is_flat_array(info.metadata[i].value)) moved[i].take(info.metadata[i].value);
    }
    std::string text = json_dump(model_to_json(info, true), -1);
    for (size_t i = 0; i < info.metadata.size(); ++i) {
        if (is_flat_array(info.metadata[i].value)) moved[i].give_back(info.metadata[i].value);
    }
    return text;
}

bool pack_strings(const std::vector<std::string>& strings, PackedStrings* out) {
    *out = PackedStrings();
    size_t total = 0;
    for (const std::string& s : strings) total += s.size();
    if (total > UINT32_MAX) return false;
    // UTF-16 never needs more code units than UTF-8 has bytes: size the buffer once, trim it at the end.
    out->utf16.resize(total);
    out->utf16_ends.resize(strings.size());
    size_t used = 0;
    for (size_t i = 0; i < strings.size(); ++i) {
        const ptrdiff_t units = utf8_to_utf16(strings[i], out->utf16.data() + used);
        if (units < 0) {
            out->invalid.push_back(static_cast<uint32_t>(i));
        } else {
            used += static_cast<size_t>(units);
        }
        out->utf16_ends[i] = static_cast<uint32_t>(used);
    }
    out->utf16.resize(used);
    return true;
}

}  // namespace ws
