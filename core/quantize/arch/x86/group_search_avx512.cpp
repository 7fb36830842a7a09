// SPDX-License-Identifier: MIT
// The k-quants' group searches for AVX-512 CPUs: group_lanes.h at sixteen lanes, measured 1.7x the eight AVX2
// lanes on the same machine (the searches wait on their chains of additions, and one instruction now carries
// sixteen groups' links), and so are the IQ1 pair searches. IQ4's searches stay at eight lanes (their AVX2
// lookups), and so does the grid neighbour search (eight rows transposed; most lists are shorter than sixteen).
// This file alone is compiled with -mavx512f -mavx512dq -mavx512vl -mf16c (core/CMakeLists.txt), without FMA,
// and only runs after group_searches() has checked the CPU.
#include "quantize/group_search.h"

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)

#include "quantize/group_lanes.h"

namespace ws {
namespace detail {

const GroupSearches kAvx512GroupSearches = {qkx2_groups<16>,      qx_groups<16>,         q3_groups<16>,
                                            iq4_scales_groups<8>, iq4_indices_groups<8>, iq1m_sums<16>,
                                            iq1s_sums<16>,        best_candidate<16>,    grid_neighbour8};

}  // namespace detail
}  // namespace ws

#endif
