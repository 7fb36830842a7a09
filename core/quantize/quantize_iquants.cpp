// SPDX-License-Identifier: MIT
// The i-quant quantizers, restated from ggml-quants.c (ggml commit d99724f2): quantize_row_iq2_xxs_impl,
// quantize_row_iq2_xs_impl, quantize_row_iq2_s_impl, quantize_row_iq3_xxs_impl, quantize_row_iq3_s_impl,
// quantize_row_iq1_s_impl, quantize_row_iq1_m_impl, with make_qp_quants and the neighbour searches. Float
// expressions keep ggml's operand order; quirks that decide bytes are kept and marked "ggml:".
//
// The five grid quantizers share one scale search (search_scale): round the group of values to levels at
// trial scales, move level vectors that are not grid entries to their best neighbour, keep the trial with the
// best weighted fit, then optionally re-round at the fitted scale. The types differ in the trial range, the
// starting scale and which groups are re-rounded; ScaleSearch names those differences.
#include "quantize/quantize_iquants.h"

#include <cfloat>
#include <cmath>
#include <cstring>

#include "decode/iquant_tables.h"
#include "quantize/group_search.h"
#include "quantize/iquant_maps.h"
#include "quantize/quantize_internal.h"
#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"

namespace ws {
namespace {

// ggml's thresholds below which a group counts as all zero.
constexpr float kGroupMaxEps = 1e-15f;
constexpr float kGroupMaxEpsIq3xxs = 1e-8f;
constexpr float kGroupMaxEpsIq2s = 1e-8f;
constexpr float kGroupMaxEpsIq1m = 1e-7f;
constexpr float kGroupMaxEpsIq1s = 1e-12f;

using detail::nearest_int;  // bit arithmetic: defined for every input, no range check needed
using detail::store_block;

// ggml's MAX / MIN macros, NaN behaviour included (a NaN in the first place is replaced, in the second kept).
inline float max_f(float a, float b) {
    return a > b ? a : b;
}
inline int max_i(int a, int b) {
    return a > b ? a : b;
}
inline int min_i(int a, int b) {
    return a < b ? a : b;
}

// Blocks per row times rows; callers guarantee the product fits (quantize_iquant_rows checks it).
template <typename Block, typename RowFn>
void quantize_rows_with(RowFn row_fn, const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row,
                        const float* imatrix) {
    const int64_t nblock = n_per_row / QK_K;
    for (int64_t row = 0; row < nrows; ++row) {
        row_fn(src + row * n_per_row, dst + row * nblock * static_cast<int64_t>(sizeof(Block)), nblock, imatrix);
    }
}

// ---- grid lookups ---------------------------------------------------------------------------------------------

// The map entry of the level vector L (levels in range): an entry index >= 0 or a neighbour list reference.
template <int kDims>
inline int32_t grid_lookup(const IqGridMap& g, const int8_t* L) {
    int key = 0;
    for (int i = kDims - 1; i >= 0; --i) key = key * g.n_levels + L[i];
    return g.map[static_cast<size_t>(key)];
}

// The entry index of L, or 0 when L is not an entry (ggml aborts there; only NaN input gets there, with levels
// possibly out of range, which are checked first).
template <int kDims>
inline int grid_index_or_zero(const IqGridMap& g, const int8_t* L) {
    for (int i = 0; i < kDims; ++i) {
        if (L[i] < 0 || L[i] >= g.n_levels) return 0;
    }
    const int32_t v = grid_lookup<kDims>(g, L);
    return v >= 0 ? v : 0;
}

inline const uint16_t* neighbour_list(const IqGridMap& g, int32_t map_value) {
    return g.neighbours.data() + (-map_value - 1);
}

inline void copy_levels(const IqGridMap& g, int entry, int8_t* L, int dims) {
    const uint8_t* lv = &g.levels[static_cast<size_t>(entry) * static_cast<size_t>(dims)];
    for (int i = 0; i < dims; ++i) L[i] = static_cast<int8_t>(lv[i]);
}

// ggml's iq2_find_best_neighbour / iq3_find_best_neighbour: the neighbour closest to xval at scale (grid values
// 2 * level + 1), weighted; its levels go to L. (group_searches() runs it a neighbour per SIMD lane.)
template <int kDims>
int find_best_neighbour(const IqGridMap& g, const uint16_t* list, const float* xval, const float* weight, float scale,
                        int8_t* L) {
    const int grid_index =
        detail::group_searches().grid_neighbour(kDims, g.level_floats.data(), list, xval, weight, scale, nullptr);
    copy_levels(g, grid_index, L, kDims);
    return grid_index;
}

// ---- the shared scale search ----------------------------------------------------------------------------------

struct ScaleSearch {
    int max_q;   // kMaxQ: levels 0..max_q-1, grid values 2 * level + 1
    int is_min;  // trial inverse scales (2 * max_q - 1 + is * is_step) / denom for is in [is_min, is_max]
    int is_max;
    float is_step;
    bool init_on_grid;      // what counts as "on the grid" before any trial is accepted
    bool require_off_grid;  // re-round only if a group of the best trial was off the grid
    bool refine_all;        // re-round every group (else only the off-grid ones)
};

constexpr ScaleSearch kSearchIq2xxs{3, -6, 6, 0.1f, true, false, true};
constexpr ScaleSearch kSearchIq2xs{3, -9, 9, 0.1f, true, true, false};
constexpr ScaleSearch kSearchIq3xxs{8, -15, 15, 0.2f, true, true, false};
// ggml: IQ3_S starts with every group "off the grid" and re-rounds all of them (its `continue` is commented out).
constexpr ScaleSearch kSearchIq3s{8, -9, 9, 0.2f, false, true, true};

// Levels L (n values in groups of kDims, all grid entries on return unless NaN intervenes) and the scale for
// the non-negative values xval. scale is the starting scale, returned when no trial fits; denom divides the
// trial inverse scales (the group maximum, or IQ2_XXS's eff_max). n <= 32.
template <int kDims>
float search_scale(const IqGridMap& g, const ScaleSearch& p, int n, float denom, float scale, const float* xval,
                   const float* weight, const float* waux, int8_t* L) {
    constexpr int kMaxGroups = 32 / kDims;
    const int n_groups = n / kDims;
    int8_t Laux[32];
    bool is_on_grid[kMaxGroups];
    bool is_on_grid_aux[kMaxGroups];
    for (int k = 0; k < n_groups; ++k) is_on_grid[k] = p.init_on_grid;
    float best = 0;
    for (int is = p.is_min; is <= p.is_max; ++is) {
        const float id = (2 * p.max_q - 1 + is * p.is_step) / denom;
        const float this_scale = 1 / id;
        for (int k = 0; k < n_groups; ++k) {
            for (int i = 0; i < kDims; ++i) {
                const int l = nearest_int(0.5f * (id * xval[kDims * k + i] - 1));
                Laux[kDims * k + i] = static_cast<int8_t>(max_i(0, min_i(p.max_q - 1, l)));
            }
            const int32_t v = grid_lookup<kDims>(g, Laux + kDims * k);
            is_on_grid_aux[k] = v >= 0;
            if (v < 0) {
                find_best_neighbour<kDims>(g, neighbour_list(g, v), xval + kDims * k, waux + kDims * k, this_scale,
                                           Laux + kDims * k);
            }
        }
        float sumqx = 0, sumq2 = 0;
        for (int i = 0; i < n; ++i) {
            const float w = weight[i];
            const float q = 2 * Laux[i] + 1;
            sumqx += w * xval[i] * q;
            sumq2 += w * q * q;
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::memcpy(L, Laux, static_cast<size_t>(n));
            for (int k = 0; k < n_groups; ++k) is_on_grid[k] = is_on_grid_aux[k];
        }
    }
    int n_not_ongrid = 0;
    for (int k = 0; k < n_groups; ++k) n_not_ongrid += is_on_grid[k] ? 0 : 1;
    if ((!p.require_off_grid || n_not_ongrid > 0) && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < n_groups; ++k) {
            if (!p.refine_all && is_on_grid[k]) continue;
            for (int i = 0; i < kDims; ++i) {
                const int l = nearest_int(0.5f * (id * xval[kDims * k + i] - 1));
                L[kDims * k + i] = static_cast<int8_t>(max_i(0, min_i(p.max_q - 1, l)));
            }
            const int32_t v = grid_lookup<kDims>(g, L + kDims * k);
            if (v < 0) {
                find_best_neighbour<kDims>(g, neighbour_list(g, v), xval + kDims * k, waux + kDims * k, scale,
                                           L + kDims * k);
            }
        }
        float sumqx = 0, sumq2 = 0;
        for (int i = 0; i < n; ++i) {
            const float w = weight[i];
            const float q = 2 * L[i] + 1;
            sumqx += w * xval[i] * q;
            sumq2 += w * q * q;
        }
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    return scale;
}

// ---- sign handling --------------------------------------------------------------------------------------------

// xval = |xb| for 8 values; returns their sign bits (bit i: xb[i] < 0). IQ2_S and IQ3_S store all 8 bits.
uint8_t split_signs(const float* xb, float* xval) {
    uint8_t s = 0;
    for (int i = 0; i < 8; ++i) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            s = static_cast<uint8_t>(s | (1u << i));
        }
    }
    return s;
}

