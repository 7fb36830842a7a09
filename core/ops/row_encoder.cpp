// SPDX-License-Identifier: MIT
#include "ops/row_encoder.h"

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
    WS_TRY(dequantize(e.in, src, n, floats));
    if (e.plus_one) {
        WS_TRY(
            hf_convert_rows(Transform::kPlusOne, e.in, 0, HfRows{n_rows, 0, n_rows, e.row_elements}, floats, floats));
    }
    // A float type's elements are independent of the rows: one run, not a call per (possibly one-element) row.
    if (dtype_traits(e.out).kind == DTypeKind::kFloat && !imatrix) {
        WS_TRY(quantize(e.out, floats, n, dst));
    } else {
        WS_TRY(quantize_rows(e.out, floats, static_cast<int64_t>(n_rows), static_cast<int64_t>(e.row_elements), imatrix,
                             dst));
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
