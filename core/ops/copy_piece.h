// SPDX-License-Identifier: MIT
// A tensor passed through unchanged is copied in steps whose output is their input (zero-copy): the one place its
// pieces are cut, for the jobs that write files (QuantizeJob, ConvertJob, EditJob).
#pragma once

#include <algorithm>
#include <cstdint>

#include "weightstream/byte_range.h"
#include "weightstream/job.h"
#include "weightstream/model_info.h"

namespace ws {

// The next piece of tensor t's stored bytes, `fed` of them handed out already (fed < t.nbytes): whole units of
// `unit` bytes (QuantizeJob validates whole blocks), about kCopyPieceBytes but at least one unit, never past the
// tensor's end.
inline ByteRange copy_piece(const TensorInfo& t, uint64_t fed, uint64_t unit = 1) {
    unit = std::max<uint64_t>(1, unit);
    const uint64_t n = std::min(std::max(unit, kCopyPieceBytes / unit * unit), t.nbytes - fed);
    return {t.file_index, t.offset + fed, n};
}

}  // namespace ws
