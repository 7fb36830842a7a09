// SPDX-License-Identifier: MIT
// x86 kernels (AVX2 + F16C) for every decodable type, chosen at run time when the CPU has both (plus AVX-512
// DQ/VL for the 64-bit integers when present); the build itself stays at the x86-64 baseline. Each kernel is
// its scalar reference (dequantize_row_<type>) with the same float32 operations on the same operands, eight
// lanes at a time, so the results are the same bits:
// - quants become small integers (pshufb table lookups for 4-bit value tables, shifts and masks for packed
//   bits), then float32 exactly, then the reference's products in the reference's order;
// - i-quant signs flip the sign bit of each product db * g (an XOR), as the reference does;
// - small floats become binary16 bits that F16C widens, then an exact power-of-two scale (no table lookups);
// - no FMA: the target is "avx2,f16c" without "fma", and the build has -ffp-contract=off besides.
// Loads stay inside each block's bytes and element-wise types finish with the scalar kernel, so nothing
// outside src/dst is touched.
#include "decode/dequant_internal.h"

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/le_bytes.h"
#include "decode/dequant_iquants.h"
#include "decode/iquant_tables.h"
#include "weightstream/quant_blocks.h"

#define WS_AVX2 __attribute__((target("avx2,f16c")))

namespace ws {
namespace detail {
namespace avx2 {

// ---- building blocks --------------------------------------------------------------------------------------

WS_AVX2 inline __m128i load_8(const uint8_t* p) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
}
WS_AVX2 inline __m128i load_16(const uint8_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
WS_AVX2 inline __m256i load_32(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
// A binary16 scale field as float32: vcvtph2ps gives fp16_to_fp32's bits for all 65536 codes (tested).
WS_AVX2 inline float half(const uint8_t* p) {
    return _cvtsh_ss(load_le16(p));
}

// The float operation applied to each converted quant x, spelled as its scalar reference spells it.
struct Mul {  // x * d (legacy quants, i-quants: the product is commutative and only d can be NaN)
    __m256 d;
    WS_AVX2 __m256 operator()(__m256 x) const { return _mm256_mul_ps(x, d); }
};
struct MulAdd {  // x * d + m (Q4_1, Q5_1)
    __m256 d, m;
    WS_AVX2 __m256 operator()(__m256 x) const { return _mm256_add_ps(_mm256_mul_ps(x, d), m); }
};
struct MulSub {  // d * x - m (k-quants)
    __m256 d, m;
    WS_AVX2 __m256 operator()(__m256 x) const { return _mm256_sub_ps(_mm256_mul_ps(d, x), m); }
};
struct AddMul {  // d * (x + delta) (IQ1_S, IQ1_M)
    __m256 delta, d;
    WS_AVX2 __m256 operator()(__m256 x) const { return _mm256_mul_ps(d, _mm256_add_ps(x, delta)); }
};

// y[0..8) from the low 8 int8 lanes of q; y[0..16) from 16; y[0..32) from 32.
template <typename Op>
WS_AVX2 inline void store_i8x8(float* y, __m128i q, const Op& op) {
    _mm256_storeu_ps(y, op(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q))));
}
template <typename Op>
WS_AVX2 inline void store_i8x16(float* y, __m128i q, const Op& op) {
    store_i8x8(y, q, op);
    store_i8x8(y + 8, _mm_unpackhi_epi64(q, q), op);
}
// From 32 int8 in memory: vpmovsxbd reads each 8 straight from memory, saving the shuffle-port extracts that
// taking them out of a register costs (those shuffles, not arithmetic, bound these kernels).
template <typename Op>
WS_AVX2 inline void store_i8x32_mem(float* y, const int8_t* q, const Op& op) {
    for (int j = 0; j < 32; j += 8) store_i8x8(y + j, load_8(reinterpret_cast<const uint8_t*>(q + j)), op);
}
template <typename Op>
WS_AVX2 inline void store_i8x32(float* y, __m256i q, const Op& op) {
    alignas(32) int8_t buf[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(buf), q);
    store_i8x32_mem(y, buf, op);
}
// The same with a different operation for each half of 16.
template <typename Op>
WS_AVX2 inline void store_i8x32(float* y, __m256i q, const Op& op0, const Op& op1) {
    store_i8x16(y, _mm256_castsi256_si128(q), op0);
    store_i8x16(y + 16, _mm256_extracti128_si256(q, 1), op1);
}

WS_AVX2 inline __m128i nibbles_lo(__m128i q) {
    return _mm_and_si128(q, _mm_set1_epi8(0x0f));
}
WS_AVX2 inline __m128i nibbles_hi(__m128i q) {
    return _mm_and_si128(_mm_srli_epi16(q, 4), _mm_set1_epi8(0x0f));
}
WS_AVX2 inline __m256i nibbles_lo(__m256i q) {
    return _mm256_and_si256(q, _mm256_set1_epi8(0x0f));
}
WS_AVX2 inline __m256i nibbles_hi(__m256i q) {
    return _mm256_and_si256(_mm256_srli_epi16(q, 4), _mm256_set1_epi8(0x0f));
}
// The 32 elements of a q4_0-style 16-byte nibble array in element order: low nibbles, then high nibbles.
WS_AVX2 inline __m256i unpack_nibbles_32(const uint8_t* qs) {
    const __m128i q = load_16(qs);
    return _mm256_set_m128i(nibbles_hi(q), nibbles_lo(q));
}
// Byte j = 0xff where bit j of bits is set, else 0.
WS_AVX2 inline __m256i bits_to_bytes(uint32_t bits) {
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                                               _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                                                2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}
// A 16-entry int8 table in both 128-bit lanes, for pshufb lookups.
WS_AVX2 inline __m256i table_16(const int8_t* t) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t));
    return _mm256_set_m128i(v, v);
}

// Sign bits: lane j of kSignLanes[s] is 0x80000000 where bit j of s is set, else 0 (8 KiB).
struct SignLanes {
    alignas(32) uint32_t lane[8];
};
constexpr std::array<SignLanes, 256> make_sign_lanes() {
    std::array<SignLanes, 256> t{};
    for (unsigned s = 0; s < 256; ++s) {
        for (unsigned j = 0; j < 8; ++j) t[s].lane[j] = ((s >> j) & 1u) << 31;
    }
    return t;
}
alignas(32) constexpr std::array<SignLanes, 256> kSignLanes = make_sign_lanes();

