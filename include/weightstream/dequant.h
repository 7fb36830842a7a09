// SPDX-License-Identifier: MIT
// Dequantization: stored blocks -> float32, bit-identical to ggml's `to_float` (ggml-quants.c) for every
// GGML type, and to the format definitions for every safetensors dtype. Kernels are pure functions of
// their input bytes; they run unchanged in the native and the wasm build.
//
// Exactness: kernels compute in float32 in ggml's formulas and evaluation order (the core is built with
// -ffp-contract=off and never with -ffast-math), keep f16/bf16 subnormals, and copy F32 as bits.
// Each type has one scalar reference kernel (dequantize_row_<type>). Fast kernels sit beside it (AVX2 + F16C
// natively, picked at run time by CPU; SIMD128 in the wasm build) and match it bit for bit, with one exception in
// NaN payloads only: Q4_1/Q5_1 compute q * d + m, and when d and m are both NaN the addition meets two NaNs; x86
// returns the first operand's, and compilers order a commutative addition either way (GCC does both within the
// reference loop), so such a value is NaN in every kernel but its payload may differ, as between ggml builds.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "weightstream/dtype.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

// Decodes n_elements values of type t from src into dst.
// src holds exactly dtype_bytes_for(t, n_elements) bytes, read in file byte order (little-endian), at any
// alignment; dst has room for n_elements * dequant_floats_per_element(t) floats.
// Safe on untrusted bytes: any values decode (garbage to garbage, NaN/Inf scales to NaN/Inf) and nothing
// outside src/dst is touched. Integer types convert to float32 (I32/I64/U32/U64 round to nearest even);
// BOOL gives 0/1 (any non-zero byte is true); C64 gives interleaved real/imaginary pairs.
// Errors are check_decodable()'s.
Status dequantize(DType t, const uint8_t* src, uint64_t n_elements, float* dst);

// Whether dequantize() takes n_elements values of t: kUnsupported for types without a decoder (removed and
// unknown ids), kBadShape when n_elements is not a whole number of blocks, kOverflow when n_elements exceeds
// INT64_MAX / 2 (the kernels count floats in int64_t). Callers that split a tensor need not check again.
Status check_decodable(DType t, uint64_t n_elements);

// Whether t has a float32 decoder (a row with a scalar kernel in the kernel table).
bool dtype_decodable(DType t);

// Rewrites n_bytes of big-endian tensor data of type t, in place, into the little-endian layout the kernels
// read: the multi-byte fields of each block reversed as gguf-py (gguf_convert_endian.py) swaps them, i.e.
// every element of F32, F16, BF16, F64, I16, I32, I64; the f16 d of Q4_0 and Q8_0; d and dmin of Q4_K; d of
// Q6_K; nothing for I8 and MXFP4. Errors: kUnsupported for any other type (gguf-py defines no big-endian
// layout for it, and refuses to convert it), kBadShape when n_bytes is not a whole number of blocks.
// Safe on any bytes; touches blocks[0 .. n_bytes) only. Swapping twice restores the input.
Status swap_to_little_endian(DType t, uint8_t* blocks, uint64_t n_bytes);

// Whether swap_to_little_endian() takes tensors of type t.
bool big_endian_order_defined(DType t);

// Why tensor t of model m cannot be decoded to floats, in words ("type Q8_1 has no float decoder", a big-endian
// type with no defined layout), or "" when it can: the one wording of the CLI, compare's hints and the package.
std::string decode_problem(const ModelInfo& m, const TensorInfo& t);

// Floats written per element: 2 for C64, else 1.
inline uint32_t dequant_floats_per_element(DType t) {
    return t == DType::C64 ? 2 : 1;
}

// ---- row kernels ---------------------------------------------------------------------------------------------
// Every kernel has this shape: decode k elements from src into dst.
//   src: (k / block elements) * block bytes bytes in file order, any alignment.
//   dst: room for k floats (2k for C64).
//   k:   >= 0 and a whole number of blocks; a trailing partial block is not decoded (ggml asserts instead).
// Safe on any byte values.
using DequantRowFn = void (*)(const uint8_t* src, float* dst, int64_t k);

// The fastest kernel of t that this build and CPU run, or nullptr when t has no decoder. Its output equals
// dequant_row_fn_scalar(t)'s bit for bit.
DequantRowFn dequant_row_fn(DType t);

// The scalar reference kernel of t (dequantize_row_<type>), or nullptr when t has no decoder.
DequantRowFn dequant_row_fn_scalar(DType t);

