// SPDX-License-Identifier: MIT
// libFuzzer target: BlockStream::feed with random chunkings. Input: byte 0 picks the dtype (dtype_of), byte 1
// bit 0 the byte order, bytes 2..9 seed the chunk sizes, the rest is tensor data (as many whole blocks as it
// holds). The floats of all feeds, each chunk in its own exact-size allocation and each output in an
// exact-size array of floats_for(chunk) floats, must equal the whole-buffer decode bit for bit; the stream
// must end done(), refuse one byte more, and report truncation when fed less.
#include <memory>

#include "dequant_harness.h"
#include "weightstream/block_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 10) return 0;
    const ws::DType t = ws_fuzz::dtype_of(data[0]);
    const bool big_endian = data[1] & 1;
    uint64_t seed = 0;
    std::memcpy(&seed, data + 2, sizeof seed);
    const uint8_t* src = data + 10;
    const size_t bytes = size - 10;
    const ws::DTypeTraits& traits = ws::dtype_traits(t);
    const uint64_t blocks = traits.block_bytes ? bytes / traits.block_bytes : 0;
    const uint64_t n = blocks * traits.block_elems;
    const size_t total = static_cast<size_t>(blocks * traits.block_bytes);

    ws::BlockStream stream(t, n, big_endian);
    const bool usable = ws::dtype_decodable(t) && (!big_endian || ws::big_endian_order_defined(t));
    ws_fuzz::require(stream.status().ok() == usable);
    if (!usable) {
        float sink = 0;
        size_t written = 1;
        ws_fuzz::require(!stream.feed(src, 0, &sink, 1, &written).ok() && written == 0);
        return 0;
    }
    ws_fuzz::require(stream.bytes_total() == total);
    const std::vector<float> want = ws_fuzz::reference_decode(t, src, n, big_endian);

    std::vector<float> got;
    size_t pos = 0;
    // Chunk sizes: mostly small and around the block size (carry paths), sometimes large, sometimes 0.
    while (pos < total) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t r = static_cast<uint32_t>(seed >> 33);
        size_t chunk = 0;
        switch (r % 4) {
            case 0:
                chunk = r / 4 % 8;
                break;
            case 1:
                chunk = r / 4 % (2 * traits.block_bytes + 1);
                break;
            case 2:
                chunk = r / 4 % 4096;
                break;
            default:
                chunk = total - pos;
                break;
        }
        chunk = std::min(chunk, total - pos);
        std::unique_ptr<uint8_t[]> in(new uint8_t[chunk == 0 ? 1 : chunk]);
        std::memcpy(in.get(), src + pos, chunk);
        const size_t cap = stream.floats_for(chunk);
        std::unique_ptr<float[]> out(new float[cap == 0 ? 1 : cap]);
        size_t written = 0;
        // One float short is refused and changes nothing.
        if (cap > 0) {
            ws_fuzz::require(stream.feed(in.get(), chunk, out.get(), cap - 1, &written).code == ws::Error::kTooLarge);
            ws_fuzz::require(written == 0 && stream.bytes_consumed() == pos);
        }
        ws_fuzz::require(stream.feed(in.get(), chunk, out.get(), cap, &written).ok());
        ws_fuzz::require(written == cap);
        got.insert(got.end(), out.get(), out.get() + written);
        pos += chunk;
        if (pos < total) ws_fuzz::require(stream.finish().code == ws::Error::kTruncated);
    }
    ws_fuzz::require(stream.done() && stream.finish().ok());
    ws_fuzz::require(got.size() == want.size());
    ws_fuzz::require(ws_fuzz::same_floats(t, got.data(), want.data(), got.size()));
    size_t written = 0;
    float sink = 0;
    ws_fuzz::require(stream.feed(src, 1, &sink, 1, &written).code == ws::Error::kTrailingData);
    return 0;
}
