// SPDX-License-Identifier: MIT
// WebAssembly SIMD128 kernels, one for every decodable type (the wasm build compiles the core with -msimd128,
// but clang 14 leaves most conversions scalar: small integers to float, 32/64-bit integers, table lookups);
// each measured faster than the scalar kernel under Node (V8). They follow the x86 kernels (dequant_x86.cpp) at
// 128 bits: quants become small integers (swizzle lookups for 4-bit value tables, shifts and masks for packed
// bits), then float32 exactly, then the scalar reference's products in its order, so the results are the same
// bits. i-quant signs flip the sign bit of each product db * g (an XOR), as the reference does. Loads stay
// inside each block's bytes. Two V8 costs shape the code:
// SIMD128 has no byte shifts (V8 emulates them: 16-bit shifts are used wherever a mask follows), and an ordered
// lane compare that clang proves unsigned becomes four x86 instructions (lanes are tested with equalities).
#include "decode/dequant_internal.h"

#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include <array>
#include <cstddef>
#include <cstring>

#include "base/le_bytes.h"
#include "decode/dequant_iquants.h"
#include "decode/iquant_tables.h"
#include "weightstream/quant_blocks.h"

namespace ws::detail::simd128 {

// ---- building blocks --------------------------------------------------------------------------------------

inline v128_t load_16(const uint8_t* p) {
    return wasm_v128_load(p);
}  // wasm loads may be unaligned
inline v128_t load_8(const uint8_t* p) {
    return wasm_v128_load64_zero(p);
}
inline void store_4(float* y, v128_t v) {
    wasm_v128_store(y, v);
}
// A block's f16 scale. Scales are normal numbers in practice: those take a few integer operations (the
// exponent rebiased, the mantissa widened) and the rest the full fp16_to_fp32, whose subnormal path costs an
// int-to-float conversion and a multiplication on every call.
inline float scale_half(uint32_t h) {
    const uint32_t exponent = h & 0x7c00u;
    if (exponent != 0 && exponent != 0x7c00u) {
        return f32_from_bits((((h & 0x7fffu) << 13) + (112u << 23)) | ((h & 0x8000u) << 16));
    }
    return fp16_to_fp32(static_cast<uint16_t>(h));
}
inline float half(const uint8_t* p) {
    return scale_half(load_le16(p));
}

struct Mul {  // x * d
    v128_t d;
    v128_t operator()(v128_t x) const { return wasm_f32x4_mul(x, d); }
};
struct MulAdd {  // x * d + m
    v128_t d, m;
    v128_t operator()(v128_t x) const { return wasm_f32x4_add(wasm_f32x4_mul(x, d), m); }
};
struct MulSub {  // d * x - m
    v128_t d, m;
    v128_t operator()(v128_t x) const { return wasm_f32x4_sub(wasm_f32x4_mul(d, x), m); }
};
struct AddMul {  // d * (x + delta)
    v128_t delta, d;
    v128_t operator()(v128_t x) const { return wasm_f32x4_mul(d, wasm_f32x4_add(x, delta)); }
};
inline Mul mul_by(float d) {
    return Mul{wasm_f32x4_splat(d)};
}
inline MulSub mul_sub(float d, float m) {
    return MulSub{wasm_f32x4_splat(d), wasm_f32x4_splat(m)};
}

// Small integers -> float32 without an int-to-float conversion: LLVM 14 folds convert(extend(i16)) into a
// conversion it scalarizes lane by lane. Biased to unsigned, an integer u < 2^23 ORed into the mantissa of
// 2^23 is the float 2^23 + u, and subtracting 2^23 + bias leaves the integer: every step exact, so the value
// (and bits, +0 for 0) of float(q).
inline v128_t u32_to_f32_minus(v128_t u, float bias) {
    return wasm_f32x4_sub(wasm_v128_or(u, wasm_i32x4_splat(0x4b000000)), wasm_f32x4_splat(8388608.0f + bias));
}

// y[0..8) from the low 8 int8 lanes of q; y[0..16) from all 16.
template <typename Op>
inline void store_i8x8(float* y, v128_t q, const Op& op) {
    const v128_t u = wasm_u16x8_extend_low_u8x16(wasm_v128_xor(q, wasm_i8x16_splat(-128)));  // q + 128
    store_4(y, op(u32_to_f32_minus(wasm_u32x4_extend_low_u16x8(u), 128.0f)));
    store_4(y + 4, op(u32_to_f32_minus(wasm_u32x4_extend_high_u16x8(u), 128.0f)));
}
template <typename Op>
inline void store_i8x16(float* y, v128_t q, const Op& op) {
    store_i8x8(y, q, op);
    const v128_t u = wasm_u16x8_extend_high_u8x16(wasm_v128_xor(q, wasm_i8x16_splat(-128)));
    store_4(y + 8, op(u32_to_f32_minus(wasm_u32x4_extend_low_u16x8(u), 128.0f)));
    store_4(y + 12, op(u32_to_f32_minus(wasm_u32x4_extend_high_u16x8(u), 128.0f)));
}
// y[0..8) from 8 int16 lanes holding small values (|v| < 2^15).
template <typename Op>
inline void store_i16x8(float* y, v128_t v, const Op& op) {
    const v128_t u = wasm_v128_xor(v, wasm_i16x8_splat(static_cast<int16_t>(0x8000)));  // v + 32768
    store_4(y, op(u32_to_f32_minus(wasm_u32x4_extend_low_u16x8(u), 32768.0f)));
    store_4(y + 4, op(u32_to_f32_minus(wasm_u32x4_extend_high_u16x8(u), 32768.0f)));
}

inline v128_t nibbles_lo(v128_t q) {
    return wasm_v128_and(q, wasm_i8x16_splat(0x0f));
}
inline v128_t nibbles_hi(v128_t q) {
    return wasm_v128_and(wasm_u16x8_shr(q, 4), wasm_i8x16_splat(0x0f));
}

// w[j]: bytes 4j..4j+3 of q zero-extended into the four 32-bit lanes, one shuffle each. Unlike the widening
// extends, LLVM keeps this shape through f32x4.convert_i32x4_s (one instruction), where convert(extend) is
// scalarized lane by lane (see u32_to_f32_minus).
inline void bytes_to_u32x4(v128_t q, v128_t w[4]) {
    const v128_t z = wasm_i32x4_splat(0);
    w[0] = wasm_i8x16_shuffle(q, z, 0, 16, 16, 16, 1, 16, 16, 16, 2, 16, 16, 16, 3, 16, 16, 16);
    w[1] = wasm_i8x16_shuffle(q, z, 4, 16, 16, 16, 5, 16, 16, 16, 6, 16, 16, 16, 7, 16, 16, 16);
    w[2] = wasm_i8x16_shuffle(q, z, 8, 16, 16, 16, 9, 16, 16, 16, 10, 16, 16, 16, 11, 16, 16, 16);
    w[3] = wasm_i8x16_shuffle(q, z, 12, 16, 16, 16, 13, 16, 16, 16, 14, 16, 16, 16, 15, 16, 16, 16);
}

// A block of 32 4-bit quants (the 16 bytes q): y[4j+l] = op(low nibble of byte 4j+l), y[16+4j+l] = op(its
// high nibble), each nibble as an exact float32.
template <typename Op>
inline void store_nibbles32(float* y, v128_t q, const Op& op) {
    v128_t w[4];
    bytes_to_u32x4(q, w);
    const v128_t low4 = wasm_i32x4_splat(0x0f);
    for (int j = 0; j < 4; ++j) {
        store_4(y + 4 * j, op(wasm_f32x4_convert_i32x4(wasm_v128_and(w[j], low4))));
        store_4(y + 16 + 4 * j, op(wasm_f32x4_convert_i32x4(wasm_u32x4_shr(w[j], 4))));
    }
}

// Byte j = 0xff where bit j of the 16 bits is set, else 0.
inline v128_t bits_to_bytes(uint32_t bits16) {
    const v128_t spread = wasm_i8x16_swizzle(wasm_i32x4_splat(static_cast<int32_t>(bits16)),
                                             wasm_i8x16_make(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
    const v128_t bit = wasm_i8x16_make(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    return wasm_i8x16_eq(wasm_v128_and(spread, bit), bit);
}

// kSignMask[s]: byte j is 0xff where bit j of s is set (element j negative), else 0.
constexpr std::array<uint64_t, 256> make_sign_mask() {
    std::array<uint64_t, 256> t{};
    for (unsigned s = 0; s < 256; ++s) t[s] = sign_bytes(s);
    return t;
}
constexpr std::array<uint64_t, 256> kSignMask = make_sign_mask();
constexpr std::array<uint64_t, 128> make_sign_mask_7() {  // for the 7-bit codes of ksigns_iq2xs
    std::array<uint64_t, 128> t{};
    for (unsigned c = 0; c < 128; ++c) t[c] = kSignMask[ksigns_iq2xs[c]];
    return t;
}
constexpr std::array<uint64_t, 128> kSignMask7 = make_sign_mask_7();

inline v128_t u64x2(uint64_t a, uint64_t b) {
    return wasm_i64x2_make(static_cast<int64_t>(a), static_cast<int64_t>(b));
}
inline v128_t u32x4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return wasm_i32x4_make(static_cast<int32_t>(a), static_cast<int32_t>(b), static_cast<int32_t>(c),
                           static_cast<int32_t>(d));
}
// 16 grid values (non-negative int8) and a byte mask (0xff: that element is negative). The sign is flipped in
// the product db * g (an XOR of its sign bit), as the reference does, NaN signs included.
struct SignedGrid {
    v128_t g;
    v128_t neg;
};
inline SignedGrid signed_grid(v128_t g, v128_t mask) {
    return {g, mask};
}
template <typename Op>
inline void store_i8x16(float* y, const SignedGrid& v, const Op& op) {
    const v128_t sign_bit = wasm_i32x4_splat(INT32_MIN);
    const v128_t g_lo = wasm_u16x8_extend_low_u8x16(v.g), g_hi = wasm_u16x8_extend_high_u8x16(v.g);
    const v128_t n_lo = wasm_i16x8_extend_low_i8x16(v.neg), n_hi = wasm_i16x8_extend_high_i8x16(v.neg);
    const v128_t g[4] = {wasm_u32x4_extend_low_u16x8(g_lo), wasm_u32x4_extend_high_u16x8(g_lo),
                         wasm_u32x4_extend_low_u16x8(g_hi), wasm_u32x4_extend_high_u16x8(g_hi)};
    const v128_t n[4] = {wasm_i32x4_extend_low_i16x8(n_lo), wasm_i32x4_extend_high_i16x8(n_lo),
                         wasm_i32x4_extend_low_i16x8(n_hi), wasm_i32x4_extend_high_i16x8(n_hi)};
    for (int j = 0; j < 4; ++j) {
        store_4(y + 4 * j, wasm_v128_xor(op(u32_to_f32_minus(g[j], 0.0f)), wasm_v128_and(n[j], sign_bit)));
    }
}

// ---- plain floats -----------------------------------------------------------------------------------------

// fp16_to_fp32 (dequant.h) on eight lanes. The flags and the top halves of the results are computed in 16-bit
// lanes (eight per operation) and interleaved into float32 lanes only at the end. For h without its sign, the
// float32 bits are (h << 13) + 112 << 23: exact for normals; for Inf/NaN the exponent lands on 143 and is then
// ORed up to 255 (mantissa kept, the quiet bit ORed in for NaN); for zero/subnormal the exponent is made 113
// and 2^-14 subtracted, which leaves mant * 2^-24 exactly (+0 for 0). The only float operation never sees a
// NaN or Inf, and the sign is ORed in last, so the bits equal the scalar kernel's.
inline void half8_to_f32(float* y, v128_t h) {
    const v128_t expmant = wasm_v128_and(h, wasm_i16x8_splat(0x7fff));
    const v128_t exponent = wasm_v128_and(h, wasm_i16x8_splat(0x7c00));
    const v128_t small = wasm_i16x8_eq(exponent, wasm_i16x8_splat(0));
    const v128_t inf_nan = wasm_i16x8_eq(exponent, wasm_i16x8_splat(0x7c00));
    const v128_t nan =
        wasm_v128_andnot(inf_nan, wasm_i16x8_eq(wasm_v128_and(h, wasm_i16x8_splat(0x03ff)), wasm_i16x8_splat(0)));
    // Top and bottom 16 bits of (expmant << 13) + (112 + small) << 23; the additions cannot carry out.
    const v128_t top =
        wasm_i16x8_add(wasm_u16x8_shr(expmant, 3),
                       wasm_i16x8_add(wasm_i16x8_splat(112 << 7), wasm_v128_and(small, wasm_i16x8_splat(0x80))));
    const v128_t bottom = wasm_i16x8_shl(h, 13);
    const v128_t magic = wasm_v128_and(small, wasm_i16x8_splat(0x3880));  // top half of 2^-14, 0 for the rest
    const v128_t bits = wasm_v128_or(
        wasm_v128_and(h, wasm_i16x8_splat(static_cast<int16_t>(0x8000))),
        wasm_v128_or(wasm_v128_and(inf_nan, wasm_i16x8_splat(0x7f80)), wasm_v128_and(nan, wasm_i16x8_splat(0x0040))));
    const v128_t zero = wasm_i16x8_splat(0);
    const v128_t lo = wasm_f32x4_sub(wasm_i16x8_shuffle(bottom, top, 0, 8, 1, 9, 2, 10, 3, 11),
                                     wasm_i16x8_shuffle(zero, magic, 0, 8, 1, 9, 2, 10, 3, 11));
    const v128_t hi = wasm_f32x4_sub(wasm_i16x8_shuffle(bottom, top, 4, 12, 5, 13, 6, 14, 7, 15),
                                     wasm_i16x8_shuffle(zero, magic, 4, 12, 5, 13, 6, 14, 7, 15));
    store_4(y, wasm_v128_or(lo, wasm_i16x8_shuffle(zero, bits, 0, 8, 1, 9, 2, 10, 3, 11)));
    store_4(y + 4, wasm_v128_or(hi, wasm_i16x8_shuffle(zero, bits, 4, 12, 5, 13, 6, 14, 7, 15)));
}

// Normal halves and zeros (all but the subnormals, Inf and NaN) need none of half8_to_f32's patching: the top
// 16 bits of the float32 are the exponent and mantissa shifted down by 3 plus 112 << 7 (0 for zero) and the
// sign, the bottom 16 bits are h << 13. Stores y[0..8) that way and ORs into *odd the lanes it got wrong.
inline void normal_half8_to_f32(float* y, v128_t h, v128_t* odd) {
    const v128_t expmant = wasm_v128_and(h, wasm_i16x8_splat(0x7fff));
    const v128_t exponent = wasm_v128_and(h, wasm_i16x8_splat(0x7c00));
    const v128_t zero = wasm_i16x8_eq(expmant, wasm_i16x8_splat(0));
    const v128_t top =
        wasm_v128_or(wasm_v128_andnot(wasm_i16x8_add(wasm_u16x8_shr(expmant, 3), wasm_i16x8_splat(112 << 7)), zero),
                     wasm_v128_and(h, wasm_i16x8_splat(static_cast<int16_t>(0x8000))));
    const v128_t bottom = wasm_i16x8_shl(h, 13);
    store_4(y, wasm_i16x8_shuffle(bottom, top, 0, 8, 1, 9, 2, 10, 3, 11));
    store_4(y + 4, wasm_i16x8_shuffle(bottom, top, 4, 12, 5, 13, 6, 14, 7, 15));
    *odd = wasm_v128_or(*odd, wasm_v128_or(wasm_v128_andnot(wasm_i16x8_eq(exponent, wasm_i16x8_splat(0)), zero),
                                           wasm_i16x8_eq(exponent, wasm_i16x8_splat(0x7c00))));
}

// Groups of 64 halves take the short path for normals and zeros, checked once per group (no branch in the inner
// loop); a group with a subnormal, Inf or NaN is decoded again by half8_to_f32.
void f16(const uint8_t* src, float* dst, int64_t k) {
    constexpr int64_t kGroup = 64;
    int64_t i = 0;
    for (; i + kGroup <= k; i += kGroup) {
        v128_t odd = wasm_i16x8_splat(0);
        for (int64_t j = i; j < i + kGroup; j += 8) normal_half8_to_f32(dst + j, load_16(src + 2 * j), &odd);
        if (wasm_v128_any_true(odd)) {
            for (int64_t j = i; j < i + kGroup; j += 8) half8_to_f32(dst + j, load_16(src + 2 * j));
        }
    }
    for (; i + 8 <= k; i += 8) half8_to_f32(dst + i, load_16(src + 2 * i));
    dequantize_row_f16(src + 2 * i, dst + i, k - i);
}

// 32-bit integers and doubles, four at a time (clang 14 leaves these loops scalar: a conversion per element). The
// conversions round to nearest even like the scalar ones; f32x4.convert_i32x4_u is exact-then-rounded-once in V8
// (both 16-bit halves converted exactly, then one addition).
void i32(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) store_4(dst + i, wasm_f32x4_convert_i32x4(load_16(src + 4 * i)));
    dequantize_row_i32(src + 4 * i, dst + i, k - i);
}
void u32(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) store_4(dst + i, wasm_f32x4_convert_u32x4(load_16(src + 4 * i)));
    dequantize_row_u32(src + 4 * i, dst + i, k - i);
}
void f64(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) {
        const v128_t a = wasm_f32x4_demote_f64x2_zero(load_16(src + 8 * i));
        const v128_t b = wasm_f32x4_demote_f64x2_zero(load_16(src + 8 * i + 16));
        store_4(dst + i, wasm_i64x2_shuffle(a, b, 0, 2));
    }
    dequantize_row_f64(src + 8 * i, dst + i, k - i);
}