// As split_signs for formats that store 7 sign bits and imply an even count of negative values: with an odd
// count, the value of least weight * x^2 keeps the wrong sign (its xval turns negative). Returns bits 0..6.
uint8_t split_signs_even(const float* xb, const float* weight, float* xval) {
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; ++i) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            ++nflip;
            s = static_cast<uint8_t>(s | (1u << i));
        }
    }
    if (nflip % 2) {
        int imin = 0;
        float min = weight[imin] * xb[imin] * xb[imin];
        for (int i = 1; i < 8; ++i) {
            const float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s = static_cast<uint8_t>(s ^ (1u << imin));
    }
    return s & 127;
}

float sum_squares_256(const float* xbl) {
    float sumx2 = 0;
    for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
    return sumx2;
}

// The 4-bit sub-block scale code ggml stores for scale at super-block scale 1/id.
inline int scale_code(float id, float scale, int max_code) {
    const int l = nearest_int(0.5f * (id * scale - 1));
    return max_i(0, min_i(max_code, l));
}

// ---- IQ2_XXS --------------------------------------------------------------------------------------------------

void iq2_xxs_row(const float* x, uint8_t* y, int64_t nbl, const float* quant_weights) {
    const IqGridMap& g = iq_grid_map(IqGridId::kIq2xxs);
    constexpr int kMaxQ = 3;
    float scales[QK_K / 32];
    float weight[32];
    float xval[32];
    int8_t L[32];
    float waux[32];
    uint8_t block_signs[4];
    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        block_iq2_xxs b{};
        uint32_t q2[2 * (QK_K / 32)] = {};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        const float sigma2 = sum_squares_256(xbl) / QK_K;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float* xb = xbl + 32 * ib;
            const float* qw = quant_weights + 32 * ib + QK_K * ibl;
            for (int i = 0; i < 32; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 4; ++k) block_signs[k] = split_signs_even(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = max_f(max, xval[i]);
            if (max < kGroupMaxEps) {
                scales[ib] = 0;
                continue;
            }
            // make_qp_quants writes levels 0..4 through a byte view of L, as ggml's cast does.
            uint8_t Lqp[32];
            float scale = detail::make_qp_quants(32, kMaxQ + 1, xval, Lqp, weight);
            std::memcpy(L, Lqp, sizeof L);
            const float eff_max = scale * kMaxQ;
            if (eff_max <= 0) {
                scales[ib] = 0;
                continue;
            }
            scale = search_scale<8>(g, kSearchIq2xxs, 32, eff_max, scale, xval, weight, waux, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 4; ++k) block_signs[k] = static_cast<uint8_t>(~block_signs[k] & 127);
            }
            for (int k = 0; k < 4; ++k) {
                const uint32_t grid_index = static_cast<uint32_t>(grid_index_or_zero<8>(g, L + 8 * k));
                q2[2 * ib + 0] |= grid_index << (8 * k);
                q2[2 * ib + 1] |= static_cast<uint32_t>(block_signs[k]) << (7 * k);
            }
            scales[ib] = scale;
            max_scale = max_f(max_scale, scale);
        }
        if (max_scale) {
            const float d = max_scale / 31;
            b.d = fp32_to_fp16(d);
            const float id = 1 / d;
            for (int ib = 0; ib < QK_K / 32; ++ib) {
                q2[2 * ib + 1] |= static_cast<uint32_t>(scale_code(id, scales[ib], 15)) << 28;
            }
            std::memcpy(b.qs, q2, sizeof b.qs);
        }
        store_block(y, ibl, b);
    }
}

