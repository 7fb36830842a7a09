// SPDX-License-Identifier: MIT
// The quantizers whose work is element by element or block by block, with no search: Q8_0 and the F16/BF16
// outputs. Each entry gives exactly the bytes of its scalar reference (quantize_row_q8_0_ref, fp32_to_fp16,
// fp32_to_bf16), which stays the oracle and the fallback; the SIMD builds (arch/x86/row_kernels_avx2.cpp,
// arch/wasm/row_kernels_simd128.cpp) run the reference's float operations on several elements at once.
#pragma once

#include <cstdint>

namespace ws {
namespace detail {

struct RowKernels {
    // quantize_row_q8_0_ref: n / 32 blocks of 34 bytes at y (any alignment); n a multiple of 32.
    void (*q8_0)(const float* x, uint8_t* y, int64_t n);
    // fp32_to_fp16 of each of the n values, stored little-endian at y (any alignment).
    void (*f16)(const float* x, uint8_t* y, int64_t n);
    // fp32_to_bf16 of each of the n values, stored little-endian at y (any alignment).
    void (*bf16)(const float* x, uint8_t* y, int64_t n);
};

// The fastest kernels this CPU runs (AVX2 + F16C on x86 when it has them, SIMD128 in the wasm build, else the
// scalar ones), chosen once.
const RowKernels& row_kernels();

// The scalar references (the oracle the tests compare the others with).
const RowKernels& scalar_row_kernels();

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
extern const RowKernels kAvx2RowKernels;  // arch/x86/row_kernels_avx2.cpp, AVX2 + F16C CPUs only
#endif
#if defined(__wasm_simd128__)
extern const RowKernels kSimd128RowKernels;  // arch/wasm/row_kernels_simd128.cpp
#endif

}  // namespace detail
}  // namespace ws
