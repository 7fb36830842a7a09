// SPDX-License-Identifier: MIT
// Internal to the dequantizers: scalar helpers that the reference kernels and the SIMD kernels must compute
// identically (so they live in one place), and the kernel table that dequant_row_fn() picks from.
#pragma once

#include <cstdint>

#include "weightstream/dequant.h"
#include "weightstream/dtype.h"

namespace ws {
namespace detail {

// E2M1 values doubled so they are integers (ggml's kvalues_mxfp4 / kvalues_fp4); the block scales are halved
// to compensate.
constexpr int8_t kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// ggml_e8m0_to_fp32_half: 2^(e - 128). e = 0 and 1 are the float32 subnormals 2^-128 and 2^-127; e = 255
// gives 2^127 (ggml does not treat it as NaN).
inline float e8m0_to_fp32_half(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
    return f32_from_bits(bits);
}

// ggml_ue4m3_to_fp32: an unsigned E4M3 (bias 7) scale, halved for the doubled table. 0x00 and 0x7f decode to
// 0; the top bit is ignored otherwise, so 0x80 is 0 and 0xff is 240 (ggml checks 0x7f before masking).
// ggml computes ldexpf(1 + man/8, exp - 7) * 0.5f; every step is exact, so integer * power of two is equal.
inline float ue4m3_to_fp32(uint8_t x) {
    if (x == 0 || x == 0x7f) return 0.0f;
    const int exp = (x >> 3) & 0x0f;
    const int man = x & 0x07;
    // man * 2^-9 * 0.5 for subnormals, (8 + man) * 2^(exp - 10) * 0.5 for normals.
    const int mant = exp == 0 ? man : 8 + man;
    const int pow2 = exp == 0 ? -10 : exp - 11;
    return static_cast<float>(mant) * f32_from_bits(static_cast<uint32_t>(pow2 + 127) << 23);
}

// Scale and min j (0..7) of the 12 packed bytes of q4_K/q5_K: 6 bits each. j < 4: low 6 bits of bytes j and
// j + 4; j >= 4: a nibble of byte j + 4 plus the top 2 bits of bytes j - 4 and j.
inline void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// The 16 signed 6-bit sub-block scales of q3_K from its 12 packed bytes: low nibbles from bytes 0..7, high
// 2 bits from bytes 8..11, biased by 32.
void q3_K_scales(const uint8_t* packed, int scales[16]);

// d * sc of the 16 sub-blocks of a q6_K block (its signed scale bytes): the reference evaluates d * sc * q
// left to right, so every kernel multiplies q by this product.
inline void q6_K_scales(float d, const uint8_t* scale_bytes, float ds[16]) {
    for (int c = 0; c < 16; ++c) ds[c] = d * static_cast<float>(static_cast<int8_t>(scale_bytes[c]));
}

// d * sc and dmin * m of the 8 sub-blocks of a q4_K / q5_K block.
inline void k4_scales(const uint8_t* packed, float d, float min, float dl[8], float ml[8]) {
    for (int j = 0; j < 8; ++j) {
        uint8_t sc = 0, m = 0;
        get_scale_min_k4(j, packed, &sc, &m);
        dl[j] = d * static_cast<float>(sc);
        ml[j] = min * static_cast<float>(m);
    }
}

// kSignBytes[s]: byte j is 0xff where bit j of s is set (element j of a group of 8 negative), else 0. The
// i-quant kernels widen it to a float32 sign-bit mask per lane.
constexpr uint64_t sign_bytes(unsigned s) {
    uint64_t m = 0;
    for (unsigned j = 0; j < 8; ++j) m |= static_cast<uint64_t>((s >> j) & 1u ? 0xffu : 0u) << (8 * j);
    return m;
}

// ---- the kernel table ----------------------------------------------------------------------------------------
// Which ISA files this build compiles (the fast kernels of the others do not exist in it).
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
#define WS_DEQUANT_X86 1
#else
#define WS_DEQUANT_X86 0
#endif
#if defined(__wasm_simd128__)
#define WS_DEQUANT_SIMD128 1
#else
#define WS_DEQUANT_SIMD128 0
#endif

// How the blocks of a type are stored by a big-endian GGUF writer: the multi-byte fields of each block that
// gguf-py's gguf_convert_endian.py byte-swaps (plain types: the element itself).
struct BlockSwap {
    bool defined;        // false: gguf-py has no byte order for this type's blocks (it refuses to convert them)
    uint8_t n_fields;    // fields to reverse in each block (0: the block is bytes only, e.g. MXFP4, I8)
    uint16_t offset[2];  // byte offset of each field in the block
    uint8_t width[2];    // bytes of each field (2, 4 or 8)
};

// One row per DType: everything that decodes its blocks. Adding a dtype is adding its row to kDTypeCodecs
// (dequant.cpp); every column may be empty.
struct DTypeCodec {
    DType dtype;
    DequantRowFn scalar;   // the reference kernel, nullptr: the type has no decoder
    DequantRowFn avx2;     // x86 AVX2 + F16C, used when the CPU has both
    DequantRowFn avx512;   // x86 AVX-512 DQ/VL, preferred over avx2 when the CPU has it
    DequantRowFn simd128;  // WebAssembly SIMD128
    BlockSwap big_endian;  // the fields swap_to_little_endian() reverses
};

// The row of t (an empty row, scalar == nullptr, for unknown ids). Never fails.
const DTypeCodec& dtype_codec(DType t);

// Fast kernels: the kernel of t when this build and the running CPU have one, else nullptr. dequant_row_fn()
// asks them in this order and falls back to the scalar reference.
// x86: AVX2 + F16C kernels, and AVX-512 DQ/VL ones for I64/U64 if allow_avx512 and the CPU has them (tests
// turn that off to check the AVX2 kernels on such CPUs too).
DequantRowFn dequant_row_fn_x86(DType t, bool allow_avx512 = true);
// WebAssembly SIMD128 kernels when the build has -msimd128; nullptr elsewhere.
DequantRowFn dequant_row_fn_wasm(DType t);

// The kernels of the ISA files. Declared with the kernel type so a list of names is a list of functions.
using RowKernel = void(const uint8_t* src, float* dst, int64_t k);
#if WS_DEQUANT_X86
// dequant_x86.cpp
struct X86Features {
    bool avx2_f16c = false;    // AVX2 and F16C, with the OS saving the YMM state
    bool avx512dq_vl = false;  // AVX-512 F, DQ and VL, with the OS saving the ZMM state
};
const X86Features& x86_features();  // detected once, by CPUID and XGETBV
namespace avx2 {
RowKernel f32, c64, f16, bf16, f64, i8, i16, i32, i64, u8, u16, u32, u64, boolean, f8_e4m3, f8_e5m2, f8_e8m0,
    f8_e4m3fnuz, f8_e5m2fnuz, f6_e2m3, f6_e3m2, f4, q4_0, q4_1, q5_0, q5_1, q8_0, q8_1, q2_K, q3_K, q4_K, q5_K, q6_K,
    q8_K, iq2_xxs, iq2_xs, iq3_xxs, iq1_s, iq4_nl, iq3_s, iq2_s, iq4_xs, iq1_m, tq1_0, tq2_0, mxfp4, nvfp4, q1_0, q2_0;
RowKernel i64_avx512, u64_avx512;  // AVX-512 DQ/VL
}  // namespace avx2
#endif
#if WS_DEQUANT_SIMD128
// dequant_wasm.cpp
namespace simd128 {
RowKernel f32, c64, f16, bf16, f64, i8, i16, i32, i64, u8, u16, u32, u64, boolean, f8_e4m3, f8_e5m2, f8_e8m0,
    f8_e4m3fnuz, f8_e5m2fnuz, f6_e2m3, f6_e3m2, f4, q4_0, q4_1, q5_0, q5_1, q8_0, q8_1, q2_K, q3_K, q4_K, q5_K, q6_K,
    q8_K, iq2_xxs, iq2_xs, iq3_xxs, iq1_s, iq4_nl, iq3_s, iq2_s, iq4_xs, iq1_m, tq1_0, tq2_0, mxfp4, nvfp4, q1_0, q2_0;
}  // namespace simd128
#endif

}  // namespace detail
}  // namespace ws