// ---- IQ2_XS ---------------------------------------------------------------------------------------------------

void iq2_xs_row(const float* x, uint8_t* y, int64_t nbl, const float* quant_weights) {
    const IqGridMap& g = iq_grid_map(IqGridId::kIq2xs);
    constexpr int kMaxQ = 3;
    float scales[QK_K / 16];
    float weight[16];
    float xval[16];
    int8_t L[16];
    float waux[16];
    uint8_t block_signs[2];
    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        block_iq2_xs b{};
        uint16_t q2[2 * (QK_K / 16)] = {};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        const float sigma2 = sum_squares_256(xbl) / QK_K;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const float* xb = xbl + 16 * ib;
            const float* qw = quant_weights + 16 * ib + QK_K * ibl;
            for (int i = 0; i < 16; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            for (int i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 2; ++k) block_signs[k] = split_signs_even(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 16; ++i) max = max_f(max, xval[i]);
            std::memset(L, 0, sizeof L);
            if (max < kGroupMaxEps) {
                scales[ib] = 0;
                continue;
            }
            float scale = search_scale<8>(g, kSearchIq2xs, 16, max, max / (2 * kMaxQ - 1), xval, weight, waux, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 2; ++k) block_signs[k] = static_cast<uint8_t>(~block_signs[k] & 127);
            }
            for (int k = 0; k < 2; ++k) {
                q2[2 * ib + k] = static_cast<uint16_t>(grid_index_or_zero<8>(g, L + 8 * k) | (block_signs[k] << 9));
            }
            scales[ib] = scale;
            max_scale = max_f(max_scale, scale);
        }
        if (max_scale) {
            const float d = max_scale / 31;
            b.d = fp32_to_fp16(d);
            const float id = 1 / d;
            for (int ib = 0; ib < QK_K / 16; ++ib) {
                const int l = scale_code(id, scales[ib], 15);
                if (ib % 2 == 0) {
                    b.scales[ib / 2] = static_cast<uint8_t>(l);
                } else {
                    b.scales[ib / 2] = static_cast<uint8_t>(b.scales[ib / 2] | (l << 4));
                }
            }
            std::memcpy(b.qs, q2, sizeof b.qs);
        }
        store_block(y, ibl, b);
    }
}

// ---- IQ2_S ----------------------------------------------------------------------------------------------------

