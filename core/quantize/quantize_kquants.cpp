// SPDX-License-Identifier: MIT
// k-quant quantizers (Q2_K ... Q6_K) and the scale searches they share with the legacy importance-weighted
// quantizers: ggml-quants.c quantize_row_<type>_ref and, with an importance matrix, quantize_row_<type>_impl, in
// ggml's float32 operation order. Integer stores keep ggml's implicit conversions (int -> uint8_t/int8_t wraps).
#include <algorithm>
#include <cmath>

#include "decode/dequant_internal.h"
#include "quantize/group_search.h"
#include "quantize/quantize_internal.h"
#include "weightstream/quant_blocks.h"

namespace ws {
namespace detail {

float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* qw) {
    float max = 0;
    float amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
        L[i] = static_cast<int8_t>(l + nmax);
        const float w = qw ? qw[i] : x[i] * x[i];
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
            const float w = qw ? qw[i] : x[i] * x[i];
            sumlx += w * x[i] * static_cast<float>(l);
            suml2 += w * static_cast<float>(l) * static_cast<float>(l);
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                const int l = nearest_int(iscale * x[i]);
                L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min, uint8_t* Laux,
                       float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.f;
    }
    float iscale = static_cast<float>(nmax) / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        float diff = scale * static_cast<float>(L[i]) + min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        best_error += weights[i] * diff;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
            Laux[i] = static_cast<uint8_t>(l);
            const float w = weights[i];
            const float fl = static_cast<float>(l);
            sum_l += w * fl;
            sum_l2 += w * fl * fl;
            sum_xl += w * fl * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
                diff = use_mad ? std::fabs(diff) : diff * diff;
                cur_error += weights[i] * diff;
            }
            if (cur_error < best_error) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// ggml's make_qp_quants: unsigned quants in [0, nmax] of non-negative values (sub-block scales or mins), weighted