// 8 grid values (non-negative int8) as int32 and the sign bits to flip in their products (bit j of the sign
// byte set = lane j negative). The flip comes after the product, as in the reference (NaN signs included).
struct SignedGrid8 {
    __m256i g;
    __m256i sign;
};
// From an 8-byte grid entry in memory.
WS_AVX2 inline SignedGrid8 grid8_signed(const uint64_t* entry, uint8_t signs) {
    return {_mm256_cvtepi8_epi32(load_8(reinterpret_cast<const uint8_t*>(entry))),
            _mm256_load_si256(reinterpret_cast<const __m256i*>(kSignLanes[signs].lane))};
}
// From two 4-byte grid entries.
WS_AVX2 inline SignedGrid8 grid4x2_signed(uint32_t first, uint32_t second, uint8_t signs) {
    const __m128i pair = _mm_set_epi32(0, 0, static_cast<int>(second), static_cast<int>(first));
    return {_mm256_cvtepi8_epi32(pair), _mm256_load_si256(reinterpret_cast<const __m256i*>(kSignLanes[signs].lane))};
}
template <typename Op>
WS_AVX2 inline void store_i32x8(float* y, __m256i v, const Op& op) {
    _mm256_storeu_ps(y, op(_mm256_cvtepi32_ps(v)));
}
template <typename Op>
WS_AVX2 inline void store_i32x8(float* y, const SignedGrid8& v, const Op& op) {
    _mm256_storeu_ps(y, _mm256_xor_ps(op(_mm256_cvtepi32_ps(v.g)), _mm256_castsi256_ps(v.sign)));
}

WS_AVX2 inline __m256i set1(uint32_t v) {
    return _mm256_set1_epi32(static_cast<int>(v));
}

// Decodes the first (at most 7) elements with the scalar kernel so that the vector loop's stores start on a
// 32-byte boundary: a store straddling two cache lines costs about twice as much, and large buffers from
// malloc typically start 16 bytes past one. Returns the number of elements done.
inline int64_t align_dst(DequantRowFn scalar, const uint8_t* src, float* dst, int64_t k) {
    const auto misalignment = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & 31);
    const int64_t n = std::min<int64_t>(k, ((32 - misalignment) & 31) / static_cast<int64_t>(sizeof(float)));
    scalar(src, dst, n);
    return n;
}

// Sources of 8 bytes per element read twice the bytes they write: ask for them 2 KiB ahead (prefetches never
// fault, so running past the end of src is harmless; the address is formed as an integer).
inline void prefetch_ahead(const uint8_t* p) {
    _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + 2048), _MM_HINT_T0);
}

// ---- plain floats and integers ----------------------------------------------------------------------------

// Bits copied verbatim, like the reference (signalling NaNs kept). k == 0 may come with null pointers.
void f32(const uint8_t* src, float* dst, int64_t k) {
    if (k > 0) std::memcpy(dst, src, static_cast<size_t>(k) * sizeof(float));
}
void c64(const uint8_t* src, float* dst, int64_t k) {
    if (k > 0) std::memcpy(dst, src, static_cast<size_t>(k) * 2 * sizeof(float));
}

WS_AVX2 void f16(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_f16, src, dst, k);
    for (; i + 16 <= k; i += 16) {
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(load_16(src + 2 * i)));
        _mm256_storeu_ps(dst + i + 8, _mm256_cvtph_ps(load_16(src + 2 * i + 16)));
    }
    dequantize_row_f16(src + 2 * i, dst + i, k - i);
}

// Outputs of at least this many bytes are written by BF16 with streaming (non-temporal) stores: a buffer that
// size does not stay in a core's caches for its reader anyway, and skipping the read-for-ownership of each
// line doubles the store bandwidth of this memory-bound kernel (measured: docs/SPEED.md, "Against ggml's own
// loops"). Smaller outputs use ordinary stores, so a caller that reads them at once finds them in cache.
constexpr int64_t kBf16StreamingBytes = int64_t{4} << 20;

WS_AVX2 void bf16(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_bf16, src, dst, k);
    const __m256i zero = _mm256_setzero_si256();
    // align_dst makes dst + i 32-byte aligned, as _mm256_stream_si256 requires, unless dst is not even a
    // float's alignment; such a dst takes the ordinary stores.
    if (k * static_cast<int64_t>(sizeof(float)) >= kBf16StreamingBytes &&
        (reinterpret_cast<uintptr_t>(dst + i) & 31) == 0) {
        for (; i + 16 <= k; i += 16) {
            const __m256i v = load_32(src + 2 * i);
            const __m256i lo = _mm256_unpacklo_epi16(zero, v);  // elements 0-3, 8-11
            const __m256i hi = _mm256_unpackhi_epi16(zero, v);  // elements 4-7, 12-15
            _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_permute2x128_si256(lo, hi, 0x20));
            _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
        }
        _mm_sfence();  // the streamed lines are visible before this call returns, as ordinary stores would be
    }
    for (; i + 16 <= k; i += 16) {
        const __m256i v = load_32(src + 2 * i);
        // Interleaving a zero below each bf16 gives its float32 bits; lanes keep 128-bit halves together.
        const __m256i lo = _mm256_unpacklo_epi16(zero, v);  // elements 0-3, 8-11
        const __m256i hi = _mm256_unpackhi_epi16(zero, v);  // elements 4-7, 12-15
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
    dequantize_row_bf16(src + 2 * i, dst + i, k - i);
}

WS_AVX2 void f64(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_f64, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        prefetch_ahead(src + 8 * i);
        const __m128 a = _mm256_cvtpd_ps(_mm256_loadu_pd(reinterpret_cast<const double*>(src + 8 * i)));
        const __m128 b = _mm256_cvtpd_ps(_mm256_loadu_pd(reinterpret_cast<const double*>(src + 8 * i + 32)));
        _mm256_storeu_ps(dst + i, _mm256_set_m128(b, a));
    }
    dequantize_row_f64(src + 8 * i, dst + i, k - i);
}

WS_AVX2 void i8(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_i8, src, dst, k);
    for (; i + 8 <= k; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(load_8(src + i))));
    dequantize_row_i8(src + i, dst + i, k - i);
}
WS_AVX2 void u8(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_u8, src, dst, k);
    for (; i + 8 <= k; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(load_8(src + i))));
    dequantize_row_u8(src + i, dst + i, k - i);
}
WS_AVX2 void boolean(const uint8_t* src, float* dst, int64_t k) {
    const __m256i zero = _mm256_setzero_si256();
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = align_dst(dequantize_row_bool, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        const __m256i is_zero = _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(load_8(src + i)), zero);
        _mm256_storeu_ps(dst + i, _mm256_andnot_ps(_mm256_castsi256_ps(is_zero), one));
    }
    dequantize_row_bool(src + i, dst + i, k - i);
}
WS_AVX2 void i16(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_i16, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(load_16(src + 2 * i))));
    }
    dequantize_row_i16(src + 2 * i, dst + i, k - i);
}
WS_AVX2 void u16(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_u16, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(load_16(src + 2 * i))));
    }
    dequantize_row_u16(src + 2 * i, dst + i, k - i);
}
WS_AVX2 void i32(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_i32, src, dst, k);
    for (; i + 8 <= k; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(load_32(src + 4 * i)));
    dequantize_row_i32(src + 4 * i, dst + i, k - i);
}
// u = hi * 65536 + lo with both halves exact in float32; the one rounding of the sum is the correct one.
WS_AVX2 void u32(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_u32, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        const __m256i u = load_32(src + 4 * i);
        const __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(u, 16));
        const __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(u, _mm256_set1_epi32(0xffff)));
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_mul_ps(hi, _mm256_set1_ps(65536.0f)), lo));
    }
    dequantize_row_u32(src + 4 * i, dst + i, k - i);
}

