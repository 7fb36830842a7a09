// SPDX-License-Identifier: MIT
// Dequantization: stored blocks -> float32, bit-identical to ggml's `to_float` (ggml-quants.c) for every
// GGML type, and to the format definitions for every safetensors dtype. Kernels are pure functions of
// their input bytes; they run unchanged in the native and the wasm build.
//
// Exactness: kernels compute in float32 in ggml's formulas (the core is built with -ffp-contract=off and
// never with -ffast-math), keep f16/bf16 subnormals, and copy F32 as bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dtype.h"
#include "status.h"

namespace ws {

// Decodes n_elements values of type t from src into dst.
// src holds exactly dtype_bytes_for(t, n_elements) bytes, read in file byte order (little-endian);
// n_elements is a whole number of blocks. Any byte values are safe (garbage decodes to garbage, never
// out of bounds). Integer types convert to float32 (I64/U64 round to nearest); BOOL gives 0/1; C64
// gives interleaved real/imaginary pairs, so dst holds 2 * n_elements floats for it.
// Returns kUnsupported for types without a decoder (Q8_1, Q8_K, removed and unknown ids) and kBadShape
// when n_elements is not a whole number of blocks.
Status dequantize(DType t, const uint8_t* src, uint64_t n_elements, float* dst);

// Floats written per element: 2 for C64, else 1.
inline uint32_t dequant_floats_per_element(DType t) { return t == DType::C64 ? 2 : 1; }

// Scalar conversions shared by kernels, tests and writers.
float fp16_to_fp32(uint16_t h);   // IEEE binary16, subnormals kept; NaN -> quiet NaN with sign
float bf16_to_fp32(uint16_t h);   // the 16-bit shift (NaN payload kept)
uint16_t fp32_to_fp16(float f);   // ggml_fp32_to_fp16 (round to nearest even; every NaN -> 0x7e00 | sign)
uint16_t fp32_to_bf16(float f);   // ggml_fp32_to_bf16 (round to nearest even; NaN quieted, payload kept)

}  // namespace ws
