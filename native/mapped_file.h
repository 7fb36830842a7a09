// SPDX-License-Identifier: MIT
// A whole file as read-only bytes: mmap'd where the file is mappable, else read into memory (pipes,
// FIFOs, /dev/stdin). The bytes stay valid for the object's lifetime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "output_file.h"

namespace ws {

class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // Opens path. On failure returns false and sets *error to strerror-style text.
    bool open(const std::string& path, std::string* error);

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    // Which file this is (device and inode), for refusing to write over an input.
    const FileIdentity& identity() const { return identity_; }

private:
    void reset();

    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
    bool mapped_ = false;
    FileIdentity identity_;
    std::vector<uint8_t> buffer_;  // holds the bytes when the file could not be mapped
};

}  // namespace ws