// 64-bit integers -> float32 rounded to nearest even, as one cvtsi2ss would, without AVX-512: a value of 2^53
// or more first has its low 11 bits collapsed into a sticky bit 11 (they all lie below the float32 rounding
// bit, so only whether any is set matters), which makes it exact in a double; doubles are built exactly from
// 32-bit halves with the 2^84 / 2^52 magic numbers, and cvtpd2ps then rounds once.
WS_AVX2 inline __m256d u64_to_pd_exact_for_float(__m256i u) {
    const __m256i zero = _mm256_setzero_si256();
    const __m256i low11 = _mm256_set1_epi64x(0x7ff);
    const __m256i small = _mm256_cmpeq_epi64(_mm256_srli_epi64(u, 53), zero);
    const __m256i low_zero = _mm256_cmpeq_epi64(_mm256_and_si256(u, low11), zero);
    const __m256i folded =
        _mm256_or_si256(_mm256_andnot_si256(low11, u), _mm256_andnot_si256(low_zero, _mm256_set1_epi64x(0x800)));
    const __m256i v = _mm256_blendv_epi8(folded, u, small);
    const __m256i hi = _mm256_or_si256(_mm256_srli_epi64(v, 32), _mm256_set1_epi64x(0x4530000000000000));
    const __m256i lo = _mm256_or_si256(_mm256_blend_epi32(v, zero, 0xaa), _mm256_set1_epi64x(0x4330000000000000));
    const __m256d hi_minus = _mm256_sub_pd(_mm256_castsi256_pd(hi), _mm256_set1_pd(0x1.00000001p84));
    return _mm256_add_pd(hi_minus, _mm256_castsi256_pd(lo));
}
WS_AVX2 void u64(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_u64, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        prefetch_ahead(src + 8 * i);
        const __m128 a = _mm256_cvtpd_ps(u64_to_pd_exact_for_float(load_32(src + 8 * i)));
        const __m128 b = _mm256_cvtpd_ps(u64_to_pd_exact_for_float(load_32(src + 8 * i + 32)));
        _mm256_storeu_ps(dst + i, _mm256_set_m128(b, a));
    }
    dequantize_row_u64(src + 8 * i, dst + i, k - i);
}
// Signed: convert |x| and give the double x's sign (rounding to nearest even is symmetric).
WS_AVX2 inline __m128 i64_to_ps(__m256i x) {
    const __m256i neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
    const __m256i magnitude = _mm256_sub_epi64(_mm256_xor_si256(x, neg), neg);
    const __m256d d = u64_to_pd_exact_for_float(magnitude);
    const __m256d sign = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_srli_epi64(neg, 63), 63));
    return _mm256_cvtpd_ps(_mm256_or_pd(d, sign));
}
WS_AVX2 void i64(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_i64, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        prefetch_ahead(src + 8 * i);
        const __m128 a = i64_to_ps(load_32(src + 8 * i));
        const __m128 b = i64_to_ps(load_32(src + 8 * i + 32));
        _mm256_storeu_ps(dst + i, _mm256_set_m128(b, a));
    }
    dequantize_row_i64(src + 8 * i, dst + i, k - i);
}

// With AVX-512 DQ + VL the CPU converts 64-bit integers itself, rounding as cvtsi2ss does.
#define WS_AVX512DQ __attribute__((target("avx2,f16c,avx512f,avx512dq,avx512vl")))

WS_AVX512DQ void i64_avx512(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_i64, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        prefetch_ahead(src + 8 * i);
        const __m128 a = _mm256_cvtepi64_ps(load_32(src + 8 * i));
        const __m128 b = _mm256_cvtepi64_ps(load_32(src + 8 * i + 32));
        _mm256_storeu_ps(dst + i, _mm256_set_m128(b, a));
    }
    dequantize_row_i64(src + 8 * i, dst + i, k - i);
}
WS_AVX512DQ void u64_avx512(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_u64, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        prefetch_ahead(src + 8 * i);
        const __m128 a = _mm256_cvtepu64_ps(load_32(src + 8 * i));
        const __m128 b = _mm256_cvtepu64_ps(load_32(src + 8 * i + 32));
        _mm256_storeu_ps(dst + i, _mm256_set_m128(b, a));
    }
    dequantize_row_u64(src + 8 * i, dst + i, k - i);
}

// ---- small floats ------------------------------------------------------------------------------------------
// Every F8/F6/F4 value is exactly a binary16 number times a power of two, so a code becomes binary16 bits (its
// exponent and mantissa bits shifted into place, its sign at bit 15) that vcvtph2ps widens exactly, subnormals
// included, and one exact multiplication by 2^(15 - bias) fixes the exponent. Codes whose value binary16
// cannot carry this way (NaN, the top exponent of e5m2fnuz) are patched in the 16-bit lanes first. NaNs come
// out as the quiet 0x7fc00000 with the code's sign: binary16 0x7e00 | sign widens to it and stays it when
// scaled.

WS_AVX2 inline __m256i set1_16(int v) {
    return _mm256_set1_epi16(static_cast<short>(v));
}

// Codes in 16 lanes of 16 bits -> binary16 bits, for a format with kExpBits exponent and kManBits mantissa bits
// (sign bit above them) and no special codes.
template <int kExpBits, int kManBits>
WS_AVX2 inline __m256i code_to_half(__m256i c) {
    constexpr int kMagBits = kExpBits + kManBits;
    const __m256i mag = _mm256_and_si256(c, set1_16((1 << kMagBits) - 1));
    const __m256i sign = _mm256_slli_epi16(_mm256_srli_epi16(c, kMagBits), 15);
    return _mm256_or_si256(_mm256_slli_epi16(mag, 10 - kManBits), sign);
}
// Lanes where mask is set become the quiet NaN 0x7e00 with sign_bits' sign (or without, if sign_bits is 0).
WS_AVX2 inline __m256i with_nan(__m256i half, __m256i mask, __m256i sign_bits) {
    const __m256i nan = _mm256_or_si256(set1_16(0x7e00), sign_bits);
    return _mm256_blendv_epi8(half, nan, mask);
}

