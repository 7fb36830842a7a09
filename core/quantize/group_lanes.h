// SPDX-License-Identifier: MIT
// The quantizers' scale searches (the k-quants', IQ4_NL/IQ4_XS's) run one group per SIMD lane, W groups at once,
// written once over GCC/clang vector extensions and compiled for each target by the files that include it (arch/x86:
// AVX2 at 8 lanes, AVX-512 at 16; arch/wasm: SIMD128 at 8, a pair of registers per vector). Everything here has
// internal linkage, so no inline function compiled for AVX2 or AVX-512 can be picked by the linker for baseline
// code.
//
// Why the bytes are ggml's: every lane performs its group's scalar operations (quantize_internal.h) on the same
// operands in the same order — sums accumulated i = 0, 1, ... per lane, products and quotients as the source
// spells them, no FMA (-ffp-contract=off, and the targets have none). A branch becomes a lane mask and a select
// of what each side leaves; the not-taken side's values are computed and discarded (a division by zero or a
// NaN there is harmless, SIMD floats do not trap). nearest_int is the same bit trick on each lane. So NaN, Inf
// and subnormal inputs give the scalar bytes too, without a fallback.
#pragma once

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <utility>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "decode/iquant_tables.h"
#include "quantize/group_search.h"
#include "quantize/quantize_internal.h"  // kGroupMaxEps only: its inline functions are not called here

namespace ws {
namespace detail {
namespace {

// W float32 and int32 lanes (spelled out per width: gcc ignores vector_size on a typedef that depends on W).
template <int W>
struct LaneTypes;
template <>
struct LaneTypes<8> {
    typedef float F __attribute__((vector_size(32)));
    typedef int32_t I __attribute__((vector_size(32)));
};
template <>
struct LaneTypes<16> {
    typedef float F __attribute__((vector_size(64)));
    typedef int32_t I __attribute__((vector_size(64)));
};

// The midpoints of kvalues_iq4nl's 15 neighbouring pairs. best_index_int8 picks between the values lo <= x < hi
// around x by comparing x - lo < hi - x in float. Near each midpoint both differences are exact (|x| >= 4.5 there
// and the half-gaps are at most 12, so x's ulp divides them and they fit 24 bits), so there the comparison is the
// exact one, x < (lo + hi) / 2; and it is monotone in x (rounding is). Hence best_index_int8(x) is the number of
// midpoints m with !(x < m): x <= -127 counts none, x >= 113 all 15, and NaN all 15, the last index, as ggml's
// binary search ends for NaN. (quantize_simd_test checks every float within 2^18 ulps of each midpoint.)
constexpr float kIq4Mid[15] = {
    (kvalues_iq4nl[0] + kvalues_iq4nl[1]) / 2.f,   (kvalues_iq4nl[1] + kvalues_iq4nl[2]) / 2.f,
    (kvalues_iq4nl[2] + kvalues_iq4nl[3]) / 2.f,   (kvalues_iq4nl[3] + kvalues_iq4nl[4]) / 2.f,
    (kvalues_iq4nl[4] + kvalues_iq4nl[5]) / 2.f,   (kvalues_iq4nl[5] + kvalues_iq4nl[6]) / 2.f,
    (kvalues_iq4nl[6] + kvalues_iq4nl[7]) / 2.f,   (kvalues_iq4nl[7] + kvalues_iq4nl[8]) / 2.f,
    (kvalues_iq4nl[8] + kvalues_iq4nl[9]) / 2.f,   (kvalues_iq4nl[9] + kvalues_iq4nl[10]) / 2.f,
    (kvalues_iq4nl[10] + kvalues_iq4nl[11]) / 2.f, (kvalues_iq4nl[11] + kvalues_iq4nl[12]) / 2.f,
    (kvalues_iq4nl[12] + kvalues_iq4nl[13]) / 2.f, (kvalues_iq4nl[13] + kvalues_iq4nl[14]) / 2.f,
    (kvalues_iq4nl[14] + kvalues_iq4nl[15]) / 2.f,
};

template <int W>
struct Lanes {
    using F = typename LaneTypes<W>::F;
    using I = typename LaneTypes<W>::I;

