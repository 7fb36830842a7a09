// SPDX-License-Identifier: MIT
// Shared by the decoder fuzz targets: how an input picks a dtype and a byte order, and the reference decode
// (the scalar kernel, after swapping big-endian blocks in a copy) that fast paths must reproduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "weightstream/dequant.h"
#include "weightstream/dtype.h"

namespace ws_fuzz {

inline void require(bool condition) {
    if (!condition) std::abort();  // a disagreement is a bug the fuzzer should report
}

// Every DType value the build knows, removed and Q8 ids included, plus one unknown id.
inline ws::DType dtype_of(uint8_t selector) {
    constexpr uint32_t kGgml = static_cast<uint32_t>(ws::DType::kGgmlCount);
    constexpr uint32_t kOnly = static_cast<uint32_t>(ws::DType::kEnd) - static_cast<uint32_t>(ws::DType::BOOL);
    const uint32_t s = selector % (kGgml + kOnly + 1);
    if (s < kGgml) return static_cast<ws::DType>(s);
    if (s < kGgml + kOnly) return static_cast<ws::DType>(static_cast<uint32_t>(ws::DType::BOOL) + (s - kGgml));
    return ws::DType::kUnknown;
}

// Bits equal, or (Q4_1/Q5_1 only, as dequant.h documents) both NaN.
inline bool same_floats(ws::DType t, const float* a, const float* b, size_t n) {
    const bool nan_payload_free = t == ws::DType::Q4_1 || t == ws::DType::Q5_1;
    for (size_t i = 0; i < n; ++i) {
        if (std::memcmp(a + i, b + i, sizeof(float)) == 0) continue;
        if (!(nan_payload_free && a[i] != a[i] && b[i] != b[i])) return false;
    }
    return true;
}

// The scalar reference decode of n elements at src (whole blocks), big-endian blocks swapped in a copy.
inline std::vector<float> reference_decode(ws::DType t, const uint8_t* src, uint64_t n, bool big_endian) {
    const ws::DTypeTraits& traits = ws::dtype_traits(t);
    std::vector<uint8_t> le(src, src + n / traits.block_elems * traits.block_bytes);
    if (big_endian) require(ws::swap_to_little_endian(t, le.data(), le.size()).ok());
    std::vector<float> out(static_cast<size_t>(n) * ws::dequant_floats_per_element(t));
    if (n != 0) ws::dequant_row_fn_scalar(t)(le.data(), out.data(), static_cast<int64_t>(n));
    return out;
}

}  // namespace ws_fuzz
