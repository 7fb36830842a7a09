// SPDX-License-Identifier: MIT
// A window of rows of a tensor: the unit in which every reader takes a tensor too large for one array
// (`dump --rows`, `stats --rows`, the package's `read(name, {rows})` and `stats(name, {rows})`, the page).
// A row is ne[0] elements (the innermost, contiguous dimension: whole blocks, since ne[0] is a multiple of
// the block size); a tensor has n_elements / ne[0] rows, or, when ne[0] is 0, the product of its outer
// dimensions (rows of no elements, as numpy counts the rows of a (5, 0) array).
#pragma once

#include <cstdint>
#include <vector>

#include "model_info.h"
#include "status.h"

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

}  // namespace ws
