// SPDX-License-Identifier: MIT
#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ws {

MappedFile::~MappedFile() {
    reset();
}

MappedFile::MappedFile(MappedFile&& other) noexcept {
    *this = std::move(other);
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        reset();
        mapped_ = other.mapped_;
        identity_ = other.identity_;
        size_ = other.size_;
        buffer_ = std::move(other.buffer_);
        data_ = mapped_ ? other.data_ : buffer_.data();
        other.data_ = nullptr;
        other.size_ = 0;
        other.mapped_ = false;
    }
    return *this;
}

void MappedFile::reset() {
    if (mapped_ && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
    mapped_ = false;
    buffer_.clear();
}

bool MappedFile::open(const std::string& path, std::string* error) {
    reset();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *error = std::strerror(errno);
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *error = std::strerror(errno);
        ::close(fd);
        return false;
    }
    identity_.dev = st.st_dev;
    identity_.ino = st.st_ino;
    if (S_ISDIR(st.st_mode)) {
        *error = "is a directory";
        ::close(fd);
        return false;
    }
    if (S_ISREG(st.st_mode)) {
        size_ = static_cast<uint64_t>(st.st_size);
        if (size_ == 0) {
            ::close(fd);
            return true;
        }
        void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            ::close(fd);
            data_ = static_cast<const uint8_t*>(p);
            mapped_ = true;
            return true;
        }
        size_ = 0;
    }
    // Not mappable (a pipe, a FIFO, a character device): read it to the end.
    uint8_t chunk[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            *error = std::strerror(errno);
            ::close(fd);
            buffer_.clear();
            return false;
        }
        buffer_.insert(buffer_.end(), chunk, chunk + n);
    }
    ::close(fd);
    data_ = buffer_.data();
    size_ = buffer_.size();
    return true;
}

}  // namespace ws
