// SPDX-License-Identifier: MIT
#include "weightstream/job.h"

#include <algorithm>

namespace ws {

Status Job::unreadable(const ByteRange& range) {
    return make_error(Error::kTruncated, range.offset, "tensor.data");
}

RowWindows::RowWindows(uint64_t rows_per_matrix, uint64_t matrices, uint64_t row_elements, uint64_t granule,
                       uint64_t max_elements)
    : rows_per_matrix_(rows_per_matrix),
      matrices_(rows_per_matrix ? matrices : 0),
      granule_(std::max<uint64_t>(1, granule)) {
    const uint64_t fits = max_elements / std::max<uint64_t>(1, row_elements) / granule_ * granule_;
    window_ = std::min(rows_per_matrix_, std::max(granule_, fits));
}

bool RowWindows::next() {
    if (rows_ > 0 && (row_ += rows_) == rows_per_matrix_) {
        row_ = 0;
        ++matrix_;
    }
    if (matrix_ >= matrices_) {
        rows_ = 0;
        return false;
    }
    rows_ = std::min(window_, rows_per_matrix_ - row_);
    return true;
}

uint32_t row_parts(uint64_t n_rows, uint64_t granule) {
    const uint64_t units = (n_rows + granule - 1) / std::max<uint64_t>(1, granule);
    return static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>({n_rows / 4, units, kMaxRowParts})));
}

void part_rows(uint64_t n_rows, uint64_t granule, uint32_t part, uint32_t parts, uint64_t* r0, uint64_t* r1) {
    granule = std::max<uint64_t>(1, granule);
    const uint64_t units = (n_rows + granule - 1) / granule;
    *r0 = std::min(n_rows, units * part / parts * granule);
    *r1 = part + 1 == parts ? n_rows : std::min(n_rows, units * (part + 1) / parts * granule);
}

}  // namespace ws
