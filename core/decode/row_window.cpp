// SPDX-License-Identifier: MIT
#include "weightstream/row_window.h"

#include "weightstream/dtype.h"

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

Result<SlicePlan> slice_plan(const TensorInfo& t, const uint64_t* begin, const uint64_t* end, size_t n_ranges,
                             uint64_t max_gap) {
    // The shape checks, and that every row's bytes (and their end in the file) fit 64 bits.
    WS_ASSIGN_OR_RETURN(const RowWindow none, row_window(t, 0, 0));
    WS_ASSIGN_OR_RETURN(const RowWindow whole, row_window(t, 0, none.total_rows));
    if (whole.nbytes > UINT64_MAX - t.offset) return make_error(Error::kOverflow, t.info_offset, "slice");
    if (!t.full_shape.empty()) return make_error(Error::kBadShape, t.info_offset, "slice: rank above 4");
    const uint32_t n_dims = t.n_dims;
    if (n_ranges > n_dims) return make_error(Error::kBadShape, t.info_offset, "slice: more ranges than dimensions");
    uint64_t lo[4] = {0, 0, 0, 0};
    uint64_t hi[4];
    for (int d = 0; d < 4; ++d) hi[d] = static_cast<uint64_t>(t.ne[d]);  // row_window: no negative dimension
    for (size_t k = 0; k < n_ranges; ++k) {
        const uint32_t d = n_dims - 1 - static_cast<uint32_t>(k);
        if (begin[k] > end[k] || end[k] > hi[d]) {
            return make_error(Error::kBadOffset, t.info_offset, "slice: range reversed or past its dimension");
        }
        lo[d] = begin[k];
        hi[d] = end[k];
    }
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint64_t block = traits.block_elems;
    const uint64_t ne0 = static_cast<uint64_t>(t.ne[0]);
    // Every product and sum below is at most the tensor's own: n_elements, or the end of its bytes (checked).
    const uint64_t row_bytes = ne0 / block * traits.block_bytes;
    const uint64_t b0 = lo[0] / block;
    const uint64_t b1 = (hi[0] + block - 1) / block;
    const uint64_t piece_bytes = (b1 - b0) * traits.block_bytes;
    SlicePlan plan;
    plan.take = hi[0] - lo[0];
    plan.skip = lo[0] - b0 * block;
    plan.run_row_stride = ne0;
    plan.n_elements = 1;
    for (uint32_t k = 0; k < n_dims; ++k) {
        const uint32_t d = n_dims - 1 - k;
        plan.shape.push_back(static_cast<int64_t>(hi[d] - lo[d]));
        plan.n_elements *= hi[d] - lo[d];
    }
    if (plan.n_elements == 0) return plan;
    const uint64_t outer = (hi[3] - lo[3]) * (hi[2] - lo[2]);
    if (outer > kMaxSliceRuns) return make_error(Error::kTooLarge, t.info_offset, "slice: too many rows");
    const uint64_t ne1 = static_cast<uint64_t>(t.ne[1]);
    const uint64_t ne2 = static_cast<uint64_t>(t.ne[2]);
    const uint64_t gap = row_bytes - piece_bytes;  // from one row's wanted blocks to the next row's
    uint64_t out_row = 0;
    uint64_t last_row = 0;  // the file row of the last run's last row
    for (uint64_t i3 = lo[3]; i3 < hi[3]; ++i3) {
        for (uint64_t i2 = lo[2]; i2 < hi[2]; ++i2) {
            const uint64_t first = lo[1] + ne1 * (i2 + ne2 * i3);
            const uint64_t count = hi[1] - lo[1];
            // Rows first .. first + count are consecutive: one run when the gap between them may be read.
            const uint64_t per_run = gap <= max_gap ? count : 1;
            for (uint64_t r = 0; r < count; r += per_run) {
                const uint64_t row = first + r;
                const uint64_t rows = per_run;
                const uint64_t start = t.offset + row * row_bytes + b0 * traits.block_bytes;
                const uint64_t stop = start + (rows - 1) * row_bytes + piece_bytes;
                if (!plan.runs.empty() && gap <= max_gap && row == last_row + 1) {
                    SliceRun& run = plan.runs.back();
                    run.nbytes = stop - run.offset;
                    run.rows += rows;
                } else {
                    if (plan.runs.size() >= kMaxSliceRuns)
                        return make_error(Error::kTooLarge, t.info_offset, "slice: too many runs");
                    plan.runs.push_back(SliceRun{start, stop - start, out_row, rows});
                }
                last_row = row + rows - 1;
                out_row += rows;
            }
        }
    }
    return plan;
}

}  // namespace ws