// by quant_weights, with a 9-point scale search then coordinate descent. ggml clamps only from above and stores
// into uint8_t, so a negative quant wraps; that is kept.
float make_qp_quants(int n, int nmax, const float* x, uint8_t* L, const float* quant_weights) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = max > x[i] ? max : x[i];  // ggml's MAX()
    if (max < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = static_cast<float>(nmax) / max;
    for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(nearest_int(iscale * x[i]));
    const float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale * static_cast<float>(L[i]);
        best_mse += quant_weights[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * static_cast<float>(is) + static_cast<float>(nmax)) / max;
        const float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::min(nmax, nearest_int(iscale_is * x[i]));
            const float diff = x[i] - scale_is * static_cast<float>(l);
            mse += quant_weights[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::min(nmax, nearest_int(iscale * x[i]));
        L[i] = static_cast<uint8_t>(l);
        const float w = quant_weights[i];
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = quant_weights[i];
            const float li = static_cast<float>(L[i]);
            float slx = sumlx - w * x[i] * li;
            float sl2 = suml2 - w * li * li;
            if (slx > 0 && sl2 > 0) {
                const int new_l = std::min(nmax, nearest_int(x[i] * sl2 / slx));
                if (new_l != L[i]) {
                    const float fl = static_cast<float>(new_l);
                    slx += w * x[i] * fl;
                    sl2 += w * fl * fl;
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<uint8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// ggml's make_q3_quants with do_rmse (its only use, Q3_K without imatrix; quantize_internal.h): signed quants in
// [-nmax, nmax) found by coordinate descent on the x^2-weighted fit, returned biased by nmax (an all-zero group gives L
// = 0, unbiased).
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
    float max = 0;
    float amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    const float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
        L[i] = static_cast<int8_t>(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const float li = static_cast<float>(L[i]);
            float slx = sumlx - w * x[i] * li;
            if (slx > 0) {
                float sl2 = suml2 - w * li * li;
                const int new_l = std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
                if (new_l != L[i]) {
                    const float fl = static_cast<float>(new_l);
                    slx += w * x[i] * fl;
                    sl2 += w * fl * fl;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<int8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

}  // namespace detail

namespace {

using detail::kGroupMaxEps;
using detail::make_qx_quants;
using detail::nearest_int;
using detail::store_block;

// Four 2-bit quants per byte: within each 128 elements, byte l holds elements l, l+32, l+64, l+96 (low first).
void pack_2bit(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < QK_K; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j / 4 + l] =
                static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
        }
    }
}

// The 16 6-bit Q3_K scales (biased by 32) into its 12 packed bytes, which the caller zeroed.
void pack_q3_K_scales(const int* ls, uint8_t* scales) {
    for (int j = 0; j < QK_K / 16; ++j) {
        const uint32_t l = static_cast<uint32_t>(ls[j]);
        if (j < 8) {
            scales[j] = static_cast<uint8_t>(l & 0xf);
        } else {
            scales[j - 8] = static_cast<uint8_t>(scales[j - 8] | ((l & 0xf) << 4));
        }
        scales[j % 4 + 8] = static_cast<uint8_t>(scales[j % 4 + 8] | ((l >> 4) << (2 * (j / 4))));
    }
}

// Q3_K's second pass, shared by both paths: requantize each 16-group against its stored (f16 x 6-bit) scale,
// then split off the high bits into hmask and pack the low 2 bits.
void finish_q3_K(const float* x, int8_t* L, block_q3_K& b) {
    for (int j = 0; j < QK_K / 16; ++j) {
        int sc = j < 8 ? b.scales[j] & 0xf : b.scales[j - 8] >> 4;
        sc = (sc | (((b.scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
        const float d = fp16_to_fp32(b.d) * static_cast<float>(sc);
        if (d == 0.0f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = std::max(-4, std::min(3, nearest_int(x[16 * j + ii] / d)));
            L[16 * j + ii] = static_cast<int8_t>(l + 4);
        }
    }
    std::memset(b.hmask, 0, sizeof b.hmask);
    // The high bit of quants 0..31 goes to bit 0 of hmask[0..31], of quants 32..63 to bit 1, and so on.
    int m = 0;
    uint8_t hm = 1;
    uint8_t Lu[QK_K];
    for (int j = 0; j < QK_K; ++j) {
        if (L[j] > 3) {
            b.hmask[m] = static_cast<uint8_t>(b.hmask[m] | hm);
            L[j] = static_cast<int8_t>(L[j] - 4);
        }
        if (++m == QK_K / 8) {
            m = 0;
            hm = static_cast<uint8_t>(hm << 1);
        }
        Lu[j] = static_cast<uint8_t>(L[j]);
    }
    pack_2bit(Lu, b.qs);
}

// q4_K/q5_K: eight 6-bit scales and mins into the 12 packed bytes (the layout get_scale_min_k4 reads).
void pack_scale_min_k4(const uint8_t* ls, const uint8_t* lm, uint8_t* scales) {
    for (int j = 0; j < QK_K / 32; ++j) {
        if (j < 4) {
            scales[j] = ls[j];
            scales[j + 4] = lm[j];
        } else {
            scales[j + 4] = static_cast<uint8_t>((ls[j] & 0xf) | ((lm[j] & 0xf) << 4));
            scales[j - 4] = static_cast<uint8_t>(scales[j - 4] | ((ls[j] >> 4) << 6));
            scales[j - 0] = static_cast<uint8_t>(scales[j - 0] | ((lm[j] >> 4) << 6));
        }
    }
}

// q4_K/q5_K's second pass: requantize each 32-group to [0, nmax] against its stored scale and min.
void requantize_k4(const float* x, const uint8_t* scales, ggml_half dh, ggml_half dminh, int nmax, uint8_t* L) {
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        detail::get_scale_min_k4(j, scales, &sc, &m);
        const float d = fp16_to_fp32(dh) * static_cast<float>(sc);
        if (d == 0.0f) continue;
        const float dm = fp16_to_fp32(dminh) * static_cast<float>(m);
        for (int ii = 0; ii < 32; ++ii) {
            const int l = nearest_int((x[32 * j + ii] + dm) / d);
            L[32 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        }
    }
}

void pack_q4_K_quants(const uint8_t* L, uint8_t* q) {
    for (int j = 0; j < QK_K; j += 64) {
        for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
        q += 32;
    }
}

void pack_q5_K_quants(const uint8_t* L, block_q5_K& b) {
    std::memset(b.qh, 0, sizeof b.qh);
    uint8_t* ql = b.qs;
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < QK_K; n += 64) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j];
            if (l1 > 15) {
                l1 -= 16;
                b.qh[j] = static_cast<uint8_t>(b.qh[j] | m1);
            }
            int l2 = L[n + j + 32];
            if (l2 > 15) {
                l2 -= 16;
                b.qh[j] = static_cast<uint8_t>(b.qh[j] | m2);
            }
            ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
        }
        m1 = static_cast<uint8_t>(m1 << 2);
        m2 = static_cast<uint8_t>(m2 << 2);
        ql += 32;
    }
}

// Q6_K's second pass from its stored scales, then the 4+2-bit packing.
void finish_q6_K(const float* x, int8_t* L, block_q6_K& b) {
    for (int j = 0; j < QK_K / 16; ++j) {
        const float d = fp16_to_fp32(b.d) * static_cast<float>(b.scales[j]);
        if (d == 0.0f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d)));
            L[16 * j + ii] = static_cast<int8_t>(l + 32);
        }
    }
    uint8_t* ql = b.ql;
    uint8_t* qh = b.qh;
    for (int j = 0; j < QK_K; j += 128) {
        for (int l = 0; l < 32; ++l) {
            const uint8_t l0 = static_cast<uint8_t>(L[j + l + 0]);
            const uint8_t l1 = static_cast<uint8_t>(L[j + l + 32]);
            const uint8_t l2 = static_cast<uint8_t>(L[j + l + 64]);
            const uint8_t l3 = static_cast<uint8_t>(L[j + l + 96]);
            ql[l + 0] = static_cast<uint8_t>((l0 & 0xf) | ((l2 & 0xf) << 4));
            ql[l + 32] = static_cast<uint8_t>((l1 & 0xf) | ((l3 & 0xf) << 4));
            qh[l] = static_cast<uint8_t>((l0 >> 4) | ((l1 >> 4) << 2) | ((l2 >> 4) << 4) | ((l3 >> 4) << 6));
        }
        ql += 64;
        qh += 32;
    }
}

// Sum of squares of a super-block, in order.
float sum_sq(const float* x, int n) {
    float s = 0;
    for (int j = 0; j < n; ++j) s += x[j] * x[j];
    return s;
}

// ---- Q2_K ----------------------------------------------------------------------------------------------------

void quantize_row_q2_K_ref(const float* x, uint8_t* y, int64_t k) {
    constexpr float q4scale = 15.f;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        uint8_t L[QK_K];
        float weights[QK_K];
        float mins[QK_K / 16];
        float scales[QK_K / 16];
        for (int l = 0; l < QK_K; ++l) weights[l] = std::fabs(x[l]);
        detail::group_searches().qkx2(QK_K / 16, 16, 3, x, weights, L, scales, mins, -0.5f, 0.1f, 15, true);
        float max_scale = 0;  // as the min is subtracted, scales are >= 0
        float max_min = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }

        block_q2_K b;
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) b.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
            b.d = fp32_to_fp16(max_scale / q4scale);
        } else {
            for (int j = 0; j < QK_K / 16; ++j) b.scales[j] = 0;
            b.d = fp32_to_fp16(0.f);
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; ++j) {
                const uint32_t l = static_cast<uint32_t>(nearest_int(iscale * mins[j]));
                b.scales[j] = static_cast<uint8_t>(b.scales[j] | (l << 4));
            }
            b.dmin = fp32_to_fp16(max_min / q4scale);
        } else {
            b.dmin = fp32_to_fp16(0.f);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = fp16_to_fp32(b.d) * static_cast<float>(b.scales[j] & 0xf);
            if (d == 0.0f) continue;
            const float dm = fp16_to_fp32(b.dmin) * static_cast<float>(b.scales[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearest_int((x[16 * j + ii] + dm) / d);
                L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, l)));
            }
        }
        pack_2bit(L, b.qs);
        store_block(y, i, b);
    }
}

