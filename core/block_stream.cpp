// SPDX-License-Identifier: MIT
#include "block_stream.h"

#include <algorithm>
#include <cstring>

namespace ws {

BlockStream::BlockStream(DType t, uint64_t n_elements) {
    const DTypeTraits& traits = dtype_traits(t);
    fn_ = dequant_row_fn(t);
    if (fn_ == nullptr) {
        status_ = make_error(Error::kUnsupported, 0, "block_stream: type has no decoder");
        return;
    }
    if (traits.block_bytes > kMaxBlockBytes) {
        status_ = make_error(Error::kInternal, 0, "block_stream: block larger than the carry buffer");
        return;
    }
    if (n_elements % traits.block_elems != 0) {
        status_ = make_error(Error::kBadShape, 0, "block_stream: n_elements is not a whole number of blocks");
        return;
    }
    // Kernels count elements in int64_t; C64 writes two floats per element.
    if (n_elements > static_cast<uint64_t>(INT64_MAX) / 2 || !dtype_bytes_for(t, n_elements, &total_bytes_)) {
        status_ = make_error(Error::kOverflow, 0, "block_stream: tensor size");
        return;
    }
    block_elems_ = traits.block_elems;
    block_bytes_ = traits.block_bytes;
    floats_per_element_ = dequant_floats_per_element(t);
}

size_t BlockStream::floats_for(size_t size) const {
    if (!status_.ok() || size > total_bytes_ - consumed_) return 0;
    // Both terms are at most the tensor's byte size, so the sum cannot overflow.
    const uint64_t blocks = (static_cast<uint64_t>(carry_len_) + size) / block_bytes_;
    const uint64_t floats = blocks * block_elems_ * floats_per_element_;
    return floats > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(floats);
}

Status BlockStream::feed(const uint8_t* data, size_t size, float* out, size_t out_capacity, size_t* floats_written) {
    *floats_written = 0;
    if (!status_.ok()) return status_;
    if (size > total_bytes_ - consumed_) {
        return make_error(Error::kTrailingData, total_bytes_, "block_stream: more bytes than the tensor holds");
    }
    const uint64_t blocks_done = (static_cast<uint64_t>(carry_len_) + size) / block_bytes_;
    if (blocks_done * block_elems_ * floats_per_element_ > out_capacity) {
        return make_error(Error::kTooLarge, consumed_, "block_stream: output capacity too small for the chunk");
    }

    size_t written = 0;
    const uint8_t* p = data;
    size_t left = size;
    const size_t block_floats = static_cast<size_t>(block_elems_) * floats_per_element_;
    if (carry_len_ > 0) {
        const size_t take = std::min(block_bytes_ - carry_len_, left);
        if (take > 0) std::memcpy(carry_ + carry_len_, p, take);
        carry_len_ += take;
        p += take;
        left -= take;
        if (carry_len_ == block_bytes_) {
            fn_(carry_, out, block_elems_);
            written += block_floats;
            carry_len_ = 0;
        }
    }
    const size_t blocks = left / block_bytes_;
    if (blocks > 0) {
        fn_(p, out + written, static_cast<int64_t>(blocks) * block_elems_);
        written += blocks * block_floats;
        p += blocks * block_bytes_;
        left -= blocks * block_bytes_;
    }
    if (left > 0) {
        std::memcpy(carry_, p, left);  // left < block_bytes_ and carry_len_ == 0 here
        carry_len_ = left;
    }
    consumed_ += size;
    floats_out_ += written;
    *floats_written = written;
    return ok_status();
}

Status BlockStream::finish() const {
    if (!status_.ok()) return status_;
    if (consumed_ != total_bytes_) return make_error(Error::kTruncated, consumed_, "block_stream: tensor ended early");
    return ok_status();
}

}  // namespace ws
