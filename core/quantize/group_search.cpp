// SPDX-License-Identifier: MIT
#include "quantize/group_search.h"

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

const GroupSearches kScalarGroupSearches = {qkx2_scalar, qx_scalar, q3_scalar, iq4_scales_scalar, iq4_indices_scalar};

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