struct F8E4M3 {  // e4m3fn: 0x7f / 0xff are NaN
    static constexpr float kScale = 0x1p8f;
    WS_AVX2 __m256i operator()(__m256i c) const {
        const __m256i is_nan = _mm256_cmpeq_epi16(_mm256_and_si256(c, set1_16(0x7f)), set1_16(0x7f));
        return with_nan(code_to_half<4, 3>(c), is_nan, _mm256_slli_epi16(_mm256_srli_epi16(c, 7), 15));
    }
};
struct F8E5M2 {  // e5m2 is binary16's top byte; only NaN payloads need the patch
    static constexpr float kScale = 1.0f;
    WS_AVX2 __m256i operator()(__m256i c) const {
        const __m256i is_nan = _mm256_cmpgt_epi16(_mm256_and_si256(c, set1_16(0x7f)), set1_16(0x7c));
        return with_nan(_mm256_slli_epi16(c, 8), is_nan, _mm256_slli_epi16(_mm256_srli_epi16(c, 7), 15));
    }
};
struct F8E4M3Fnuz {  // bias 8; 0x80 is the one NaN (unsigned)
    static constexpr float kScale = 0x1p7f;
    WS_AVX2 __m256i operator()(__m256i c) const {
        return with_nan(code_to_half<4, 3>(c), _mm256_cmpeq_epi16(c, set1_16(0x80)), _mm256_setzero_si256());
    }
};
// Bias 16, and exponent 31 is finite: exponents e >= 2 are written as binary16 exponent e - 1 (same bias then);
// e = 0 and 1 (values (e * 4 + m) * 2^-17) are the binary16 subnormals (e * 4 + m) << 7. No scaling needed.
struct F8E5M2Fnuz {
    static constexpr float kScale = 1.0f;
    WS_AVX2 __m256i operator()(__m256i c) const {
        const __m256i mag = _mm256_and_si256(c, set1_16(0x7f));
        const __m256i sign = _mm256_slli_epi16(_mm256_srli_epi16(c, 7), 15);
        const __m256i normal = _mm256_sub_epi16(_mm256_slli_epi16(mag, 8), set1_16(0x400));
        const __m256i subnormal = _mm256_slli_epi16(mag, 7);
        const __m256i half =
            _mm256_or_si256(_mm256_blendv_epi8(normal, subnormal, _mm256_cmpgt_epi16(set1_16(8), mag)), sign);
        return with_nan(half, _mm256_cmpeq_epi16(c, set1_16(0x80)), _mm256_setzero_si256());
    }
};
template <int kExpBits, int kManBits, int kBias>  // OCP MX e2m3 / e3m2 / e2m1: no Inf or NaN
struct MxFloat {
    static constexpr float kScale = static_cast<float>(1u << (15 - kBias));
    WS_AVX2 __m256i operator()(__m256i c) const { return code_to_half<kExpBits, kManBits>(c); }
};

// 16 codes (16-bit lanes) -> y[0..16).
template <typename Code>
WS_AVX2 inline void store_codes16(float* y, __m256i codes, const Code& code) {
    const __m256i half = code(codes);
    const __m256 scale = _mm256_set1_ps(Code::kScale);
    _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(half)), scale));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(_mm256_cvtph_ps(_mm256_extracti128_si256(half, 1)), scale));
}

template <typename Code, void (*kScalar)(const uint8_t*, float*, int64_t)>
WS_AVX2 void f8_avx2(const uint8_t* src, float* dst, int64_t k) {
    const Code code;
    int64_t i = align_dst(kScalar, src, dst, k);
    for (; i + 16 <= k; i += 16) store_codes16(dst + i, _mm256_cvtepu8_epi16(load_16(src + i)), code);
    kScalar(src + i, dst + i, k - i);
}

// e8m0: 2^(c - 127) is float32 bits c << 23, except 0 (the subnormal 2^-127) and 0xff (NaN).
WS_AVX2 void f8_e8m0(const uint8_t* src, float* dst, int64_t k) {
    int64_t i = align_dst(dequantize_row_f8_e8m0, src, dst, k);
    for (; i + 8 <= k; i += 8) {
        const __m256i c = _mm256_cvtepu8_epi32(load_8(src + i));
        __m256i v = _mm256_slli_epi32(c, 23);
        v = _mm256_blendv_epi8(v, _mm256_set1_epi32(0x00400000), _mm256_cmpeq_epi32(c, _mm256_setzero_si256()));
        v = _mm256_blendv_epi8(v, _mm256_set1_epi32(0x7fc00000), _mm256_cmpeq_epi32(c, _mm256_set1_epi32(0xff)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), v);
    }
    dequantize_row_f8_e8m0(src + i, dst + i, k - i);
}

// F6: 4 elements per 3 bytes (b0 b1 b2 -> 24-bit word, element j in bits 6j..6j+5). Each 16-bit lane takes
// the two bytes holding its element; multiplying by 2^(10 - shift) and shifting right by 10 leaves the 6 bits
// (AVX2 has no per-lane 16-bit shift).
template <typename Code, void (*kScalar)(const uint8_t*, float*, int64_t)>
WS_AVX2 void f6_avx2(const uint8_t* src, float* dst, int64_t k) {
    const Code code;
    const __m256i pairs = _mm256_setr_epi8(0, 1, 0, 1, 1, 2, 1, 2, 3, 4, 3, 4, 4, 5, 4, 5,  //
                                           6, 7, 6, 7, 7, 8, 7, 8, 9, 10, 9, 10, 10, 11, 10, 11);
    const __m256i to_top = _mm256_setr_epi16(1 << 10, 1 << 4, 1 << 6, 1, 1 << 10, 1 << 4, 1 << 6, 1,  //
                                             1 << 10, 1 << 4, 1 << 6, 1, 1 << 10, 1 << 4, 1 << 6, 1);
    int64_t i = 0;
    // 16 elements use 12 bytes; the 16-byte load stays in bounds while 24 elements (18 bytes) remain.
    for (; i + 24 <= k; i += 16) {
        const __m256i bytes = _mm256_broadcastsi128_si256(load_16(src + i / 4 * 3));
        const __m256i codes = _mm256_srli_epi16(_mm256_mullo_epi16(_mm256_shuffle_epi8(bytes, pairs), to_top), 10);
        store_codes16(dst + i, codes, code);
    }
    kScalar(src + i / 4 * 3, dst + i, k - i);
}

WS_AVX2 void f4(const uint8_t* src, float* dst, int64_t k) {
    const MxFloat<2, 1, 1> code;  // e2m1
    int64_t i = 0;
    for (; i + 32 <= k; i += 32) {
        const __m128i bytes = load_16(src + i / 2);
        const __m128i lo = nibbles_lo(bytes), hi = nibbles_hi(bytes);
        store_codes16(dst + i, _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(lo, hi)), code);  // low nibble first
        store_codes16(dst + i + 16, _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(lo, hi)), code);
    }
    dequantize_row_f4(src + i / 2, dst + i, k - i);
}

// ---- legacy quants ----------------------------------------------------------------------------------------

WS_AVX2 void q4_0(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK4_0; ++i, y += QK4_0) {
        const uint8_t* b = src + i * sizeof(block_q4_0);
        const __m256i q = _mm256_sub_epi8(unpack_nibbles_32(b + offsetof(block_q4_0, qs)), _mm256_set1_epi8(8));
        store_i8x32(y, q, Mul{_mm256_set1_ps(half(b))});
    }
}

