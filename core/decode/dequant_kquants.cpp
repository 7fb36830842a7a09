// SPDX-License-Identifier: MIT
// k-quants: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (256-element super-blocks). Formulas and float32 evaluation order of
// ggml's dequantize_row_* (ggml-quants.c). The sub-block scale is formed first (d * sc, a float), then
// multiplied by the quant, then the min is subtracted: (d * sc) * q - (dmin * m). Q6_K likewise evaluates
// d * sc * q left to right.
#include <cstdint>

#include "base/le_bytes.h"
#include "decode/dequant_internal.h"
#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"

namespace ws {

using detail::get_scale_min_k4;

void detail::q3_K_scales(const uint8_t* packed, int scales[16]) {
    constexpr uint32_t kmask1 = 0x03030303u;
    constexpr uint32_t kmask2 = 0x0f0f0f0fu;
    uint32_t aux[4];
    const uint32_t a0 = load_le32(packed + 0);
    const uint32_t a1 = load_le32(packed + 4);
    const uint32_t tmp = load_le32(packed + 8);
    aux[0] = (a0 & kmask2) | (((tmp >> 0) & kmask1) << 4);
    aux[1] = (a1 & kmask2) | (((tmp >> 2) & kmask1) << 4);
    aux[2] = ((a0 >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
    aux[3] = ((a1 >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
    for (int s = 0; s < 16; ++s) scales[s] = static_cast<int>((aux[s / 4] >> (8 * (s % 4))) & 0xff) - 32;
}

void dequantize_row_q2_K(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK_K;
    float* y = dst;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q2_K b = load_block<block_q2_K>(src, i);
        const float d = fp16_to_fp32(b.d);
        const float min = fp16_to_fp32(b.dmin);
        const uint8_t* q = b.qs;
        int is = 0;
        // Each 128 elements read 32 bytes four times (shift 0, 2, 4, 6); each pass covers 2 x 16 elements.
        for (int n = 0; n < QK_K; n += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; ++half) {
                    const uint8_t sc = b.scales[is++];
                    const float dl = d * static_cast<float>(sc & 0x0f);
                    const float ml = min * static_cast<float>(sc >> 4);
                    const uint8_t* qq = q + 16 * half;
                    for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((qq[l] >> shift) & 3) - ml;
                }
            }
            q += 32;
        }
    }
}

void dequantize_row_q3_K(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK_K;
    float* y = dst;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q3_K b = load_block<block_q3_K>(src, i);
        const float d_all = fp16_to_fp32(b.d);

        int scales[16];
        detail::q3_K_scales(b.scales, scales);

        const uint8_t* q = b.qs;
        const uint8_t* hm = b.hmask;
        uint32_t m = 1;
        int is = 0;
        for (int n = 0; n < QK_K; n += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; ++half) {
                    const float dl = d_all * static_cast<float>(scales[is++]);
                    const uint8_t* qq = q + 16 * half;
                    const uint8_t* hh = hm + 16 * half;
                    for (int l = 0; l < 16; ++l) {
                        // A clear high bit means the 2-bit value is offset by -4.
                        const int high = (hh[l] & m) != 0 ? 0 : 4;
                        *y++ = dl * static_cast<float>(((qq[l] >> shift) & 3) - high);
                    }
                }
                m <<= 1;
            }
            q += 32;
        }
    }
}

void dequantize_row_q4_K(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK_K;
    float* y = dst;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q4_K b = load_block<block_q4_K>(src, i);
        const float d = fp16_to_fp32(b.d);
        const float min = fp16_to_fp32(b.dmin);
        const uint8_t* q = b.qs;
        uint8_t sc = 0;
        uint8_t m = 0;
        for (int j = 0, is = 0; j < QK_K; j += 64, is += 2) {
            get_scale_min_k4(is + 0, b.scales, &sc, &m);
            const float d1 = d * static_cast<float>(sc);
            const float m1 = min * static_cast<float>(m);
            get_scale_min_k4(is + 1, b.scales, &sc, &m);
            const float d2 = d * static_cast<float>(sc);
            const float m2 = min * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0f) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
            q += 32;
        }
    }
}

void dequantize_row_q5_K(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK_K;
    float* y = dst;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q5_K b = load_block<block_q5_K>(src, i);
        const float d = fp16_to_fp32(b.d);
        const float min = fp16_to_fp32(b.dmin);
        const uint8_t* ql = b.qs;
        const uint8_t* qh = b.qh;
        uint8_t sc = 0;
        uint8_t m = 0;
        unsigned u1 = 1;
        unsigned u2 = 2;
        for (int j = 0, is = 0; j < QK_K; j += 64, is += 2) {
            get_scale_min_k4(is + 0, b.scales, &sc, &m);
            const float d1 = d * static_cast<float>(sc);
            const float m1 = min * static_cast<float>(m);
            get_scale_min_k4(is + 1, b.scales, &sc, &m);
            const float d2 = d * static_cast<float>(sc);
            const float m2 = min * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) {
                const int q = (ql[l] & 0x0f) + ((qh[l] & u1) != 0 ? 16 : 0);
                *y++ = d1 * static_cast<float>(q) - m1;
            }
            for (int l = 0; l < 32; ++l) {
                const int q = (ql[l] >> 4) + ((qh[l] & u2) != 0 ? 16 : 0);
                *y++ = d2 * static_cast<float>(q) - m2;
            }
            ql += 32;
            u1 <<= 2;
            u2 <<= 2;
        }
    }
}

void dequantize_row_q6_K(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK_K;
    float* y = dst;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q6_K b = load_block<block_q6_K>(src, i);
        const float d = fp16_to_fp32(b.d);
        const uint8_t* ql = b.ql;
        const uint8_t* qh = b.qh;
        const int8_t* sc = b.scales;
        for (int n = 0; n < QK_K; n += 128) {
            // Elements l, l + 32, l + 64, l + 96 share ql/qh bytes; scale index is = l / 16 (+ 2, 4, 6).
            for (int is = 0; is < 2; ++is) {
                const float s1 = static_cast<float>(sc[is + 0]);
                const float s2 = static_cast<float>(sc[is + 2]);
                const float s3 = static_cast<float>(sc[is + 4]);
                const float s4 = static_cast<float>(sc[is + 6]);
                for (int l = 16 * is; l < 16 * is + 16; ++l) {
                    const int q1 = ((ql[l + 0] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
                    const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
                    const int q3 = ((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                    const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                    y[l + 0] = d * s1 * static_cast<float>(q1);
                    y[l + 32] = d * s2 * static_cast<float>(q2);
                    y[l + 64] = d * s3 * static_cast<float>(q3);
                    y[l + 96] = d * s4 * static_cast<float>(q4);
                }
            }
            y += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

// ggml's dequantize_row_q8_K: y = d * q with the float32 d, in that operand order; bsums are ignored.
void dequantize_row_q8_K(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q8_K b = load_block<block_q8_K>(src, i);
        float* y = dst + i * QK_K;
        for (int j = 0; j < QK_K; ++j) y[j] = b.d * static_cast<float>(b.qs[j]);
    }
}

}  // namespace ws
