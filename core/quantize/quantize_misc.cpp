// SPDX-License-Identifier: MIT
// Quantizers of the non-linear 4-bit (IQ4_NL, IQ4_XS), ternary (TQ1_0, TQ2_0), microscaling FP4 (MXFP4, NVFP4) and
// 1-/2-bit (Q1_0, Q2_0) types, as ggml_quantize_chunk runs them (ggml-quants.c), in ggml's float32 operation
// order. IQ4_NL and IQ4_XS always take ggml's searching path (quantize_iq4_nl/_xs, ntry = 7), with or without an
// imatrix; quantize_row_iq4_nl_ref (ntry = -1) is a different quantizer that ggml_quantize_chunk never calls.
#include <algorithm>
#include <cmath>

#include "decode/dequant_internal.h"
#include "decode/iquant_tables.h"
#include "quantize/group_search.h"
#include "quantize/quantize_internal.h"
#include "weightstream/quant_blocks.h"

namespace ws {
namespace {

using detail::float_to_int32;
using detail::kGroupMaxEps;
using detail::nearest_int;
using detail::store_block;

// ---- IQ4_NL / IQ4_XS -----------------------------------------------------------------------------------------

// The packed nibbles of n / 32 blocks of 32 indices: byte j of a block holds index j low, index j + 16 high.
void pack_iq4(int n, const uint8_t* L, uint8_t* q4) {
    for (int i = 0; i < n / 32; ++i) {
        for (int j = 0; j < 16; ++j) q4[16 * i + j] = static_cast<uint8_t>(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
    }
}

// ggml's quantize_row_iq4_nl_impl with ntry = 7 for one IQ4_XS super-block of QK_K values in 32-blocks: writes
// the f16 scale to *dh, the packed indices to q4 and the 6-bit block scales to *scales_h / scales_l. qw: the
// super-block's imatrix weights or nullptr. (ggml's function also serves IQ4_NL, one 32-block per super-block:
// quantize_iq4_nl below runs that case for many blocks at once.)
void quantize_iq4_xs_superblock(const float* x, ggml_half* dh, uint8_t* q4, uint16_t* scales_h, uint8_t* scales_l,
                                const float* qw) {
    constexpr int block_size = 32;
    constexpr int nb = QK_K / block_size;
    float scales[nb];
    float weight[QK_K];
    float ids[nb];
    uint8_t L[QK_K];

    float sigma2 = 0;
    for (int j = 0; j < QK_K; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / static_cast<float>(QK_K);
    if (qw) {
        for (int j = 0; j < QK_K; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + x[j] * x[j]);
    } else {
        for (int j = 0; j < QK_K; ++j) weight[j] = x[j] * x[j];
    }
    // ggml also stores each block's indices at its first trial scale; the final pass below replaces them all.
    detail::group_searches().iq4_scales(nb, x, weight, scales);

    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < nb; ++ib) {
        const float abs_d = std::fabs(scales[ib]);
        if (abs_d > amax_scale) {
            amax_scale = abs_d;
            max_scale = scales[ib];
        }
    }

    *scales_h = 0;
    const float d = -max_scale / 32;
    *dh = fp32_to_fp16(d);
    const float id = d != 0.0f ? 1 / d : 0.f;
    for (int ib = 0; ib < nb; ++ib) {
        const int l = std::max(-32, std::min(31, nearest_int(id * scales[ib])));
        const float dl = d * static_cast<float>(l);
        ids[ib] = dl != 0.0f ? 1 / dl : 0.f;
        const uint32_t lb = static_cast<uint32_t>(l + 32);
        const uint8_t l_l = static_cast<uint8_t>(lb & 0xf);
        const uint32_t l_h = lb >> 4;
        if (ib % 2 == 0) {
            scales_l[ib / 2] = l_l;
        } else {
            scales_l[ib / 2] = static_cast<uint8_t>(scales_l[ib / 2] | (l_l << 4));
        }
        *scales_h = static_cast<uint16_t>(*scales_h | (l_h << (2 * (ib % 8))));
    }
    detail::group_searches().iq4_indices(nb, x, ids, L);
    pack_iq4(QK_K, L, q4);
}

// ---- ternary -------------------------------------------------------------------------------------------------

// lroundf(v) + 1 as ggml stores it into an int and then only uses its low bits (TQ1_0 adds it into a uint8_t, TQ2_0
// masks 2 bits). For |v| < 2^31 that is the rounded value + 1. Beyond, lroundf overflows (x86-64 glibc returns
// LONG_MIN; wasm's 32-bit long gives INT32_MIN) or is exact but a multiple of 256: either way the low byte is 1.
uint32_t trit_plus1(float v) {
    if (v > -2147483648.0f && v < 2147483648.0f) return static_cast<uint32_t>(std::lround(v)) + 1u;
    return 1;
}

// ggml's MAX(amax, |v|) over a block: a NaN replaces the running max, the next number replaces the NaN.
float running_amax(const float* x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        const float v = std::fabs(x[j]);
        amax = amax > v ? amax : v;
    }
    return amax;
}

// Packs trits base 3 (first trit most significant) into a byte scaled so the top bits carry the value: ggml's
// ceiling division q * 256 / 243.
uint8_t trit_byte(uint8_t q) {
    return static_cast<uint8_t>((static_cast<uint32_t>(q) * 256 + (243 - 1)) / 243);
}

void quantize_row_tq1_0(const float* x, uint8_t* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        const float d = running_amax(x, QK_K);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        block_tq1_0 b;
        b.d = fp32_to_fp16(d);

        constexpr int qs_size = sizeof b.qs;  // 48: 32 bytes of 5 trits with stride 32, then 16 with stride 16
        for (int j = 0; j < qs_size - qs_size % 32; j += 32) {
            for (int m = 0; m < 32; ++m) {
                uint8_t q = 0;
                for (int n = 0; n < 5; ++n) q = static_cast<uint8_t>(q * 3u + trit_plus1(x[m + n * 32] * id));
                b.qs[j + m] = trit_byte(q);
            }
            x += 5 * 32;
        }
        for (int j = qs_size - qs_size % 32; j < qs_size; j += 16) {
            for (int m = 0; m < 16; ++m) {
                uint8_t q = 0;
                for (int n = 0; n < 5; ++n) q = static_cast<uint8_t>(q * 3u + trit_plus1(x[m + n * 16] * id));
                b.qs[j + m] = trit_byte(q);
            }
            x += 5 * 16;
        }
        constexpr int qh_size = sizeof b.qh;  // 4 trits each, stride 4, shifted up one trit
        for (int j = 0; j < qh_size; ++j) {
            uint8_t q = 0;
            for (int m = 0; m < 4; ++m) q = static_cast<uint8_t>(q * 3u + trit_plus1(x[j + m * qh_size] * id));
            q = static_cast<uint8_t>(q * 3u);
            b.qh[j] = trit_byte(q);
        }
        x += 4 * qh_size;
        store_block(y, i, b);
    }
}

void quantize_row_tq2_0(const float* x, uint8_t* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        const float d = running_amax(x, QK_K);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        block_tq2_0 b;
        b.d = fp32_to_fp16(d);
        for (int j = 0; j < static_cast<int>(sizeof b.qs); j += 32) {
            for (int m = 0; m < 32; ++m) {
                uint32_t q = 0;
                for (int n = 0; n < 4; ++n) {
                    q += (trit_plus1(x[m + n * 32] * id) & 3u) << (2 * n);
                }
                b.qs[j + m] = static_cast<uint8_t>(q);
            }
            x += 4 * 32;
        }
        store_block(y, i, b);
    }
}