void quantize_row_q2_K_impl(const float* x, uint8_t* y, int64_t n, const float* quant_weights) {
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
        uint8_t L[QK_K];
        float mins[QK_K / 16];
        float scales[QK_K / 16];
        float sw[QK_K / 16] = {};
        float weights[QK_K];
        uint8_t Ls[QK_K / 16], Lm[QK_K / 16];

        const float sigma2 = sum_sq(x, QK_K) / QK_K;
        for (int j = 0; j < QK_K / 16; ++j) {
            const float* qw = quant_weights + QK_K * i + 16 * j;
            float* w = weights + 16 * j;
            for (int l = 0; l < 16; ++l) w[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            for (int l = 0; l < 16; ++l) sw[j] += w[l];
        }
        // make_qkx3_quants (quantize_internal.h: the same search as make_qkx2_quants with weights).
        detail::group_searches().qkx2(QK_K / 16, 16, 3, x, weights, L, scales, mins, -0.9f, 0.05f, 36, false);

        block_q2_K b;
        b.d = fp32_to_fp16(detail::make_qp_quants(QK_K / 16, 15, scales, Ls, sw));
        b.dmin = fp32_to_fp16(detail::make_qp_quants(QK_K / 16, 15, mins, Lm, sw));
        const float dm = fp16_to_fp32(b.d);
        const float mm = fp16_to_fp32(b.dmin);
        for (int j = 0; j < QK_K / 16; ++j) b.scales[j] = static_cast<uint8_t>(Ls[j] | (Lm[j] << 4));

        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = dm * static_cast<float>(b.scales[j] & 0xf);
            if (d == 0.0f) continue;
            const float m = mm * static_cast<float>(b.scales[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearest_int((x[16 * j + ii] + m) / d);
                L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, l)));
            }
        }
        pack_2bit(L, b.qs);
        store_block(y, i, b);
    }
}

