// SPDX-License-Identifier: MIT
// An input file: a regular file is mmap'd whole (read into memory where mapping fails); anything else (a
// pipe, a FIFO, a character device, /dev/stdin on a pipe) is a stream, read front to back in bounded
// pieces by read_next(), never whole.
//
// A mapped file that shrinks while it is read (another process truncates it) makes the next read of a
// page past its new end raise SIGBUS. The handler installed by the first mapping turns that into the
// I/O error of the CLI's contract, source_changed as for a URL whose file changes: "weightstream: error: FILE:
// source_changed: the file changed while it was read: it shrank", the
// temporary output files removed (remove_temporary_outputs), exit status 3. Why a handler that exits rather
// than checking reads against the current size: the mapped bytes are read on several threads deep inside
// the decoders, sha256 and memcpy, and a size check before each read still races with the truncation; and
// why exit rather than siglongjmp back: unwinding through the decode threads would leave them mid-work,
// while every command answers an unreadable input by exiting 3 anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/output_file.h"

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
    // Becomes the stream of descriptor fd (a pipe's read end), which it owns from now on.
    void open_stream(int fd);

    // A regular file's bytes (size() of them); nullptr and 0 for a stream.
    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    // True when data() is a file mapping (whose pages can be dropped once read), false for a read buffer.
    bool mapped() const { return mapped_; }
    // A regular file's bytes [offset, offset + n) copied into buf: how many there were (fewer where the file now
    // ends: it shrank), or -1 with *error set. A mapped file is read with pread(): streaming a file through a
    // buffer is several times faster than touching its mapping where page faults are dear (a VM: 0.07 s against
    // 0.28 s for 446 MiB in the page cache here), and a file that shrinks gives a short read, not SIGBUS.
    int64_t read_at(uint64_t offset, uint8_t* buf, uint64_t n, std::string* error) const;
    // Which file this is (device and inode), for refusing to write over an input.
    const FileIdentity& identity() const { return identity_; }

    // Streams only: the next bytes, up to `capacity`, into buf. Returns how many (0 at the end), or -1 with
    // *error set. position() is the offset in the stream of the next byte read_next() returns.
    bool is_stream() const { return fd_ >= 0; }
    int64_t read_next(uint8_t* buf, size_t capacity, std::string* error);
    uint64_t position() const { return position_; }
    // Gives back the last `size` bytes read (they are returned again first): for a reader that read past
    // the part it wanted. At most what the last read_next() returned.
    void unread(const uint8_t* data, size_t size);

private:
    void reset();

    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
    bool mapped_ = false;
    int slot_ = -1;  // this mapping's entry in the SIGBUS handler's list
    FileIdentity identity_;
    std::vector<uint8_t> buffer_;  // the bytes of a regular file that could not be mapped
    int fd_ = -1;                  // a stream's descriptor
    int read_fd_ = -1;             // a mapped file's descriptor, for read_at()
    uint64_t position_ = 0;
    std::vector<uint8_t> unread_;  // bytes given back, returned before reading the descriptor again
};

}  // namespace ws
