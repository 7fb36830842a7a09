// SPDX-License-Identifier: MIT
// Legacy quantizers (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): ggml-quants.c quantize_row_<type>_ref, and with an importance
// matrix quantize_row_<type>_impl, in ggml's float32 operation order.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "quantize/quantize_internal.h"
#include "quantize/row_kernels.h"
#include "weightstream/quant_blocks.h"
#include "weightstream/quantize.h"

namespace ws {

using detail::float_to_int8;
using detail::float_to_uint8;
using detail::store_block;

void quantize_row_q8_0_ref(const float* x, uint8_t* y, int64_t k) {
    const int64_t nb = k / QK8_0;
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;  // absolute max
        for (int j = 0; j < QK8_0; j++) {
            const float v = std::fabs(x[i * QK8_0 + j]);
            amax = amax > v ? amax : v;  // ggml's MAX(): a NaN replaces amax, the next number replaces the NaN
        }

        const float d = amax / ((1 << 7) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        block_q8_0 b;
        b.d = fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; ++j) {
            const float x0 = x[i * QK8_0 + j] * id;
            b.qs[j] = float_to_int8(std::round(x0));
        }
        store_block(y, i, b);
    }
}

void quantize_row_q4_0_ref(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk = QK4_0;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;  // absolute max
        float max = 0.0f;   // the value with that magnitude, sign kept (the first one on ties)
        for (int j = 0; j < qk; j++) {
            const float v = x[i * qk + j];
            if (amax < std::fabs(v)) {
                amax = std::fabs(v);
                max = v;
            }
        }

        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        block_q4_0 b;
        b.d = fp32_to_fp16(d);
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = x[i * qk + 0 + j] * id;
            const float x1 = x[i * qk + qk / 2 + j] * id;

            const uint8_t xi0 = static_cast<uint8_t>(std::min<int>(15, float_to_int8(x0 + 8.5f)));
            const uint8_t xi1 = static_cast<uint8_t>(std::min<int>(15, float_to_int8(x1 + 8.5f)));

            b.qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
        }
        store_block(y, i, b);
    }
}

namespace {

// The 16 nibble pairs of a 32-element block (element j low, j + 16 high) and, for 5-bit types, the 5th bits
// (bit j of the little-endian u32 qh is element j's).
template <typename Block>
void pack_q5(const uint8_t* L, Block& b) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        const uint8_t xi0 = L[j];
        const uint8_t xi1 = L[j + 16];
        b.qs[j] = static_cast<uint8_t>((xi0 & 0x0f) | ((xi1 & 0x0f) << 4));
        qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
        qh |= ((xi1 & 0x10u) >> 4) << (j + 16);
    }
    std::memcpy(b.qh, &qh, sizeof qh);
}

void quantize_row_q4_1_ref(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk = QK4_1;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        float min = FLT_MAX;
        float max = -FLT_MAX;
        for (int j = 0; j < qk; j++) {
            const float v = x[i * qk + j];
            if (v < min) min = v;
            if (v > max) max = v;
        }

        const float d = (max - min) / ((1 << 4) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        block_q4_1 b;
        b.d = fp32_to_fp16(d);
        b.m = fp32_to_fp16(min);
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = (x[i * qk + 0 + j] - min) * id;
            const float x1 = (x[i * qk + qk / 2 + j] - min) * id;

            const uint8_t xi0 = static_cast<uint8_t>(std::min<int>(15, float_to_int8(x0 + 0.5f)));
            const uint8_t xi1 = static_cast<uint8_t>(std::min<int>(15, float_to_int8(x1 + 0.5f)));

            b.qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
        }
        store_block(y, i, b);
    }
}

void quantize_row_q5_0_ref(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk = QK5_0;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;
        float max = 0.0f;
        for (int j = 0; j < qk; j++) {
            const float v = x[i * qk + j];
            if (amax < std::fabs(v)) {
                amax = std::fabs(v);
                max = v;
            }
        }

        const float d = max / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        block_q5_0 b;
        b.d = fp32_to_fp16(d);
        uint8_t L[qk];
        for (int j = 0; j < qk; ++j) {
            L[j] = static_cast<uint8_t>(std::min<int>(31, float_to_int8(x[i * qk + j] * id + 16.5f)));
        }
        pack_q5(L, b);
        store_block(y, i, b);
    }
}

