// SPDX-License-Identifier: MIT
#include "weightstream/job.h"

namespace ws {

Status Job::unreadable(const ByteRange& range) {
    return make_error(Error::kTruncated, range.offset, "tensor.data");
}

}  // namespace ws
