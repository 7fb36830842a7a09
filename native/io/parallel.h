// SPDX-License-Identifier: MIT
// Decoding a large tensor on several threads. Work is split on block boundaries, so each thread runs the
// same kernel over its own whole blocks and the output is identical to one thread's.
#pragma once

#include <cstdint>

#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws {

// Threads to use by default: all hardware threads.
unsigned default_threads();

// dequantize() over n_elements, split across up to `threads` threads (1 = the calling thread only). Small
// tensors (under ~1 MiB of output per thread) use fewer threads.
Status parallel_dequantize(DType t, const uint8_t* src, uint64_t n_elements, float* dst, unsigned threads);

}  // namespace ws
