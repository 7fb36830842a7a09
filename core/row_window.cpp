// SPDX-License-Identifier: MIT
#include "row_window.h"

#include "dtype.h"

namespace ws {
namespace {

// The rows of t, or an error when its shape does not divide into rows.
Result<uint64_t> rows_of(const TensorInfo& t) {
    const DTypeTraits& traits = dtype_traits(t.dtype);
    if (traits.block_elems == 0) return make_error(Error::kBadType, t.info_offset, "row_window: type has no layout");
    for (int64_t ne : t.ne) {
        if (ne < 0) return make_error(Error::kBadShape, t.info_offset, "row_window: negative dimension");
    }
    const uint64_t ne0 = static_cast<uint64_t>(t.ne[0]);
    if (ne0 % traits.block_elems != 0) {
        return make_error(Error::kBadShape, t.info_offset, "row_window: ne[0] is not a whole number of blocks");
    }
    if (ne0 != 0) {
        if (t.n_elements % ne0 != 0) {
            return make_error(Error::kBadShape, t.info_offset, "row_window: n_elements is not a whole number of rows");
        }
        return t.n_elements / ne0;
    }
    uint64_t rows = 1;  // rows of zero elements: counted from the outer dimensions
    for (int d = 1; d < 4; ++d) {
        const uint64_t ne = static_cast<uint64_t>(t.ne[d]);
        if (ne != 0 && rows > UINT64_MAX / ne) return make_error(Error::kOverflow, t.info_offset, "row_window");
        rows *= ne;
    }
    return rows;
}

}  // namespace

uint64_t row_count(const TensorInfo& t) {
    Result<uint64_t> rows = rows_of(t);
    return rows.ok() ? rows.value() : 0;
}

Result<RowWindow> row_window(const TensorInfo& t, uint64_t start, uint64_t count) {
    WS_ASSIGN_OR_RETURN(const uint64_t total_rows, rows_of(t));
    if (start > total_rows || count > total_rows - start) {
        return make_error(Error::kBadOffset, t.info_offset, "row_window: rows past the end of the tensor");
    }
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint64_t ne0 = static_cast<uint64_t>(t.ne[0]);
    const uint64_t blocks_per_row = ne0 / traits.block_elems;
    if (blocks_per_row > UINT64_MAX / traits.block_bytes)
        return make_error(Error::kOverflow, t.info_offset, "row_window");
    const uint64_t row_bytes = blocks_per_row * traits.block_bytes;
    // start + count <= total_rows, and total_rows * row_bytes is the tensor's size only if that fits: check each
    // product and the final sum.
    if (row_bytes != 0 && (start > UINT64_MAX / row_bytes || count > UINT64_MAX / row_bytes)) {
        return make_error(Error::kOverflow, t.info_offset, "row_window");
    }
    const uint64_t rel = start * row_bytes;
    if (rel > UINT64_MAX - t.offset) return make_error(Error::kOverflow, t.info_offset, "row_window");
    if (ne0 != 0 && count > UINT64_MAX / ne0) return make_error(Error::kOverflow, t.info_offset, "row_window");
    RowWindow w;
    w.offset = t.offset + rel;
    w.nbytes = count * row_bytes;
    w.n_elements = count * ne0;
    w.total_rows = total_rows;
    if (count > static_cast<uint64_t>(INT64_MAX)) return make_error(Error::kOverflow, t.info_offset, "row_window");
    w.shape = {static_cast<int64_t>(count), t.ne[0]};
    return w;
}

}  // namespace ws