void iq2_s_row(const float* x, uint8_t* y, int64_t nbl, const float* quant_weights) {
    const IqGridMap& g = iq_grid_map(IqGridId::kIq2s);
    constexpr int kMaxQ = 3;
    float scales[QK_K / 16];
    float weight[16];
    float xval[16];
    int8_t L[16];
    float waux[16];
    uint8_t block_signs[2];
    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        block_iq2_s b{};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        const float sigma2 = 2 * sum_squares_256(xbl) / QK_K;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const float* xb = xbl + 16 * ib;
            if (quant_weights) {
                const float* qw = quant_weights + 16 * ib + QK_K * ibl;
                for (int i = 0; i < 16; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < 16; ++i) weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
            }
            for (int i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 2; ++k) block_signs[k] = split_signs(xb + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 16; ++i) max = max_f(max, xval[i]);
            std::memset(L, 0, sizeof L);
            if (max < kGroupMaxEpsIq2s) {
                scales[ib] = 0;
                continue;
            }
            float scale = search_scale<8>(g, kSearchIq2xs, 16, max, max / (2 * kMaxQ - 1), xval, weight, waux, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 2; ++k) block_signs[k] = static_cast<uint8_t>(~block_signs[k]);
            }
            for (int k = 0; k < 2; ++k) {
                const int grid_index = grid_index_or_zero<8>(g, L + 8 * k);
                const int i8 = 2 * ib + k;
                b.qs[i8] = static_cast<uint8_t>(grid_index & 255);
                b.qh[i8 / 4] = static_cast<uint8_t>(b.qh[i8 / 4] | ((grid_index >> 8) << (2 * (i8 % 4))));
                b.qs[QK_K / 8 + i8] = block_signs[k];
            }
            scales[ib] = scale;
            max_scale = max_f(max_scale, scale);
        }
        if (max_scale) {
            const float d = max_scale / 31;
            b.d = fp32_to_fp16(d * 0.9875f);
            const float id = 1 / d;
            for (int ib = 0; ib < QK_K / 16; ++ib) {
                const int l = scale_code(id, scales[ib], 15);
                if (ib % 2 == 0) {
                    b.scales[ib / 2] = static_cast<uint8_t>(l);
                } else {
                    b.scales[ib / 2] = static_cast<uint8_t>(b.scales[ib / 2] | (l << 4));
                }
            }
        }
        store_block(y, ibl, b);
    }
}

// ---- IQ3_XXS and IQ3_S ----------------------------------------------------------------------------------------

// Weights of 32 values as both 3-bit types compute them.
void iq3_weights(const float* xb, const float* qw, float sigma2, float* weight, float* waux) {
    if (qw) {
        for (int i = 0; i < 32; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < 32; ++i) weight[i] = xb[i] * xb[i];
    }
    for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
}

void iq3_xxs_row(const float* x, uint8_t* y, int64_t nbl, const float* quant_weights) {
    const IqGridMap& g = iq_grid_map(IqGridId::kIq3xxs);
    constexpr int kMaxQ = 8;
    float scales[QK_K / 32];
    float weight[32];
    float xval[32];
    int8_t L[32];
    float waux[32];
    uint8_t block_signs[4];
    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        block_iq3_xxs b{};
        uint8_t grid_indices[QK_K / 4] = {};
        uint32_t scales_and_signs[QK_K / 32] = {};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        const float sigma2 = 2 * sum_squares_256(xbl) / QK_K;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float* xb = xbl + 32 * ib;
            iq3_weights(xb, quant_weights ? quant_weights + 32 * ib + QK_K * ibl : nullptr, sigma2, weight, waux);
            for (int k = 0; k < 4; ++k) block_signs[k] = split_signs_even(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = max_f(max, xval[i]);
            std::memset(L, 0, sizeof L);
            if (max < kGroupMaxEpsIq3xxs) {
                scales[ib] = 0;
                continue;
            }
            float scale = search_scale<4>(g, kSearchIq3xxs, 32, max, max / (2 * kMaxQ - 1), xval, weight, waux, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 4; ++k) block_signs[k] = static_cast<uint8_t>(~block_signs[k] & 127);
            }
            for (int k = 0; k < 8; ++k)
                grid_indices[8 * ib + k] = static_cast<uint8_t>(grid_index_or_zero<4>(g, L + 4 * k));
            scales_and_signs[ib] = block_signs[0] | (block_signs[1] << 7) | (block_signs[2] << 14) |
                                   (static_cast<uint32_t>(block_signs[3]) << 21);
            scales[ib] = scale;
            max_scale = max_f(max_scale, scale);
        }
        if (max_scale) {
            const float d = max_scale / 31;
            b.d = fp32_to_fp16(d * 1.0125f);
            const float id = 1 / d;
            for (int ib = 0; ib < QK_K / 32; ++ib) {
                scales_and_signs[ib] |= static_cast<uint32_t>(scale_code(id, scales[ib], 15)) << 28;
            }
            std::memcpy(b.qs, grid_indices, sizeof grid_indices);
            std::memcpy(b.qs + sizeof grid_indices, scales_and_signs, sizeof scales_and_signs);
        }
        store_block(y, ibl, b);
    }
}

