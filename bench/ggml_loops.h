// SPDX-License-Identifier: MIT
// ggml's own decoders of a few types, rewritten in this project's style, for the benchmarks to time ours against
// in the same run (no ggml in the repository): the loops ggml runs when it has no SIMD path of its own.
#pragma once

#include "weightstream/dequant.h"
#include "weightstream/dtype.h"

namespace ws::bench {

// ggml's loop for t, nullptr if there is none here. BF16: ggml_bf16_to_fp32_row (ggml.c), `(uint32_t)bits << 16`
// per element; natively it is compiled as ggml's native build compiles it, -O3 at the CPU's widest vector ISA
// (one clone each for AVX-512F, AVX2 and the baseline, picked at load time, standing in for -march=native).
// Q4_0 / Q4_1: dequantize_row_q4_0 / _q4_1 (ggml-quants.c), the per-block scalar loops with ggml's
// ggml_compute_fp16_to_fp32, which emcc -O3 -msimd128 vectorizes (the bench library is built that way in wasm).
// Each gives the same bits as our kernel of t (the benchmarks check that before timing).
DequantRowFn ggml_loop(DType t);

}  // namespace ws::bench
