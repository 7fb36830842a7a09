// SPDX-License-Identifier: MIT
// Dequantizers for ggml's i-quant types (IQ2_XXS, IQ2_XS, IQ3_XXS, IQ1_S, IQ4_NL, IQ3_S, IQ2_S, IQ4_XS,
// IQ1_M), bit-identical to ggml's dequantize_row_<type> (ggml-quants.c).
//
// Each function decodes k elements from src into dst.
// src: raw block bytes in file order (little-endian), any alignment; it holds exactly
//      (k / block elements) * block bytes bytes (IQ4_NL: 32 elements in 18 bytes; the others 256 elements).
// dst: room for k floats.
// k:   a whole number of blocks; a trailing partial block is not decoded (ggml asserts instead).
// Safe on untrusted input: any byte values decode without reading outside src (grid indices are masked
// to their table sizes); NaN/Inf scales give NaN/Inf values.
#pragma once

#include <cstdint>

namespace ws {

void dequantize_row_iq2_xxs(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_iq2_xs(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_iq3_xxs(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_iq1_s(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_iq4_nl(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_iq3_s(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_iq2_s(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_iq4_xs(const uint8_t* src, float* dst, int64_t k);
void dequantize_row_iq1_m(const uint8_t* src, float* dst, int64_t k);

}  // namespace ws