WS_AVX2 void q4_1(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK4_1; ++i, y += QK4_1) {
        const uint8_t* b = src + i * sizeof(block_q4_1);
        const MulAdd op{_mm256_set1_ps(half(b + offsetof(block_q4_1, d))),
                        _mm256_set1_ps(half(b + offsetof(block_q4_1, m)))};
        store_i8x32(y, unpack_nibbles_32(b + offsetof(block_q4_1, qs)), op);
    }
}

// Nibbles plus the 5th bits of qh (bit j for element j) at 0x10.
WS_AVX2 inline __m256i q5_values(const uint8_t* qs, const uint8_t* qh) {
    const __m256i high = _mm256_and_si256(bits_to_bytes(load_le32(qh)), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(unpack_nibbles_32(qs), high);
}

WS_AVX2 void q5_0(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK5_0; ++i, y += QK5_0) {
        const uint8_t* b = src + i * sizeof(block_q5_0);
        const __m256i q = _mm256_sub_epi8(q5_values(b + offsetof(block_q5_0, qs), b + offsetof(block_q5_0, qh)),
                                          _mm256_set1_epi8(16));
        store_i8x32(y, q, Mul{_mm256_set1_ps(half(b))});
    }
}

WS_AVX2 void q5_1(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK5_1; ++i, y += QK5_1) {
        const uint8_t* b = src + i * sizeof(block_q5_1);
        const MulAdd op{_mm256_set1_ps(half(b + offsetof(block_q5_1, d))),
                        _mm256_set1_ps(half(b + offsetof(block_q5_1, m)))};
        store_i8x32(y, q5_values(b + offsetof(block_q5_1, qs), b + offsetof(block_q5_1, qh)), op);
    }
}

WS_AVX2 void q8_0(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK8_0; ++i, y += QK8_0) {
        const uint8_t* b = src + i * sizeof(block_q8_0);
        store_i8x32_mem(y, reinterpret_cast<const int8_t*>(b + offsetof(block_q8_0, qs)), Mul{_mm256_set1_ps(half(b))});
    }
}

WS_AVX2 void q8_1(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK8_1; ++i, y += QK8_1) {
        const uint8_t* b = src + i * sizeof(block_q8_1);
        store_i8x32_mem(y, reinterpret_cast<const int8_t*>(b + offsetof(block_q8_1, qs)), Mul{_mm256_set1_ps(half(b))});
    }
}

// The reference's d * q equals q * d: one product with at most one NaN operand, which it returns.
WS_AVX2 void q8_K(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q8_K);
        float d;
        std::memcpy(&d, b + offsetof(block_q8_K, d), sizeof d);
        const Mul op{_mm256_set1_ps(d)};
        const int8_t* qs = reinterpret_cast<const int8_t*>(b + offsetof(block_q8_K, qs));
        for (int j = 0; j < QK_K; j += 32, y += 32) store_i8x32_mem(y, qs + j, op);
    }
}

// ---- 1- and 2-bit types, ternary, FP4 ---------------------------------------------------------------------

WS_AVX2 void q1_0(const uint8_t* src, float* y, int64_t k) {
    // Element 8w + j of a 32-bit word w: shift its bit to bit 31; a clear bit flips d's sign.
    const __m256i to_top[4] = {
        _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24), _mm256_setr_epi32(23, 22, 21, 20, 19, 18, 17, 16),
        _mm256_setr_epi32(15, 14, 13, 12, 11, 10, 9, 8), _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0)};
    const __m256i sign = set1(0x80000000u);
    for (int64_t i = 0; i < k / QK1_0; ++i) {
        const uint8_t* b = src + i * sizeof(block_q1_0);
        const __m256i d_bits = set1(f32_to_bits(half(b)));
        for (int w = 0; w < QK1_0 / 32; ++w, y += 32) {
            const __m256i word = set1(load_le32(b + offsetof(block_q1_0, qs) + 4 * w));
            for (int s = 0; s < 4; ++s) {
                const __m256i flip = _mm256_andnot_si256(_mm256_sllv_epi32(word, to_top[s]), sign);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + 8 * s), _mm256_xor_si256(d_bits, flip));
            }
        }
    }
}

WS_AVX2 void q2_0(const uint8_t* src, float* y, int64_t k) {
    const __m256i shift_lo = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const __m256i shift_hi = _mm256_setr_epi32(16, 18, 20, 22, 24, 26, 28, 30);
    const __m256i three = set1(3), one = set1(1);
    for (int64_t i = 0; i < k / QK2_0; ++i) {
        const uint8_t* b = src + i * sizeof(block_q2_0);
        const Mul op{_mm256_set1_ps(half(b))};
        for (int w = 0; w < QK2_0 / 16; ++w, y += 16) {
            const __m256i word = set1(load_le32(b + offsetof(block_q2_0, qs) + 4 * w));
            const __m256i q0 = _mm256_sub_epi32(_mm256_and_si256(_mm256_srlv_epi32(word, shift_lo), three), one);
            const __m256i q1 = _mm256_sub_epi32(_mm256_and_si256(_mm256_srlv_epi32(word, shift_hi), three), one);
            _mm256_storeu_ps(y, op(_mm256_cvtepi32_ps(q0)));
            _mm256_storeu_ps(y + 8, op(_mm256_cvtepi32_ps(q1)));
        }
    }
}

WS_AVX2 void tq2_0(const uint8_t* src, float* y, int64_t k) {
    const __m256i three = set1(3), one = set1(1);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_tq2_0);
        const Mul op{_mm256_set1_ps(half(b + offsetof(block_tq2_0, d)))};
        for (int j = 0; j < 64; j += 32) {
            // Each 8 bytes widen to 32-bit lanes straight from memory, once per 2-bit field.
            for (int l = 0; l < 4; ++l) {
                const __m128i shift = _mm_cvtsi32_si128(2 * l);
                for (int m = 0; m < 32; m += 8, y += 8) {
                    const __m256i v = _mm256_cvtepu8_epi32(load_8(b + offsetof(block_tq2_0, qs) + j + m));
                    store_i32x8(y, _mm256_sub_epi32(_mm256_and_si256(_mm256_srl_epi32(v, shift), three), one), op);
                }
            }
        }
    }
}

// 16 TQ1_0 trits: lane j's byte times its power of three (mod 256) brings the wanted base-3 digit to the top,
// and * 3 >> 8 reads it (the reference's tq1_trit, in 16-bit lanes).
WS_AVX2 inline void tq1_16(float* y, __m128i bytes, __m256i pow3, const Mul& op) {
    __m256i v = _mm256_and_si256(_mm256_mullo_epi16(_mm256_cvtepu8_epi16(bytes), pow3), _mm256_set1_epi16(0xff));
    v = _mm256_sub_epi16(_mm256_srli_epi16(_mm256_mullo_epi16(v, _mm256_set1_epi16(3)), 8), _mm256_set1_epi16(1));
    _mm256_storeu_ps(y, op(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(v)))));
    _mm256_storeu_ps(y + 8, op(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(v, 1)))));
}

