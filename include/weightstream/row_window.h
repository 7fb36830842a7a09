// SPDX-License-Identifier: MIT
// A window of rows of a tensor: the unit in which every reader takes a tensor too large for one array
// (`dump --rows`, `stats --rows`, the package's `read(name, {rows})` and `stats(name, {rows})`, the page).
// A row is ne[0] elements (the innermost, contiguous dimension: whole blocks, since ne[0] is a multiple of
// the block size); a tensor has n_elements / ne[0] rows, or, when ne[0] is 0, the product of its outer
// dimensions (rows of no elements, as numpy counts the rows of a (5, 0) array).
#pragma once

#include <cstdint>
#include <vector>

#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

struct RowWindow {
    uint64_t offset = 0;         // absolute byte offset of the window's first row in the tensor's file
    uint64_t nbytes = 0;         // bytes of the window
    uint64_t n_elements = 0;     // elements in the window: count * ne[0]
    uint64_t total_rows = 0;     // rows of the whole tensor
    std::vector<int64_t> shape;  // the window's shape, outermost first: {count, ne[0]}
};

// Rows [start, start + count) of tensor t. Errors: kBadType for a type without a byte layout, kBadShape when
// ne[0] is not a whole number of blocks or n_elements not a whole number of rows, kBadOffset when the window
// runs past the last row, kOverflow on arithmetic overflow. Safe on any TensorInfo values.
Result<RowWindow> row_window(const TensorInfo& t, uint64_t start, uint64_t count);

// The rows of tensor t (see above); 0 for a type without a byte layout.
uint64_t row_count(const TensorInfo& t);

// One read of an N-D slice: `rows` consecutive selected rows whose wanted blocks lie in [offset, offset +
// nbytes). Row j of the run (0-based) decodes to the values starting at j * SlicePlan::run_row_stride of the
// run's decoded values; its wanted values are SlicePlan::take of them from SlicePlan::skip on.
struct SliceRun {
    uint64_t offset = 0;     // absolute byte offset of the run's first wanted block
    uint64_t nbytes = 0;     // bytes of the run: whole blocks
    uint64_t first_row = 0;  // the run's first row among the slice's rows (the output's row index)
    uint64_t rows = 0;       // selected rows in the run
};

// What an N-D slice of a tensor needs from the file, and how its decoded blocks are cut (see slice_plan()).
struct SlicePlan {
    std::vector<int64_t> shape;   // the slice's shape, outermost first (a dimension per dimension of the tensor)
    uint64_t n_elements = 0;      // elements of the slice
    uint64_t take = 0;            // elements per selected row: the innermost range's length
    uint64_t skip = 0;            // elements before them in a row's first decoded block
    uint64_t run_row_stride = 0;  // elements between the starts of consecutive rows of one run, decoded: ne[0]
    std::vector<SliceRun> runs;   // in file (and output) order
};

// The slice [begin[d], end[d]) of tensor t per dimension d, outermost first as numpy indexes (n_ranges of them,
// at most the tensor's rank; the dimensions past them are whole). Along the innermost dimension only whole
// blocks are read: [floor(begin / block), ceil(end / block)) of every selected row. The rows of one run are
// consecutive in the file with at most max_gap bytes between one row's wanted blocks and the next's (gaps are
// read and discarded: fewer, larger reads). Errors: row_window()'s shape errors, kBadOffset when a range is
// reversed or past its dimension, kBadShape for more ranges than dimensions, kTooLarge when the slice selects
// more than kMaxSliceRuns separate runs (or has more outer rows than that, for a rank above 2), and for a
// rank above 4 (a safetensors tensor with full_shape). Safe on any values.
inline constexpr size_t kMaxSliceRuns = size_t{1} << 22;
Result<SlicePlan> slice_plan(const TensorInfo& t, const uint64_t* begin, const uint64_t* end, size_t n_ranges,
                             uint64_t max_gap);

}  // namespace ws
