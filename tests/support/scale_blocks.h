// SPDX-License-Identifier: MIT
// Quantized blocks with NaN and Inf f16 scales: what verify's scale warnings (VerifyJob) find.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ws_test {

inline void put_u16(std::vector<uint8_t>* b, size_t at, uint16_t v) {
    (*b)[at] = static_cast<uint8_t>(v);
    (*b)[at + 1] = static_cast<uint8_t>(v >> 8);
}

struct ScaleBlocks {
    std::vector<uint8_t> q8_0;  // 4 blocks (128 values): block 1's scale is NaN, block 2's +Inf
    std::vector<uint8_t> q4_k;  // 2 blocks (512 values): block 1's dmin is -NaN
};

inline ScaleBlocks nan_inf_scale_blocks() {
    ScaleBlocks s{std::vector<uint8_t>(4 * 34, 1), std::vector<uint8_t>(2 * 144, 0x11)};
    for (size_t b = 0; b < 4; ++b) put_u16(&s.q8_0, b * 34, 0x3c00);
    put_u16(&s.q8_0, 34, 0x7e00);
    put_u16(&s.q8_0, 68, 0x7c00);
    for (size_t b = 0; b < 2; ++b) {
        put_u16(&s.q4_k, b * 144, 0x3c00);
        put_u16(&s.q4_k, b * 144 + 2, 0x3800);
    }
    put_u16(&s.q4_k, 144 + 2, 0xfe00);
    return s;
}

}  // namespace ws_test
