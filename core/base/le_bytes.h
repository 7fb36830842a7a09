// SPDX-License-Identifier: MIT
// Little-endian loads of block fields and elements (the parsers read through their own checked cursors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ws {

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
