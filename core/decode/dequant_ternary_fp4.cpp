// SPDX-License-Identifier: MIT
// Ternary (TQ1_0, TQ2_0), microscaling 4-bit float (MXFP4, NVFP4) and 1-/2-bit (Q1_0, Q2_0) types. Formulas
// and float32 evaluation order of ggml's dequantize_row_* (ggml-quants.c, ggml-impl.h).
#include <cstdint>

#include "decode/dequant_internal.h"
#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"

namespace ws {
namespace {

using detail::e8m0_to_fp32_half;
using detail::kvalues_mxfp4;
using detail::ue4m3_to_fp32;

// One base-3 digit of a TQ1_0 byte: the byte holds the digits as a fixed-point fraction of 243 (or 81), so
// multiplying by 3^n (mod 256) brings digit n to the top and * 3 >> 8 extracts it.
inline float tq1_trit(uint8_t byte, uint8_t pow3, float d) {
    const uint8_t q = static_cast<uint8_t>(byte * pow3);
    const int xi = (static_cast<uint16_t>(q) * 3) >> 8;
    return static_cast<float>(xi - 1) * d;
}

}  // namespace

void dequantize_row_tq1_0(const uint8_t* src, float* dst, int64_t k) {
    static constexpr uint8_t kPow3[6] = {1, 3, 9, 27, 81, 243};
    constexpr int kQs = static_cast<int>(sizeof(block_tq1_0::qs));  // 48
    constexpr int kQh = static_cast<int>(sizeof(block_tq1_0::qh));  // 4
    const int64_t nb = k / QK_K;
    float* y = dst;
    for (int64_t i = 0; i < nb; ++i) {
        const block_tq1_0 b = load_block<block_tq1_0>(src, i);
        const float d = fp16_to_fp32(b.d);
        // qs: first 32 bytes give 5 x 32 elements, the remaining 16 bytes 5 x 16; qh: 4 x 4 elements.
        for (int j = 0; j < kQs - kQs % 32; j += 32) {
            for (int n = 0; n < 5; ++n) {
                for (int m = 0; m < 32; ++m) *y++ = tq1_trit(b.qs[j + m], kPow3[n], d);
            }
        }
        for (int j = kQs - kQs % 32; j < kQs; j += 16) {
            for (int n = 0; n < 5; ++n) {
                for (int m = 0; m < 16; ++m) *y++ = tq1_trit(b.qs[j + m], kPow3[n], d);
            }
        }
        for (int n = 0; n < 4; ++n) {
            for (int j = 0; j < kQh; ++j) *y++ = tq1_trit(b.qh[j], kPow3[n], d);
        }
    }
}

void dequantize_row_tq2_0(const uint8_t* src, float* dst, int64_t k) {
    constexpr int kQs = static_cast<int>(sizeof(block_tq2_0::qs));  // 64
    const int64_t nb = k / QK_K;
    float* y = dst;
    for (int64_t i = 0; i < nb; ++i) {
        const block_tq2_0 b = load_block<block_tq2_0>(src, i);
        const float d = fp16_to_fp32(b.d);
        for (int j = 0; j < kQs; j += 32) {
            for (int l = 0; l < 4; ++l) {
                for (int m = 0; m < 32; ++m) {
                    const int q = (b.qs[j + m] >> (l * 2)) & 3;
                    *y++ = static_cast<float>(q - 1) * d;
                }
            }
        }
    }
}

void dequantize_row_mxfp4(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK_MXFP4;
    for (int64_t i = 0; i < nb; ++i) {
        const block_mxfp4 b = load_block<block_mxfp4>(src, i);
        const float d = e8m0_to_fp32_half(b.e);
        float* y = dst + i * QK_MXFP4;
        for (int j = 0; j < QK_MXFP4 / 2; ++j) {
            y[j] = static_cast<float>(kvalues_mxfp4[b.qs[j] & 0x0f]) * d;
            y[j + QK_MXFP4 / 2] = static_cast<float>(kvalues_mxfp4[b.qs[j] >> 4]) * d;
        }
    }
}

void dequantize_row_nvfp4(const uint8_t* src, float* dst, int64_t k) {
    constexpr int kSub = QK_NVFP4 / QK_NVFP4_SUB;
    const int64_t nb = k / QK_NVFP4;
    for (int64_t i = 0; i < nb; ++i) {
        const block_nvfp4 b = load_block<block_nvfp4>(src, i);
        for (int s = 0; s < kSub; ++s) {
            const float d = ue4m3_to_fp32(b.d[s]);
            const uint8_t* qs = b.qs + s * (QK_NVFP4_SUB / 2);
            float* y = dst + i * QK_NVFP4 + s * QK_NVFP4_SUB;
            for (int j = 0; j < QK_NVFP4_SUB / 2; ++j) {
                y[j] = static_cast<float>(kvalues_mxfp4[qs[j] & 0x0f]) * d;
                y[j + QK_NVFP4_SUB / 2] = static_cast<float>(kvalues_mxfp4[qs[j] >> 4]) * d;
            }
        }
    }
}

void dequantize_row_q1_0(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK1_0;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q1_0 b = load_block<block_q1_0>(src, i);
        // ggml selects d or -d; -d is d with the sign bit flipped (also for NaN), so flip it arithmetically.
        const uint32_t d_bits = f32_to_bits(fp16_to_fp32(b.d));
        float* y = dst + i * QK1_0;
        for (int byte = 0; byte < QK1_0 / 8; ++byte) {
            for (int bit = 0; bit < 8; ++bit) {
                const uint32_t set = (static_cast<uint32_t>(b.qs[byte]) >> bit) & 1u;
                y[8 * byte + bit] = f32_from_bits(d_bits ^ ((set ^ 1u) << 31));
            }
        }
    }
}

void dequantize_row_q2_0(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK2_0;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q2_0 b = load_block<block_q2_0>(src, i);
        const float d = fp16_to_fp32(b.d);
        float* y = dst + i * QK2_0;
        for (int byte = 0; byte < QK2_0 / 4; ++byte) {
            for (int pair = 0; pair < 4; ++pair) {
                const int q = (b.qs[byte] >> (2 * pair)) & 3;  // 0..3 -> -1, 0, +1, +2
                y[4 * byte + pair] = static_cast<float>(q - 1) * d;
            }
        }
    }
}

}  // namespace ws