// 64-bit integers -> float32 rounded to nearest even, as the scalar kernels' conversions give it. Each value
// becomes its nearest double, built exactly from its 32-bit halves with the 2^84 / 2^52 magic numbers (the high
// half biased by 2^31 when signed) and rounded once by the final addition, and f32x4.demote_f64x2_zero rounds
// that to float32. Rounding twice gives the same float as rounding once unless the double lands exactly halfway
// between two floats (its low 29 mantissa bits are 1 and 28 zeros): groups with such a value are decoded again
// by the scalar kernel. Random 64-bit values hit that about once in 2^28; values that are exact ties themselves
// (odd integers in [2^24, 2^25), ...) take the scalar path too.
template <bool kSigned>
inline v128_t int64x2_to_f64(v128_t v) {
    constexpr int64_t kHiBias = kSigned ? 0x4530000080000000 : 0x4530000000000000;  // flips the sign bit if signed
    constexpr double kMagic = kSigned ? 0x1.00000801p84 : 0x1.00000001p84;          // 2^84 (+ 2^63) + 2^52
    const v128_t hi = wasm_v128_xor(wasm_u64x2_shr(v, 32), wasm_i64x2_splat(kHiBias));
    const v128_t lo = wasm_i32x4_shuffle(v, wasm_i64x2_splat(0x4330000000000000), 0, 5, 2, 7);
    return wasm_f64x2_add(wasm_f64x2_sub(hi, wasm_f64x2_splat(kMagic)), lo);
}

