// SPDX-License-Identifier: MIT
// Legacy 32-element quants: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0. Formulas and float32 evaluation order of ggml's
// dequantize_row_* (ggml-quants.c): q * d, or q * d + m; the int quant converts to float first.
#include <cstdint>

#include "base/le_bytes.h"
#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"

namespace ws {

void dequantize_row_q4_0(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK4_0;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q4_0 b = load_block<block_q4_0>(src, i);
        const float d = fp16_to_fp32(b.d);
        float* y = dst + i * QK4_0;
        for (int j = 0; j < QK4_0 / 2; ++j) {
            const int x0 = (b.qs[j] & 0x0f) - 8;
            const int x1 = (b.qs[j] >> 4) - 8;
            y[j] = static_cast<float>(x0) * d;
            y[j + QK4_0 / 2] = static_cast<float>(x1) * d;
        }
    }
}

void dequantize_row_q4_1(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK4_1;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q4_1 b = load_block<block_q4_1>(src, i);
        const float d = fp16_to_fp32(b.d);
        const float m = fp16_to_fp32(b.m);
        float* y = dst + i * QK4_1;
        for (int j = 0; j < QK4_1 / 2; ++j) {
            const int x0 = b.qs[j] & 0x0f;
            const int x1 = b.qs[j] >> 4;
            y[j] = static_cast<float>(x0) * d + m;
            y[j + QK4_1 / 2] = static_cast<float>(x1) * d + m;
        }
    }
}

void dequantize_row_q5_0(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK5_0;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q5_0 b = load_block<block_q5_0>(src, i);
        const float d = fp16_to_fp32(b.d);
        const uint32_t qh = load_le32(b.qh);
        float* y = dst + i * QK5_0;
        for (int j = 0; j < QK5_0 / 2; ++j) {
            // Element j takes bit j of qh as its 5th bit, element j + 16 takes bit j + 16.
            const int xh0 = static_cast<int>(((qh >> j) << 4) & 0x10);
            const int xh1 = static_cast<int>((qh >> (j + 12)) & 0x10);
            const int x0 = ((b.qs[j] & 0x0f) | xh0) - 16;
            const int x1 = ((b.qs[j] >> 4) | xh1) - 16;
            y[j] = static_cast<float>(x0) * d;
            y[j + QK5_0 / 2] = static_cast<float>(x1) * d;
        }
    }
}

void dequantize_row_q5_1(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK5_1;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q5_1 b = load_block<block_q5_1>(src, i);
        const float d = fp16_to_fp32(b.d);
        const float m = fp16_to_fp32(b.m);
        const uint32_t qh = load_le32(b.qh);
        float* y = dst + i * QK5_1;
        for (int j = 0; j < QK5_1 / 2; ++j) {
            const int xh0 = static_cast<int>(((qh >> j) << 4) & 0x10);
            const int xh1 = static_cast<int>((qh >> (j + 12)) & 0x10);
            const int x0 = (b.qs[j] & 0x0f) | xh0;
            const int x1 = (b.qs[j] >> 4) | xh1;
            y[j] = static_cast<float>(x0) * d + m;
            y[j + QK5_1 / 2] = static_cast<float>(x1) * d + m;
        }
    }
}

void dequantize_row_q8_0(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK8_0;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q8_0 b = load_block<block_q8_0>(src, i);
        const float d = fp16_to_fp32(b.d);
        float* y = dst + i * QK8_0;
        for (int j = 0; j < QK8_0; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
    }
}

// ggml has no to_float for Q8_1 (its activation format); d * q follows the block layout as for Q8_0. The sum
// field s (d * sum(qs), f16) is redundant and ignored.
void dequantize_row_q8_1(const uint8_t* src, float* dst, int64_t k) {
    const int64_t nb = k / QK8_1;
    for (int64_t i = 0; i < nb; ++i) {
        const block_q8_1 b = load_block<block_q8_1>(src, i);
        const float d = fp16_to_fp32(b.d);
        float* y = dst + i * QK8_1;
        for (int j = 0; j < QK8_1; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
    }
}

}  // namespace ws
