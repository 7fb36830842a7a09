// SPDX-License-Identifier: MIT
// The decode benchmark shared by the native CLI (`weightstream bench`) and the wasm build under Node:
// synthetic input per type, a timer, and a plain float32 store loop as the ceiling to compare against.
// Ratios measured in one run (decode GB/s over store GB/s) are what we track: absolute numbers move with
// the machine and its load.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "weightstream/dtype.h"

namespace ws::bench {

// Every type with a decoder, in ggml id order then the safetensors-only ones.
std::vector<DType> decodable_types();

// Synthetic stored bytes for n_elements of t: random bits (so signs, grid indices and nibbles are as
// varied as in real weights, and sign branches mispredict as they would), with every f16 scale set to
// a realistic magnitude (1e-4..1e-1) and float types holding small normal-range values, so no kernel
// meets the NaN/Inf/subnormal operands that real weights do not have. Deterministic for a seed.
std::vector<uint8_t> synthetic_tensor(DType t, uint64_t n_elements, uint64_t seed);

// The next value of the splitmix64 sequence at *state (advancing it): the benchmarks' deterministic bits.
uint64_t splitmix64(uint64_t* state);

// The best (smallest) wall time in seconds of `reps` runs of fn.
double best_seconds(int reps, const std::function<void()>& fn);

// GB/s (1e9 bytes per second) of a plain float32 store loop filling n floats, best of reps.
double store_gbps(float* dst, uint64_t n, int reps);

}  // namespace ws::bench
