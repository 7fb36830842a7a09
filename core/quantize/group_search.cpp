// SPDX-License-Identifier: MIT
#include "quantize/group_search.h"

#include <cfloat>
#include <cstddef>

#include "decode/dequant_internal.h"
#include "decode/iquant_tables.h"
#include "quantize/quantize_internal.h"

namespace ws {
namespace detail {
namespace {

void qkx2_scalar(int groups, int n, int nmax, const float* x, const float* w, uint8_t* L, float* scales, float* mins,
                 float rmin, float rdelta, int nstep, bool use_mad) {
    uint8_t Laux[32];
    for (int g = 0; g < groups; ++g) {
        scales[g] =
            make_qkx2_quants(n, nmax, x + g * n, w + g * n, L + g * n, &mins[g], Laux, rmin, rdelta, nstep, use_mad);
    }
}

void qx_scalar(int groups, int n, int nmax, const float* x, int8_t* L, const float* qw, float* scales) {
    for (int g = 0; g < groups; ++g)
        scales[g] = make_qx_quants(n, nmax, x + g * n, L + g * n, qw ? qw + g * n : nullptr);
}

void iq4_scales_scalar(int groups, const float* x, const float* w, float* scales) {
    for (int g = 0; g < groups; ++g) scales[g] = iq4_block_scale(x + 32 * g, w + 32 * g);
}

void iq4_indices_scalar(int groups, const float* x, const float* ids, uint8_t* L) {
    for (int j = 0; j < 32 * groups; ++j) {
        L[j] = static_cast<uint8_t>(best_index_int8(16, kvalues_iq4nl, ids[j / 32] * x[j]));
    }
}

void q3_scalar(int groups, int n, int nmax, const float* x, int8_t* L, float* scales) {
    for (int g = 0; g < groups; ++g) scales[g] = make_q3_quants(n, nmax, x + g * n, L + g * n);
}

template <int kDims>
int grid_neighbour_dims(const float* levels, const uint16_t* list, const float* xval, const float* weight, float scale,
                        const float* xg) {
    const int num_neighbors = list[0];
    float best_d2 = FLT_MAX;
    int grid_index = -1;
    for (int j = 1; j <= num_neighbors; ++j) {
        const float* lv = levels + static_cast<size_t>(list[j]) * kDims;
        float d2 = 0;
        for (int i = 0; i < kDims; ++i) {
            const float q = xg ? xg[static_cast<int>(lv[i])] : 2 * lv[i] + 1;
            const float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            grid_index = list[j];
        }
    }
    // Every distance NaN or huge: ggml asserts (iq1_find_best_neighbour2 first scans the whole grid reading
    // xval out of bounds); only NaN or overflowing input gets here.
    return grid_index < 0 ? list[1] : grid_index;
}

int grid_neighbour_scalar(int dims, const float* levels, const uint16_t* list, const float* xval, const float* weight,
                          float scale, const float* xg) {
    if (dims == 4) return grid_neighbour_dims<4>(levels, list, xval, weight, scale, xg);
    return grid_neighbour_dims<8>(levels, list, xval, weight, scale, xg);
}

void iq1m_sums_scalar(const float* xb, const float* weight, const int* order, const float* xp, const float* xm,
                      float* sumqx_out, float* sumq2_out) {
    constexpr int kBlockSize = 16;
    int p = 0;
    for (int i1 = 0; i1 <= kBlockSize; ++i1) {
        for (int i2 = i1; i2 <= kBlockSize; ++i2, ++p) {
            float sumqx[4] = {}, sumq2[4] = {};
            // Level 0 for sorted positions [0, i1), 1 for [i1, i2), 2 for [i2, n). ggml accumulates the four codes
            // in this order of statements, which is also the order of additions.
            for (int j = 0; j < kBlockSize; ++j) {
                const int lvl = j < i1 ? 0 : j < i2 ? 1 : 2;
                const int i = order[j];
                const float wp = weight[i] * xp[lvl];
                const float wm = weight[i] * xm[lvl];
                if (i < kBlockSize / 2) {
                    sumqx[0] += wp * xb[i];
                    sumqx[1] += wp * xb[i];
                    sumqx[2] += wm * xb[i];
                    sumqx[3] += wm * xb[i];
                    sumq2[0] += wp * xp[lvl];
                    sumq2[1] += wp * xp[lvl];
                    sumq2[2] += wm * xm[lvl];
                    sumq2[3] += wm * xm[lvl];
                } else {
                    sumqx[0] += wp * xb[i];
                    sumqx[2] += wp * xb[i];
                    sumqx[1] += wm * xb[i];
                    sumqx[3] += wm * xb[i];
                    sumq2[0] += wp * xp[lvl];
                    sumq2[2] += wp * xp[lvl];
                    sumq2[1] += wm * xm[lvl];
                    sumq2[3] += wm * xm[lvl];
                }
            }
            for (int k = 0; k < 4; ++k) {
                sumqx_out[k * kIq1mPairStride + p] = sumqx[k];
                sumq2_out[k * kIq1mPairStride + p] = sumq2[k];
            }
        }
    }
}

void iq1s_sums_scalar(const float* sumx, const float* sumw, const float* xp, const float* xm, float* sumqx_out,
                      float* sumq2_out) {
    constexpr int kBlockSize = 32;
    int p = 0;
    for (int i1 = 0; i1 <= kBlockSize; ++i1) {
        for (int i2 = i1; i2 <= kBlockSize; ++i2, ++p) {
            for (int k = 0; k < 2; ++k) {
                const float* xx = k == 0 ? xp : xm;
                sumqx_out[k * kIq1sPairStride + p] = (sumx[i1] - sumx[0]) * xx[0] + (sumx[i2] - sumx[i1]) * xx[1] +
                                                     (sumx[kBlockSize] - sumx[i2]) * xx[2];
                sumq2_out[k * kIq1sPairStride + p] = (sumw[i1] - sumw[0]) * xx[0] * xx[0] +
                                                     (sumw[i2] - sumw[i1]) * xx[1] * xx[1] +
                                                     (sumw[kBlockSize] - sumw[i2]) * xx[2] * xx[2];
            }
        }
    }
}

int best_candidate_scalar(int pairs, int nk, int stride, const float* sumqx, const float* sumq2, float* best,
                          float* scale) {
    int chosen = -1;
    for (int p = 0; p < pairs; ++p) {
        for (int k = 0; k < nk; ++k) {
            const float qx = sumqx[k * stride + p], q2 = sumq2[k * stride + p];
            if (q2 > 0 && qx * qx > *best * q2) {
                *scale = qx / q2;
                *best = *scale * qx;
                chosen = p * nk + k;
            }
        }
    }
    return chosen;
}

const GroupSearches kScalarGroupSearches = {
    qkx2_scalar,          qx_scalar,        q3_scalar,        iq4_scales_scalar,
    iq4_indices_scalar,   iq1m_sums_scalar, iq1s_sums_scalar, best_candidate_scalar,
    grid_neighbour_scalar};

const GroupSearches& choose() {
#if defined(__wasm_simd128__)
    return kSimd128GroupSearches;
#else
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
    if (x86_features().avx512dq_vl) return kAvx512GroupSearches;
    if (x86_features().avx2_f16c) return kAvx2GroupSearches;
#endif
    return kScalarGroupSearches;
#endif
}

}  // namespace

const GroupSearches& group_searches() {
    static const GroupSearches& chosen = choose();
    return chosen;
}

const GroupSearches& scalar_group_searches() {
    return kScalarGroupSearches;
}

}  // namespace detail
}  // namespace ws