// Plain floats and integers (dequant_float.cpp).
void dequantize_row_f32(const uint8_t* src, float* dst, int64_t k);  // bits copied verbatim (sNaN kept)
void dequantize_row_f16(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_bf16(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_f64(const uint8_t* src, float* dst, int64_t k);  // rounded to nearest float32
void dequantize_row_c64(const uint8_t* src, float* dst, int64_t k);  // k complex elements -> 2k floats
void dequantize_row_i8(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_i16(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_i32(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_i64(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_u8(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_u16(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_u32(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_u64(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_bool(const uint8_t* src, float* dst, int64_t k);

// Small floats of safetensors (dequant_float.cpp), decoded as PyTorch / ml_dtypes define each code point.
// NaN codes give the quiet NaN 0x7fc00000 with the code's sign (FNUZ: 0x7fc00000, their one NaN has no sign).
void dequantize_row_f8_e4m3(const uint8_t* src, float* dst, int64_t k);      // e4m3fn: bias 7, no Inf
void dequantize_row_f8_e5m2(const uint8_t* src, float* dst, int64_t k);      // IEEE-like: bias 15, Inf, NaN
void dequantize_row_f8_e8m0(const uint8_t* src, float* dst, int64_t k);      // 2^(e-127), 0xff NaN
void dequantize_row_f8_e4m3fnuz(const uint8_t* src, float* dst, int64_t k);  // bias 8, 0x80 NaN, no -0
void dequantize_row_f8_e5m2fnuz(const uint8_t* src, float* dst, int64_t k);  // bias 16, 0x80 NaN, no -0
// OCP MX element types, no Inf or NaN. Packing (safetensors leaves the bit order to the dtype; PyTorch's
// float4_e2m1fn_x2 puts the first element in the low nibble): elements form a little-endian bit stream,
// element i in bits [w*i, w*i + w) counting from bit 0 of byte 0. F4: low nibble first. F6: each 3 bytes
// b0 b1 b2 hold 4 elements, the 24-bit value b0 | b1 << 8 | b2 << 16 giving element j in bits 6j..6j+5.
void dequantize_row_f6_e2m3(const uint8_t* src, float* dst, int64_t k);  // bias 1, max 7.5; k % 4 == 0
void dequantize_row_f6_e3m2(const uint8_t* src, float* dst, int64_t k);  // bias 3, max 28; k % 4 == 0
void dequantize_row_f4(const uint8_t* src, float* dst, int64_t k);       // e2m1: bias 1, max 6; k % 2 == 0

// Legacy quants (dequant_legacy.cpp).
void dequantize_row_q4_0(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q4_1(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q5_0(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q5_1(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q8_0(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q8_1(const uint8_t* src, float* dst, int64_t k);  // d * q (the f16 sum s unused)

// k-quants (dequant_kquants.cpp).
void dequantize_row_q2_K(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q3_K(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q4_K(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q5_K(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q6_K(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q8_K(const uint8_t* src, float* dst, int64_t k);  // float32 d * q (bsums unused)

// Ternary, microscaling and 1-/2-bit types (dequant_ternary_fp4.cpp).
void dequantize_row_tq1_0(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_tq2_0(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_mxfp4(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_nvfp4(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q1_0(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_q2_0(const uint8_t* src, float* dst, int64_t k);

// The i-quants are declared in dequant_iquants.h.

// ---- scalar conversions shared by kernels, tests and writers -------------------------------------------------

inline float f32_from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
inline uint32_t f32_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

// IEEE binary16 -> float32, exactly as ggml's decode gives it on x86: subnormals kept; Inf kept; a NaN keeps
// its sign and payload (shifted up 13 bits) and is made quiet (0x7e00 -> 0x7fc00000, 0x7c01 -> 0x7fc02000).
// Pure bit arithmetic (no float operation touches a NaN), so wasm gives the same bits.
inline float fp16_to_fp32(uint16_t h) {
    // Branch-free (masks instead of selects) so loops over it vectorize.
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = h & 0x7c00u;
    const uint32_t mant = h & 0x03ffu;
    const uint32_t all_ones = 0u - static_cast<uint32_t>(exp == 0x7c00u);  // Inf or NaN
    const uint32_t is_nan = all_ones & (0u - static_cast<uint32_t>(mant != 0));
    const uint32_t is_small = 0u - static_cast<uint32_t>(exp == 0);  // zero or subnormal
    // Normal: rebias the exponent (15 -> 127) and widen the mantissa. Inf/NaN (exp 31) rebias twice to land
    // on exponent 255; NaNs also get the quiet bit, as an x86 float operation on a signalling NaN does.
    const uint32_t normal = ((static_cast<uint32_t>(h & 0x7fffu) << 13) + (112u << 23) + (all_ones & (112u << 23))) |
                            (is_nan & 0x00400000u);
    // Zero/subnormal: mant * 2^-24, exact in float32 (a normal float32 for every mant != 0).
    const uint32_t subnormal = f32_to_bits(static_cast<float>(mant) * 0x1p-24f);
    return f32_from_bits(sign | (is_small & subnormal) | (~is_small & normal));
}

// bfloat16 -> float32: the upper half of the float32 bits (NaN payload and signalling bit kept).
inline float bf16_to_fp32(uint16_t h) {
    return f32_from_bits(static_cast<uint32_t>(h) << 16);
}

// float32 -> binary16 as ggml_fp32_to_fp16 (the FP16 library's float trick): round to nearest even,
// overflow -> +-Inf, subnormals kept, every NaN -> 0x7e00 | sign (payload dropped).
inline uint16_t fp32_to_fp16(float f) {
    // Scaling |f| up by 2^112 and back down by 2^-110 rounds the mantissa to 10 bits at the right place for
    // normals and saturates overflow to Inf; adding a power of two that fixes the exponent then rounds to the
    // binary16 grid (including subnormals), leaving the result's bits in the low part of the float.
    float base = (std::fabs(f) * 0x1p+112f) * 0x1p-110f;
    const uint32_t w = f32_to_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xff000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = f32_to_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007c00u;
    const uint32_t mantissa_bits = bits & 0x00000fffu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xff000000u ? 0x7e00u : nonsign));
}

// float32 -> bfloat16 as ggml_fp32_to_bf16: round to nearest even; a NaN keeps its sign and top payload bits
// and is made quiet (| 0x40); subnormals kept.
inline uint16_t fp32_to_bf16(float f) {
    const uint32_t u = f32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
    return static_cast<uint16_t>((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

}  // namespace ws