    static F splat(float v) { return splat_of<F>(v, std::make_index_sequence<W>()); }
    static I splat_i(int32_t v) { return splat_of<I>(v, std::make_index_sequence<W>()); }
    // A vector of W copies, as a literal: clang's wasm backend builds a lane-by-lane loop through memory for
    // `r[l] = v` (a store-forwarding stall per lane, slower than the scalar code) but a splat for this.
    template <typename V, typename T, size_t... lane>
    static V splat_of(T v, std::index_sequence<lane...>) {
        return V{(static_cast<void>(lane), v)...};
    }
    // m is a lane mask (all ones or zeros, as comparisons give): a where set, b elsewhere.
    static F select(I m, F a, F b) {
        return reinterpret_cast<F>((reinterpret_cast<I>(a) & m) | (reinterpret_cast<I>(b) & ~m));
    }
    static I select_i(I m, I a, I b) { return (a & m) | (b & ~m); }
    static F fabs(F v) { return reinterpret_cast<F>(reinterpret_cast<I>(v) & splat_i(0x7fffffff)); }
    static F to_float(I v) { return __builtin_convertvector(v, F); }
    // std::max(lo, std::min(hi, v)) per lane (vector ?: becomes the targets' integer min and max).
    static I clamp(I v, int32_t lo, int32_t hi) {
        const I l = splat_i(lo), h = splat_i(hi);
        v = v < l ? l : v;
        return v > h ? h : v;
    }
    // ggml's nearest_int, lane by lane (quantize_internal.h).
    static I nearest_int(F v) {
        const F t = v + splat(12582912.f);
        return (reinterpret_cast<I>(t) & splat_i(0x007fffff)) - splat_i(0x00400000);
    }
    static bool any(I m) {
        for (int l = 0; l < W; ++l) {
            if (m[l]) return true;
        }
        return false;
    }

    // Lane l of out[i] = src[l * n + i] for i < n: W groups of n values, one group per lane.
    static void transpose_in(const float* src, int n, F* out) {
        for (int i = 0; i < n; ++i) out[i] = gather(src + i, n, std::make_index_sequence<W>());
    }
    template <size_t... lane>
    static F gather(const float* p, int stride, std::index_sequence<lane...>) {
        return F{p[static_cast<int>(lane) * stride]...};
    }
    // The largest |X[i]| of each lane, with in *max the X[i] it came from (the first of equals), as make_qx_quants,
    // make_q3_quants and the IQ4 scale search find it.
    static F signed_absmax(const F* X, int n, F* max) {
        F amax = splat(0.f);
        *max = amax;
        for (int i = 0; i < n; ++i) {
            const F ax = fabs(X[i]);
            const I larger = ax > amax;
            amax = select(larger, ax, amax);
            *max = select(larger, X[i], *max);
        }
        return amax;
    }

