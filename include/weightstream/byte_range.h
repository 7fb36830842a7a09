// SPDX-License-Identifier: MIT
// Runs of bytes: a span the caller owns, and a range of a file to read.
#pragma once

#include <cstdint>

namespace ws {

// A run of bytes owned by someone else.
struct ByteSpan {
    const uint8_t* data = nullptr;
    uint64_t size = 0;
};

// `size` bytes from `offset` of a file: for a job (job.h) one of its sources, numbered as the job says; for a
// header's reads (header_reads.h) the one file being parsed (source 0).
struct ByteRange {
    uint32_t source = 0;
    uint64_t offset = 0;  // absolute, in that file
    uint64_t size = 0;
};

}  // namespace ws