WS_AVX2 void tq1_0(const uint8_t* src, float* y, int64_t k) {
    static constexpr int16_t kPow3[5] = {1, 3, 9, 27, 81};
    const __m256i pow3_qh = _mm256_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27);
    const __m128i spread_qh = _mm_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_tq1_0);
        const Mul op{_mm256_set1_ps(half(b + offsetof(block_tq1_0, d)))};
        const uint8_t* qs = b + offsetof(block_tq1_0, qs);
        const __m128i q0 = load_16(qs), q1 = load_16(qs + 16), q2 = load_16(qs + 32);
        for (int n = 0; n < 5; ++n, y += 32) {
            const __m256i p = _mm256_set1_epi16(kPow3[n]);
            tq1_16(y, q0, p, op);
            tq1_16(y + 16, q1, p, op);
        }
        for (int n = 0; n < 5; ++n, y += 16) tq1_16(y, q2, _mm256_set1_epi16(kPow3[n]), op);
        // qh: 4 bytes, 4 digits each, digit-major: lane 4n + j is digit n of qh[j].
        const __m128i qh = _mm_cvtsi32_si128(static_cast<int>(load_le32(b + offsetof(block_tq1_0, qh))));
        tq1_16(y, _mm_shuffle_epi8(qh, spread_qh), pow3_qh, op);
        y += 16;
    }
}

WS_AVX2 void mxfp4(const uint8_t* src, float* y, int64_t k) {
    const __m256i values = table_16(kvalues_mxfp4);
    for (int64_t i = 0; i < k / QK_MXFP4; ++i, y += QK_MXFP4) {
        const uint8_t* b = src + i * sizeof(block_mxfp4);
        const __m256i q = _mm256_shuffle_epi8(values, unpack_nibbles_32(b + offsetof(block_mxfp4, qs)));
        store_i8x32(y, q, Mul{_mm256_set1_ps(e8m0_to_fp32_half(b[offsetof(block_mxfp4, e)]))});
    }
}

WS_AVX2 void nvfp4(const uint8_t* src, float* y, int64_t k) {
    const __m256i values = table_16(kvalues_mxfp4);
    for (int64_t i = 0; i < k / QK_NVFP4; ++i) {
        const uint8_t* b = src + i * sizeof(block_nvfp4);
        const __m256i q = load_32(b + offsetof(block_nvfp4, qs));
        const __m256i lo = _mm256_shuffle_epi8(values, nibbles_lo(q));
        const __m256i hi = _mm256_shuffle_epi8(values, nibbles_hi(q));
        // Sub-block s: its 8 bytes' low nibbles, then their high nibbles.
        const __m256i first = _mm256_unpacklo_epi64(lo, hi);   // sub-blocks 0 and 2
        const __m256i second = _mm256_unpackhi_epi64(lo, hi);  // sub-blocks 1 and 3
        const uint8_t* d = b + offsetof(block_nvfp4, d);
        store_i8x16(y + 0, _mm256_castsi256_si128(first), Mul{_mm256_set1_ps(ue4m3_to_fp32(d[0]))});
        store_i8x16(y + 16, _mm256_castsi256_si128(second), Mul{_mm256_set1_ps(ue4m3_to_fp32(d[1]))});
        store_i8x16(y + 32, _mm256_extracti128_si256(first, 1), Mul{_mm256_set1_ps(ue4m3_to_fp32(d[2]))});
        store_i8x16(y + 48, _mm256_extracti128_si256(second, 1), Mul{_mm256_set1_ps(ue4m3_to_fp32(d[3]))});
        y += QK_NVFP4;
    }
}

// ---- k-quants ---------------------------------------------------------------------------------------------

WS_AVX2 void q2_K(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q2_K);
        const float d = half(b + offsetof(block_q2_K, d));
        const float min = half(b + offsetof(block_q2_K, dmin));
        const uint8_t* scales = b + offsetof(block_q2_K, scales);
        int is = 0;
        for (int n = 0; n < 2; ++n) {
            const __m256i q = load_32(b + offsetof(block_q2_K, qs) + 32 * n);
            for (int shift = 0; shift < 8; shift += 2, y += 32, is += 2) {
                const __m256i v = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(3));
                const MulSub op0{_mm256_set1_ps(d * static_cast<float>(scales[is] & 0x0f)),
                                 _mm256_set1_ps(min * static_cast<float>(scales[is] >> 4))};
                const MulSub op1{_mm256_set1_ps(d * static_cast<float>(scales[is + 1] & 0x0f)),
                                 _mm256_set1_ps(min * static_cast<float>(scales[is + 1] >> 4))};
                store_i8x32(y, v, op0, op1);
            }
        }
    }
}

WS_AVX2 void q3_K(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q3_K);
        const float d_all = half(b + offsetof(block_q3_K, d));
        int scales[16];
        q3_K_scales(b + offsetof(block_q3_K, scales), scales);
        const __m256i hmask = load_32(b + offsetof(block_q3_K, hmask));
        int is = 0;
        int bit = 0;
        for (int n = 0; n < 2; ++n) {
            const __m256i q = load_32(b + offsetof(block_q3_K, qs) + 32 * n);
            for (int shift = 0; shift < 8; shift += 2, y += 32, is += 2, ++bit) {
                const __m256i low =
                    _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(3));
                // A clear high bit subtracts 4.
                const __m256i high = _mm256_and_si256(hmask, _mm256_set1_epi8(static_cast<char>(1 << bit)));
                const __m256i minus4 =
                    _mm256_and_si256(_mm256_cmpeq_epi8(high, _mm256_setzero_si256()), _mm256_set1_epi8(4));
                const Mul op0{_mm256_set1_ps(d_all * static_cast<float>(scales[is]))};
                const Mul op1{_mm256_set1_ps(d_all * static_cast<float>(scales[is + 1]))};
                store_i8x32(y, _mm256_sub_epi8(low, minus4), op0, op1);
            }
        }
    }
}

WS_AVX2 void q4_K(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q4_K);
        float dl[8], ml[8];
        k4_scales(b + offsetof(block_q4_K, scales), half(b + offsetof(block_q4_K, d)),
                  half(b + offsetof(block_q4_K, dmin)), dl, ml);
        for (int g = 0; g < 4; ++g, y += 64) {
            const __m256i q = load_32(b + offsetof(block_q4_K, qs) + 32 * g);
            store_i8x32(y, nibbles_lo(q), MulSub{_mm256_set1_ps(dl[2 * g]), _mm256_set1_ps(ml[2 * g])});
            store_i8x32(y + 32, nibbles_hi(q), MulSub{_mm256_set1_ps(dl[2 * g + 1]), _mm256_set1_ps(ml[2 * g + 1])});
        }
    }
}

