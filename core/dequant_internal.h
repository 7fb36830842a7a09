// SPDX-License-Identifier: MIT
// Internal to the dequantizers: scalar helpers that the reference kernels and the SIMD kernels must compute
// identically (so they live in one place), and the per-platform kernel tables that dequant_row_fn() picks from.
#pragma once

#include <cstdint>

#include "dequant.h"
#include "dtype.h"

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

// Fast kernels: the kernel of t when this build and the running CPU have one, else nullptr. dequant_row_fn()
// asks them in this order and falls back to the scalar reference.
// x86 (dequant_x86.cpp): AVX2 + F16C kernels, and AVX-512 DQ/VL ones for I64/U64 if allow_avx512 and the CPU
// has them (tests turn that off to check the AVX2 kernels on such CPUs too).
DequantRowFn dequant_row_fn_x86(DType t, bool allow_avx512 = true);
// WebAssembly SIMD128 kernels (dequant_wasm.cpp) when the build has -msimd128; nullptr elsewhere and for the
// types whose scalar kernels are already fast there.
DequantRowFn dequant_row_fn_wasm(DType t);

}  // namespace detail
}  // namespace ws