void iq3_s_row(const float* x, uint8_t* y, int64_t nbl, const float* quant_weights) {
    const IqGridMap& g = iq_grid_map(IqGridId::kIq3s);
    constexpr int kMaxQ = 8;
    constexpr int kBlockSize = 32;
    constexpr int kBs4 = kBlockSize / 4;
    constexpr int kBs8 = kBlockSize / 8;
    float scales[QK_K / kBlockSize];
    float weight[kBlockSize];
    float xval[kBlockSize];
    int8_t L[kBlockSize];
    float waux[kBlockSize];
    uint8_t block_signs[kBs8];
    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        block_iq3_s b{};
        // ggml: these advance only past sub-blocks that are not all zero, so a zero sub-block shifts the grid
        // indices and signs of the later ones forward (the qh bits and scales stay at their own positions).
        uint8_t* qs = b.qs;
        uint8_t* signs = b.signs;
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        const float sigma2 = 2 * sum_squares_256(xbl) / QK_K;
        for (int ib = 0; ib < QK_K / kBlockSize; ++ib) {
            const float* xb = xbl + kBlockSize * ib;
            iq3_weights(xb, quant_weights ? quant_weights + kBlockSize * ib + QK_K * ibl : nullptr, sigma2, weight,
                        waux);
            for (int k = 0; k < kBs8; ++k) block_signs[k] = split_signs(xb + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < kBlockSize; ++i) max = max_f(max, xval[i]);
            std::memset(L, 0, sizeof L);
            if (!max) {
                scales[ib] = 0;
                continue;
            }
            float scale =
                search_scale<4>(g, kSearchIq3s, kBlockSize, max, max / (2 * kMaxQ - 1), xval, weight, waux, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < kBs8; ++k) block_signs[k] = static_cast<uint8_t>(~block_signs[k]);
            }
            for (int k = 0; k < kBs4; ++k) {
                const int grid_index = grid_index_or_zero<4>(g, L + 4 * k);
                qs[k] = static_cast<uint8_t>(grid_index & 255);
                const int bit = ib * kBs4 + k;
                b.qh[bit / 8] = static_cast<uint8_t>(b.qh[bit / 8] | ((grid_index >> 8) << (bit % 8)));
            }
            qs += kBs4;
            for (int k = 0; k < kBs8; ++k) signs[k] = block_signs[k];
            signs += kBs8;
            scales[ib] = scale;
            max_scale = max_f(max_scale, scale);
        }
        if (max_scale) {
            const float d = max_scale / 31;
            b.d = fp32_to_fp16(d * 1.033f);
            const float id = 1 / d;
            for (int ib = 0; ib < QK_K / kBlockSize; ib += 2) {
                const int l1 = scale_code(id, scales[ib + 0], 15);
                const int l2 = scale_code(id, scales[ib + 1], 15);
                b.scales[ib / 2] = static_cast<uint8_t>(l1 | (l2 << 4));
            }
        }
        store_block(y, ibl, b);
    }
}

// ---- IQ1_S and IQ1_M ------------------------------------------------------------------------------------------

struct KeyIndex {
    float x;
    int32_t i;
};

// The order glibc's qsort gives ggml's iq1_sort_helper (compare x only) for these sizes: glibc sorts arrays
// under 1 KiB with this top-down merge sort (msort_with_tmp), which takes the left element unless it compares
// greater. It is stable, and NaN keys (equal to everything under that comparison) land where glibc puts them.
void glibc_merge_sort(KeyIndex* b, int n, KeyIndex* tmp) {
    if (n <= 1) return;
    const int n1 = n / 2;
    const int n2 = n - n1;
    glibc_merge_sort(b, n1, tmp);
    glibc_merge_sort(b + n1, n2, tmp);
    const KeyIndex* b1 = b;
    const KeyIndex* b2 = b + n1;
    int r1 = n1;
    int r2 = n2;
    int t = 0;
    while (r1 > 0 && r2 > 0) {
        if (!(b1->x > b2->x)) {
            tmp[t++] = *b1++;
            --r1;
        } else {
            tmp[t++] = *b2++;
            --r2;
        }
    }
    while (r1 > 0) {
        tmp[t++] = *b1++;
        --r1;
    }
    // The rest of the right run is already in place.
    for (int j = 0; j < t; ++j) b[j] = tmp[j];
}

// The boundaries (i1, i2) of pair p of the IQ1 searches, which run 0 <= i1 <= i2 <= n, i1 then i2 ascending.
void boundary_pair(int p, int n, int* i1, int* i2) {
    int first = 0;
    while (p > n - first) {
        p -= n - first + 1;
        ++first;
    }
    *i1 = first;
    *i2 = first + p;
}

