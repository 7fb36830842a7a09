// SPDX-License-Identifier: MIT
// Quantization: float32 -> stored blocks, bit-identical to ggml's reference quantizers (ggml-quants.c
// quantize_row_<type>_ref, which ggml_quantize_chunk uses for these types without an importance matrix)
// and to ggml's row conversions for F16 and BF16.
//
// Exactness: float32 arithmetic in ggml's operation order (the core is built with -ffp-contract=off: an
// FMA-contracted `x*id + 8.5f` can pick another quant). Where ggml's C converts an out-of-range float to
// int8_t (undefined in C; only NaN/Inf inputs or subnormal scales get there), the result is what x86 and
// wasm builds of ggml give: the low byte of the 32-bit truncation, whose out-of-range value is INT32_MIN.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "status.h"

namespace ws {

// Quantizes k floats from x into k / 32 blocks at y (34 bytes each for q8_0, 18 for q4_0; y at any
// alignment). k must be a multiple of 32 (a trailing partial block is not written). Any float values are
// safe, NaN and Inf included. Rows are independent: quantizing a tensor row by row gives the same bytes.
void quantize_row_q8_0_ref(const float* x, uint8_t* y, int64_t k);
void quantize_row_q4_0_ref(const float* x, uint8_t* y, int64_t k);

// True for the types quantize() can produce: F32, F16, BF16, Q8_0, Q4_0.
bool quantize_supported(DType t);

// Converts n floats from src into type t at dst, which has room for dtype_bytes_for(t, n) bytes (any
// alignment). F32 is copied as bits; F16/BF16 round as ggml_fp32_to_fp16_row / ggml_fp32_to_bf16_row_ref.
// Returns kUnsupported for other types, kBadShape when n is not a whole number of blocks, kOverflow when n
// exceeds INT64_MAX.
Status quantize(DType t, const float* src, uint64_t n, uint8_t* dst);

}  // namespace ws
