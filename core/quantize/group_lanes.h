// SPDX-License-Identifier: MIT
// The k-quants' scale searches run one group per SIMD lane, W groups at once, written once over GCC/clang
// vector extensions and compiled for each target by the file that includes it (arch/x86: AVX2, 8 lanes;
// arch/wasm: SIMD128, 4 lanes per register). Included by exactly one file per build, everything here has
// internal linkage, so no inline function compiled for AVX2 can be picked by the linker for baseline code.
//
// Why the bytes are ggml's: every lane performs its group's scalar operations (quantize_internal.h) on the same
// operands in the same order — sums accumulated i = 0, 1, ... per lane, products and quotients as the source
// spells them, no FMA (-ffp-contract=off, and the targets have none). A branch becomes a lane mask and a select
// of what each side leaves; the not-taken side's values are computed and discarded (a division by zero or a
// NaN there is harmless, SIMD floats do not trap). nearest_int is the same bit trick on each lane. So NaN, Inf
// and subnormal inputs give the scalar bytes too, without a fallback.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

#include "quantize/quantize_internal.h"  // kGroupMaxEps only: its inline functions are not called here

namespace ws {
namespace detail {
namespace {

// W float32 and int32 lanes (spelled out per width: gcc ignores vector_size on a typedef that depends on W).
template <int W>
struct LaneTypes;
template <>
struct LaneTypes<4> {
    typedef float F __attribute__((vector_size(16)));
    typedef int32_t I __attribute__((vector_size(16)));
};
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
        F max = zero, amax = zero;
        for (int i = 0; i < n; ++i) {
            const F ax = fabs(X[i]);
            const I larger = ax > amax;
            amax = select(larger, ax, amax);
            max = select(larger, X[i], max);
        }
        const I flat = amax < splat(kGroupMaxEps);  // these lanes return L = 0, scale 0
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
};

template <int W>
void qkx2_groups(int groups, int n, int nmax, const float* x, const float* w, uint8_t* L, float* scales, float* mins,
                 float rmin, float rdelta, int nstep, bool use_mad) {
    for (int g = 0; g < groups; g += W) {
        Lanes<W>::qkx2(n, nmax, x + g * n, w + g * n, L + g * n, scales + g, mins + g, rmin, rdelta, nstep, use_mad);
    }
}

template <int W>
void qx_groups(int groups, int n, int nmax, const float* x, int8_t* L, const float* qw, float* scales) {
    for (int g = 0; g < groups; g += W) {
        Lanes<W>::qx(n, nmax, x + g * n, L + g * n, qw ? qw + g * n : nullptr, scales + g);
    }
}

}  // namespace
}  // namespace detail
}  // namespace ws