template <bool kSigned, DequantRowFn kScalar>
void int64_wasm(const uint8_t* src, float* dst, int64_t k) {
    constexpr int64_t kGroup = 32;  // checked for ties once per group: no branch in the inner loop
    const v128_t low29 = wasm_i32x4_splat(0x1fffffff), float_half_ulp = wasm_i32x4_splat(0x10000000);
    int64_t i = 0;
    for (; i + kGroup <= k; i += kGroup) {
        v128_t ties = wasm_i32x4_splat(0);
        for (int64_t j = i; j < i + kGroup; j += 4) {
            const v128_t a = int64x2_to_f64<kSigned>(load_16(src + 8 * j));
            const v128_t b = int64x2_to_f64<kSigned>(load_16(src + 8 * j + 16));
            const v128_t low_words = wasm_i32x4_shuffle(a, b, 0, 2, 4, 6);
            ties = wasm_v128_or(ties, wasm_i32x4_eq(wasm_v128_and(low_words, low29), float_half_ulp));
            store_4(dst + j,
                    wasm_i64x2_shuffle(wasm_f32x4_demote_f64x2_zero(a), wasm_f32x4_demote_f64x2_zero(b), 0, 2));
        }
        if (wasm_v128_any_true(ties)) kScalar(src + 8 * i, dst + i, kGroup);
    }
    kScalar(src + 8 * i, dst + i, k - i);
}

// The top 16 bits of the float32 of an unsigned OCP MX float code (no Inf/NaN; the low 16 bits are 0 for
// every such format with up to 7 mantissa bits): the format's value table, built as dequant_float.cpp does.
constexpr uint32_t mx_magnitude_top16(uint32_t code, uint32_t man_bits, int32_t bias) {
    const uint32_t man_mask = (1u << man_bits) - 1;
    const uint32_t e = code >> man_bits;
    uint32_t m = code & man_mask;
    if (code == 0) return 0;
    int32_t exp2 = static_cast<int32_t>(e) - bias;
    if (e == 0) {  // subnormal: normalise
        exp2 = 1 - bias;
        while ((m & (1u << man_bits)) == 0) {
            m <<= 1;
            --exp2;
        }
        m &= man_mask;
    }
    return ((static_cast<uint32_t>(exp2 + 127) << 23) | (m << (23 - man_bits))) >> 16;
}

// The value table of an MX float format as byte planes for i8x16.swizzle: low and high byte of the top 16 bits
// of each code's float32. Codes are magnitudes, or, with sign_bit, magnitudes below sign_bit and their negatives.
template <uint32_t N>
struct Top16Planes {
    uint8_t lo[N];
    uint8_t hi[N];
};
template <uint32_t N>
constexpr Top16Planes<N> make_top16_planes(uint32_t man_bits, int32_t bias, uint32_t sign_bit = 0) {
    Top16Planes<N> p{};
    for (uint32_t c = 0; c < N; ++c) {
        const uint32_t top = mx_magnitude_top16(c & ~sign_bit, man_bits, bias) | ((c & sign_bit) != 0 ? 0x8000u : 0u);
        p.lo[c] = static_cast<uint8_t>(top);
        p.hi[c] = static_cast<uint8_t>(top >> 8);
    }
    return p;
}
// F6: 32 magnitudes, entries 0..15 and 16..31 looked up separately.
constexpr Top16Planes<32> kF6E2M3Planes = make_top16_planes<32>(3, 1);
constexpr Top16Planes<32> kF6E3M2Planes = make_top16_planes<32>(2, 3);
static_assert(kF6E2M3Planes.hi[0x1f] == 0x40 && kF6E2M3Planes.lo[0x1f] == 0xf0, "e2m3 max is 7.5");
static_assert(kF6E3M2Planes.hi[0x1f] == 0x41 && kF6E3M2Planes.lo[0x1f] == 0xe0, "e3m2 max is 28");

