// SPDX-License-Identifier: MIT
// Q8_0 and the F16/BF16 outputs for the wasm build (-msimd128): each its scalar reference's operations on four
// elements at a time.
// - Q8_0: as the AVX2 kernel (arch/x86/row_kernels_avx2.cpp): a block with a NaN takes the scalar path, else the
//   largest magnitude is a max in any order; x * id rounded half away from zero as the AVX2 kernel does. wasm's
//   conversion saturates where x86's gives INT32_MIN, so the blocks whose quants can leave the int32 range (an Inf in
//   the block, 1/d overflowing) take the scalar path too; the low byte is kept.
// - F16: wasm has no conversion instruction, so fp32_to_fp16's own float trick, lane by lane (the same float
//   multiplications and addition, the same integer arithmetic).
// - BF16: fp32_to_bf16's integer arithmetic, lane by lane.
#include "quantize/row_kernels.h"

#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"
#include "weightstream/quantize.h"

namespace ws {
namespace detail {
namespace {

// (int32_t)roundf(q) for four values of magnitude below 2^31 (see the file comment).
inline v128_t round_to_int32(v128_t q) {
    const v128_t half = wasm_v128_or(wasm_v128_and(q, wasm_f32x4_splat(-0.0f)), wasm_f32x4_splat(0.49999997f));
    return wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(q, half));
}

void q8_0(const float* x, uint8_t* y, int64_t k) {
    const int64_t nb = k / QK8_0;
    const v128_t low_byte = wasm_i32x4_splat(0xff);
    for (int64_t i = 0; i < nb; ++i) {
        const float* xb = x + i * QK8_0;
        uint8_t* yb = y + i * static_cast<int64_t>(sizeof(block_q8_0));
        v128_t v[8];
        v128_t nan = wasm_i32x4_splat(0);
        v128_t m = wasm_f32x4_splat(0.0f);
        for (int j = 0; j < 8; ++j) {
            v[j] = wasm_v128_load(xb + 4 * j);
            nan = wasm_v128_or(nan, wasm_f32x4_ne(v[j], v[j]));
            m = wasm_f32x4_pmax(m, wasm_f32x4_abs(v[j]));  // maxps: a NaN block is not computed here
        }
        // Without NaN, the reference's running MAX() is the largest magnitude, in any order.
        const float amax = std::max(std::max(wasm_f32x4_extract_lane(m, 0), wasm_f32x4_extract_lane(m, 1)),
                                    std::max(wasm_f32x4_extract_lane(m, 2), wasm_f32x4_extract_lane(m, 3)));
        const float d = amax / ((1 << 7) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        // With a finite amax and id, every x * id is within about 127 of zero and the conversion is in range. A NaN
        // (MAX()'s order), an Inf in the block or a d so small that 1/d overflows (NaN/Inf quants, whose int8 is
        // x86's) take the scalar path.
        if (wasm_v128_any_true(nan) || amax == INFINITY || id == INFINITY) {
            quantize_row_q8_0_ref(xb, yb, QK8_0);
            continue;
        }
        const uint16_t dh = fp32_to_fp16(d);
        yb[0] = static_cast<uint8_t>(dh);
        yb[1] = static_cast<uint8_t>(dh >> 8);

        const v128_t vid = wasm_f32x4_splat(id);
        for (int j = 0; j < 8; j += 4) {
            v128_t q[4];
            for (int l = 0; l < 4; ++l) {
                q[l] = wasm_v128_and(round_to_int32(wasm_f32x4_mul(v[j + l], vid)), low_byte);
            }
            // The low bytes (0..255 each) narrow without saturating, in element order.
            const v128_t bytes =
                wasm_u8x16_narrow_i16x8(wasm_u16x8_narrow_i32x4(q[0], q[1]), wasm_u16x8_narrow_i32x4(q[2], q[3]));
            wasm_v128_store(yb + 2 + 4 * j, bytes);
        }
    }
}

// fp32_to_fp16 (weightstream/dequant.h) for four values, operation for operation.
inline v128_t fp32_to_fp16_x4(v128_t f) {
    v128_t base =
        wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_abs(f), wasm_f32x4_splat(0x1p+112f)), wasm_f32x4_splat(0x1p-110f));
    const v128_t shl1_w = wasm_i32x4_add(f, f);
    const v128_t sign = wasm_v128_and(f, wasm_i32x4_splat(static_cast<int32_t>(0x80000000u)));
    const v128_t bias = wasm_u32x4_max(wasm_v128_and(shl1_w, wasm_i32x4_splat(static_cast<int32_t>(0xff000000u))),
                                       wasm_i32x4_splat(0x71000000));
    base = wasm_f32x4_add(wasm_i32x4_add(wasm_u32x4_shr(bias, 1), wasm_i32x4_splat(0x07800000)), base);
    const v128_t exp_bits = wasm_v128_and(wasm_u32x4_shr(base, 13), wasm_i32x4_splat(0x00007c00));
    const v128_t mantissa_bits = wasm_v128_and(base, wasm_i32x4_splat(0x00000fff));
    const v128_t nonsign = wasm_i32x4_add(exp_bits, mantissa_bits);
    const v128_t nan = wasm_u32x4_gt(shl1_w, wasm_i32x4_splat(static_cast<int32_t>(0xff000000u)));
    return wasm_v128_or(wasm_u32x4_shr(sign, 16), wasm_v128_bitselect(wasm_i32x4_splat(0x7e00), nonsign, nan));
}

// n floats to 16-bit codes, eight at a time by `four` (the codes in each 32-bit lane), the rest by `tail`.
template <v128_t (*four)(v128_t)>
void to_16_bits(const float* x, uint8_t* y, int64_t n, void (*tail)(const float*, uint8_t*, int64_t)) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const v128_t a = four(wasm_v128_load(x + i));
        const v128_t b = four(wasm_v128_load(x + i + 4));
        wasm_v128_store(y + 2 * i, wasm_u16x8_narrow_i32x4(a, b));  // each lane 0..0xffff: no saturation
    }
    tail(x + i, y + 2 * i, n - i);
}

void f16(const float* x, uint8_t* y, int64_t n) {
    to_16_bits<fp32_to_fp16_x4>(x, y, n, scalar_row_kernels().f16);
}

// fp32_to_bf16 (weightstream/dequant.h) for four values.
inline v128_t fp32_to_bf16_x4(v128_t u) {
    const v128_t nan = wasm_i32x4_gt(wasm_v128_and(u, wasm_i32x4_splat(0x7fffffff)), wasm_i32x4_splat(0x7f800000));
    const v128_t high = wasm_u32x4_shr(u, 16);
    const v128_t odd = wasm_v128_and(high, wasm_i32x4_splat(1));
    const v128_t rounded = wasm_u32x4_shr(wasm_i32x4_add(u, wasm_i32x4_add(wasm_i32x4_splat(0x7fff), odd)), 16);
    return wasm_v128_bitselect(wasm_v128_or(high, wasm_i32x4_splat(0x40)), rounded, nan);
}

void bf16(const float* x, uint8_t* y, int64_t n) {
    to_16_bits<fp32_to_bf16_x4>(x, y, n, scalar_row_kernels().bf16);
}

}  // namespace

const RowKernels kSimd128RowKernels = {q8_0, f16, bf16};

}  // namespace detail
}  // namespace ws

#endif
