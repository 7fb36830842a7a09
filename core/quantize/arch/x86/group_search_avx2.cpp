// SPDX-License-Identifier: MIT
// The quantizers' group searches for AVX2 + F16C CPUs: group_lanes.h at eight lanes. This file alone is compiled
// with -mavx2 -mf16c (core/CMakeLists.txt), without FMA, and only runs after group_searches() has checked the
// CPU.
#include "quantize/group_search.h"

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)

#include "quantize/group_lanes.h"

namespace ws {
namespace detail {

const GroupSearches kAvx2GroupSearches = {qkx2_groups<8>,       qx_groups<8>,          q3_groups<8>,
                                          iq4_scales_groups<8>, iq4_indices_groups<8>, iq1m_sums<8>,
                                          iq1s_sums<8>,         best_candidate<8>,     grid_neighbour8};

}  // namespace detail
}  // namespace ws

#endif
