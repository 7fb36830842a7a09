// SPDX-License-Identifier: MIT
#include "text/byte_level.h"

namespace ws {
namespace {

struct ByteLevelTable {
    uint32_t to_char[256];
    int16_t from_char[512];
    ByteLevelTable() {
        for (int16_t& x : from_char) x = -1;
        bool direct[256] = {};
        for (int b = 33; b <= 126; ++b) direct[b] = true;
        for (int b = 161; b <= 172; ++b) direct[b] = true;
        for (int b = 174; b <= 255; ++b) direct[b] = true;
        uint32_t n = 0;
        for (int b = 0; b < 256; ++b) {
            to_char[b] = direct[b] ? uint32_t(b) : 256 + n++;
            from_char[to_char[b]] = int16_t(b);
        }
    }
};

const ByteLevelTable& table() {
    static const ByteLevelTable t;
    return t;
}

}  // namespace

uint32_t byte_level_char(uint8_t b) {
    return table().to_char[b];
}

int byte_level_byte(uint32_t cp) {
    return cp < 512 ? table().from_char[cp] : -1;
}

}  // namespace ws
