// SPDX-License-Identifier: MIT
// TEMPORARY SHIM (branch recipes): see quantize_rows_shim.h. Delete at merge.
#include "quantize_rows_shim.h"

namespace ws {

Status quantize_rows(DType t, const float* src, int64_t nrows, int64_t n_per_row, const float* imatrix, uint8_t* dst) {
    if (nrows < 0 || n_per_row < 0) return make_error(Error::kBadShape, 0, "n_per_row");
    // ggml's Q4_0 takes another path with an importance matrix; Q8_0 and the float types ignore it.
    if (imatrix && t == DType::Q4_0) return make_error(Error::kUnsupported, 0, "imatrix");
    uint64_t row_bytes = 0;
    if (!dtype_bytes_for(t, static_cast<uint64_t>(n_per_row), &row_bytes)) {
        return make_error(quantize_supported(t) ? Error::kBadShape : Error::kUnsupported, 0, "n_per_row");
    }
    for (int64_t r = 0; r < nrows; ++r) {
        WS_TRY(quantize(t, src + r * n_per_row, static_cast<uint64_t>(n_per_row), dst + r * row_bytes));
    }
    return ok_status();
}

bool quantize_requires_imatrix(DType t) {
    switch (t) {
        case DType::IQ2_XXS:
        case DType::IQ2_XS:
        case DType::IQ1_S:  // ggml_quantize_requires_imatrix: not IQ1_M
            return true;
        default:
            return false;
    }
}

}  // namespace ws
