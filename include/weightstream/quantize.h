// SPDX-License-Identifier: MIT
// Quantization: float32 rows -> stored blocks, bit-identical to ggml's ggml_quantize_chunk (ggml-org/ggml
// d99724f2, ggml-quants.c / ggml.c) for every type it can produce here, with and without an importance matrix:
// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K...Q6_K, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0, Q2_0.
// ggml_quantize_chunk's dispatch is followed exactly: without an imatrix most types run quantize_row_<type>_ref,
// with one their importance-weighted search; IQ4_NL/IQ4_XS always run their ntry = 7 search (not
// quantize_row_iq4_nl_ref); Q8_0, TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0 and Q2_0 ignore the imatrix.
//
// Exactness: float32 arithmetic in ggml's operation order (the core is built with -ffp-contract=off: an
// FMA-contracted `x*id + 8.5f` can pick another quant). Where ggml's C converts an out-of-range float to an
// integer (undefined in C; only NaN/Inf inputs, subnormal scales or absurd magnitudes get there), the result is
// what x86 and wasm builds of ggml give (see quantize_internal.h). MXFP4's exponent uses the C library's log2f.
//
// Non-finite input: ggml_quantize_chunk does not validate its floats and neither does this: NaN/Inf give ggml's
// bytes (often a NaN/Inf scale, sometimes a NaN silently quantized to some code), never a crash. llama-quantize
// checks the output instead (ggml_validate_row_data: no NaN/Inf f16 scale or F16/BF16/F32 value, no MXFP4 e 0xff)
// and fails the run; a caller that wants that check runs it on the bytes this writes.
#pragma once

#include <cstdint>

#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws {

// Quantizes nrows rows of n_per_row floats at src into dst as ggml_quantize_chunk(t, src, dst, 0, nrows,
// n_per_row, imatrix) does. dst has room for nrows * (n_per_row / block elements) * block bytes (any alignment).
// imatrix: n_per_row importance weights (one per column, the same for every row), or nullptr.
// Rows are independent: quantizing a tensor row by row gives the same bytes. Any float values are safe.
// Errors (nothing written): kUnsupported with what "dtype" when t cannot be quantized (quantize_supported);
// kBadShape when nrows or n_per_row is negative or n_per_row is not a whole number of blocks; kOverflow when the
// element or byte count exceeds INT64_MAX; kUnsupported with what "imatrix" when t requires an importance matrix
// (quantize_requires_imatrix) and imatrix is nullptr.
Status quantize_rows(DType t, const float* src, int64_t nrows, int64_t n_per_row, const float* imatrix, uint8_t* dst);

// Converts n floats from src into type t at dst: quantize_rows(t, src, 1, n, nullptr, dst) (kOverflow when n
// exceeds INT64_MAX). F32 is copied as bits; F16/BF16 round as ggml_fp32_to_fp16_row / ggml_fp32_to_bf16_row_ref.
Status quantize(DType t, const float* src, uint64_t n, uint8_t* dst);

// True for the types quantize_rows() can produce.
bool quantize_supported(DType t);

// True for the types ggml_quantize_requires_imatrix names: IQ2_XXS, IQ2_XS, IQ1_S.
bool quantize_requires_imatrix(DType t);

// ggml's reference quantizers of Q8_0 and Q4_0: k floats from x into k / 32 blocks at y (34 bytes each for q8_0,
// 18 for q4_0; y at any alignment). k must be a multiple of 32 (a trailing partial block is not written).
void quantize_row_q8_0_ref(const float* x, uint8_t* y, int64_t k);
void quantize_row_q4_0_ref(const float* x, uint8_t* y, int64_t k);

}  // namespace ws