// ---- Q3_K ----------------------------------------------------------------------------------------------------

void quantize_row_q3_K_ref(const float* x, uint8_t* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        float max_scale = 0;
        float amax = 0;
        detail::group_searches().q3(QK_K / 16, 16, 4, x, L, scales);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float scale = std::fabs(scales[j]);
            if (scale > amax) {
                amax = scale;
                max_scale = scales[j];
            }
        }

        block_q3_K b;
        std::memset(b.scales, 0, sizeof b.scales);
        if (max_scale != 0.0f) {
            const float iscale = -32.f / max_scale;
            int ls[QK_K / 16];
            for (int j = 0; j < QK_K / 16; ++j) {
                // ggml stores nearest_int() into an int8_t before clamping, so it wraps first.
                const int l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
                ls[j] = std::max(-32, std::min(31, l)) + 32;
            }
            pack_q3_K_scales(ls, b.scales);
            b.d = fp32_to_fp16(1 / iscale);
        } else {
            b.d = fp32_to_fp16(0.f);
        }
        finish_q3_K(x, L, b);
        store_block(y, i, b);
    }
}

void quantize_row_q3_K_impl(const float* x, uint8_t* y, int64_t n, const float* quant_weights) {
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        float weights[QK_K];
        float sw[QK_K / 16];
        int8_t Ls[QK_K / 16];

        const float sigma2 = 2 * sum_sq(x, QK_K) / QK_K;
        for (int j = 0; j < QK_K / 16; ++j) {
            const float* qw = quant_weights + QK_K * i + 16 * j;
            float* w = weights + 16 * j;
            for (int l = 0; l < 16; ++l) w[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            float sumw = 0;
            for (int l = 0; l < 16; ++l) sumw += w[l];
            sw[j] = sumw;
        }
        detail::group_searches().qx(QK_K / 16, 16, 4, x, L, weights, scales);

        block_q3_K b;
        std::memset(b.scales, 0, sizeof b.scales);
        const float d_block = make_qx_quants(QK_K / 16, 32, scales, Ls, sw);
        int ls[QK_K / 16];
        for (int j = 0; j < QK_K / 16; ++j) ls[j] = Ls[j];
        pack_q3_K_scales(ls, b.scales);
        b.d = fp32_to_fp16(d_block);
        finish_q3_K(x, L, b);
        store_block(y, i, b);
    }
}