    // make_qkx2_quants for the W groups of n values at x (weights w), one per lane; L gets W groups of n quants.
    static void qkx2(int n, int nmax, const float* x, const float* w, uint8_t* L, float* scales, float* mins,
                     float rmin, float rdelta, int nstep, bool use_mad) {
        F X[32] = {}, Wt[32] = {};
        I Lb[32], La[32];
        transpose_in(x, n, X);
        transpose_in(w, n, Wt);
        F min = X[0], max = X[0];
        F sum_w = Wt[0];
        F sum_x = sum_w * X[0];
        for (int i = 1; i < n; ++i) {
            min = select(X[i] < min, X[i], min);
            max = select(X[i] > max, X[i], max);
            sum_w += Wt[i];
            sum_x += Wt[i] * X[i];
        }
        const F zero = splat(0.f);
        min = select(min > zero, zero, min);
        const I flat = max == min;  // these lanes return L = 0, scale 0, the_min -min
        const F flat_min = -min;
        const F fnmax = splat(static_cast<float>(nmax));
        F iscale = fnmax / (max - min);
        F scale = splat(1.f) / iscale;
        F best_error = zero;
        for (int i = 0; i < n; ++i) {
            Lb[i] = clamp(nearest_int(iscale * (X[i] - min)), 0, nmax);
            F diff = scale * to_float(Lb[i]) + min - X[i];
            diff = use_mad ? fabs(diff) : diff * diff;
            best_error += Wt[i] * diff;
        }
        for (int is = 0; is <= nstep; ++is) {
            iscale = splat(rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
            F sum_l = zero, sum_l2 = zero, sum_xl = zero;
            for (int i = 0; i < n; ++i) {
                La[i] = clamp(nearest_int(iscale * (X[i] - min)), 0, nmax);
                const F fl = to_float(La[i]);
                sum_l += Wt[i] * fl;
                sum_l2 += Wt[i] * fl * fl;
                sum_xl += Wt[i] * fl * X[i];
            }
            const F D = sum_w * sum_l2 - sum_l * sum_l;
            const I positive = D > zero;
            if (!any(positive)) continue;
            F this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            F this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            const I min_positive = this_min > zero;
            this_min = select(min_positive, zero, this_min);
            this_scale = select(min_positive, sum_xl / sum_l2, this_scale);
            F cur_error = zero;
            for (int i = 0; i < n; ++i) {
                F diff = this_scale * to_float(La[i]) + this_min - X[i];
                diff = use_mad ? fabs(diff) : diff * diff;
                cur_error += Wt[i] * diff;
            }
            const I better = positive & (cur_error < best_error);
            if (!any(better)) continue;
            for (int i = 0; i < n; ++i) Lb[i] = select_i(better, La[i], Lb[i]);
            best_error = select(better, cur_error, best_error);
            scale = select(better, this_scale, scale);
            min = select(better, this_min, min);
        }
        const F the_min = select(flat, flat_min, -min);
        scale = select(flat, zero, scale);
        for (int l = 0; l < W; ++l) {
            scales[l] = scale[l];
            mins[l] = the_min[l];
            for (int i = 0; i < n; ++i) L[l * n + i] = static_cast<uint8_t>(flat[l] ? 0 : Lb[i][l]);
        }
    }

    // make_q3_quants for the W groups of n values at x, one per lane. Its coordinate descent stops when a pass
    // changes nothing: a lane whose pass changed nothing would change nothing again (same state, same pass), so
    // the lanes run until none changes, and each stops where the scalar search stops.
    static void q3(int n, int nmax, const float* x, int8_t* L, float* scales) {
        F X[32] = {}, Wt[32] = {};
        I Lq[32];
        transpose_in(x, n, X);
        for (int i = 0; i < n; ++i) Wt[i] = X[i] * X[i];
        const F zero = splat(0.f);
        F max;
        const I flat = signed_absmax(X, n, &max) < splat(kGroupMaxEps);  // these lanes return L = 0, scale 0
        const F iscale = splat(static_cast<float>(-nmax)) / max;
        F sumlx = zero, suml2 = zero;
        for (int i = 0; i < n; ++i) {
            Lq[i] = clamp(nearest_int(iscale * X[i]), -nmax, nmax - 1);
            const F fl = to_float(Lq[i]);
            sumlx += Wt[i] * X[i] * fl;
            suml2 += Wt[i] * fl * fl;
        }
        for (int itry = 0; itry < 5; ++itry) {
            I changed = splat_i(0);
            for (int i = 0; i < n; ++i) {
                const F li = to_float(Lq[i]);
                const F slx_without = sumlx - Wt[i] * X[i] * li;
                const F sl2_without = suml2 - Wt[i] * li * li;
                const I new_l = clamp(nearest_int(X[i] * sl2_without / slx_without), -nmax, nmax - 1);
                const F fl = to_float(new_l);
                const F slx = slx_without + Wt[i] * X[i] * fl;
                const F sl2 = sl2_without + Wt[i] * fl * fl;
                const I take =
                    (slx_without > zero) & (new_l != Lq[i]) & (sl2 > zero) & (slx * slx * suml2 > sumlx * sumlx * sl2);
                Lq[i] = select_i(take, new_l, Lq[i]);
                sumlx = select(take, slx, sumlx);
                suml2 = select(take, sl2, suml2);
                changed |= take;
            }
            if (!any(changed)) break;
        }
        const F scale = select((suml2 > zero) & ~flat, sumlx / suml2, zero);
        for (int l = 0; l < W; ++l) {
            scales[l] = scale[l];
            for (int i = 0; i < n; ++i) L[l * n + i] = static_cast<int8_t>(flat[l] ? 0 : Lq[i][l] + nmax);
        }
    }

    // make_qx_quants for the W groups of n values at x (weights qw, or x^2 when qw is nullptr), one per lane.
    static void qx(int n, int nmax, const float* x, int8_t* L, const float* qw, float* scales) {
        F X[32] = {}, Wt[32] = {};
        I Lb[32], La[32];
        transpose_in(x, n, X);
        if (qw) {
            transpose_in(qw, n, Wt);
        } else {
            for (int i = 0; i < n; ++i) Wt[i] = X[i] * X[i];
        }
        const F zero = splat(0.f);
        F max;
        const I flat = signed_absmax(X, n, &max) < splat(kGroupMaxEps);  // these lanes return L = 0, scale 0
        F iscale = splat(static_cast<float>(-nmax)) / max;
        F sumlx = zero, suml2 = zero;
        for (int i = 0; i < n; ++i) {
            Lb[i] = clamp(nearest_int(iscale * X[i]), -nmax, nmax - 1);
            const F fl = to_float(Lb[i]);
            sumlx += Wt[i] * X[i] * fl;
            suml2 += Wt[i] * fl * fl;
        }
        F scale = select(suml2 != zero, sumlx / suml2, zero);
        F best = scale * sumlx;
        for (int is = -9; is <= 9; ++is) {
            if (is == 0) continue;
            iscale = splat(-(static_cast<float>(nmax) + 0.1f * static_cast<float>(is))) / max;
            sumlx = suml2 = zero;
            for (int i = 0; i < n; ++i) {
                La[i] = clamp(nearest_int(iscale * X[i]), -nmax, nmax - 1);
                const F fl = to_float(La[i]);
                sumlx += Wt[i] * X[i] * fl;
                suml2 += Wt[i] * fl * fl;
            }
            const I better = (suml2 > zero) & (sumlx * sumlx > best * suml2);
            if (!any(better)) continue;
            for (int i = 0; i < n; ++i) Lb[i] = select_i(better, La[i], Lb[i]);
            scale = select(better, sumlx / suml2, scale);
            best = select(better, scale * sumlx, best);
        }
        scale = select(flat, zero, scale);
        for (int l = 0; l < W; ++l) {
            scales[l] = scale[l];
            for (int i = 0; i < n; ++i) L[l * n + i] = static_cast<int8_t>(flat[l] ? 0 : Lb[i][l] + nmax);
        }
    }

    // kIq4Mid and kvalues_iq4nl splatted, built once per call of the searches below: built in the loops they are
    // lane inserts gcc does not hoist. With AVX2 also the tables of the binary search (iq4_lookup8).
    struct Iq4Table {
        F mid[15];
        F value[16];
        F mid_odd4, mid_even, value_lo, value_hi;  // mid[1, 5, 9, 13], mid[0, 2, .. 14], value[0 .. 7], value[8 .. 15]
    };
    static Iq4Table iq4_table() {
        Iq4Table t = {};
        for (int k = 0; k < 15; ++k) t.mid[k] = splat(kIq4Mid[k]);
        for (int k = 0; k < 16; ++k) t.value[k] = splat(kvalues_iq4nl[k]);
        for (int l = 0; l < W && l < 8; ++l) {
            t.mid_odd4[l] = l < 4 ? kIq4Mid[4 * l + 1] : 0.f;
            t.mid_even[l] = kIq4Mid[2 * l];
            t.value_lo[l] = kvalues_iq4nl[l];
            t.value_hi[l] = kvalues_iq4nl[l + 8];
        }
        return t;
    }
#if defined(__AVX2__)
    static F permute8(F table, I index) {
        return reinterpret_cast<F>(
            _mm256_permutevar8x32_ps(reinterpret_cast<__m256>(table), reinterpret_cast<__m256i>(index)));
    }
    // The count of iq4_index by a branch-free binary search: four comparisons instead of fifteen, each level's
    // midpoint looked up per lane (vpermps, which reads an index's low 3 bits). A comparison is !(x < m) as in
    // the count, so NaN takes the upper half every time. Returns the index and its value in *q.
    static I iq4_lookup8(const Iq4Table& t, F x, F* q) {
        static_assert(W == 8, "one AVX2 register");
        const I upper = ~(x < t.mid[7]);  // index >= 8
        I n = upper & splat_i(8);
        n |= ~(x < select(upper, t.mid[11], t.mid[3])) & splat_i(4);
        n |= ~(x < permute8(t.mid_odd4, n >> 2)) & splat_i(2);
        n |= ~(x < permute8(t.mid_even, n >> 1)) & splat_i(1);
        *q = select(upper, permute8(t.value_hi, n), permute8(t.value_lo, n));
        return n;
    }
#endif
    // best_index_int8(16, kvalues_iq4nl, x), lane by lane (kIq4Mid says why).
    static I iq4_index(const Iq4Table& t, F x) {
#if defined(__AVX2__)
        if constexpr (W == 8) {
            F q;
            return iq4_lookup8(t, x, &q);
        }
#endif
        I n = splat_i(15);
        for (int k = 0; k < 15; ++k) n += x < t.mid[k];  // a true comparison is -1
        return n;
    }
    // kvalues_iq4nl[best_index_int8(16, kvalues_iq4nl, x)] as a float, lane by lane.
    static F iq4_value(const Iq4Table& t, F x) {
#if defined(__AVX2__)
        if constexpr (W == 8) {
            F q;
            iq4_lookup8(t, x, &q);
            return q;
        }
#endif
        F q = t.value[0];
        for (int k = 0; k < 15; ++k) q = select(x < t.mid[k], q, t.value[k + 1]);
        return q;
    }

    // iq4_block_scale (quantize_misc.cpp) for the W blocks of 32 values at x (weights w), one per lane.
    static void iq4_scale(const float* x, const float* w, float* scales) {
        constexpr int ntry = 7;
        const Iq4Table t = iq4_table();
        F X[32], Wt[32];
        transpose_in(x, 32, X);
        transpose_in(w, 32, Wt);
        const F zero = splat(0.f);
        F max;
        const I flat = signed_absmax(X, 32, &max) < splat(kGroupMaxEps);  // these lanes return 0
        F d = -max / splat(static_cast<float>(kvalues_iq4nl[0]));
        F id = splat(1.f) / d;
        F sumqx = zero, sumq2 = zero;
        for (int j = 0; j < 32; ++j) {
            const F q = iq4_value(t, id * X[j]);
            sumqx += Wt[j] * q * X[j];
            sumq2 += Wt[j] * q * q;
        }
        d = select(sumq2 > zero, sumqx / sumq2, zero);
        F best = d * sumqx;
        for (int itry = -ntry; itry <= ntry; ++itry) {
            id = splat(static_cast<float>(itry + kvalues_iq4nl[0])) / max;
            sumqx = sumq2 = zero;
            for (int j = 0; j < 32; ++j) {
                const F q = iq4_value(t, id * X[j]);
                sumqx += Wt[j] * q * X[j];
                sumq2 += Wt[j] * q * q;
            }
            const I better = (sumq2 > zero) & (sumqx * sumqx > best * sumq2);
            d = select(better, sumqx / sumq2, d);
            best = select(better, d * sumqx, best);
        }
        d = select(flat, zero, d);
        for (int l = 0; l < W; ++l) scales[l] = d[l];
    }
};

// Lane l of the result = lane l ^ d of v: swaps the neighbouring blocks of d lanes (8 lanes; d 1, 2 or 4).
template <typename V>
V swap_halves(V v, int d) {
    return d == 4   ? __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3)
           : d == 2 ? __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5)
                    : __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
}

// The neighbour search of the i-quant grids (GroupSearches::grid_neighbour), eight neighbours at a time, one per
// lane: lane l takes list positions l + 1, l + 9, ... and keeps the first of its strict minima, as the scalar loop
// does over the whole list; then the least of the lanes' minima, at its first position, is the scalar loop's
// choice (NaN is never taken, nothing taken gives list[1]). A neighbour's terms weight[i] * diff * diff are
// computed element-wise on its row of levels (loaded whole: gathers are slow on some x86 CPUs and absent in
// wasm), then transposed so that each lane sums its neighbour's terms i = 0, 1, ... as the scalar loop does.
// kIq1: a level's value is xg[level], else 2 * level + 1.
template <int kDims, bool kIq1>
int grid_neighbour_lanes(const float* levels, const uint16_t* list, const float* xval, const float* weight, float scale,
                         const float* xg) {
    using L = Lanes<8>;
    using F = L::F;
    using I = L::I;
    typedef float H __attribute__((vector_size(16)));
    const int n = list[0];
    // Each vector holds 8 / kDims rows' elements, so xval and weight repeat.
    F X, Wt;
    if constexpr (kDims == 8) {
        std::memcpy(&X, xval, sizeof X);
        std::memcpy(&Wt, weight, sizeof Wt);
    } else {
        H x, w;
        std::memcpy(&x, xval, sizeof x);
        std::memcpy(&w, weight, sizeof w);
        X = __builtin_shufflevector(x, x, 0, 1, 2, 3, 0, 1, 2, 3);
        Wt = __builtin_shufflevector(w, w, 0, 1, 2, 3, 0, 1, 2, 3);
    }
    const F s = L::splat(scale);
    const F zero = L::splat(0.f), one = L::splat(1.f), two = L::splat(2.f);
    const F xg0 = L::splat(kIq1 ? xg[0] : 0.f), xg1 = L::splat(kIq1 ? xg[1] : 0.f), xg2 = L::splat(kIq1 ? xg[2] : 0.f);
    const I last = L::splat_i(n);
    I pos = I{1, 2, 3, 4, 5, 6, 7, 8};
    F best = L::splat(FLT_MAX);
    I best_pos = L::splat_i(0);
    for (int p = 1; p <= n; p += 8, pos += L::splat_i(8)) {
        const I valid = pos <= last;
        const float* row[8];
        for (int l = 0; l < 8; ++l) row[l] = levels + static_cast<size_t>(list[p + l <= n ? p + l : 1]) * kDims;
        // t[k]: the terms of the rows it holds (kDims 8: row k; kDims 4: rows k and k + 4).
        F t[kDims];
        for (int k = 0; k < kDims; ++k) {
            F lv;
            if constexpr (kDims == 8) {
                std::memcpy(&lv, row[k], sizeof lv);
            } else {
                H lo, hi;
                std::memcpy(&lo, row[k], sizeof lo);
                std::memcpy(&hi, row[k + 4], sizeof hi);
                lv = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
            }
            const F q = kIq1 ? L::select(lv == zero, xg0, L::select(lv == one, xg1, xg2)) : two * lv + one;
            const F diff = s * q - X;
            t[k] = Wt * diff * diff;
        }
        // Transposed: T[i] holds element i's term of the eight neighbours, in list order.
        F T[kDims];
        if constexpr (kDims == 8) {
            F a[8], b[8];
            for (int k = 0; k < 8; k += 2) {
                a[k] = __builtin_shufflevector(t[k], t[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
                a[k + 1] = __builtin_shufflevector(t[k], t[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
            }
            // a[k] (k even): rows k, k + 1 interleaved, elements 0, 1 | 4, 5; a[k + 1]: elements 2, 3 | 6, 7.
            for (int k = 0; k < 8; k += 4) {
                for (int h = 0; h < 2; ++h) {
                    b[k + 2 * h] = __builtin_shufflevector(a[k + h], a[k + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
                    b[k + 2 * h + 1] = __builtin_shufflevector(a[k + h], a[k + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
                }
            }
            // b[k]: rows k / 4 * 4 .. + 3, element k % 4 in the low half, k % 4 + 4 in the high half.
            for (int i = 0; i < 4; ++i) {
                T[i] = __builtin_shufflevector(b[i], b[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
                T[i + 4] = __builtin_shufflevector(b[i], b[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
            }
        } else {
            const F a0 = __builtin_shufflevector(t[0], t[1], 0, 8, 1, 9, 4, 12, 5, 13);
            const F a1 = __builtin_shufflevector(t[0], t[1], 2, 10, 3, 11, 6, 14, 7, 15);
            const F a2 = __builtin_shufflevector(t[2], t[3], 0, 8, 1, 9, 4, 12, 5, 13);
            const F a3 = __builtin_shufflevector(t[2], t[3], 2, 10, 3, 11, 6, 14, 7, 15);
            T[0] = __builtin_shufflevector(a0, a2, 0, 1, 8, 9, 4, 5, 12, 13);
            T[1] = __builtin_shufflevector(a0, a2, 2, 3, 10, 11, 6, 7, 14, 15);
            T[2] = __builtin_shufflevector(a1, a3, 0, 1, 8, 9, 4, 5, 12, 13);
            T[3] = __builtin_shufflevector(a1, a3, 2, 3, 10, 11, 6, 7, 14, 15);
        }
        F d2 = zero;
        for (int i = 0; i < kDims; ++i) d2 += T[i];
        const I take = valid & (d2 < best);
        best = L::select(take, d2, best);
        best_pos = L::select_i(take, pos, best_pos);
    }
    // best holds no NaN, so the least of the lanes is a tree of comparisons; then the first position holding it.
    F m = best;
    m = L::select(m < swap_halves(m, 4), m, swap_halves(m, 4));
    m = L::select(m < swap_halves(m, 2), m, swap_halves(m, 2));
    m = L::select(m < swap_halves(m, 1), m, swap_halves(m, 1));
    if (!(m[0] < FLT_MAX)) return list[1];
    I at = L::select_i(best == m, best_pos, L::splat_i(n + 1));
    at = L::select_i(at < swap_halves(at, 4), at, swap_halves(at, 4));
    at = L::select_i(at < swap_halves(at, 2), at, swap_halves(at, 2));
    at = L::select_i(at < swap_halves(at, 1), at, swap_halves(at, 1));
    return list[at[0]];
}

// GroupSearches::iq1m_sums, one boundary pair per lane: each lane accumulates its pair's eight sums over the
// sorted values j = 0 .. 15 with the scalar statements in the scalar order; a value's level, which depends on the
// pair, is a select.
template <int W>
void iq1m_sums(const float* xb, const float* weight, const int* order, const float* xp, const float* xm,
               float* sumqx_out, float* sumq2_out) {
    using L = Lanes<W>;
    using F = typename L::F;
    using I = typename L::I;
    constexpr int kBlockSize = 16;
    static_assert(kIq1mPairStride % W == 0, "whole vectors");
    int32_t first[kIq1mPairStride], second[kIq1mPairStride];
    int p = 0;
    for (int i1 = 0; i1 <= kBlockSize; ++i1) {
        for (int i2 = i1; i2 <= kBlockSize; ++i2, ++p) {
            first[p] = i1;
            second[p] = i2;
        }
    }
    for (; p < kIq1mPairStride; ++p) first[p] = second[p] = kBlockSize;  // padding, dropped by the callers
    const F xp0 = L::splat(xp[0]), xp1 = L::splat(xp[1]), xp2 = L::splat(xp[2]);
    const F xm0 = L::splat(xm[0]), xm1 = L::splat(xm[1]), xm2 = L::splat(xm[2]);
    for (p = 0; p < kIq1mPairStride; p += W) {
        I i1, i2;
        std::memcpy(&i1, first + p, sizeof i1);
        std::memcpy(&i2, second + p, sizeof i2);
        F qx[4], q2[4];
        for (int k = 0; k < 4; ++k) qx[k] = q2[k] = L::splat(0.f);
        for (int j = 0; j < kBlockSize; ++j) {
            const I jv = L::splat_i(j);
            const I lvl0 = jv < i1, lvl1 = jv < i2;
            const F vp = L::select(lvl0, xp0, L::select(lvl1, xp1, xp2));
            const F vm = L::select(lvl0, xm0, L::select(lvl1, xm1, xm2));
            const int i = order[j];
            const F w = L::splat(weight[i]), x = L::splat(xb[i]);
            const F wp = w * vp;
            const F wm = w * vm;
            if (i < kBlockSize / 2) {
                qx[0] += wp * x;
                qx[1] += wp * x;
                qx[2] += wm * x;
                qx[3] += wm * x;
                q2[0] += wp * vp;
                q2[1] += wp * vp;
                q2[2] += wm * vm;
                q2[3] += wm * vm;
            } else {
                qx[0] += wp * x;
                qx[2] += wp * x;
                qx[1] += wm * x;
                qx[3] += wm * x;
                q2[0] += wp * vp;
                q2[2] += wp * vp;
                q2[1] += wm * vm;
                q2[3] += wm * vm;
            }
        }
        for (int k = 0; k < 4; ++k) {
            std::memcpy(sumqx_out + k * kIq1mPairStride + p, &qx[k], sizeof qx[k]);
            std::memcpy(sumq2_out + k * kIq1mPairStride + p, &q2[k], sizeof q2[k]);
        }
    }
}

// GroupSearches::iq1s_sums, W pairs at a time: for each i1 the pairs (i1, i2 .. i2 + W - 1), whose prefix sums
// at i2 are one load; each lane computes its pair's sums as ggml's expressions spell them. A vector reaching past
// i2 = 32 writes scratch that the next i1 overwrites, or the slack after the last pair.
template <int W>
void iq1s_sums(const float* sumx, const float* sumw, const float* xp, const float* xm, float* sumqx_out,
               float* sumq2_out) {
    using L = Lanes<W>;
    using F = typename L::F;
    constexpr int kBlockSize = 32;
    static_assert(kBlockSize + W <= kIq1sPrefixSize && kIq1sPairs + W - 1 <= kIq1sPairStride, "padding");
    const float* const xxs[2] = {xp, xm};
    int p = 0;
    for (int i1 = 0; i1 <= kBlockSize; ++i1) {
        const F x1 = L::splat(sumx[i1]), w1 = L::splat(sumw[i1]);
        const F x_first = L::splat(sumx[i1] - sumx[0]), w_first = L::splat(sumw[i1] - sumw[0]);
        const F x_all = L::splat(sumx[kBlockSize]), w_all = L::splat(sumw[kBlockSize]);
        for (int i2 = i1; i2 <= kBlockSize; i2 += W) {
            F x2, w2;
            std::memcpy(&x2, sumx + i2, sizeof x2);
            std::memcpy(&w2, sumw + i2, sizeof w2);
            for (int k = 0; k < 2; ++k) {
                const F v0 = L::splat(xxs[k][0]), v1 = L::splat(xxs[k][1]), v2 = L::splat(xxs[k][2]);
                const F qx = x_first * v0 + (x2 - x1) * v1 + (x_all - x2) * v2;
                const F q2 = w_first * v0 * v0 + (w2 - w1) * v1 * v1 + (w_all - w2) * v2 * v2;
                std::memcpy(sumqx_out + k * kIq1sPairStride + p + (i2 - i1), &qx, sizeof qx);
                std::memcpy(sumq2_out + k * kIq1sPairStride + p + (i2 - i1), &q2, sizeof q2);
            }
        }
        p += kBlockSize + 1 - i1;
    }
}

// Lane l holds l.
template <typename I, size_t... l>
I lane_index(std::index_sequence<l...>) {
    return I{static_cast<int32_t>(l)...};
}

// GroupSearches::best_candidate, W pairs at a time: the choice only changes the bound *best, so the pairs before
// the first one some candidate of which passes the test against the current bound (computed per lane with the
// scalar products) are passed over exactly as the scalar loop passes over them; that pair then runs the scalar
// loop, and the search goes on after it with the bound it leaves. A window reaching past the sums' padding is
// moved back, its lanes before p0 masked.
template <int W>
int best_candidate(int pairs, int nk, int stride, const float* sumqx, const float* sumq2, float* best, float* scale) {
    using L = Lanes<W>;
    using F = typename L::F;
    using I = typename L::I;
    const F zero = L::splat(0.f);
    const int padded = (pairs + 15) / 16 * 16;
    const I lane = lane_index<I>(std::make_index_sequence<W>());
    int chosen = -1;
    int p0 = 0;
    while (p0 < pairs) {
        const int start = p0 + W <= padded ? p0 : padded - W;
        const F b = L::splat(*best);
        I pass = (lane >= L::splat_i(p0 - start)) & (lane < L::splat_i(pairs - start));
        I any_k = L::splat_i(0);
        for (int k = 0; k < nk; ++k) {
            F qx, q2;
            std::memcpy(&qx, sumqx + k * stride + start, sizeof qx);
            std::memcpy(&q2, sumq2 + k * stride + start, sizeof q2);
            any_k |= (q2 > zero) & (qx * qx > b * q2);
        }
        pass &= any_k;
        int l = 0;
        while (l < W && !pass[l]) ++l;
        if (l == W) {
            p0 = start + W;
            continue;
        }
        const int p = start + l;
        for (int k = 0; k < nk; ++k) {
            const float qx = sumqx[k * stride + p], q2 = sumq2[k * stride + p];
            if (q2 > 0 && qx * qx > *best * q2) {
                *scale = qx / q2;
                *best = *scale * qx;
                chosen = p * nk + k;
            }
        }
        p0 = p + 1;
    }
    return chosen;
}
// Eight lanes on every target (the AVX-512 table too: most lists are shorter than sixteen).
inline int grid_neighbour8(int dims, const float* levels, const uint16_t* list, const float* xval, const float* weight,
                           float scale, const float* xg) {
    if (dims == 4) return grid_neighbour_lanes<4, false>(levels, list, xval, weight, scale, xg);
    if (xg) return grid_neighbour_lanes<8, true>(levels, list, xval, weight, scale, xg);
    return grid_neighbour_lanes<8, false>(levels, list, xval, weight, scale, xg);
}

// The group searches over any number of groups: W at a time, then the last groups % W padded with all-zero
// groups (the flat case of each search) whose results are dropped.
template <int W>
void qkx2_groups(int groups, int n, int nmax, const float* x, const float* w, uint8_t* L, float* scales, float* mins,
                 float rmin, float rdelta, int nstep, bool use_mad) {
    int g = 0;
    for (; g + W <= groups; g += W) {
        Lanes<W>::qkx2(n, nmax, x + g * n, w + g * n, L + g * n, scales + g, mins + g, rmin, rdelta, nstep, use_mad);
    }
    if (g == groups) return;
    const size_t tail = sizeof(float) * static_cast<size_t>((groups - g) * n);
    float xt[32 * W] = {}, wt[32 * W] = {}, st[W], mt[W];
    uint8_t Lt[32 * W];
    std::memcpy(xt, x + g * n, tail);
    std::memcpy(wt, w + g * n, tail);
    Lanes<W>::qkx2(n, nmax, xt, wt, Lt, st, mt, rmin, rdelta, nstep, use_mad);
    std::memcpy(L + g * n, Lt, static_cast<size_t>((groups - g) * n));
    std::memcpy(scales + g, st, sizeof(float) * (groups - g));
    std::memcpy(mins + g, mt, sizeof(float) * (groups - g));
}

template <int W>
void qx_groups(int groups, int n, int nmax, const float* x, int8_t* L, const float* qw, float* scales) {
    int g = 0;
    for (; g + W <= groups; g += W) Lanes<W>::qx(n, nmax, x + g * n, L + g * n, qw ? qw + g * n : nullptr, scales + g);
    if (g == groups) return;
    const size_t tail = sizeof(float) * static_cast<size_t>((groups - g) * n);
    float xt[32 * W] = {}, wt[32 * W] = {}, st[W];
    int8_t Lt[32 * W];
    std::memcpy(xt, x + g * n, tail);
    if (qw) std::memcpy(wt, qw + g * n, tail);
    Lanes<W>::qx(n, nmax, xt, Lt, qw ? wt : nullptr, st);
    std::memcpy(L + g * n, Lt, static_cast<size_t>((groups - g) * n));
    std::memcpy(scales + g, st, sizeof(float) * (groups - g));
}

template <int W>
void q3_groups(int groups, int n, int nmax, const float* x, int8_t* L, float* scales) {
    int g = 0;
    for (; g + W <= groups; g += W) Lanes<W>::q3(n, nmax, x + g * n, L + g * n, scales + g);
    if (g == groups) return;
    float xt[32 * W] = {}, st[W];
    int8_t Lt[32 * W];
    std::memcpy(xt, x + g * n, sizeof(float) * static_cast<size_t>((groups - g) * n));
    Lanes<W>::q3(n, nmax, xt, Lt, st);
    std::memcpy(L + g * n, Lt, static_cast<size_t>((groups - g) * n));
    std::memcpy(scales + g, st, sizeof(float) * (groups - g));
}

template <int W>
void iq4_scales_groups(int groups, const float* x, const float* w, float* scales) {
    int g = 0;
    for (; g + W <= groups; g += W) Lanes<W>::iq4_scale(x + 32 * g, w + 32 * g, scales + g);
    if (g == groups) return;
    // The last groups % W blocks, padded with all-zero blocks (whose scales are dropped).
    float xt[32 * W] = {}, wt[32 * W] = {}, st[W];
    std::memcpy(xt, x + 32 * g, sizeof(float) * 32 * (groups - g));
    std::memcpy(wt, w + 32 * g, sizeof(float) * 32 * (groups - g));
    Lanes<W>::iq4_scale(xt, wt, st);
    std::memcpy(scales + g, st, sizeof(float) * (groups - g));
}

// Lane-parallel along the values, not the blocks: W neighbouring values of one block share its ids[g].
template <int W>
void iq4_indices_groups(int groups, const float* x, const float* ids, uint8_t* L) {
    static_assert(32 % W == 0, "a block is whole vectors");
    using F = typename Lanes<W>::F;
    using I = typename Lanes<W>::I;
    const typename Lanes<W>::Iq4Table t = Lanes<W>::iq4_table();
    for (int g = 0; g < groups; ++g) {
        const F id = Lanes<W>::splat(ids[g]);
        for (int j = 32 * g; j < 32 * g + 32; j += W) {
            F v;
            std::memcpy(&v, x + j, sizeof v);
            const I n = Lanes<W>::iq4_index(t, id * v);
            for (int l = 0; l < W; ++l) L[j + l] = static_cast<uint8_t>(n[l]);
        }
    }
}

}  // namespace
}  // namespace detail
}  // namespace ws
