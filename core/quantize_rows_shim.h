// SPDX-License-Identifier: MIT
// TEMPORARY SHIM (branch recipes), to be deleted at merge: the quantize_rows() interface that the
// quantizer helpers are adding to core/quantize.h, forwarded to today's quantize() so the recipe code
// builds and the Q8_0/Q4_0/F16/BF16/F32 runs already work. At merge: delete this file and
// quantize_rows_shim.cpp, and include "quantize.h" where "quantize_rows_shim.h" is included.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "quantize.h"
#include "status.h"

namespace ws {

// nrows rows of n_per_row floats from src -> nrows rows of type t at dst (ggml_quantize_chunk with
// start 0). imatrix: n_per_row importance weights shared by every row, or nullptr.
Status quantize_rows(DType t, const float* src, int64_t nrows, int64_t n_per_row, const float* imatrix, uint8_t* dst);

// True for the types ggml refuses to quantize without an importance matrix.
bool quantize_requires_imatrix(DType t);

}  // namespace ws