// ---- MXFP4 / NVFP4 -------------------------------------------------------------------------------------------

// ggml's best_index_mxfp4: the E2M1 code whose (doubled) value times e is nearest x, the first on ties (NaN: 0).
int best_index_mxfp4(float x, float e) {
    int best_index = 0;
    float best_err = std::fabs(static_cast<float>(detail::kvalues_mxfp4[0]) * e - x);
    for (int i = 1; i < 16; i++) {
        const float err = std::fabs(static_cast<float>(detail::kvalues_mxfp4[i]) * e - x);
        if (err < best_err) {
            best_index = i;
            best_err = err;
        }
    }
    return best_index;
}

// The absolute max of n values, NaN skipped (ggml's `if (amax < fabsf(v))`).
float amax_skip_nan(const float* x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
    }
    return amax;
}

void quantize_row_mxfp4(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk = QK_MXFP4;
    for (int64_t i = 0; i < k / qk; i++, x += qk) {
        const float amax = amax_skip_nan(x, qk);
        // The exponent comes from float32 log2f, not from amax's exponent bits: just below a power of two 2^k
        // log2f rounds up to exactly k. ggml converts the float to uint8_t without a range check; tiny amax (below
        // 2^-125) gives a negative value, Inf gives "integer indefinite": both as x86/wasm convert them.
        const uint8_t e =
            amax > 0.0f ? detail::float_to_uint8(std::floor(std::log2(amax)) - 2 + 127) : static_cast<uint8_t>(0);
        const float d = detail::e8m0_to_fp32_half(e);
        block_mxfp4 b;
        b.e = e;
        for (int j = 0; j < qk / 2; ++j) {
            const int x0 = best_index_mxfp4(x[0 + j], d);
            const int x1 = best_index_mxfp4(x[qk / 2 + j], d);
            b.qs[j] = static_cast<uint8_t>(x0 | (x1 << 4));
        }
        store_block(y, i, b);
    }
}

