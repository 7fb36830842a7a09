// SPDX-License-Identifier: MIT
// libFuzzer target: dequantize() and swap_to_little_endian() on random bytes of a random type.
// Input: byte 0 picks the dtype (dtype_of), byte 1 bit 0 the byte order, the rest is tensor data; the tensor
// is as many whole blocks as the data holds. Checks: dequantize() accepts exactly the decodable types and
// whole blocks (check_decodable), writes nothing past its output, and equals the scalar kernel bit for bit;
// the byte swap is an involution and refuses the types it has no layout for.
#include <memory>

#include "dequant_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const ws::DType t = ws_fuzz::dtype_of(data[0]);
    const bool big_endian = data[1] & 1;
    const uint8_t* src = data + 2;
    const size_t bytes = size - 2;
    const ws::DTypeTraits& traits = ws::dtype_traits(t);
    if (!ws::dtype_decodable(t)) {
        float sink = 0;
        ws_fuzz::require(ws::dequantize(t, src, 0, &sink).code == ws::Error::kUnsupported);
        return 0;
    }
    // A partial block is refused before anything is read.
    if (traits.block_elems > 1) {
        ws_fuzz::require(ws::check_decodable(t, traits.block_elems + 1).code == ws::Error::kBadShape);
    }
    const uint64_t blocks = bytes / traits.block_bytes;
    const uint64_t n = blocks * traits.block_elems;
    const size_t n_bytes = static_cast<size_t>(blocks * traits.block_bytes);

    // Big-endian: the swap must round-trip, or refuse without touching the data.
    std::unique_ptr<uint8_t[]> swapped(new uint8_t[n_bytes + 1]);
    std::memcpy(swapped.get(), src, n_bytes);
    const ws::Status swap = ws::swap_to_little_endian(t, swapped.get(), n_bytes);
    ws_fuzz::require(swap.ok() == ws::big_endian_order_defined(t));
    if (swap.ok()) {
        ws_fuzz::require(ws::swap_to_little_endian(t, swapped.get(), n_bytes).ok());
    }
    ws_fuzz::require(std::memcmp(swapped.get(), src, n_bytes) == 0);
    if (big_endian && !swap.ok()) return 0;

    // The fastest kernel through dequantize(), into an exact-size allocation, against the scalar reference.
    const size_t floats = static_cast<size_t>(n) * ws::dequant_floats_per_element(t);
    std::unique_ptr<float[]> out(new float[floats == 0 ? 1 : floats]);
    std::unique_ptr<uint8_t[]> le(new uint8_t[n_bytes == 0 ? 1 : n_bytes]);
    std::memcpy(le.get(), src, n_bytes);
    if (big_endian) ws_fuzz::require(ws::swap_to_little_endian(t, le.get(), n_bytes).ok());
    ws_fuzz::require(ws::dequantize(t, le.get(), n, out.get()).ok());
    const std::vector<float> want = ws_fuzz::reference_decode(t, src, n, big_endian);
    ws_fuzz::require(ws_fuzz::same_floats(t, out.get(), want.data(), floats));
    return 0;
}