// Sorts the values xb[0..n) ascending into order[] (as ggml's pairs/idx arrays after qsort).
void iq1_sort(const float* xb, int n, KeyIndex* order) {
    bool has_nan = false;
    for (int j = 0; j < n; ++j) has_nan |= xb[j] != xb[j];
    if (!has_nan) {
        // Without NaN the comparison is a strict weak order, and glibc's merge sort is stable, so its order is the
        // only stable one: each value lands at its rank, the count of values below it and of its equals before
        // it. Counting is branch-free (the merges' comparisons are unpredictable).
        for (int i = 0; i < n; ++i) {
            int rank = 0;
            for (int j = 0; j < n; ++j) rank += (xb[j] < xb[i]) | ((xb[j] == xb[i]) & (j < i));
            order[rank] = {xb[i], i};
        }
        return;
    }
    KeyIndex tmp[32];
    for (int j = 0; j < n; ++j) order[j] = {xb[j], j};
    glibc_merge_sort(order, n, tmp);
}

constexpr float kIq1Plus[3] = {-1 + IQ1S_DELTA, IQ1S_DELTA, 1 + IQ1S_DELTA};
constexpr float kIq1Minus[3] = {-1 - IQ1S_DELTA, -IQ1S_DELTA, 1 - IQ1S_DELTA};
constexpr float kIq1mPlus[3] = {-1 + IQ1M_DELTA, IQ1M_DELTA, 1 + IQ1M_DELTA};
constexpr float kIq1mMinus[3] = {-1 - IQ1M_DELTA, -IQ1M_DELTA, 1 - IQ1M_DELTA};

// ggml's iq1_find_best_neighbour2: the neighbour of least weighted squared error at scale, with level values
// xg[level]; its levels go to L. (ggml, when every distance is NaN, then scans the whole grid reading xval[i]
// for grid index i, out of bounds, and asserts if that finds nothing either; grid_neighbour takes list[1].)
int iq1_find_best_neighbour2(const IqGridMap& g, const uint16_t* list, const float* xval, const float* weight,
                             float scale, const float* xg, int8_t* L) {
    const int grid_index =
        detail::group_searches().grid_neighbour(8, g.level_floats.data(), list, xval, weight, scale, xg);
    copy_levels(g, grid_index, L, 8);
    return grid_index;
}

// Grid indices of the level groups of one IQ1 sub-block (groups of 8, xx_of_group gives each group's level
// values); moves groups that are not entries to their best neighbour. Returns whether all were entries.
bool iq1_grid_indices(const IqGridMap& g, int n_groups, const float* xb, const float* weight, float scale,
                      const float* const* xx_of_group, int8_t* L, uint16_t* index) {
    bool all_on_grid = true;
    for (int k = 0; k < n_groups; ++k) {
        int32_t v = grid_lookup<8>(g, L + 8 * k);
        if (v < 0) {
            all_on_grid = false;
            v = iq1_find_best_neighbour2(g, neighbour_list(g, v), xb + 8 * k, weight + 8 * k, scale, xx_of_group[k],
                                         L + 8 * k);
        }
        index[k] = static_cast<uint16_t>(v);
    }
    return all_on_grid;
}

void iq1_s_row(const float* x, uint8_t* y, int64_t nbl, const float* quant_weights) {
    const IqGridMap& g = iq_grid_map(IqGridId::kIq1s);
    constexpr int kBlockSize = 32;
    float scales[QK_K / kBlockSize];
    float weight[kBlockSize];
    int8_t L[kBlockSize];
    // Prefix sums, padded for GroupSearches::iq1s_sums, and the sums of each boundary pair and delta sign.
    float sumx[detail::kIq1sPrefixSize] = {};
    float sumw[detail::kIq1sPrefixSize] = {};
    float pair_sumqx[2 * detail::kIq1sPairStride], pair_sumq2[2 * detail::kIq1sPairStride];
    const detail::GroupSearches& searches = detail::group_searches();
    KeyIndex order[kBlockSize];
    uint16_t index[kBlockSize / 8];
    int8_t shifts[QK_K / kBlockSize];
    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        block_iq1_s b{};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        const float sigma2 = 2 * sum_squares_256(xbl) / QK_K;
        for (int ib = 0; ib < QK_K / kBlockSize; ++ib) {
            const float* xb = xbl + kBlockSize * ib;
            const float* qw = quant_weights + kBlockSize * ib + QK_K * ibl;
            for (int i = 0; i < kBlockSize; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            float max = std::fabs(xb[0]);
            for (int i = 1; i < kBlockSize; ++i) max = max_f(max, std::fabs(xb[i]));
            if (max < kGroupMaxEpsIq1s) {
                scales[ib] = 0;
                shifts[ib] = 1;
                continue;
            }
            // Exhaustive search over the two boundaries that split the sorted values into levels -1, 0, +1,
            // with prefix sums of weight * x and weight, for both signs of the delta.
            iq1_sort(xb, kBlockSize, order);
            sumx[0] = sumw[0] = 0;
            for (int j = 0; j < kBlockSize; ++j) {
                const int i = order[j].i;
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            searches.iq1s_sums(sumx, sumw, kIq1Plus, kIq1Minus, pair_sumqx, pair_sumq2);
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_shift = 0;
            const int chosen = searches.best_candidate(detail::kIq1sPairs, 2, detail::kIq1sPairStride, pair_sumqx,
                                                       pair_sumq2, &best_score, &scale);
            if (chosen >= 0) {
                boundary_pair(chosen / 2, kBlockSize, &besti1, &besti2);
                best_shift = chosen % 2 == 0 ? 1 : -1;
            }
            if (besti1 < 0 || besti2 < 0 || best_shift == 0) {
                scales[ib] = 0;
                shifts[ib] = 1;
                continue;
            }
            for (int j = 0; j < besti1; ++j) L[order[j].i] = 0;
            for (int j = besti1; j < besti2; ++j) L[order[j].i] = 1;
            for (int j = besti2; j < kBlockSize; ++j) L[order[j].i] = 2;
            if (scale < 0) {
                for (int j = 0; j < kBlockSize; ++j) L[j] = static_cast<int8_t>(2 - L[j]);
                scale = -scale;
                best_shift = -best_shift;
            }
            const float* xx = best_shift == 1 ? kIq1Plus : kIq1Minus;
            const float* const xx_of_group[4] = {xx, xx, xx, xx};
            if (!iq1_grid_indices(g, kBlockSize / 8, xb, weight, scale, xx_of_group, L, index)) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < kBlockSize / 8; ++k) {
                    const uint8_t* lv = &g.levels[static_cast<size_t>(index[k]) * 8];
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[lv[j]];
                        sumqx += w * q * xb[8 * k + j];
                        sumq2 += w * q * q;
                    }
                }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
            }
            uint16_t h = 0;
            for (int k = 0; k < kBlockSize / 8; ++k) {
                b.qs[(kBlockSize / 8) * ib + k] = static_cast<uint8_t>(index[k] & 255);
                h = static_cast<uint16_t>(h | ((index[k] >> 8) << (3 * k)));
            }
            b.qh[ib] = h;
            scales[ib] = scale;
            shifts[ib] = static_cast<int8_t>(best_shift);
            max_scale = max_f(max_scale, scale);
        }
        if (max_scale) {
            const float d = max_scale / 15;
            b.d = fp32_to_fp16(d * 1.125f);
            const float id = 1 / d;
            for (int ib = 0; ib < QK_K / kBlockSize; ++ib) {
                int l = scale_code(id, scales[ib], 7);
                if (shifts[ib] == -1) l |= 8;
                b.qh[ib] = static_cast<uint16_t>(b.qh[ib] | (l << 12));
            }
        }
        store_block(y, ibl, b);
    }
}

