// SPDX-License-Identifier: MIT
// Quantizers of ggml's 1- to 3-bit i-quants: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M. Each gives
// exactly the bytes of ggml_quantize_chunk(type, src, dst, 0, nrows, n_per_row, imatrix) at ggml d99724f2
// (ggml-quants.c quantize_<type>), with or without an importance matrix.
//
// Exactness: float32 arithmetic in ggml's operation order (the core is built with -ffp-contract=off; IQ3_XXS
// changes under FMA contraction). IQ1_S/IQ1_M sort with the stable merge sort glibc's qsort uses for these
// sizes, so equal values keep glibc's order.
//
// Every function has this contract:
//   src:       nrows * n_per_row floats, row-major.
//   dst:       room for nrows * (n_per_row / 256) blocks of the type (dtype_bytes_for), any alignment.
//   n_per_row: a multiple of 256 (QK_K), >= 0; nrows >= 0.
//   imatrix:   n_per_row importance weights, the same for every row, or nullptr. IQ2_XXS, IQ2_XS and IQ1_S
//              require it (non-null; see iquant_requires_imatrix); the others fall back to ggml's weights.
// Rows are independent: quantizing a tensor row by row gives the same bytes.
// Any float values are safe. Finite inputs (of magnitude below ~1e18, where squared errors overflow) give
// ggml's bytes. ggml itself aborts on most super-blocks holding NaN, Inf or overflowing values (IQ2_XS,
// IQ2_S, IQ3_XXS, IQ3_S, IQ1_M: GGML_ASSERT(scale >= 0) or a neighbour search that finds nothing), and its
// IQ1 fallback search reads out of bounds there. These functions go on deterministically instead: a search
// that finds no candidate takes the first neighbour, a group whose levels are not a grid entry is stored as
// entry 0, a NaN scale is kept. Where ggml does not abort (IQ2_XXS and IQ1_S so far in every case tried),
// the bytes are ggml's. Either way only the super-block holding the value is affected.
// The first call for a grid builds its search maps (iquant_maps.h); later calls only read them.
#pragma once

#include <cstdint>

#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws {

void quantize_iq2_xxs(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix);
void quantize_iq2_xs(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix);
void quantize_iq2_s(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix);
void quantize_iq3_xxs(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix);
void quantize_iq3_s(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix);
void quantize_iq1_s(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix);
void quantize_iq1_m(const float* src, uint8_t* dst, int64_t nrows, int64_t n_per_row, const float* imatrix);

}  // namespace ws
