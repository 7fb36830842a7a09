// SPDX-License-Identifier: MIT
// Re-encoding a stored tensor as another type a window of whole rows at a time (job.h's RowWindows), in parts
// (part_rows()): the piece the jobs that write tensors share (QuantizeJob, ConvertJob). A window's rows are decoded
// to float32 and encoded with quantize_rows(); rows are independent, so the bytes are the same whatever the window
// size and the number of parts a window is run in.
#pragma once

#include <cstdint>
#include <vector>

#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws {

struct RowEncoding {
    DType in = DType::kUnknown;   // the stored type, read little-endian
    DType out = DType::kUnknown;  // a type quantize_rows() produces
    uint64_t row_elements = 0;    // elements per row: a whole number of in's and out's blocks
    bool validate = false;        // llama-quantize's checks (validate_row_data()) of the input and of the output
    bool plus_one = false;        // Gemma's norm weights + 1 on the values, as hf_convert_rows() adds it
};

// Rows are decoded and encoded in runs of about this many floats (at least one row): a run's floats stay in cache.
constexpr uint64_t kEncodeChunkElements = uint64_t(1) << 15;

// Decodes n_rows rows of e.in at src into `floats` (scratch for min(n_rows, a run's rows) * row_elements of them;
// n_rows * row_elements always suffice) and encodes them as e.out into dst; imatrix: row_elements importance values for
// every row, or nullptr. Errors (Status::offset 0, the caller places them): kBadShape "tensor.data" (validate: a
// NaN/Inf input value or block scale), kBadShape "quantized.data" (validate: an encoded block scale came out
// non-finite), dequantize()'s and quantize_rows()'s own.
Status encode_rows(const RowEncoding& e, const uint8_t* src, uint64_t n_rows, const float* imatrix, float* floats,
                   uint8_t* dst);

// The verdict of a step from its parts' statuses: what one run over the whole step would report. Input is checked
// before anything is encoded, so a bad input ("tensor.data") anywhere comes before any other problem; else the
// first part's problem (a part reports its rows in order).
Status parts_verdict(const std::vector<Status>& parts);

}  // namespace ws