void iq1_m_row(const float* x, uint8_t* y, int64_t nbl, const float* quant_weights) {
    const IqGridMap& g = iq_grid_map(IqGridId::kIq1s);
    constexpr int kBlockSize = 16;
    // Delta sign bits of the two groups of a sub-block in its qh byte, by shift code (bit 0: second group
    // negative, bit 1: first group negative).
    constexpr uint8_t kMasks[4] = {0x00, 0x80, 0x08, 0x88};
    const float* xp = kIq1mPlus;
    const float* xm = kIq1mMinus;
    float scales[QK_K / kBlockSize];
    float weight[kBlockSize];
    int8_t L[kBlockSize];
    KeyIndex order[kBlockSize];
    uint16_t index[kBlockSize / 8];
    int8_t shifts[QK_K / kBlockSize];
    // The sums of each boundary pair and sign code (GroupSearches::iq1m_sums).
    float pair_sumqx[4 * detail::kIq1mPairStride], pair_sumq2[4 * detail::kIq1mPairStride];
    const detail::GroupSearches& searches = detail::group_searches();
    const auto set_weights = [&](const float* xb, const float* qw, float sigma2) {
        if (qw) {
            for (int i = 0; i < kBlockSize; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
        } else {
            for (int i = 0; i < kBlockSize; ++i) weight[i] = xb[i] * xb[i];
        }
    };
    // Code k: 0 = (+, +), 1 = (+, -), 2 = (-, +), 3 = (-, -) for the deltas of the first and second group.
    const auto group_values = [&](int code, int group) {
        if (group == 0) return code < 2 ? xp : xm;
        return code % 2 == 0 ? xp : xm;
    };
    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        block_iq1_m b{};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        const float sigma2 = 2 * sum_squares_256(xbl) / QK_K;
        for (int ib = 0; ib < QK_K / kBlockSize; ++ib) {
            const float* xb = xbl + kBlockSize * ib;
            set_weights(xb, quant_weights ? quant_weights + kBlockSize * ib + QK_K * ibl : nullptr, sigma2);
            float max = std::fabs(xb[0]);
            for (int i = 1; i < kBlockSize; ++i) max = max_f(max, std::fabs(xb[i]));
            if (max < kGroupMaxEpsIq1m) {
                scales[ib] = 0;
                shifts[ib] = 0;
                continue;
            }
            iq1_sort(xb, kBlockSize, order);
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_k = -1;
            int order_i[kBlockSize];
            for (int j = 0; j < kBlockSize; ++j) order_i[j] = order[j].i;
            searches.iq1m_sums(xb, weight, order_i, xp, xm, pair_sumqx, pair_sumq2);
            const int chosen = searches.best_candidate(detail::kIq1mPairs, 4, detail::kIq1mPairStride, pair_sumqx,
                                                       pair_sumq2, &best_score, &scale);
            if (chosen >= 0) {
                boundary_pair(chosen / 4, kBlockSize, &besti1, &besti2);
                best_k = chosen % 4;
            }
            if (besti1 < 0 || besti2 < 0 || best_k < 0) {
                scales[ib] = 0;
                shifts[ib] = 0;
                continue;
            }
            for (int j = 0; j < besti1; ++j) L[order[j].i] = 0;
            for (int j = besti1; j < besti2; ++j) L[order[j].i] = 1;
            for (int j = besti2; j < kBlockSize; ++j) L[order[j].i] = 2;
            if (scale < 0) {
                for (int j = 0; j < kBlockSize; ++j) L[j] = static_cast<int8_t>(2 - L[j]);
                scale = -scale;
                best_k = 3 - best_k;
            }
            const float* const xx_of_group[2] = {group_values(best_k, 0), group_values(best_k, 1)};
            if (!iq1_grid_indices(g, kBlockSize / 8, xb, weight, scale, xx_of_group, L, index)) {
                float sumqx_f = 0, sumq2_f = 0;
                for (int k = 0; k < kBlockSize / 8; ++k) {
                    const float* xx = xx_of_group[k];
                    const uint8_t* lv = &g.levels[static_cast<size_t>(index[k]) * 8];
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[lv[j]];
                        sumqx_f += w * q * xb[8 * k + j];
                        sumq2_f += w * q * q;
                    }
                }
                if (sumqx_f > 0 && sumq2_f > 0) scale = sumqx_f / sumq2_f;
            }
            b.qs[2 * ib + 0] = static_cast<uint8_t>(index[0] & 255);
            b.qs[2 * ib + 1] = static_cast<uint8_t>(index[1] & 255);
            b.qh[ib] = static_cast<uint8_t>((index[0] >> 8) | ((index[1] >> 8) << 4));
            scales[ib] = scale;
            shifts[ib] = static_cast<int8_t>(best_k);
            max_scale = max_f(max_scale, scale);
        }
        if (max_scale) {
            // The sub-block scales as 3-bit codes, then the super-block scale refitted to the coded values.
            uint16_t sc[4] = {};
            float d = max_scale / 15;
            const float id = 1 / d;
            float sumqx_f = 0, sumq2_f = 0;
            for (int ib = 0; ib < QK_K / kBlockSize; ++ib) {
                const int l = scale_code(id, scales[ib], 7);
                sc[ib / 4] = static_cast<uint16_t>(sc[ib / 4] | (l << (3 * (ib % 4))));
                b.qh[ib] = static_cast<uint8_t>(b.qh[ib] | kMasks[shifts[ib]]);
                const float* xb = xbl + kBlockSize * ib;
                set_weights(xb, quant_weights ? quant_weights + kBlockSize * ib + QK_K * ibl : nullptr, sigma2);
                for (int k = 0; k < kBlockSize / 8; ++k) {
                    const float* xx = group_values(shifts[ib], k);
                    const int entry = b.qs[2 * ib + k] + ((b.qh[ib] << (8 - 4 * k)) & 0x700);
                    const uint8_t* lv = &g.levels[static_cast<size_t>(entry) * 8];
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[lv[j]] * (2 * l + 1);
                        sumqx_f += w * q * xb[8 * k + j];
                        sumq2_f += w * q * q;
                    }
                }
            }
            if (sumq2_f > 0) d = sumqx_f / sumq2_f;
            const uint16_t s = fp32_to_fp16(d * 1.1125f);
            sc[0] = static_cast<uint16_t>(sc[0] | ((s & 0x000f) << 12));
            sc[1] = static_cast<uint16_t>(sc[1] | ((s & 0x00f0) << 8));
            sc[2] = static_cast<uint16_t>(sc[2] | ((s & 0x0f00) << 4));
            sc[3] = static_cast<uint16_t>(sc[3] | (s & 0xf000));
            std::memcpy(b.scales, sc, sizeof sc);
        }
        store_block(y, ibl, b);
    }
}

}  // namespace

void quantize_iq2_xxs(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix) {
    quantize_rows_with<block_iq2_xxs>(iq2_xxs_row, src, dst, nrows, n_per_row, imatrix);
}
void quantize_iq2_xs(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix) {
    quantize_rows_with<block_iq2_xs>(iq2_xs_row, src, dst, nrows, n_per_row, imatrix);
}
void quantize_iq2_s(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix) {
    quantize_rows_with<block_iq2_s>(iq2_s_row, src, dst, nrows, n_per_row, imatrix);
}
void quantize_iq3_xxs(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix) {
    quantize_rows_with<block_iq3_xxs>(iq3_xxs_row, src, dst, nrows, n_per_row, imatrix);
}
void quantize_iq3_s(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix) {
    quantize_rows_with<block_iq3_s>(iq3_s_row, src, dst, nrows, n_per_row, imatrix);
}
void quantize_iq1_s(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix) {
    quantize_rows_with<block_iq1_s>(iq1_s_row, src, dst, nrows, n_per_row, imatrix);
}
void quantize_iq1_m(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix) {
    quantize_rows_with<block_iq1_m>(iq1_m_row, src, dst, nrows, n_per_row, imatrix);
}

}  // namespace ws
