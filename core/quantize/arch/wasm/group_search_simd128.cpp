// SPDX-License-Identifier: MIT
// The quantizers' group searches for the wasm build (-msimd128): group_lanes.h at eight lanes, each vector two
// SIMD128 registers, which keeps two independent chains of additions and divisions in flight.
#include "quantize/group_search.h"

#if defined(__wasm_simd128__)

#include "quantize/group_lanes.h"

namespace ws {
namespace detail {

const GroupSearches kSimd128GroupSearches = {qkx2_groups<8>,       qx_groups<8>,          q3_groups<8>,
                                             iq4_scales_groups<8>, iq4_indices_groups<8>, iq1m_sums<8>,
                                             iq1s_sums<8>,         best_candidate<8>,     grid_neighbour8};

}  // namespace detail
}  // namespace ws

#endif
