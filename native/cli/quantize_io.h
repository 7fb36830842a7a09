// SPDX-License-Identifier: MIT
// Quantizing one stored tensor in bounded memory, shared by `quantize` and `convert --dtype`: rows are
// decoded and quantized a window at a time (about kPieceElements floats), each window's rows split over
// threads; rows are independent, so the bytes do not depend on the thread count or the window size.
#pragma once

#include <cstdint>
#include <functional>

#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws::cli {

struct RowJob {
    DType in_type = DType::kUnknown;  // the stored type (F32/F16/BF16 or a decodable quant)
    const uint8_t* src = nullptr;     // the stored bytes
    int64_t ne[4] = {1, 1, 1, 1};     // rows of ne[0]; ne[1] rows per matrix, ne[2] * ne[3] matrices
    DType out_type = DType::kUnknown;
    // Importance per column: nullptr, or ne[0] * ne[2] floats (matrix e uses [e*ne[0], (e+1)*ne[0])).
    const float* imatrix = nullptr;
    bool validate = true;     // check input and output as llama-quantize does (ggml_validate_row_data)
    bool drop_pages = false;  // src is a file mapping: give its pages back once a window is done
};

// Runs the job, passing the output to write(bytes, n) in order (false from write stops with ok status;
// the caller knows why), and the input bytes consumed to progress(n). Errors: kBadShape "tensor.data"
// (a NaN/Inf input value or block scale), kBadShape "quantized.data" (a quantized block scale came out
// non-finite), and quantize_rows()'s or dequantize()'s own.
Status quantize_rows_streaming(const RowJob& job, unsigned threads,
                               const std::function<bool(const uint8_t*, size_t)>& write,
                               const std::function<void(uint64_t)>& progress);

}  // namespace ws::cli
