// SPDX-License-Identifier: MIT
// The quantizers' per-group scale searches over many groups at once: what quantize_kquants.cpp calls instead of
// make_qkx2_quants / make_qx_quants group by group, and quantize_misc.cpp instead of IQ4_NL/IQ4_XS's search and
// nearest-value lookups block by block. Each entry gives, for every group, exactly the bytes and
// floats of the scalar search (quantize_internal.h), which stays the oracle and the fallback; the SIMD builds
// run one group per lane (group_lanes.h).
#pragma once

#include <cstdint>

namespace ws {
namespace detail {

// IQ1_M's boundary pairs (i1, i2), 0 <= i1 <= i2 <= 16, in the order of its search (i1, then i2, ascending): 153
// of them, laid out with a stride of 160 (a multiple of every lane count).
constexpr int kIq1mPairs = 153;
constexpr int kIq1mPairStride = 160;
// IQ1_S's boundary pairs, 0 <= i1 <= i2 <= 32 in the same order: 561, stored with a stride of 576 (a whole vector
// of slack after the last); the prefix sums they read are padded to kIq1sPrefixSize floats.
constexpr int kIq1sPairs = 561;
constexpr int kIq1sPairStride = 576;
constexpr int kIq1sPrefixSize = 48;

struct GroupSearches {
    // make_qkx2_quants on `groups` consecutive groups of n values: group g is x[g n .. g n + n) with weights
    // w[g n ...], and gets its quants in L[g n ...], its scale in scales[g] and its negated min in mins[g].
    // n <= 32, any groups >= 0.
    void (*qkx2)(int groups, int n, int nmax, const float* x, const float* w, uint8_t* L, float* scales, float* mins,
                 float rmin, float rdelta, int nstep, bool use_mad);
    // make_qx_quants on `groups` consecutive groups of n values (weights qw[g n ...], or x^2 when qw is nullptr):
    // quants in L[g n ...], scale in scales[g]. n <= 32, any groups >= 0.
    void (*qx)(int groups, int n, int nmax, const float* x, int8_t* L, const float* qw, float* scales);
    // make_q3_quants (quantize_kquants.cpp) on `groups` consecutive groups of n values: quants in L[g n ...],
    // scale in scales[g]. n <= 32, any groups >= 0.
    void (*q3)(int groups, int n, int nmax, const float* x, int8_t* L, float* scales);
    // iq4_block_scale (quantize_internal.h) on `groups` consecutive 32-value blocks: block g is x[32 g ..
    // 32 g + 32) with weights w[32 g ...], its scale goes to scales[g]. Any groups >= 0.
    void (*iq4_scales)(int groups, const float* x, const float* w, float* scales);
    // best_index_int8(16, kvalues_iq4nl, ids[g] * x[j]) into L[j] for the 32 values j of each of `groups`
    // consecutive blocks (block g: j in [32 g, 32 g + 32)). Any groups >= 0.
    void (*iq4_indices)(int groups, const float* x, const float* ids, uint8_t* L);
    // ggml's iq2_find_best_neighbour / iq3_find_best_neighbour (xg nullptr: a level's value is 2 * level + 1) and
    // iq1_find_best_neighbour2 (dims 8, a level's value is xg[level], levels 0..2): the entry of `list` (a count
    // n >= 1, then n entry indices) of least distance sum_i weight[i] * (scale * value_i - xval[i])^2, summed
    // i = 0 .. dims - 1, the first of equal distances in list order, NaN distances never taken, list[1] when
    // every distance is NaN or at least FLT_MAX. levels[e dims + i] is entry e's level i as a float
    // (IqGridMap::level_floats). dims 4 or 8.
    // The sums of IQ1_M's search over its boundary pairs (quantize_iquants.cpp iq1_m_row) for one 16-value
    // sub-block xb with weights, order[j] the index of its j-th smallest value, level values xp (delta +) and xm
    // (delta -): for pair p and sign code k (0: +, +; 1: +, -; 2: -, +; 3: -, - for the first and second group of
    // 8), sumqx[k kIq1mPairStride + p] and sumq2[k kIq1mPairStride + p], accumulated j = 0 .. 15 as ggml does.
    void (*iq1m_sums)(const float* xb, const float* weight, const int* order, const float* xp, const float* xm,
                      float* sumqx, float* sumq2);
    // The sums of IQ1_S's search (quantize_iquants.cpp iq1_s_row) from the prefix sums sumx and sumw of a sorted
    // 32-value sub-block (33 sums, read up to kIq1sPrefixSize: pad them): for pair p (i1, i2), with level values
    // xp (k = 0) and xm (k = 1), sumqx[k kIq1sPairStride + p] and sumq2[k kIq1sPairStride + p] as ggml spells
    // them. Entries from kIq1sPairs on are scratch.
    void (*iq1s_sums)(const float* sumx, const float* sumw, const float* xp, const float* xm, float* sumqx,
                      float* sumq2);
    // ggml's choice among the IQ1 searches' candidates c = p nk + k (pair p < pairs, sign code k < nk), in that
    // order, with sums sumqx[k stride + p] and sumq2[k stride + p]: a candidate with sumq2 > 0 and
    // sumqx * sumqx > *best * sumq2 becomes the choice, with *scale = sumqx / sumq2 and *best = *scale * sumqx.
    // Returns the last choice, or -1 (then *best and *scale are unchanged). Reads the sums up to pairs rounded up
    // to 16 (kIq1mPairStride, kIq1sPairStride leave that room).
    int (*best_candidate)(int pairs, int nk, int stride, const float* sumqx, const float* sumq2, float* best,
                          float* scale);
    int (*grid_neighbour)(int dims, const float* levels, const uint16_t* list, const float* xval, const float* weight,
                          float scale, const float* xg);
};

// The fastest searches this CPU runs (on x86 AVX-512 at 16 lanes, else AVX2 at 8, when it has them; SIMD128 in
// the wasm build; else the scalar ones), chosen once.
const GroupSearches& group_searches();

// The scalar searches, group after group (the oracle tests compare the others with).
const GroupSearches& scalar_group_searches();

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
extern const GroupSearches kAvx2GroupSearches;    // arch/x86/group_search_avx2.cpp, AVX2 + F16C CPUs only
extern const GroupSearches kAvx512GroupSearches;  // arch/x86/group_search_avx512.cpp, AVX-512 F/DQ/VL CPUs only
#endif
#if defined(__wasm_simd128__)
extern const GroupSearches kSimd128GroupSearches;  // arch/wasm/group_search_simd128.cpp
#endif

}  // namespace detail
}  // namespace ws
