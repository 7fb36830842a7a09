// SPDX-License-Identifier: MIT
// A bounds-checked cursor over untrusted bytes. Every read checks what remains; there is no unchecked
// skip. Multi-byte integers are little-endian unless the reader is told the file is big-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ws {

class ByteReader {
public:
    // base: the absolute file offset of data[0], so positions can be reported as file offsets.
    ByteReader(const uint8_t* data, size_t size, uint64_t base = 0, bool big_endian = false)
        : data_(data), size_(size), base_(base), big_endian_(big_endian) {}

    size_t remaining() const { return size_ - pos_; }
    size_t position() const { return pos_; }          // relative to data
    uint64_t offset() const { return base_ + pos_; }  // absolute file offset of the next byte
    const uint8_t* cursor() const { return data_ + pos_; }

    bool skip(size_t n) {
        if (n > remaining()) return false;
        pos_ += n;
        return true;
    }
    bool read_bytes(void* out, size_t n) {
        if (n > remaining()) return false;
        if (n) std::memcpy(out, data_ + pos_, n);
        pos_ += n;
        return true;
    }
    bool read_u8(uint8_t* v) { return read_bytes(v, 1); }
    bool read_u16(uint16_t* v) { return read_int(v); }
    bool read_u32(uint32_t* v) { return read_int(v); }
    bool read_u64(uint64_t* v) { return read_int(v); }

private:
    template <typename T>
    bool read_int(T* v) {
        uint8_t b[sizeof(T)];
        if (!read_bytes(b, sizeof(T))) return false;
        T x = 0;
        for (size_t i = 0; i < sizeof(T); ++i) {
            const size_t shift = big_endian_ ? (sizeof(T) - 1 - i) * 8 : i * 8;
            x |= static_cast<T>(static_cast<T>(b[i]) << shift);
        }
        *v = x;
        return true;
    }

    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
    uint64_t base_;
    bool big_endian_;
};

// Little-endian loads from raw bytes the caller has already bounds-checked (kernels, block fields).
inline uint16_t load_le16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t load_le32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
           (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t load_le64(const uint8_t* p) {
    return static_cast<uint64_t>(load_le32(p)) | (static_cast<uint64_t>(load_le32(p + 4)) << 32);
}

}  // namespace ws