void quantize_row_q5_1_ref(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk = QK5_1;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        float min = FLT_MAX;
        float max = -FLT_MAX;
        for (int j = 0; j < qk; j++) {
            const float v = x[i * qk + j];
            if (v < min) min = v;
            if (v > max) max = v;
        }

        const float d = (max - min) / ((1 << 5) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        block_q5_1 b;
        b.d = fp32_to_fp16(d);
        b.m = fp32_to_fp16(min);
        uint8_t L[qk];
        for (int j = 0; j < qk; ++j) L[j] = float_to_uint8((x[i * qk + j] - min) * id + 0.5f);  // no clamp in ggml
        pack_q5(L, b);
        store_block(y, i, b);
    }
}

// sigma2 of the importance-weighted legacy searches: the mean square of the whole row, summed in order.
float row_sigma2(const float* x, int64_t n) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n; ++j) sum_x2 += x[j] * x[j];
    return sum_x2 / static_cast<float>(n);
}

// Per-element weights of a 32-block: imatrix weight times sqrt(sigma2 + x^2).
void block_weights(const float* xb, const float* qw, float sigma2, float* weight) {
    for (int j = 0; j < 32; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
}

}  // namespace

namespace detail {

void quantize_q8_0(const float* x, uint8_t* y, int64_t n, const float*) {
    row_kernels().q8_0(x, y, n);
}

void quantize_q4_0(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    if (!imatrix) return quantize_row_q4_0_ref(x, y, n);
    const float sigma2 = row_sigma2(x, n);
    for (int64_t ib = 0; ib < n / QK4_0; ++ib) {
        const float* xb = x + QK4_0 * ib;
        float weight[QK4_0];
        int8_t L[QK4_0];
        block_weights(xb, imatrix + QK4_0 * ib, sigma2, weight);
        block_q4_0 b;
        b.d = fp32_to_fp16(make_qx_quants(QK4_0, 8, xb, L, weight));
        for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(L[j] | (L[j + 16] << 4));
        store_block(y, ib, b);
    }
}

void quantize_q4_1(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    if (!imatrix) return quantize_row_q4_1_ref(x, y, n);
    const float sigma2 = row_sigma2(x, n);
    for (int64_t ib = 0; ib < n / QK4_1; ++ib) {
        const float* xb = x + QK4_1 * ib;
        float weight[QK4_1];
        uint8_t L[QK4_1];
        uint8_t Laux[QK4_1];
        block_weights(xb, imatrix + QK4_1 * ib, sigma2, weight);
        float min;
        const float d = make_qkx3_quants(QK4_1, 15, xb, weight, L, &min, Laux, -0.9f, 0.05f, 36);
        block_q4_1 b;
        b.d = fp32_to_fp16(d);
        b.m = fp32_to_fp16(-min);
        for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(L[j] | (L[j + 16] << 4));
        store_block(y, ib, b);
    }
}

void quantize_q5_0(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    if (!imatrix) return quantize_row_q5_0_ref(x, y, n);
    const float sigma2 = row_sigma2(x, n);
    for (int64_t ib = 0; ib < n / QK5_0; ++ib) {
        const float* xb = x + QK5_0 * ib;
        float weight[QK5_0];
        int8_t L[QK5_0];
        block_weights(xb, imatrix + QK5_0 * ib, sigma2, weight);
        block_q5_0 b;
        b.d = fp32_to_fp16(make_qx_quants(QK5_0, 16, xb, L, weight));
        uint8_t Lu[QK5_0];
        for (int j = 0; j < QK5_0; ++j) Lu[j] = static_cast<uint8_t>(L[j]);
        pack_q5(Lu, b);
        store_block(y, ib, b);
    }
}

void quantize_q5_1(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    if (!imatrix) return quantize_row_q5_1_ref(x, y, n);
    const float sigma2 = row_sigma2(x, n);
    for (int64_t ib = 0; ib < n / QK5_1; ++ib) {
        const float* xb = x + QK5_1 * ib;
        float weight[QK5_1];
        uint8_t L[QK5_1];
        uint8_t Laux[QK5_1];
        block_weights(xb, imatrix + QK5_1 * ib, sigma2, weight);
        float min;
        const float d = make_qkx3_quants(QK5_1, 31, xb, weight, L, &min, Laux, -0.9f, 0.05f, 36);
        block_q5_1 b;
        b.d = fp32_to_fp16(d);
        b.m = fp32_to_fp16(-min);
        pack_q5(L, b);
        store_block(y, ib, b);
    }
}

}  // namespace detail
}  // namespace ws