// y[0..8) from the top 16 bits of eight float32s (their low 16 bits are 0) in 16-bit lanes.
inline void store_top16x8(float* y, v128_t top) {
    const v128_t zero = wasm_i16x8_splat(0);
    store_4(y, wasm_i16x8_shuffle(zero, top, 0, 8, 1, 9, 2, 10, 3, 11));
    store_4(y + 4, wasm_i16x8_shuffle(zero, top, 4, 12, 5, 13, 6, 14, 7, 15));
}
// y[0..16) from the top 16 bits of sixteen float32s given as byte planes: low bytes lo, high bytes hi.
inline void store_top16x16(float* y, v128_t lo, v128_t hi) {
    store_top16x8(y, wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
    store_top16x8(y + 8, wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
}

// F6: 4 elements per 3 bytes (b0 b1 b2 -> 24-bit word, element j in bits 6j..6j+5). 16 elements (12 bytes) at a
// time: each word into a 32-bit lane, its four codes into its four bytes, then the top 16 bits of each float32
// looked up by magnitude (two swizzles per plane: out-of-range indices give 0) with the sign ORed in.
template <const Top16Planes<32>& kPlanes, DequantRowFn kScalar>
void f6_wasm(const uint8_t* src, float* dst, int64_t k) {
    const v128_t lo0 = wasm_v128_load(kPlanes.lo), lo1 = wasm_v128_load(kPlanes.lo + 16);
    const v128_t hi0 = wasm_v128_load(kPlanes.hi), hi1 = wasm_v128_load(kPlanes.hi + 16);
    const v128_t words_of = wasm_i8x16_make(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    int64_t i = 0;
    // 16 bytes are loaded for 12: stop while 4 more remain in the row (k / 4 groups of 3 bytes).
    for (; (i + 16) / 4 * 3 + 4 <= k / 4 * 3; i += 16) {
        const v128_t w = wasm_i8x16_swizzle(load_16(src + i / 4 * 3), words_of);
        const v128_t codes =
            wasm_v128_or(wasm_v128_or(wasm_v128_and(w, wasm_i32x4_splat(0x3f)),
                                      wasm_v128_and(wasm_i32x4_shl(w, 2), wasm_i32x4_splat(0x3f00))),
                         wasm_v128_or(wasm_v128_and(wasm_i32x4_shl(w, 4), wasm_i32x4_splat(0x3f0000)),
                                      wasm_v128_and(wasm_i32x4_shl(w, 6), wasm_i32x4_splat(0x3f000000))));
        const v128_t mag = wasm_v128_and(codes, wasm_i8x16_splat(0x1f));
        const v128_t mag16 = wasm_i8x16_sub(mag, wasm_i8x16_splat(16));  // 0..15 for the upper half, else >= 240
        const v128_t sign = wasm_i16x8_shl(wasm_v128_and(codes, wasm_i8x16_splat(0x20)), 2);
        const v128_t lo = wasm_v128_or(wasm_i8x16_swizzle(lo0, mag), wasm_i8x16_swizzle(lo1, mag16));
        const v128_t hi =
            wasm_v128_or(wasm_v128_or(wasm_i8x16_swizzle(hi0, mag), wasm_i8x16_swizzle(hi1, mag16)), sign);
        store_top16x16(dst + i, lo, hi);
    }
    kScalar(src + i / 4 * 3, dst + i, k - i);
}

// F8: the float32 of every code has its low 16 bits 0, so codes become the top 16 bits of their float32s in
// 16-bit lanes, eight per operation. A normal code's top bits are its exponent and mantissa shifted into place
// plus the difference of the exponent biases; magnitudes below 8 (the subnormals and, for 2 mantissa bits, the
// smallest normals) are looked up in an 8-entry table with one swizzle, whose index bytes 2m and 2m + 1 are out
// of range (giving 0) for every other magnitude. The sign is ORed in, then the codes the format reserves for NaN
// or Inf are patched to the scalar table's bits (NaN is the quiet 0x7fc00000 with the code's sign, unsigned for
// the *fnuz types).
enum class F8Specials { kIeee, kFn, kFnuz };

template <uint32_t kManBits, int32_t kBias, F8Specials kSpecials>
struct F8Format {
    uint8_t small_top16[16];  // the top 16 bits of magnitudes 0..7, little-endian
    v128_t operator()(v128_t c) const {
        const v128_t mag = wasm_v128_and(c, wasm_i16x8_splat(0x7f));
        const v128_t index = wasm_i16x8_add(wasm_i16x8_mul(mag, wasm_i16x8_splat(0x0202)), wasm_i16x8_splat(0x0100));
        const v128_t small = wasm_i8x16_swizzle(wasm_v128_load(small_top16), index);
        const v128_t normal = wasm_i16x8_add(wasm_i16x8_shl(mag, 7 - kManBits),
                                             wasm_i16x8_splat(static_cast<int16_t>((127 - kBias) << 7)));
        const v128_t is_small = wasm_i16x8_eq(wasm_v128_and(mag, wasm_i16x8_splat(0x78)), wasm_i16x8_splat(0));
        v128_t top = wasm_v128_or(small, wasm_v128_andnot(normal, is_small));
        if (kSpecials == F8Specials::kFn) {
            const v128_t nan = wasm_i16x8_eq(mag, wasm_i16x8_splat(0x7f));
            top = wasm_v128_or(wasm_v128_andnot(top, nan), wasm_v128_and(nan, wasm_i16x8_splat(0x7fc0)));
        } else if (kSpecials == F8Specials::kIeee) {  // exponent 31: Inf for mantissa 0, else NaN
            const v128_t inf_nan = wasm_i16x8_eq(wasm_v128_and(mag, wasm_i16x8_splat(0x7c)), wasm_i16x8_splat(0x7c));
            const v128_t inf = wasm_i16x8_eq(mag, wasm_i16x8_splat(0x7c));
            top = wasm_v128_or(
                wasm_v128_andnot(top, inf_nan),
                wasm_v128_and(inf_nan, wasm_v128_bitselect(wasm_i16x8_splat(0x7f80), wasm_i16x8_splat(0x7fc0), inf)));
        }
        top = wasm_v128_or(top, wasm_v128_and(wasm_i16x8_shl(c, 8), wasm_i16x8_splat(static_cast<int16_t>(0x8000))));
        if (kSpecials == F8Specials::kFnuz) {
            const v128_t nan = wasm_i16x8_eq(c, wasm_i16x8_splat(0x80));
            top = wasm_v128_or(wasm_v128_andnot(top, nan), wasm_v128_and(nan, wasm_i16x8_splat(0x7fc0)));
        }
        return top;
    }
};

template <uint32_t kManBits, int32_t kBias, F8Specials kSpecials>
constexpr F8Format<kManBits, kBias, kSpecials> make_f8_format() {
    F8Format<kManBits, kBias, kSpecials> f{};
    for (uint32_t m = 0; m < 8; ++m) {
        const uint32_t top = mx_magnitude_top16(m, kManBits, kBias);
        f.small_top16[2 * m] = static_cast<uint8_t>(top);
        f.small_top16[2 * m + 1] = static_cast<uint8_t>(top >> 8);
    }
    return f;
}
constexpr auto kF8E4M3 = make_f8_format<3, 7, F8Specials::kFn>();
constexpr auto kF8E5M2 = make_f8_format<2, 15, F8Specials::kIeee>();
constexpr auto kF8E4M3Fnuz = make_f8_format<3, 8, F8Specials::kFnuz>();
constexpr auto kF8E5M2Fnuz = make_f8_format<2, 16, F8Specials::kFnuz>();

// e8m0: 2^(c - 127) is float32 bits c << 23, except 0 (the subnormal 2^-127) and 0xff (NaN): both get 0x0040
// ORed into their top 16 bits.
struct F8E8M0 {
    v128_t operator()(v128_t c) const {
        const v128_t odd =
            wasm_v128_or(wasm_i16x8_eq(c, wasm_i16x8_splat(0)), wasm_i16x8_eq(c, wasm_i16x8_splat(0xff)));
        return wasm_v128_or(wasm_i16x8_shl(c, 7), wasm_v128_and(odd, wasm_i16x8_splat(0x0040)));
    }
};
constexpr F8E8M0 kF8E8M0{};

template <const auto& kFormat, DequantRowFn kScalar>
void f8_wasm(const uint8_t* src, float* dst, int64_t k) {
    const v128_t zero = wasm_i8x16_splat(0);
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const v128_t bytes = load_16(src + i);  // zero-extended to 16 bits by interleaving with zero bytes
        store_top16x8(dst + i,
                      kFormat(wasm_i8x16_shuffle(bytes, zero, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23)));
        store_top16x8(dst + i + 8, kFormat(wasm_i8x16_shuffle(bytes, zero, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29,
                                                              14, 30, 15, 31)));
    }
    kScalar(src + i, dst + i, k - i);
}

// F4 (e2m1, two codes per byte, low nibble first): the codes in element order, then the top 16 bits of each
// float32 (sign included) looked up in byte planes of the 16-entry table.
constexpr Top16Planes<16> kF4Planes = make_top16_planes<16>(1, 1, 8);
static_assert(kF4Planes.hi[0x7] == 0x40 && kF4Planes.lo[0x7] == 0xc0 && kF4Planes.hi[0x8] == 0x80, "e2m1: 6, -0");

void f4(const uint8_t* src, float* dst, int64_t k) {
    const v128_t lo_plane = wasm_v128_load(kF4Planes.lo), hi_plane = wasm_v128_load(kF4Planes.hi);
    int64_t i = 0;
    for (; i + 32 <= k; i += 32) {
        const v128_t q = load_16(src + i / 2);
        const v128_t lo = nibbles_lo(q), hi = nibbles_hi(q);
        const v128_t a = wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const v128_t b = wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        store_top16x16(dst + i, wasm_i8x16_swizzle(lo_plane, a), wasm_i8x16_swizzle(hi_plane, a));
        store_top16x16(dst + i + 16, wasm_i8x16_swizzle(lo_plane, b), wasm_i8x16_swizzle(hi_plane, b));
    }
    dequantize_row_f4(src + i / 2, dst + i, k - i);
}

// wasm is little-endian: float32 data is its own bytes, and a large memcpy is the runtime's memmove
// (emscripten_memcpy_big), faster than a load/store loop.
template <int64_t kFloatsPerElement>
void f32_wasm(const uint8_t* src, float* dst, int64_t k) {
    if (k > 0) std::memcpy(dst, src, static_cast<size_t>(k * kFloatsPerElement) * sizeof(float));
}

void bf16(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) {
        const v128_t h = load_16(src + 2 * i);
        store_4(dst + i, wasm_i32x4_shl(wasm_u32x4_extend_low_u16x8(h), 16));
        store_4(dst + i + 4, wasm_i32x4_shl(wasm_u32x4_extend_high_u16x8(h), 16));
    }
    dequantize_row_bf16(src + 2 * i, dst + i, k - i);
}

struct Identity {
    v128_t operator()(v128_t x) const { return x; }
};

void i8(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) store_i8x16(dst + i, load_16(src + i), Identity{});
    dequantize_row_i8(src + i, dst + i, k - i);
}
void u8(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const v128_t v = load_16(src + i);
        const v128_t lo = wasm_u16x8_extend_low_u8x16(v), hi = wasm_u16x8_extend_high_u8x16(v);
        store_4(dst + i, u32_to_f32_minus(wasm_u32x4_extend_low_u16x8(lo), 0.0f));
        store_4(dst + i + 4, u32_to_f32_minus(wasm_u32x4_extend_high_u16x8(lo), 0.0f));
        store_4(dst + i + 8, u32_to_f32_minus(wasm_u32x4_extend_low_u16x8(hi), 0.0f));
        store_4(dst + i + 12, u32_to_f32_minus(wasm_u32x4_extend_high_u16x8(hi), 0.0f));
    }
    dequantize_row_u8(src + i, dst + i, k - i);
}
void boolean(const uint8_t* src, float* dst, int64_t k) {
    const v128_t one = wasm_f32x4_splat(1.0f);
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const v128_t zero8 = wasm_i8x16_eq(load_16(src + i), wasm_i8x16_splat(0));  // 0xff where false
        const v128_t lo = wasm_i16x8_extend_low_i8x16(zero8), hi = wasm_i16x8_extend_high_i8x16(zero8);
        const v128_t lanes[4] = {wasm_i32x4_extend_low_i16x8(lo), wasm_i32x4_extend_high_i16x8(lo),
                                 wasm_i32x4_extend_low_i16x8(hi), wasm_i32x4_extend_high_i16x8(hi)};
        for (int j = 0; j < 4; ++j) store_4(dst + i + 4 * j, wasm_v128_andnot(one, lanes[j]));
    }
    dequantize_row_bool(src + i, dst + i, k - i);
}
void i16(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) store_i16x8(dst + i, load_16(src + 2 * i), Identity{});
    dequantize_row_i16(src + 2 * i, dst + i, k - i);
}
void u16(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) {
        const v128_t v = load_16(src + 2 * i);
        store_4(dst + i, u32_to_f32_minus(wasm_u32x4_extend_low_u16x8(v), 0.0f));
        store_4(dst + i + 4, u32_to_f32_minus(wasm_u32x4_extend_high_u16x8(v), 0.0f));
    }
    dequantize_row_u16(src + 2 * i, dst + i, k - i);
}

