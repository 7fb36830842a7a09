// SPDX-License-Identifier: MIT
// Internal to the quantizers: the row-quantizer shape the dispatch in quantize.cpp calls, one entry point per
// type (defined by family in quantize_legacy.cpp, quantize_kquants.cpp, quantize_misc.cpp), and the scalar
// helpers and scale searches that more than one family shares (one copy each).
//
// ggml's C converts floats to integers in places where the value can be out of range (only NaN/Inf inputs,
// subnormal scales or absurd magnitudes get there). That is undefined in C and C++; the helpers below give the
// result gcc and clang produce for x86 and wasm builds of ggml, with defined operations only (UBSan runs in CI).
#pragma once

#include <cstdint>
#include <cstring>

#include "weightstream/dequant.h"

namespace ws {
namespace detail {

// Quantizes one row of n floats at x into n / block_elems blocks at y (any alignment). imatrix holds n
// importance weights for this row's columns, or is nullptr; types that ignore it (ggml passes it on but does not
// read it) accept it. n is a whole number of blocks. Any float values are safe, NaN and Inf included.
using QuantizeRowFn = void (*)(const float* x, uint8_t* y, int64_t n, const float* imatrix);

// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below this is treated as all zero.
constexpr float kGroupMaxEps = 1e-15f;

// (int32_t)v as x86 (cvttss2si) and wasm builds compute it: truncation toward zero; NaN and values outside the
// int32 range give INT32_MIN ("integer indefinite").
inline int32_t float_to_int32(float v) {
    return (v >= -2147483648.0f && v < 2147483648.0f) ? static_cast<int32_t>(v) : INT32_MIN;
}

// (int8_t)v and (uint8_t)v as gcc/clang compile them for x86 and wasm: the low byte of the int32 truncation.
inline int8_t float_to_int8(float v) {
    return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(float_to_int32(v)) & 0xffu));
}
inline uint8_t float_to_uint8(float v) {
    return static_cast<uint8_t>(static_cast<uint32_t>(float_to_int32(v)) & 0xffu);
}

// ggml's nearest_int: round to nearest even through the 1.5 * 2^23 trick. Exact for |fval| <= 4194303 (ggml
// asserts that in debug builds only); beyond it, and for NaN/Inf, the same bit arithmetic gives ggml's garbage
// (Inf -> -4194304, a quiet NaN -> its payload).
inline int nearest_int(float fval) {
    const float val = fval + 12582912.f;
    return static_cast<int>(f32_to_bits(val) & 0x007fffffu) - 0x00400000;
}

template <typename Block>
inline void store_block(uint8_t* dst, int64_t i, const Block& b) {
    std::memcpy(dst + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof(Block));
}

// ggml's make_qx_quants with rmse_type 1 (the only one its quantizers use): signed quants L[i] + nmax in
// [0, 2 nmax) for n values, scale chosen by a weighted least-squares search over 18 trial scales. Weights are qw,
// or x[i]^2 when qw is nullptr. Returns the scale (0 for an all-zero group, whose L are 0).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* qw);

// ggml's make_qp_quants: unsigned quants in [0, nmax] of non-negative values, weighted (K-quant sub-block
// scales and mins, IQ3 sub-block scales).
float make_qp_quants(int n, int nmax, const float* x, uint8_t* L, const float* quant_weights);

// ggml's make_qkx2_quants: unsigned quants in [0, nmax] plus a min (returned negated in *the_min, >= 0 when the
// group's min is <= 0), searched over nstep + 1 trial scales from rmin in steps of rdelta, minimizing the weighted
// absolute (use_mad) or squared error. Laux is n bytes of scratch. Returns the scale. nstep >= 1.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min, uint8_t* Laux,
                       float rmin, float rdelta, int nstep, bool use_mad);

// ggml's make_q3_quants with do_rmse (Q3_K without an imatrix): signed quants in [-nmax, nmax) by coordinate
// descent on the x^2-weighted fit, returned biased by nmax (an all-zero group gives L = 0). Returns the scale.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L);

// ggml's make_qkx3_quants with weights given, as all its callers do. With weights it differs from
// make_qkx2_quants only in rejecting `max <= min` instead of `max == min`, and since max >= x[0] >= min (or both
// are NaN, which both tests let through) the two tests agree: one search serves both.
inline float make_qkx3_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                              uint8_t* Laux, float rmin, float rdelta, int nstep) {
    return make_qkx2_quants(n, nmax, x, weights, L, the_min, Laux, rmin, rdelta, nstep, false);
}

// ggml's best_index_int8: the index of the nearest of the n ascending values (binary search; a tie goes up; NaN
// gives the last index).
int best_index_int8(int n, const int8_t* val, float x);

// quantize_row_iq4_nl_impl's scale search (ntry = 7) for one block of 32 values x with weights w: the scale whose
// kvalues_iq4nl quants minimise the weighted squared error over 2 * 7 + 1 trial scales and the first guess; 0
// when the block's largest magnitude is below kGroupMaxEps. The group searches (group_search.h) run it on many
// blocks at once.
float iq4_block_scale(const float* x, const float* w);

// Row entry points, ggml_quantize_chunk's dispatch for one row: without an imatrix quantize_row_<type>_ref, with
// one the importance-weighted search (quantize_row_<type>_impl) where ggml has one.
// quantize_legacy.cpp
void quantize_q4_0(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q4_1(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q5_0(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q5_1(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q8_0(const float* x, uint8_t* y, int64_t n, const float* imatrix);  // imatrix unused
// quantize_kquants.cpp
void quantize_q2_K(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q3_K(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q4_K(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q5_K(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q6_K(const float* x, uint8_t* y, int64_t n, const float* imatrix);
// quantize_misc.cpp; TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0 and Q2_0 ignore the imatrix, as ggml does.
void quantize_iq4_nl(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_iq4_xs(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_tq1_0(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_tq2_0(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_mxfp4(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_nvfp4(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q1_0(const float* x, uint8_t* y, int64_t n, const float* imatrix);
void quantize_q2_0(const float* x, uint8_t* y, int64_t n, const float* imatrix);

}  // namespace detail
}  // namespace ws
