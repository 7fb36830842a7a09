// SPDX-License-Identifier: MIT
// Decoding a tensor whose bytes arrive in chunks of any size (HTTP range bodies, ReadableStream pieces): whole
// blocks are dequantized as they complete, a partial block (fewer bytes than one block) is carried over to
// the next chunk. Feeding the bytes in any chunking gives the same floats as dequantize() over the whole
// tensor.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

class BlockStream {
public:
    // The largest block of any decodable type (Q8_K: 292 bytes) fits the carry buffer.
    static constexpr size_t kMaxBlockBytes = 320;
    // Big-endian blocks are swapped in a buffer of this size on the way to the kernel (src is const).
    static constexpr size_t kSwapBytes = 8192;

    // A stream over the n_elements values of one tensor of type t, stored big-endian when big_endian (a
    // big-endian GGUF: see swap_to_little_endian()). Check status(): check_decodable()'s errors, kUnsupported
    // for big-endian data of a type without a defined big-endian layout, kOverflow when the tensor's byte size
    // does not fit 64 bits.
    BlockStream(DType t, uint64_t n_elements, bool big_endian = false);

    Status status() const { return status_; }

    // Consumes the next `size` bytes of the tensor and writes the floats of every block they complete to
    // out[0 .. *floats_written). All of the chunk is consumed: an incomplete trailing block is kept and
    // finished by the next feed.
    // Errors leave the stream unchanged (nothing consumed, nothing written, *floats_written = 0):
    //   kTrailingData  the chunk runs past the end of the tensor
    //   kTooLarge      the completed blocks need more than out_capacity floats (see floats_for())
    //   the constructor's error, if status() is not ok
    // Safe on any byte values; never writes past out + out_capacity.
    Status feed(const uint8_t* data, size_t size, float* out, size_t out_capacity, size_t* floats_written);

    // Floats the next feed of `size` bytes would write (0 when it would fail).
    size_t floats_for(size_t size) const;

    bool done() const { return status_.ok() && consumed_ == total_bytes_; }
    // kOk when every byte of the tensor was fed, kTruncated (offset = bytes fed) when it ended early.
    Status finish() const;

    uint64_t bytes_total() const { return total_bytes_; }
    uint64_t bytes_consumed() const { return consumed_; }    // fed so far, including the carried bytes
    uint64_t floats_written() const { return floats_out_; }  // written so far over all feeds

private:
    // Decodes n_blocks whole blocks at src into out, swapping big-endian blocks through swap_ first.
    void decode_blocks(const uint8_t* src, size_t n_blocks, float* out);

    DType dtype_ = DType::kUnknown;
    bool big_endian_ = false;
    DequantRowFn fn_ = nullptr;
    Status status_;
    uint32_t block_elems_ = 0;
    uint32_t block_bytes_ = 0;
    uint32_t floats_per_element_ = 1;
    uint64_t total_bytes_ = 0;
    uint64_t consumed_ = 0;
    uint64_t floats_out_ = 0;
    size_t carry_len_ = 0;
    uint8_t carry_[kMaxBlockBytes];
    uint8_t swap_[kSwapBytes];  // used by big-endian streams only
};

}  // namespace ws