// ---- legacy quants ----------------------------------------------------------------------------------------

void q4_0(const uint8_t* src, float* y, int64_t k) {
    const v128_t minus_eight = wasm_f32x4_splat(-8.0f);
    for (int64_t i = 0; i < k / QK4_0; ++i, y += QK4_0) {
        const uint8_t* b = src + i * sizeof(block_q4_0);
        const v128_t q = load_16(b + offsetof(block_q4_0, qs));
        // float(x - 8) * d as ggml writes it: x - 8 is exact in float32 as well.
        store_nibbles32(y, q, AddMul{minus_eight, wasm_f32x4_splat(half(b))});
    }
}

// A block's two f16 scales (d, then m: the 4 bytes at p) as the splats of d and m. Both normal (as in
// practice): scale_half's few integer operations, on both at once in 32-bit lanes; else scale_half each.
inline MulAdd scale_pair(const uint8_t* p) {
    const v128_t h = wasm_u32x4_extend_low_u16x8(wasm_v128_load32_zero(p));  // lanes: d, m, 0, 0
    const v128_t exponent = wasm_v128_and(h, wasm_i32x4_splat(0x7c00));
    const v128_t odd =
        wasm_v128_or(wasm_i32x4_eq(exponent, wasm_i32x4_splat(0)), wasm_i32x4_eq(exponent, wasm_i32x4_splat(0x7c00)));
    if (wasm_i32x4_bitmask(odd) & 3) {
        return MulAdd{wasm_f32x4_splat(half(p)), wasm_f32x4_splat(half(p + 2))};
    }
    const v128_t bits = wasm_v128_or(
        wasm_i32x4_add(wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x7fff)), 13), wasm_i32x4_splat(112 << 23)),
        wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16));
    return MulAdd{wasm_i32x4_shuffle(bits, bits, 0, 0, 0, 0), wasm_i32x4_shuffle(bits, bits, 1, 1, 1, 1)};
}

void q4_1(const uint8_t* src, float* y, int64_t k) {
    static_assert(offsetof(block_q4_1, m) == offsetof(block_q4_1, d) + 2, "d and m are adjacent");
    for (int64_t i = 0; i < k / QK4_1; ++i, y += QK4_1) {
        const uint8_t* b = src + i * sizeof(block_q4_1);
        const v128_t q = load_16(b + offsetof(block_q4_1, qs));
        const MulAdd op = scale_pair(b + offsetof(block_q4_1, d));
        store_nibbles32(y, q, op);
    }
}

// Elements 0..15 and 16..31 of a q5 block: nibble | (bit j of qh) << 4.
inline void q5_values(const uint8_t* qs, uint32_t qh, v128_t* lo, v128_t* hi) {
    const v128_t q = load_16(qs);
    const v128_t sixteen = wasm_i8x16_splat(0x10);
    *lo = wasm_v128_or(nibbles_lo(q), wasm_v128_and(bits_to_bytes(qh & 0xffff), sixteen));
    *hi = wasm_v128_or(nibbles_hi(q), wasm_v128_and(bits_to_bytes(qh >> 16), sixteen));
}

void q5_0(const uint8_t* src, float* y, int64_t k) {
    const v128_t sixteen = wasm_i8x16_splat(16);
    for (int64_t i = 0; i < k / QK5_0; ++i, y += QK5_0) {
        const uint8_t* b = src + i * sizeof(block_q5_0);
        v128_t lo, hi;
        q5_values(b + offsetof(block_q5_0, qs), load_le32(b + offsetof(block_q5_0, qh)), &lo, &hi);
        const Mul op = mul_by(half(b));
        store_i8x16(y, wasm_i8x16_sub(lo, sixteen), op);
        store_i8x16(y + 16, wasm_i8x16_sub(hi, sixteen), op);
    }
}

void q5_1(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK5_1; ++i, y += QK5_1) {
        const uint8_t* b = src + i * sizeof(block_q5_1);
        v128_t lo, hi;
        q5_values(b + offsetof(block_q5_1, qs), load_le32(b + offsetof(block_q5_1, qh)), &lo, &hi);
        const MulAdd op{wasm_f32x4_splat(half(b)), wasm_f32x4_splat(half(b + offsetof(block_q5_1, m)))};
        store_i8x16(y, lo, op);
        store_i8x16(y + 16, hi, op);
    }
}

void q8_0(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK8_0; ++i, y += QK8_0) {
        const uint8_t* b = src + i * sizeof(block_q8_0);
        const Mul op = mul_by(half(b));
        store_i8x16(y, load_16(b + offsetof(block_q8_0, qs)), op);
        store_i8x16(y + 16, load_16(b + offsetof(block_q8_0, qs) + 16), op);
    }
}

void q8_1(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK8_1; ++i, y += QK8_1) {
        const uint8_t* b = src + i * sizeof(block_q8_1);
        const Mul op = mul_by(half(b));
        store_i8x16(y, load_16(b + offsetof(block_q8_1, qs)), op);
        store_i8x16(y + 16, load_16(b + offsetof(block_q8_1, qs) + 16), op);
    }
}

// The reference's d * q equals q * d: one product with at most one NaN operand, which it returns.
void q8_K(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q8_K);
        float d;
        std::memcpy(&d, b + offsetof(block_q8_K, d), sizeof d);
        const Mul op = mul_by(d);
        for (int j = 0; j < QK_K; j += 16, y += 16) store_i8x16(y, load_16(b + offsetof(block_q8_K, qs) + j), op);
    }
}

// ---- 1- and 2-bit types, ternary, FP4 ---------------------------------------------------------------------

void q1_0(const uint8_t* src, float* y, int64_t k) {
    const v128_t sign = wasm_i32x4_splat(static_cast<int32_t>(0x80000000u));
    for (int64_t i = 0; i < k / QK1_0; ++i) {
        const uint8_t* b = src + i * sizeof(block_q1_0);
        const v128_t d_bits = wasm_i32x4_splat(static_cast<int32_t>(f32_to_bits(half(b))));
        for (int h = 0; h < QK1_0 / 16; ++h, y += 16) {
            // 0xff bytes for set bits, widened to 32-bit lanes; a clear bit flips d's sign.
            const v128_t set = bits_to_bytes(load_le16(b + offsetof(block_q1_0, qs) + 2 * h));
            const v128_t lo = wasm_i16x8_extend_low_i8x16(set), hi = wasm_i16x8_extend_high_i8x16(set);
            const v128_t lanes[4] = {wasm_i32x4_extend_low_i16x8(lo), wasm_i32x4_extend_high_i16x8(lo),
                                     wasm_i32x4_extend_low_i16x8(hi), wasm_i32x4_extend_high_i16x8(hi)};
            for (int j = 0; j < 4; ++j) store_4(y + 4 * j, wasm_v128_xor(d_bits, wasm_v128_andnot(sign, lanes[j])));
        }
    }
}

