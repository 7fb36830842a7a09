// SPDX-License-Identifier: MIT
#include "quantize/row_kernels.h"

#include "decode/dequant_internal.h"
#include "weightstream/dequant.h"
#include "weightstream/quantize.h"

namespace ws {
namespace detail {
namespace {

void store_le16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}

void f16_scalar(const float* x, uint8_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) store_le16(y + 2 * i, fp32_to_fp16(x[i]));
}

void bf16_scalar(const float* x, uint8_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) store_le16(y + 2 * i, fp32_to_bf16(x[i]));
}

const RowKernels kScalarRowKernels = {quantize_row_q8_0_ref, f16_scalar, bf16_scalar};

const RowKernels& choose() {
#if defined(__wasm_simd128__)
    return kSimd128RowKernels;
#else
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
    if (x86_features().avx2_f16c) return kAvx2RowKernels;
#endif
    return kScalarRowKernels;
#endif
}

}  // namespace

const RowKernels& row_kernels() {
    static const RowKernels& chosen = choose();
    return chosen;
}

const RowKernels& scalar_row_kernels() {
    return kScalarRowKernels;
}

}  // namespace detail
}  // namespace ws