// ---- Q4_K / Q5_K ---------------------------------------------------------------------------------------------

// Super-blocks whose groups one search call takes: 16 groups of 32, so the widest lanes (AVX-512's sixteen) are
// full; the groups are independent, so batching changes no byte.
constexpr int kSearchSuperBlocks = 2;

// The reference path of both, for nb <= kSearchSuperBlocks super-blocks at x: make_qkx2_quants per 32-group with
// av_x + |x| weights, 6-bit scales and mins relative to the largest of each super-block, then requantization
// against the stored values. Fills L and each block's scales, d and dmin.
template <int kNmax, typename Block>
void q45_K_ref_scales(int nb, const float* x, uint8_t* L, Block* blocks) {
    // Q4_K: rmin -1, 20 steps; Q5_K: rmin -0.5, 15 steps.
    constexpr float rmin = kNmax == 15 ? -1.f : -0.5f;
    constexpr int nstep = kNmax == 15 ? 20 : 15;
    float weights[kSearchSuperBlocks * QK_K];
    float mins[kSearchSuperBlocks * QK_K / 32];
    float scales[kSearchSuperBlocks * QK_K / 32];
    for (int j = 0; j < nb * QK_K / 32; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[32 * j + l] = av_x + std::fabs(x[32 * j + l]);
    }
    detail::group_searches().qkx2(nb * QK_K / 32, 32, kNmax, x, weights, L, scales, mins, rmin, 0.1f, nstep, false);
    for (int k = 0; k < nb; ++k) {
        const float* sc = scales + k * QK_K / 32;
        const float* mn = mins + k * QK_K / 32;
        float max_scale = 0;
        float max_min = 0;
        for (int j = 0; j < QK_K / 32; ++j) {
            if (sc[j] > max_scale) max_scale = sc[j];
            if (mn[j] > max_min) max_min = mn[j];
        }
        const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
        const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
        uint8_t ls[QK_K / 32], lm[QK_K / 32];
        for (int j = 0; j < QK_K / 32; ++j) {
            ls[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * sc[j])));
            lm[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mn[j])));
        }
        Block& b = blocks[k];
        pack_scale_min_k4(ls, lm, b.scales);
        b.d = fp32_to_fp16(max_scale / 63.f);
        b.dmin = fp32_to_fp16(max_min / 63.f);
        requantize_k4(x + k * QK_K, b.scales, b.d, b.dmin, kNmax, L + k * QK_K);
    }
}

// The importance-weighted path of both, for nb <= kSearchSuperBlocks super-blocks: make_qkx3_quants per
// 32-group, then each super-block's scales and mins themselves quantized by make_qp_quants weighted by each
// group's total weight. Q5_K clamps the 6-bit values, Q4_K not.
template <int kNmax, typename Block>
void q45_K_impl_scales(int nb, const float* x, const float* qw_blocks, uint8_t* L, Block* blocks) {
    float weights[kSearchSuperBlocks * QK_K];
    float sw[kSearchSuperBlocks * QK_K / 32];
    float mins[kSearchSuperBlocks * QK_K / 32];
    float scales[kSearchSuperBlocks * QK_K / 32];
    for (int k = 0; k < nb; ++k) {
        const float* xk = x + k * QK_K;
        const float sigma2 = 2 * sum_sq(xk, QK_K) / QK_K;
        for (int j = 0; j < QK_K / 32; ++j) {
            const float* qw = qw_blocks + k * QK_K + 32 * j;
            float* w = weights + k * QK_K + 32 * j;
            for (int l = 0; l < 32; ++l) w[l] = qw[l] * std::sqrt(sigma2 + xk[32 * j + l] * xk[32 * j + l]);
            float sumw = 0;
            for (int l = 0; l < 32; ++l) sumw += w[l];
            sw[k * QK_K / 32 + j] = sumw;
        }
    }
    // make_qkx3_quants (quantize_internal.h: the same search as make_qkx2_quants with weights).
    detail::group_searches().qkx2(nb * QK_K / 32, 32, kNmax, x, weights, L, scales, mins, -0.9f, 0.05f, 36, false);
    for (int k = 0; k < nb; ++k) {
        uint8_t Ls[QK_K / 32];
        uint8_t Lm[QK_K / 32];
        const float d_block = detail::make_qp_quants(QK_K / 32, 63, scales + k * QK_K / 32, Ls, sw + k * QK_K / 32);
        const float m_block = detail::make_qp_quants(QK_K / 32, 63, mins + k * QK_K / 32, Lm, sw + k * QK_K / 32);
        if (kNmax == 31) {
            for (int j = 0; j < QK_K / 32; ++j) {
                Ls[j] = std::min<uint8_t>(63, Ls[j]);
                Lm[j] = std::min<uint8_t>(63, Lm[j]);
            }
        }
        Block& b = blocks[k];
        pack_scale_min_k4(Ls, Lm, b.scales);
        b.d = fp32_to_fp16(d_block);
        b.dmin = fp32_to_fp16(m_block);
        requantize_k4(x + k * QK_K, b.scales, b.d, b.dmin, kNmax, L + k * QK_K);
    }
}