// The 2-bit fields of 4 bytes in element order (byte-major, low bits first), minus 1, as 16 int8 lanes.
inline v128_t crumbs_minus_1(v128_t bytes4) {
    const v128_t rep = wasm_i8x16_swizzle(bytes4, wasm_i8x16_make(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
    // Lane 4j + p keeps field p of byte j (bits 2p..2p+1), then takes the copy shifted down by 2p (no per-lane
    // byte shifts in SIMD128: all four shifts are computed and each lane picks its own).
    const v128_t f0 =
        wasm_v128_and(rep, wasm_i8x16_make(3, 12, 48, -64, 3, 12, 48, -64, 3, 12, 48, -64, 3, 12, 48, -64));
    const v128_t p1 = wasm_u16x8_shr(f0, 2), p2 = wasm_u16x8_shr(f0, 4), p3 = wasm_u16x8_shr(f0, 6);
    const v128_t sel1 = wasm_i32x4_splat(0x0000ff00), sel2 = wasm_i32x4_splat(0x00ff0000);
    const v128_t sel3 = wasm_i32x4_splat(static_cast<int32_t>(0xff000000u)), sel0 = wasm_i32x4_splat(0x000000ff);
    const v128_t v = wasm_v128_or(wasm_v128_or(wasm_v128_and(f0, sel0), wasm_v128_and(p1, sel1)),
                                  wasm_v128_or(wasm_v128_and(p2, sel2), wasm_v128_and(p3, sel3)));
    return wasm_i8x16_sub(v, wasm_i8x16_splat(1));
}

void q2_0(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK2_0; ++i) {
        const uint8_t* b = src + i * sizeof(block_q2_0);
        const Mul op = mul_by(half(b));
        for (int w = 0; w < QK2_0 / 16; ++w, y += 16) {
            const v128_t bytes =
                wasm_i32x4_splat(static_cast<int32_t>(load_le32(b + offsetof(block_q2_0, qs) + 4 * w)));
            store_i8x16(y, crumbs_minus_1(bytes), op);
        }
    }
}

void tq2_0(const uint8_t* src, float* y, int64_t k) {
    const v128_t three = wasm_i8x16_splat(3), one = wasm_i8x16_splat(1);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_tq2_0);
        const Mul op = mul_by(half(b + offsetof(block_tq2_0, d)));
        for (int j = 0; j < 64; j += 32) {
            const v128_t q0 = load_16(b + offsetof(block_tq2_0, qs) + j);
            const v128_t q1 = load_16(b + offsetof(block_tq2_0, qs) + j + 16);
            for (int l = 0; l < 4; ++l, y += 32) {
                store_i8x16(y, wasm_i8x16_sub(wasm_v128_and(wasm_u16x8_shr(q0, 2 * l), three), one), op);
                store_i8x16(y + 16, wasm_i8x16_sub(wasm_v128_and(wasm_u16x8_shr(q1, 2 * l), three), one), op);
            }
        }
    }
}

// 8 TQ1_0 trits from the low 8 bytes: (byte * 3^digit mod 256) * 3 >> 8, minus 1, in 16-bit lanes.
inline void tq1_8(float* y, v128_t bytes, v128_t pow3, const Mul& op) {
    v128_t v = wasm_v128_and(wasm_i16x8_mul(wasm_u16x8_extend_low_u8x16(bytes), pow3), wasm_i16x8_splat(0xff));
    v = wasm_i16x8_sub(wasm_u16x8_shr(wasm_i16x8_mul(v, wasm_i16x8_splat(3)), 8), wasm_i16x8_splat(1));
    store_i16x8(y, v, op);
}

void tq1_0(const uint8_t* src, float* y, int64_t k) {
    static constexpr int16_t kPow3[5] = {1, 3, 9, 27, 81};
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_tq1_0);
        const Mul op = mul_by(half(b + offsetof(block_tq1_0, d)));
        const uint8_t* qs = b + offsetof(block_tq1_0, qs);
        const v128_t q[6] = {load_8(qs),      load_8(qs + 8),  load_8(qs + 16),
                             load_8(qs + 24), load_8(qs + 32), load_8(qs + 40)};
        for (int n = 0; n < 5; ++n, y += 32) {
            const v128_t p = wasm_i16x8_splat(kPow3[n]);
            for (int j = 0; j < 4; ++j) tq1_8(y + 8 * j, q[j], p, op);
        }
        for (int n = 0; n < 5; ++n, y += 16) {
            const v128_t p = wasm_i16x8_splat(kPow3[n]);
            tq1_8(y, q[4], p, op);
            tq1_8(y + 8, q[5], p, op);
        }
        // qh: lane 4n + j is digit n of qh[j].
        const v128_t qh = wasm_i32x4_splat(static_cast<int32_t>(load_le32(b + offsetof(block_tq1_0, qh))));
        tq1_8(y, qh, wasm_i16x8_make(1, 1, 1, 1, 3, 3, 3, 3), op);
        tq1_8(y + 8, qh, wasm_i16x8_make(9, 9, 9, 9, 27, 27, 27, 27), op);
        y += 16;
    }
}

inline v128_t table_16(const int8_t* t) {
    return wasm_v128_load(t);
}

void mxfp4(const uint8_t* src, float* y, int64_t k) {
    const v128_t values = table_16(kvalues_mxfp4);
    for (int64_t i = 0; i < k / QK_MXFP4; ++i, y += QK_MXFP4) {
        const uint8_t* b = src + i * sizeof(block_mxfp4);
        const v128_t q = load_16(b + offsetof(block_mxfp4, qs));
        const Mul op = mul_by(e8m0_to_fp32_half(b[offsetof(block_mxfp4, e)]));
        store_i8x16(y, wasm_i8x16_swizzle(values, nibbles_lo(q)), op);
        store_i8x16(y + 16, wasm_i8x16_swizzle(values, nibbles_hi(q)), op);
    }
}

void nvfp4(const uint8_t* src, float* y, int64_t k) {
    const v128_t values = table_16(kvalues_mxfp4);
    for (int64_t i = 0; i < k / QK_NVFP4; ++i) {
        const uint8_t* b = src + i * sizeof(block_nvfp4);
        for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; ++s, y += QK_NVFP4_SUB) {
            const v128_t q = load_8(b + offsetof(block_nvfp4, qs) + 8 * s);
            // The 8 low nibbles, then the 8 high nibbles.
            const v128_t codes = wasm_i64x2_shuffle(nibbles_lo(q), nibbles_hi(q), 0, 2);
            store_i8x16(y, wasm_i8x16_swizzle(values, codes), mul_by(ue4m3_to_fp32(b[offsetof(block_nvfp4, d) + s])));
        }
    }
}

// ---- k-quants ---------------------------------------------------------------------------------------------

void q2_K(const uint8_t* src, float* y, int64_t k) {
    const v128_t three = wasm_i8x16_splat(3);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q2_K);
        const float d = half(b + offsetof(block_q2_K, d));
        const float min = half(b + offsetof(block_q2_K, dmin));
        const uint8_t* scales = b + offsetof(block_q2_K, scales);
        int is = 0;
        for (int n = 0; n < 2; ++n) {
            const v128_t q0 = load_16(b + offsetof(block_q2_K, qs) + 32 * n);
            const v128_t q1 = load_16(b + offsetof(block_q2_K, qs) + 32 * n + 16);
            for (int shift = 0; shift < 8; shift += 2, y += 32, is += 2) {
                store_i8x16(
                    y, wasm_v128_and(wasm_u16x8_shr(q0, shift), three),
                    mul_sub(d * static_cast<float>(scales[is] & 0x0f), min * static_cast<float>(scales[is] >> 4)));
                store_i8x16(y + 16, wasm_v128_and(wasm_u16x8_shr(q1, shift), three),
                            mul_sub(d * static_cast<float>(scales[is + 1] & 0x0f),
                                    min * static_cast<float>(scales[is + 1] >> 4)));
            }
        }
    }
}

void q3_K(const uint8_t* src, float* y, int64_t k) {
    const v128_t three = wasm_i8x16_splat(3), four = wasm_i8x16_splat(4), zero = wasm_i8x16_splat(0);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q3_K);
        const float d_all = half(b + offsetof(block_q3_K, d));
        int scales[16];
        q3_K_scales(b + offsetof(block_q3_K, scales), scales);
        const v128_t hm[2] = {load_16(b + offsetof(block_q3_K, hmask)), load_16(b + offsetof(block_q3_K, hmask) + 16)};
        int is = 0;
        int bit = 0;
        for (int n = 0; n < 2; ++n) {
            const v128_t q[2] = {load_16(b + offsetof(block_q3_K, qs) + 32 * n),
                                 load_16(b + offsetof(block_q3_K, qs) + 32 * n + 16)};
            for (int shift = 0; shift < 8; shift += 2, ++bit) {
                const v128_t mask = wasm_i8x16_splat(static_cast<int8_t>(1 << bit));
                for (int half16 = 0; half16 < 2; ++half16, ++is, y += 16) {
                    // A clear high bit subtracts 4.
                    const v128_t minus4 = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(hm[half16], mask), zero), four);
                    const v128_t v = wasm_i8x16_sub(wasm_v128_and(wasm_u16x8_shr(q[half16], shift), three), minus4);
                    store_i8x16(y, v, mul_by(d_all * static_cast<float>(scales[is])));
                }
            }
        }
    }
}

