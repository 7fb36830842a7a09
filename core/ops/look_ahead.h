// SPDX-License-Identifier: MIT
// The look-ahead of a job whose next() is "move the position to the next step": JobStep::next_inputs.
#pragma once

#include <utility>
#include <vector>

#include "weightstream/job.h"

namespace ws {

// The inputs of the first step after the current one that reads anything (header and padding steps read
// nothing), found by moving *position on with advance(JobStep*) exactly as next() does, then putting it back: the
// guess is the job's own next moves, so it is right unless the job fails first. Empty when no later step reads.
template <typename Position, typename Advance>
std::vector<ByteRange> next_reading_inputs(Position* position, Advance advance) {
    const Position now = *position;
    JobStep after;
    while (advance(&after) && after.inputs.empty()) {
    }
    *position = now;
    return std::move(after.inputs);
}

}  // namespace ws
