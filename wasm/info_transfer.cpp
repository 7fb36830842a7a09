// SPDX-License-Identifier: MIT
#include "info_transfer.h"

#include <cstring>
#include <utility>

#include "json_output.h"

namespace ws {
namespace {

// The UTF-16 length of s if it is well-formed UTF-8 (Unicode 15, table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF), else false.
bool utf8_to_utf16_length(const std::string& s, uint64_t* units) {
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    const size_t n = s.size();
    uint64_t count = 0;
    size_t i = 0;
    while (i < n) {
        // Tokens are mostly ASCII: skip 8 ASCII bytes at a time.
        if (n - i >= 8) {
            uint64_t word;
            std::memcpy(&word, p + i, 8);
            if ((word & 0x8080808080808080ull) == 0) {
                i += 8;
                count += 8;
                continue;
            }
        }
        const uint8_t b = p[i];
        if (b < 0x80) {
            ++i;
            ++count;
            continue;
        }
        size_t len = 0;
        uint8_t lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
        if (b >= 0xc2 && b <= 0xdf) {
            len = 2;
        } else if (b >= 0xe0 && b <= 0xef) {
            len = 3;
            if (b == 0xe0) lo = 0xa0;
            if (b == 0xed) hi = 0x9f;
        } else if (b >= 0xf0 && b <= 0xf4) {
            len = 4;
            if (b == 0xf0) lo = 0x90;
            if (b == 0xf4) hi = 0x8f;
        } else {
            return false;
        }
        if (n - i < len || p[i + 1] < lo || p[i + 1] > hi) return false;
        for (size_t k = 2; k < len; ++k) {
            if ((p[i + k] & 0xc0) != 0x80) return false;
        }
        i += len;
        count += len == 4 ? 2 : 1;  // code points above U+FFFF take a surrogate pair
    }
    *units = count;
    return true;
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
    out->utf8.reserve(total);
    out->utf16_ends.reserve(strings.size());
    uint64_t end = 0;
    for (size_t i = 0; i < strings.size(); ++i) {
        const std::string& s = strings[i];
        uint64_t units = 0;
        if (utf8_to_utf16_length(s, &units)) {
            const auto* bytes = reinterpret_cast<const uint8_t*>(s.data());
            out->utf8.insert(out->utf8.end(), bytes, bytes + s.size());
            end += units;
            if (end > UINT32_MAX) return false;
        } else {
            out->invalid.push_back(static_cast<uint32_t>(i));
        }
        out->utf16_ends.push_back(static_cast<uint32_t>(end));
    }
    return true;
}

}  // namespace ws