template <bool kFifthBit>
void q45_K_wasm(const uint8_t* src, float* y, int64_t k) {
    // q4_K and q5_K share the header (d, dmin, scales); q5_K adds qh before qs.
    constexpr size_t kBlock = kFifthBit ? sizeof(block_q5_K) : sizeof(block_q4_K);
    constexpr size_t kQs = kFifthBit ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    const v128_t one = wasm_i8x16_splat(1);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * kBlock;
        const float d = half(b + offsetof(block_q4_K, d));
        const float min = half(b + offsetof(block_q4_K, dmin));
        float dl[8], ml[8];
        k4_scales(b + offsetof(block_q4_K, scales), d, min, dl, ml);
        v128_t qh[2] = {wasm_i8x16_splat(0), wasm_i8x16_splat(0)};
        if constexpr (kFifthBit) {
            qh[0] = load_16(b + offsetof(block_q5_K, qh));
            qh[1] = load_16(b + offsetof(block_q5_K, qh) + 16);
        }
        for (int g = 0; g < 4; ++g) {
            for (int part = 0; part < 2; ++part, y += 32) {
                const MulSub op = mul_sub(dl[2 * g + part], ml[2 * g + part]);
                for (int h = 0; h < 2; ++h) {
                    const v128_t q = load_16(b + kQs + 32 * g + 16 * h);
                    v128_t v = part == 0 ? nibbles_lo(q) : nibbles_hi(q);
                    if constexpr (kFifthBit) {
                        const v128_t bit = wasm_v128_and(wasm_u16x8_shr(qh[h], 2 * g + part), one);
                        v = wasm_v128_or(v, wasm_i16x8_shl(bit, 4));
                    }
                    store_i8x16(y + 16 * h, v, op);
                }
            }
        }
    }
}

void q6_K(const uint8_t* src, float* y, int64_t k) {
    const v128_t low2 = wasm_i8x16_splat(0x30), bias = wasm_i8x16_splat(32);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q6_K);
        const float d = half(b + offsetof(block_q6_K, d));
        // Output chunk c of 16 elements uses scale c: (d * sc) * q as the reference evaluates d * sc * q.
        float ds[16];
        q6_K_scales(d, b + offsetof(block_q6_K, scales), ds);
        for (int n = 0; n < 2; ++n, y += 128) {
            for (int h = 0; h < 2; ++h) {  // elements l = 16h .. 16h + 15 of each 32-element part
                const v128_t ql0 = load_16(b + offsetof(block_q6_K, ql) + 64 * n + 16 * h);
                const v128_t ql1 = load_16(b + offsetof(block_q6_K, ql) + 64 * n + 32 + 16 * h);
                const v128_t qh = load_16(b + offsetof(block_q6_K, qh) + 32 * n + 16 * h);
                // Bit pair j of each qh byte moved to bits 4..5 (16-bit shifts: the mask drops what crosses bytes).
                const v128_t high[4] = {wasm_v128_and(wasm_i16x8_shl(qh, 4), low2),
                                        wasm_v128_and(wasm_i16x8_shl(qh, 2), low2), wasm_v128_and(qh, low2),
                                        wasm_v128_and(wasm_u16x8_shr(qh, 2), low2)};
                const v128_t low[4] = {nibbles_lo(ql0), nibbles_lo(ql1), nibbles_hi(ql0), nibbles_hi(ql1)};
                for (int part = 0; part < 4; ++part) {
                    const v128_t q = wasm_i8x16_sub(wasm_v128_or(low[part], high[part]), bias);
                    store_i8x16(y + 32 * part + 16 * h, q, mul_by(ds[8 * n + 2 * part + h]));
                }
            }
        }
    }
}

// ---- i-quants ---------------------------------------------------------------------------------------------

void iq2_xxs(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq2_xxs);
        const float d = half(b);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32, y += 32) {
            const uint8_t* p = b + offsetof(block_iq2_xxs, qs) + 8 * ib32;
            const uint32_t aux = load_le32(p + 4);  // four 7-bit sign codes, a 4-bit scale
            const Mul op = mul_by(d * (0.5f + static_cast<float>(aux >> 28)) * 0.25f);
            const SignedGrid g0 = signed_grid(u64x2(iq2xxs_grid[p[0]], iq2xxs_grid[p[1]]),
                                              u64x2(kSignMask7[aux & 127], kSignMask7[(aux >> 7) & 127]));
            const SignedGrid g1 = signed_grid(u64x2(iq2xxs_grid[p[2]], iq2xxs_grid[p[3]]),
                                              u64x2(kSignMask7[(aux >> 14) & 127], kSignMask7[(aux >> 21) & 127]));
            store_i8x16(y, g0, op);
            store_i8x16(y + 16, g1, op);
        }
    }
}

void iq2_xs(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq2_xs);
        const float d = half(b);
        const uint8_t* scales = b + offsetof(block_iq2_xs, scales);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32, y += 32) {
            unsigned q[4];  // 9-bit grid index, 7-bit sign code
            for (int l = 0; l < 4; ++l) q[l] = load_le16(b + offsetof(block_iq2_xs, qs) + 8 * ib32 + 2 * l);
            const SignedGrid g0 = signed_grid(u64x2(iq2xs_grid[q[0] & 511], iq2xs_grid[q[1] & 511]),
                                              u64x2(kSignMask7[q[0] >> 9], kSignMask7[q[1] >> 9]));
            const SignedGrid g1 = signed_grid(u64x2(iq2xs_grid[q[2] & 511], iq2xs_grid[q[3] & 511]),
                                              u64x2(kSignMask7[q[2] >> 9], kSignMask7[q[3] >> 9]));
            store_i8x16(y, g0, mul_by(d * (0.5f + static_cast<float>(scales[ib32] & 0xf)) * 0.25f));
            store_i8x16(y + 16, g1, mul_by(d * (0.5f + static_cast<float>(scales[ib32] >> 4)) * 0.25f));
        }
    }
}

void iq2_s(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq2_s);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq2_s, qs);
        const uint8_t* qh = b + offsetof(block_iq2_s, qh);
        const uint8_t* scales = b + offsetof(block_iq2_s, scales);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32, y += 32) {
            const uint8_t* p = qs + 4 * ib32;
            const uint8_t* s = qs + QK_K / 8 + 4 * ib32;
            const unsigned h = qh[ib32];  // 2 high grid index bits per group of 8
            const SignedGrid g0 =
                signed_grid(u64x2(iq2s_grid[p[0] | ((h << 8) & 0x300)], iq2s_grid[p[1] | ((h << 6) & 0x300)]),
                            u64x2(kSignMask[s[0]], kSignMask[s[1]]));
            const SignedGrid g1 =
                signed_grid(u64x2(iq2s_grid[p[2] | ((h << 4) & 0x300)], iq2s_grid[p[3] | ((h << 2) & 0x300)]),
                            u64x2(kSignMask[s[2]], kSignMask[s[3]]));
            store_i8x16(y, g0, mul_by(d * (0.5f + static_cast<float>(scales[ib32] & 0xf)) * 0.25f));
            store_i8x16(y + 16, g1, mul_by(d * (0.5f + static_cast<float>(scales[ib32] >> 4)) * 0.25f));
        }
    }
}

void iq3_xxs(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq3_xxs);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq3_xxs, qs);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32, y += 32) {
            const uint32_t aux = load_le32(qs + QK_K / 4 + 4 * ib32);
            const uint8_t* p = qs + 8 * ib32;
            const Mul op = mul_by(d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f);
            const SignedGrid g0 =
                signed_grid(u32x4(iq3xxs_grid[p[0]], iq3xxs_grid[p[1]], iq3xxs_grid[p[2]], iq3xxs_grid[p[3]]),
                            u64x2(kSignMask7[aux & 127], kSignMask7[(aux >> 7) & 127]));
            const SignedGrid g1 =
                signed_grid(u32x4(iq3xxs_grid[p[4]], iq3xxs_grid[p[5]], iq3xxs_grid[p[6]], iq3xxs_grid[p[7]]),
                            u64x2(kSignMask7[(aux >> 14) & 127], kSignMask7[(aux >> 21) & 127]));
            store_i8x16(y, g0, op);
            store_i8x16(y + 16, g1, op);
        }
    }
}