void pack_q4_K(const uint8_t* L, block_q4_K& b) {
    pack_q4_K_quants(L, b.qs);
}

// Q4_K (kNmax 15) and Q5_K (31): kSearchSuperBlocks super-blocks at a time.
template <int kNmax, typename Block, void (*pack)(const uint8_t*, Block&)>
void quantize_row_q45_K(const float* x, uint8_t* y, int64_t n, const float* quant_weights) {
    const int64_t nsb = n / QK_K;
    for (int64_t i = 0; i < nsb; i += kSearchSuperBlocks) {
        const int nb = static_cast<int>(std::min<int64_t>(kSearchSuperBlocks, nsb - i));
        uint8_t L[kSearchSuperBlocks * QK_K];
        Block b[kSearchSuperBlocks];
        if (quant_weights) {
            q45_K_impl_scales<kNmax>(nb, x + QK_K * i, quant_weights + QK_K * i, L, b);
        } else {
            q45_K_ref_scales<kNmax>(nb, x + QK_K * i, L, b);
        }
        for (int k = 0; k < nb; ++k) {
            pack(L + QK_K * k, b[k]);
            store_block(y, i + k, b[k]);
        }
    }
}

// ---- Q6_K ----------------------------------------------------------------------------------------------------

// ref (quant_weights nullptr: x^2 weights) and impl (the imatrix weights as they are) differ only in the weights
// make_qx_quants gets.
void quantize_row_q6_K(const float* x, uint8_t* y, int64_t n, const float* quant_weights) {
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        float max_scale = 0;
        float max_abs_scale = 0;
        detail::group_searches().qx(QK_K / 16, 16, 32, x, L, quant_weights ? quant_weights + QK_K * i : nullptr,
                                    scales);
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const float scale = scales[ib];
            const float abs_scale = std::fabs(scale);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }

        block_q6_K b;
        if (max_abs_scale < kGroupMaxEps) {
            std::memset(&b, 0, sizeof b);
            store_block(y, i, b);
            continue;
        }
        const float iscale = -128.f / max_scale;
        b.d = fp32_to_fp16(1 / iscale);
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            b.scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
        }
        finish_q6_K(x, L, b);
        store_block(y, i, b);
    }
}

}  // namespace

namespace detail {

void quantize_q2_K(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    if (imatrix) return quantize_row_q2_K_impl(x, y, n, imatrix);
    quantize_row_q2_K_ref(x, y, n);
}

void quantize_q3_K(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    if (imatrix) return quantize_row_q3_K_impl(x, y, n, imatrix);
    quantize_row_q3_K_ref(x, y, n);
}

void quantize_q4_K(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    quantize_row_q45_K<15, block_q4_K, pack_q4_K>(x, y, n, imatrix);
}

void quantize_q5_K(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    quantize_row_q45_K<31, block_q5_K, pack_q5_K_quants>(x, y, n, imatrix);
}

void quantize_q6_K(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    quantize_row_q6_K(x, y, n, imatrix);
}

}  // namespace detail
}  // namespace ws
