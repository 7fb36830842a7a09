// SPDX-License-Identifier: MIT
#include "weightstream/block_stream.h"

#include <algorithm>
#include <cstring>

namespace ws {

BlockStream::BlockStream(DType t, uint64_t n_elements, bool big_endian) : dtype_(t), big_endian_(big_endian) {
    status_ = check_decodable(t, n_elements);
    if (!status_.ok()) return;
    if (big_endian && !big_endian_order_defined(t)) {
        status_ =
            make_error(Error::kUnsupported, 0, "block_stream: big-endian data of this type has no defined layout");
        return;
    }
    const DTypeTraits& traits = dtype_traits(t);
    if (traits.block_bytes > kMaxBlockBytes) {
        status_ = make_error(Error::kInternal, 0, "block_stream: block larger than the carry buffer");
        return;
    }
    if (!dtype_bytes_for(t, n_elements, &total_bytes_)) {
        status_ = make_error(Error::kOverflow, 0, "block_stream: tensor size");
        return;
    }
    fn_ = dequant_row_fn(t);
    block_elems_ = traits.block_elems;
    block_bytes_ = traits.block_bytes;
    floats_per_element_ = dequant_floats_per_element(t);
}

void BlockStream::decode_blocks(const uint8_t* src, size_t n_blocks, float* out) {
    if (!big_endian_) {
        fn_(src, out, static_cast<int64_t>(n_blocks) * block_elems_);
        return;
    }
    const size_t batch = kSwapBytes / block_bytes_;
    const size_t batch_floats = batch * block_elems_ * floats_per_element_;
    for (size_t done = 0; done < n_blocks; done += batch, src += batch * block_bytes_, out += batch_floats) {
        const size_t n = std::min(batch, n_blocks - done);
        std::memcpy(swap_, src, n * block_bytes_);
        // Cannot fail: the type's layout was checked by the constructor and n * block_bytes_ is whole blocks.
        (void)swap_to_little_endian(dtype_, swap_, n * block_bytes_);
        fn_(swap_, out, static_cast<int64_t>(n) * block_elems_);
    }
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
            decode_blocks(carry_, 1, out);
            written += block_floats;
            carry_len_ = 0;
        }
    }
    const size_t blocks = left / block_bytes_;
    if (blocks > 0) {
        decode_blocks(p, blocks, out + written);
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
