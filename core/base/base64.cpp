// SPDX-License-Identifier: MIT
#include "base/base64.h"

#include <cstdint>

namespace ws {
namespace {

int sextet(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

}  // namespace

bool base64_decode(std::string_view in, std::string* out) {
    out->clear();
    if (in.size() % 4 != 0) return false;
    out->reserve(in.size() / 4 * 3);
    for (size_t g = 0; g < in.size(); g += 4) {
        const bool last = g + 4 == in.size();
        size_t pad = 0;
        if (last) pad = in[g + 3] == '=' ? (in[g + 2] == '=' ? 2 : 1) : 0;
        uint32_t v = 0;
        for (size_t k = 0; k < 4 - pad; ++k) {
            const int s = sextet(in[g + k]);
            if (s < 0) return false;
            v = v << 6 | uint32_t(s);
        }
        v <<= 6 * pad;
        // The bits a padded group holds past its bytes must be zero (canonical form).
        if ((pad == 1 && (v & 0xFF) != 0) || (pad == 2 && (v & 0xFFFF) != 0)) return false;
        out->push_back(char(v >> 16));
        if (pad < 2) out->push_back(char((v >> 8) & 0xFF));
        if (pad < 1) out->push_back(char(v & 0xFF));
    }
    return true;
}

}  // namespace ws