// ggml_fp32_to_ue4m3: the UE4M3 code of a non-negative scale, rounding the mantissa half up on its 4th bit;
// <= 0 and NaN give 0, values above 448 saturate to 0x7e (448), as do exponents past the top.
uint8_t fp32_to_ue4m3(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    const uint32_t bits = f32_to_bits(x);
    const int fp32_exp = static_cast<int>((bits >> 23) & 0xff) - 127;
    const int fp32_man = static_cast<int>((bits >> 20) & 0x7);
    int ue4m3_exp = fp32_exp + 7;
    if (ue4m3_exp <= 0) {
        // subnormal: value man * 2^-9, man = round(x * 2^9); x < 2^-6 here, so the conversion is in range
        const int man = std::min(7, static_cast<int>(x * 512.0f + 0.5f));
        if (man < 1) return 0;
        return static_cast<uint8_t>(man);
    }
    if (ue4m3_exp >= 15) return 0x7e;
    int ue4m3_man = fp32_man + static_cast<int>((bits >> 19) & 1);
    if (ue4m3_man > 7) {
        ue4m3_man = 0;
        ue4m3_exp++;
        if (ue4m3_exp >= 15) return 0x7e;
    }
    return static_cast<uint8_t>((ue4m3_exp << 3) | ue4m3_man);
}

void quantize_row_nvfp4(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk_sub = QK_NVFP4_SUB;
    for (int64_t i = 0; i < k / QK_NVFP4; i++) {
        block_nvfp4 b;
        for (int s = 0; s < QK_NVFP4 / qk_sub; s++) {
            const float* xb = x + i * QK_NVFP4 + s * qk_sub;
            const float amax = amax_skip_nan(xb, qk_sub);
            // amax / 6 maps E2M1's largest value (6) onto amax
            const uint8_t ue = fp32_to_ue4m3(amax / 6.0f);
            b.d[s] = ue;
            const float d = detail::ue4m3_to_fp32(ue);
            for (int j = 0; j < qk_sub / 2; ++j) {
                const int x0 = best_index_mxfp4(xb[0 + j], d);
                const int x1 = best_index_mxfp4(xb[qk_sub / 2 + j], d);
                b.qs[s * (qk_sub / 2) + j] = static_cast<uint8_t>(x0 | (x1 << 4));
            }
        }
        store_block(y, i, b);
    }
}

// ---- Q1_0 / Q2_0 ---------------------------------------------------------------------------------------------

void quantize_row_q1_0(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk = QK1_0;
    for (int64_t i = 0; i < k / qk; i++, x += qk) {
        float sum_abs = 0.0f;
        for (int j = 0; j < qk; j++) sum_abs += std::fabs(x[j]);
        block_q1_0 b;
        b.d = fp32_to_fp16(sum_abs / qk);
        std::memset(b.qs, 0, sizeof b.qs);
        for (int j = 0; j < qk; ++j) {
            if (x[j] >= 0.0f) b.qs[j / 8] = static_cast<uint8_t>(b.qs[j / 8] | (1u << (j % 8)));  // -0 too, NaN not
        }
        store_block(y, i, b);
    }
}

void quantize_row_q2_0(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk = QK2_0;
    for (int64_t i = 0; i < k / qk; i++, x += qk) {
        float amax = 0.0f;
        for (int j = 0; j < qk; j++) {
            const float a = std::fabs(x[j]);
            if (a > amax) amax = a;
        }
        const float d = amax;
        const float id = d > 0.0f ? 1.0f / d : 0.0f;
        block_q2_0 b;
        b.d = fp32_to_fp16(d);
        std::memset(b.qs, 0, sizeof b.qs);
        // round(w / d) clamped to [-1, 2], stored + 1; out of range and NaN convert to INT32_MIN, so code 0
        for (int j = 0; j < qk; ++j) {
            const int q = std::max(0, std::min(3, float_to_int32(std::round(x[j] * id)) + 1));
            b.qs[j / 4] = static_cast<uint8_t>(b.qs[j / 4] | (q << ((j % 4) * 2)));
        }
        store_block(y, i, b);
    }
}

}  // namespace

