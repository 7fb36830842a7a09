// SPDX-License-Identifier: MIT
#include "ops/row_encoder.h"

#include <algorithm>
#include <cstring>

#include "weightstream/dequant.h"
#include "weightstream/hf_checkpoint.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"

namespace ws {

Status encode_rows(const RowEncoding& e, const uint8_t* src, uint64_t n_rows, const float* imatrix, float* floats,
                   uint8_t* dst) {
    const uint64_t n = n_rows * e.row_elements;
    uint64_t in_bytes = 0, out_bytes = 0;
    if (!dtype_bytes_for(e.in, n, &in_bytes) || !dtype_bytes_for(e.out, n, &out_bytes)) {
        return make_error(Error::kBadShape, 0, "tensor.ne");
    }
    if (e.validate && !validate_row_data(e.in, src, in_bytes)) return make_error(Error::kBadShape, 0, "tensor.data");
    // Decoded and encoded a few rows at a time, so that the floats stay in the core's cache between the two (a part
    // of a window is up to megabytes of floats, which went out to memory and back: Q8_0 is bound by memory here).
    // Rows are independent: the bytes are those of one run over all the rows.
    const uint64_t chunk_rows = std::max<uint64_t>(1, kEncodeChunkElements / std::max<uint64_t>(1, e.row_elements));
    const uint64_t in_row = in_bytes / std::max<uint64_t>(1, n_rows),
                   out_row = out_bytes / std::max<uint64_t>(1, n_rows);
    for (uint64_t r = 0; r < n_rows; r += chunk_rows) {
        const uint64_t rows = std::min(chunk_rows, n_rows - r);
        const uint64_t m = rows * e.row_elements;
        WS_TRY(dequantize(e.in, src + r * in_row, m, floats));
        if (e.plus_one) {
            WS_TRY(
                hf_convert_rows(Transform::kPlusOne, e.in, 0, HfRows{rows, 0, rows, e.row_elements}, floats, floats));
        }
        // A float type's elements are independent of the rows: one run, not a call per (possibly one-element) row.
        if (dtype_traits(e.out).kind == DTypeKind::kFloat && !imatrix) {
            WS_TRY(quantize(e.out, floats, m, dst + r * out_row));
        } else {
            WS_TRY(quantize_rows(e.out, floats, static_cast<int64_t>(rows), static_cast<int64_t>(e.row_elements),
                                 imatrix, dst + r * out_row));
        }
    }
    if (e.validate && !validate_row_data(e.out, dst, out_bytes)) {
        return make_error(Error::kBadShape, 0, "quantized.data");
    }
    return ok_status();
}

Status parts_verdict(const std::vector<Status>& parts) {
    const Status* problem = nullptr;
    for (const Status& s : parts) {
        if (s.ok()) continue;
        if (std::strcmp(s.what, "tensor.data") == 0) return s;
        if (!problem) problem = &s;
    }
    return problem ? *problem : ok_status();
}

}  // namespace ws