WS_AVX2 void q5_K(const uint8_t* src, float* y, int64_t k) {
    const __m256i one = _mm256_set1_epi8(1);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q5_K);
        float dl[8], ml[8];
        k4_scales(b + offsetof(block_q5_K, scales), half(b + offsetof(block_q5_K, d)),
                  half(b + offsetof(block_q5_K, dmin)), dl, ml);
        const __m256i qh = load_32(b + offsetof(block_q5_K, qh));
        for (int g = 0; g < 4; ++g, y += 64) {
            const __m256i q = load_32(b + offsetof(block_q5_K, qs) + 32 * g);
            // Bits 2g and 2g + 1 of each qh byte, moved to 0x10 (the 16-bit shifts keep them inside their byte).
            const __m256i h1 =
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g)), one), 4);
            const __m256i h2 =
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g + 1)), one), 4);
            store_i8x32(y, _mm256_or_si256(nibbles_lo(q), h1),
                        MulSub{_mm256_set1_ps(dl[2 * g]), _mm256_set1_ps(ml[2 * g])});
            store_i8x32(y + 32, _mm256_or_si256(nibbles_hi(q), h2),
                        MulSub{_mm256_set1_ps(dl[2 * g + 1]), _mm256_set1_ps(ml[2 * g + 1])});
        }
    }
}

WS_AVX2 void q6_K(const uint8_t* src, float* y, int64_t k) {
    const __m256i three = _mm256_set1_epi8(3), bias = _mm256_set1_epi8(32);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_q6_K);
        const float d = half(b + offsetof(block_q6_K, d));
        // Output chunk c of 16 elements uses scale c: (d * sc) * q as the reference evaluates d * sc * q.
        float ds[16];
        q6_K_scales(d, b + offsetof(block_q6_K, scales), ds);
        for (int n = 0; n < 2; ++n, y += 128) {
            const __m256i ql0 = load_32(b + offsetof(block_q6_K, ql) + 64 * n);
            const __m256i ql1 = load_32(b + offsetof(block_q6_K, ql) + 64 * n + 32);
            const __m256i qh = load_32(b + offsetof(block_q6_K, qh) + 32 * n);
            const __m256i h[4] = {_mm256_and_si256(qh, three), _mm256_and_si256(_mm256_srli_epi16(qh, 2), three),
                                  _mm256_and_si256(_mm256_srli_epi16(qh, 4), three),
                                  _mm256_and_si256(_mm256_srli_epi16(qh, 6), three)};
            const __m256i low[4] = {nibbles_lo(ql0), nibbles_lo(ql1), nibbles_hi(ql0), nibbles_hi(ql1)};
            for (int part = 0; part < 4; ++part) {
                const __m256i q = _mm256_sub_epi8(_mm256_or_si256(low[part], _mm256_slli_epi16(h[part], 4)), bias);
                const float* s = ds + 8 * n + 2 * part;
                store_i8x32(y + 32 * part, q, Mul{_mm256_set1_ps(s[0])}, Mul{_mm256_set1_ps(s[1])});
            }
        }
    }
}

// ---- i-quants ---------------------------------------------------------------------------------------------
// Grid entries convert straight from the grid tables and signs come from kSignLanes: loads rather than
// shuffles, which are what bound these kernels.

WS_AVX2 void iq2_xxs(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq2_xxs);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq2_xxs, qs);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            // Four grid index bytes, then four 7-bit sign codes and a 4-bit scale.
            const uint8_t* p = qs + 8 * ib32;
            const uint32_t aux = load_le32(p + 4);
            const Mul op{_mm256_set1_ps(d * (0.5f + static_cast<float>(aux >> 28)) * 0.25f)};
            for (int l = 0; l < 4; ++l, y += 8) {
                store_i32x8(y, grid8_signed(&iq2xxs_grid[p[l]], ksigns_iq2xs[(aux >> 7 * l) & 127]), op);
            }
        }
    }
}

WS_AVX2 void iq2_xs(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq2_xs);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq2_xs, qs);
        const uint8_t* scales = b + offsetof(block_iq2_xs, scales);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const Mul op[2] = {Mul{_mm256_set1_ps(d * (0.5f + static_cast<float>(scales[ib32] & 0xf)) * 0.25f)},
                               Mul{_mm256_set1_ps(d * (0.5f + static_cast<float>(scales[ib32] >> 4)) * 0.25f)}};
            for (int l = 0; l < 4; ++l, y += 8) {
                const unsigned q = load_le16(qs + 8 * ib32 + 2 * l);  // 9-bit grid index, 7-bit sign code
                store_i32x8(y, grid8_signed(&iq2xs_grid[q & 511], ksigns_iq2xs[q >> 9]), op[l / 2]);
            }
        }
    }
}

WS_AVX2 void iq2_s(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq2_s);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq2_s, qs);
        const uint8_t* sign_bytes = qs + QK_K / 8;
        const uint8_t* qh = b + offsetof(block_iq2_s, qh);
        const uint8_t* scales = b + offsetof(block_iq2_s, scales);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const Mul op[2] = {Mul{_mm256_set1_ps(d * (0.5f + static_cast<float>(scales[ib32] & 0xf)) * 0.25f)},
                               Mul{_mm256_set1_ps(d * (0.5f + static_cast<float>(scales[ib32] >> 4)) * 0.25f)}};
            for (int l = 0; l < 4; ++l, y += 8) {
                // 10-bit grid index: the byte plus 2 bits of qh per group of 8.
                const unsigned index = qs[4 * ib32 + l] | ((qh[ib32] << (8 - 2 * l)) & 0x300);
                store_i32x8(y, grid8_signed(&iq2s_grid[index], sign_bytes[4 * ib32 + l]), op[l / 2]);
            }
        }
    }
}

WS_AVX2 void iq3_xxs(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq3_xxs);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq3_xxs, qs);
        const uint8_t* scales_and_signs = qs + QK_K / 4;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const uint32_t aux = load_le32(scales_and_signs + 4 * ib32);
            const Mul op{_mm256_set1_ps(d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f)};
            const uint8_t* p = qs + 8 * ib32;
            for (int l = 0; l < 4; ++l, y += 8) {
                const SignedGrid8 v = grid4x2_signed(iq3xxs_grid[p[2 * l]], iq3xxs_grid[p[2 * l + 1]],
                                                     ksigns_iq2xs[(aux >> 7 * l) & 127]);
                store_i32x8(y, v, op);
            }
        }
    }
}

WS_AVX2 void iq3_s(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq3_s);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq3_s, qs);
        const uint8_t* qh = b + offsetof(block_iq3_s, qh);
        const uint8_t* sign_bytes = b + offsetof(block_iq3_s, signs);
        const uint8_t* scales = b + offsetof(block_iq3_s, scales);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const int sc = (scales[ib32 / 2] >> (4 * (ib32 % 2))) & 0xf;
            const Mul op{_mm256_set1_ps(d * (1 + 2 * sc))};
            // 9-bit grid index: the byte plus bit j of this group's qh byte for entry j.
            const uint8_t* p = qs + 8 * ib32;
            const unsigned h = qh[ib32];
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint32_t g0 = iq3s_grid[p[2 * l] | (((h >> (2 * l)) & 1u) << 8)];
                const uint32_t g1 = iq3s_grid[p[2 * l + 1] | (((h >> (2 * l + 1)) & 1u) << 8)];
                store_i32x8(y, grid4x2_signed(g0, g1, sign_bytes[4 * ib32 + l]), op);
            }
        }
    }
}