void iq3_s(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq3_s);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq3_s, qs);
        const uint8_t* qh = b + offsetof(block_iq3_s, qh);
        const uint8_t* signs = b + offsetof(block_iq3_s, signs);
        const uint8_t* scales = b + offsetof(block_iq3_s, scales);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32, y += 32) {
            const uint8_t* p = qs + 8 * ib32;
            const unsigned h = qh[ib32];  // bit j: the 9th grid index bit of entry j
            uint32_t g[8];
            for (int j = 0; j < 8; ++j) g[j] = iq3s_grid[p[j] | (((h >> j) & 1u) << 8)];
            const uint8_t* s = signs + 4 * ib32;
            const Mul op = mul_by(d * (1 + 2 * ((scales[ib32 / 2] >> (4 * (ib32 % 2))) & 0xf)));
            store_i8x16(y, signed_grid(u32x4(g[0], g[1], g[2], g[3]), u64x2(kSignMask[s[0]], kSignMask[s[1]])), op);
            store_i8x16(y + 16, signed_grid(u32x4(g[4], g[5], g[6], g[7]), u64x2(kSignMask[s[2]], kSignMask[s[3]])),
                        op);
        }
    }
}

inline v128_t iq1_delta(unsigned negative) {
    return wasm_f32x4_splat(negative ? -IQ1S_DELTA : IQ1S_DELTA);
}

void iq1_s(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq1_s);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq1_s, qs);
        for (int ib = 0; ib < QK_K / 32; ++ib, y += 32) {
            // qh per 32 values: 4 x 3 high grid index bits, a 3-bit scale, the delta sign bit.
            const unsigned qh = load_le16(b + offsetof(block_iq1_s, qh) + 2 * ib);
            const AddMul op{iq1_delta(qh & 0x8000), wasm_f32x4_splat(d * (2 * ((qh >> 12) & 7) + 1))};
            const uint8_t* p = qs + 4 * ib;
            store_i8x16(y, u64x2(iq1s_grid[p[0] | ((qh << 8) & 0x700)], iq1s_grid[p[1] | ((qh << 5) & 0x700)]), op);
            store_i8x16(y + 16, u64x2(iq1s_grid[p[2] | ((qh << 2) & 0x700)], iq1s_grid[p[3] | ((qh >> 1) & 0x700)]),
                        op);
        }
    }
}

// d * (x + delta) on 16 int8 lanes: delta_lo for the first 8, delta_hi for the last 8 (one IQ1_M group each).
inline void store_iq1_16(float* y, v128_t q, v128_t d, v128_t delta_lo, v128_t delta_hi) {
    const v128_t u = wasm_v128_xor(q, wasm_i8x16_splat(-128));  // q + 128
    const v128_t a = wasm_u16x8_extend_low_u8x16(u), b = wasm_u16x8_extend_high_u8x16(u);
    const AddMul lo{delta_lo, d}, hi{delta_hi, d};
    store_4(y, lo(u32_to_f32_minus(wasm_u32x4_extend_low_u16x8(a), 128.0f)));
    store_4(y + 4, lo(u32_to_f32_minus(wasm_u32x4_extend_high_u16x8(a), 128.0f)));
    store_4(y + 8, hi(u32_to_f32_minus(wasm_u32x4_extend_low_u16x8(b), 128.0f)));
    store_4(y + 12, hi(u32_to_f32_minus(wasm_u32x4_extend_high_u16x8(b), 128.0f)));
}

void iq1_m(const uint8_t* src, float* y, int64_t k) {
    const v128_t delta[2] = {wasm_f32x4_splat(IQ1S_DELTA), wasm_f32x4_splat(-IQ1S_DELTA)};
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq1_m);
        uint16_t sc[4];
        for (int j = 0; j < 4; ++j) sc[j] = load_le16(b + offsetof(block_iq1_m, scales) + 2 * j);
        const float d = scale_half(static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                         ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
        const uint8_t* qs = b + offsetof(block_iq1_m, qs);
        const uint8_t* qh = b + offsetof(block_iq1_m, qh);
        for (int ib = 0; ib < QK_K / 32; ++ib, y += 32, qs += 4) {
            const v128_t dl0 = wasm_f32x4_splat(d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1));
            const v128_t dl1 = wasm_f32x4_splat(d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1));
            // Each qh nibble: 3 high grid index bits and the delta sign of one group of 8.
            const unsigned h0 = qh[2 * ib], h1 = qh[2 * ib + 1];
            const v128_t g01 = u64x2(iq1s_grid[qs[0] | ((h0 << 8) & 0x700)], iq1s_grid[qs[1] | ((h0 << 4) & 0x700)]);
            const v128_t g23 = u64x2(iq1s_grid[qs[2] | ((h1 << 8) & 0x700)], iq1s_grid[qs[3] | ((h1 << 4) & 0x700)]);
            store_iq1_16(y, g01, dl0, delta[(h0 >> 3) & 1], delta[(h0 >> 7) & 1]);
            store_iq1_16(y + 16, g23, dl1, delta[(h1 >> 3) & 1], delta[(h1 >> 7) & 1]);
        }
    }
}

void iq4_nl(const uint8_t* src, float* y, int64_t k) {
    const v128_t values = table_16(kvalues_iq4nl);
    for (int64_t i = 0; i < k / QK4_NL; ++i, y += QK4_NL) {
        const uint8_t* b = src + i * sizeof(block_iq4_nl);
        const v128_t q = load_16(b + offsetof(block_iq4_nl, qs));
        const Mul op = mul_by(half(b));
        store_i8x16(y, wasm_i8x16_swizzle(values, nibbles_lo(q)), op);
        store_i8x16(y + 16, wasm_i8x16_swizzle(values, nibbles_hi(q)), op);
    }
}

void iq4_xs(const uint8_t* src, float* y, int64_t k) {
    const v128_t values = table_16(kvalues_iq4nl);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq4_xs);
        const float d = half(b);
        const unsigned scales_h = load_le16(b + offsetof(block_iq4_xs, scales_h));
        const uint8_t* scales_l = b + offsetof(block_iq4_xs, scales_l);
        for (int ib = 0; ib < QK_K / 32; ++ib, y += 32) {
            const int ls = ((scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
            const v128_t q = load_16(b + offsetof(block_iq4_xs, qs) + 16 * ib);
            const Mul op = mul_by(d * (ls - 32));
            store_i8x16(y, wasm_i8x16_swizzle(values, nibbles_lo(q)), op);
            store_i8x16(y + 16, wasm_i8x16_swizzle(values, nibbles_hi(q)), op);
        }
    }
}

// The kernels that instantiate the templates above.
void f32(const uint8_t* src, float* dst, int64_t k) {
    f32_wasm<1>(src, dst, k);
}
void c64(const uint8_t* src, float* dst, int64_t k) {
    f32_wasm<2>(src, dst, k);
}
void i64(const uint8_t* src, float* dst, int64_t k) {
    int64_wasm<true, dequantize_row_i64>(src, dst, k);
}
void u64(const uint8_t* src, float* dst, int64_t k) {
    int64_wasm<false, dequantize_row_u64>(src, dst, k);
}
void f8_e4m3(const uint8_t* src, float* dst, int64_t k) {
    f8_wasm<kF8E4M3, dequantize_row_f8_e4m3>(src, dst, k);
}
void f8_e5m2(const uint8_t* src, float* dst, int64_t k) {
    f8_wasm<kF8E5M2, dequantize_row_f8_e5m2>(src, dst, k);
}
void f8_e8m0(const uint8_t* src, float* dst, int64_t k) {
    f8_wasm<kF8E8M0, dequantize_row_f8_e8m0>(src, dst, k);
}
void f8_e4m3fnuz(const uint8_t* src, float* dst, int64_t k) {
    f8_wasm<kF8E4M3Fnuz, dequantize_row_f8_e4m3fnuz>(src, dst, k);
}
void f8_e5m2fnuz(const uint8_t* src, float* dst, int64_t k) {
    f8_wasm<kF8E5M2Fnuz, dequantize_row_f8_e5m2fnuz>(src, dst, k);
}
void f6_e2m3(const uint8_t* src, float* dst, int64_t k) {
    f6_wasm<kF6E2M3Planes, dequantize_row_f6_e2m3>(src, dst, k);
}
void f6_e3m2(const uint8_t* src, float* dst, int64_t k) {
    f6_wasm<kF6E3M2Planes, dequantize_row_f6_e3m2>(src, dst, k);
}
void q4_K(const uint8_t* src, float* dst, int64_t k) {
    q45_K_wasm<false>(src, dst, k);
}
void q5_K(const uint8_t* src, float* dst, int64_t k) {
    q45_K_wasm<true>(src, dst, k);
}

}  // namespace ws::detail::simd128

#endif