namespace detail {

// ggml's best_index_int8 (declared in quantize_internal.h).
int best_index_int8(int n, const int8_t* val, float x) {
    if (x <= val[0]) return 0;
    if (x >= val[n - 1]) return n - 1;
    int ml = 0, mu = n - 1;
    while (mu - ml > 1) {
        const int mav = (ml + mu) / 2;
        if (x < val[mav]) {
            mu = mav;
        } else {
            ml = mav;
        }
    }
    return x - static_cast<float>(val[mu - 1]) < static_cast<float>(val[mu]) - x ? mu - 1 : mu;
}

float iq4_block_scale(const float* x, const float* w) {
    constexpr int ntry = 7;
    const int8_t* values = kvalues_iq4nl;
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j) {
        const float ax = std::fabs(x[j]);
        if (ax > amax) {
            amax = ax;
            max = x[j];
        }
    }
    if (amax < kGroupMaxEps) return 0;
    float d = -max / static_cast<float>(values[0]);
    float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
        const float q = values[best_index_int8(16, values, id * x[j])];
        sumqx += w[j] * q * x[j];
        sumq2 += w[j] * q * q;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
    float best = d * sumqx;
    for (int itry = -ntry; itry <= ntry; ++itry) {
        id = static_cast<float>(itry + values[0]) / max;
        sumqx = sumq2 = 0;
        for (int j = 0; j < 32; ++j) {
            const float q = values[best_index_int8(16, values, id * x[j])];
            sumqx += w[j] * q * x[j];
            sumq2 += w[j] * q * q;
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

// ggml's quantize_row_iq4_nl_impl with ntry = 7 and one 32-block per super-block, kChunk blocks at a time so the
// group searches see many.
void quantize_iq4_nl(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    constexpr int kChunk = 32;
    float weight[kChunk * QK4_NL];
    float scales[kChunk];
    float ids[kChunk];
    uint8_t L[kChunk * QK4_NL];
    const int64_t nblocks = n / QK4_NL;
    for (int64_t ib0 = 0; ib0 < nblocks; ib0 += kChunk) {
        const int nb = static_cast<int>(std::min<int64_t>(kChunk, nblocks - ib0));
        const float* xc = x + QK4_NL * ib0;
        for (int ib = 0; ib < nb; ++ib) {
            const float* xb = xc + QK4_NL * ib;
            float* w = weight + QK4_NL * ib;
            if (imatrix) {
                float sigma2 = 0;
                for (int j = 0; j < QK4_NL; ++j) sigma2 += xb[j] * xb[j];
                sigma2 *= 2.f / static_cast<float>(QK4_NL);
                const float* qw = imatrix + QK4_NL * (ib0 + ib);
                for (int j = 0; j < QK4_NL; ++j) w[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
            } else {
                for (int j = 0; j < QK4_NL; ++j) w[j] = xb[j] * xb[j];
            }
        }
        group_searches().iq4_scales(nb, xc, weight, scales);
        for (int ib = 0; ib < nb; ++ib) ids[ib] = scales[ib] != 0.0f ? 1 / scales[ib] : 0;
        group_searches().iq4_indices(nb, xc, ids, L);
        for (int ib = 0; ib < nb; ++ib) {
            block_iq4_nl b;
            b.d = fp32_to_fp16(scales[ib]);
            pack_iq4(QK4_NL, L + QK4_NL * ib, b.qs);
            store_block(y, ib0 + ib, b);
        }
    }
}

void quantize_iq4_xs(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    for (int64_t ibl = 0; ibl < n / QK_K; ++ibl) {
        block_iq4_xs b;
        quantize_iq4_xs_superblock(x + QK_K * ibl, &b.d, b.qs, &b.scales_h, b.scales_l,
                                   imatrix ? imatrix + QK_K * ibl : nullptr);
        store_block(y, ibl, b);
    }
}

void quantize_tq1_0(const float* x, uint8_t* y, int64_t n, const float*) {
    quantize_row_tq1_0(x, y, n);
}
void quantize_tq2_0(const float* x, uint8_t* y, int64_t n, const float*) {
    quantize_row_tq2_0(x, y, n);
}
void quantize_mxfp4(const float* x, uint8_t* y, int64_t n, const float*) {
    quantize_row_mxfp4(x, y, n);
}
void quantize_nvfp4(const float* x, uint8_t* y, int64_t n, const float*) {
    quantize_row_nvfp4(x, y, n);
}
void quantize_q1_0(const float* x, uint8_t* y, int64_t n, const float*) {
    quantize_row_q1_0(x, y, n);
}
void quantize_q2_0(const float* x, uint8_t* y, int64_t n, const float*) {
    quantize_row_q2_0(x, y, n);
}

}  // namespace detail
}  // namespace ws