WS_AVX2 inline __m256i grid8(const uint64_t* entry) {
    return _mm256_cvtepi8_epi32(load_8(reinterpret_cast<const uint8_t*>(entry)));
}
WS_AVX2 inline __m256 iq1_delta(unsigned negative) {
    return _mm256_set1_ps(negative ? -IQ1S_DELTA : IQ1S_DELTA);
}

WS_AVX2 void iq1_s(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq1_s);
        const float d = half(b);
        const uint8_t* qs = b + offsetof(block_iq1_s, qs);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            // qh per 32 values: 4 x 3 high grid index bits, a 3-bit scale, the delta sign bit.
            const unsigned qh = load_le16(b + offsetof(block_iq1_s, qh) + 2 * ib);
            const AddMul op{iq1_delta(qh & 0x8000), _mm256_set1_ps(d * (2 * ((qh >> 12) & 7) + 1))};
            for (int l = 0; l < 4; ++l, y += 8) {
                store_i32x8(y, grid8(&iq1s_grid[qs[4 * ib + l] | (((qh >> 3 * l) & 7) << 8)]), op);
            }
        }
    }
}

// +-IQ1S_DELTA in all lanes, loaded rather than broadcast (a broadcast from a register is a shuffle-port uop).
struct DeltaLanes {
    alignas(32) float lane[8];
};
alignas(32) constexpr DeltaLanes kIq1Deltas[2] = {
    {{IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA, IQ1S_DELTA}},
    {{-IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA, -IQ1S_DELTA}}};

WS_AVX2 void iq1_m(const uint8_t* src, float* y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq1_m);
        uint16_t sc[4];
        for (int j = 0; j < 4; ++j) sc[j] = load_le16(b + offsetof(block_iq1_m, scales) + 2 * j);
        const uint16_t scale =
            static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = _cvtsh_ss(scale);
        const uint8_t* qs = b + offsetof(block_iq1_m, qs);
        const uint8_t* qh = b + offsetof(block_iq1_m, qh);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            // Two 3-bit scales per 32 values, one per half of 16.
            const __m256 dl[2] = {_mm256_set1_ps(d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1)),
                                  _mm256_set1_ps(d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1))};
            for (int l = 0; l < 4; ++l, y += 8) {
                // Each qh nibble: 3 high grid index bits and the delta sign of one group of 8.
                const unsigned h = qh[2 * ib + l / 2] >> (4 * (l % 2));
                const AddMul op{_mm256_load_ps(kIq1Deltas[(h >> 3) & 1].lane), dl[l / 2]};
                store_i32x8(y, grid8(&iq1s_grid[qs[4 * ib + l] | ((h & 7) << 8)]), op);
            }
        }
    }
}

WS_AVX2 void iq4_nl(const uint8_t* src, float* y, int64_t k) {
    const __m256i values = table_16(kvalues_iq4nl);
    for (int64_t i = 0; i < k / QK4_NL; ++i, y += QK4_NL) {
        const uint8_t* b = src + i * sizeof(block_iq4_nl);
        const __m256i q = _mm256_shuffle_epi8(values, unpack_nibbles_32(b + offsetof(block_iq4_nl, qs)));
        store_i8x32(y, q, Mul{_mm256_set1_ps(half(b))});
    }
}

WS_AVX2 void iq4_xs(const uint8_t* src, float* y, int64_t k) {
    const __m256i values = table_16(kvalues_iq4nl);
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const uint8_t* b = src + i * sizeof(block_iq4_xs);
        const float d = half(b);
        const unsigned scales_h = load_le16(b + offsetof(block_iq4_xs, scales_h));
        const uint8_t* scales_l = b + offsetof(block_iq4_xs, scales_l);
        const uint8_t* qs = b + offsetof(block_iq4_xs, qs);
        for (int ib = 0; ib < QK_K / 32; ++ib, y += 32) {
            const int ls = ((scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
            const __m256i q = _mm256_shuffle_epi8(values, unpack_nibbles_32(qs + 16 * ib));
            store_i8x32(y, q, Mul{_mm256_set1_ps(d * (ls - 32))});
        }
    }
}

// The kernels that instantiate the templates above.
WS_AVX2 void f8_e4m3(const uint8_t* src, float* dst, int64_t k) {
    f8_avx2<F8E4M3, dequantize_row_f8_e4m3>(src, dst, k);
}
WS_AVX2 void f8_e5m2(const uint8_t* src, float* dst, int64_t k) {
    f8_avx2<F8E5M2, dequantize_row_f8_e5m2>(src, dst, k);
}
WS_AVX2 void f8_e4m3fnuz(const uint8_t* src, float* dst, int64_t k) {
    f8_avx2<F8E4M3Fnuz, dequantize_row_f8_e4m3fnuz>(src, dst, k);
}
WS_AVX2 void f8_e5m2fnuz(const uint8_t* src, float* dst, int64_t k) {
    f8_avx2<F8E5M2Fnuz, dequantize_row_f8_e5m2fnuz>(src, dst, k);
}
WS_AVX2 void f6_e2m3(const uint8_t* src, float* dst, int64_t k) {
    f6_avx2<MxFloat<2, 3, 1>, dequantize_row_f6_e2m3>(src, dst, k);
}
WS_AVX2 void f6_e3m2(const uint8_t* src, float* dst, int64_t k) {
    f6_avx2<MxFloat<3, 2, 3>, dequantize_row_f6_e3m2>(src, dst, k);
}

}  // namespace avx2

namespace {

// CPU features from CPUID, each only if the OS also saves the registers it needs (XCR0): the compilers'
// __builtin_cpu_supports does not know "f16c" in every version we build with.
X86Features detect_cpu() {
    X86Features f;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, f16c = (c >> 29) & 1;
    if (!osxsave || !avx) return f;
    unsigned xcr0 = 0, xcr0_high = 0;
    __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
    const bool ymm_state = (xcr0 & 0x06) == 0x06;  // SSE and AVX registers
    const bool zmm_state = (xcr0 & 0xe6) == 0xe6;  // plus opmask and the upper ZMM halves
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
    const bool avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1, avx512dq = (b >> 17) & 1, avx512vl = (b >> 31) & 1;
    f.avx2_f16c = ymm_state && avx2 && f16c;
    f.avx512dq_vl = f.avx2_f16c && zmm_state && avx512f && avx512dq && avx512vl;
    return f;
}

}  // namespace

const X86Features& x86_features() {
    static const X86Features kCpu = detect_cpu();
    return kCpu;
}

}  // namespace detail
}  // namespace ws

#endif
