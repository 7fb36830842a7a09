// SPDX-License-Identifier: MIT
#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <mutex>

#include "cli/cli.h"
#include "io/source_error.h"

namespace ws {
namespace {

constexpr int kMaxMappings = 1024;  // mappings the SIGBUS handler can name (more are still handled)
constexpr size_t kMaxShownPath = 512;

// The mappings the SIGBUS handler knows, in fixed storage so the handler can read it at any moment: a slot
// is claimed (kWriting), filled, then published; the handler reads published slots only.
enum SlotState : int { kFree, kWriting, kPublished };
struct MappingSlot {
    std::atomic<int> state{kFree};
    uintptr_t begin = 0;
    uintptr_t end = 0;
    // "weightstream: error: FILE: source_changed: the file changed while it was read: it shrank\n"
    char message[kMaxShownPath + 128] = {};
};
// Every member initialized by a constant: the array is zero bytes in .bss, not a loop at start-up that
// touches 600 KiB before main (docs/SPEED.md, "Start-up").
MappingSlot g_mappings[kMaxMappings];

void write_all(const char* s) {
    size_t n = std::strlen(s);
    while (n > 0) {
        const ssize_t w = ::write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= static_cast<size_t>(w);
    }
}

void on_sigbus(int sig, siginfo_t* info, void*) {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
    for (MappingSlot& m : g_mappings) {
        if (m.state.load() != kPublished || addr < m.begin || addr >= m.end) continue;
        remove_temporary_outputs();
        write_all(m.message);
        _exit(cli::kExitIo);
    }
    // Not one of our mappings: a real fault. Default action (the return re-runs the faulting access).
    std::signal(sig, SIG_DFL);
}

void install_sigbus_handler() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, nullptr);
    });
}

int register_mapping(const void* data, uint64_t size, const std::string& path) {
    install_sigbus_handler();
    const std::string message =
        "weightstream: error: " +
        source_error_text(cli::printable(path, kMaxShownPath), Error::kSourceChanged, "it shrank") + "\n";
    for (int i = 0; i < kMaxMappings; ++i) {
        int expected = kFree;
        if (!g_mappings[i].state.compare_exchange_strong(expected, kWriting)) continue;
        g_mappings[i].begin = reinterpret_cast<uintptr_t>(data);
        g_mappings[i].end = g_mappings[i].begin + size;
        std::memcpy(g_mappings[i].message, message.c_str(), message.size() + 1);
        g_mappings[i].state.store(kPublished);
        return i;
    }
    return -1;
}

}  // namespace

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
        size_ = other.size_;
        slot_ = other.slot_;
        identity_ = other.identity_;
        buffer_ = std::move(other.buffer_);
        data_ = mapped_ ? other.data_ : buffer_.data();
        fd_ = other.fd_;
        read_fd_ = other.read_fd_;
        position_ = other.position_;
        unread_ = std::move(other.unread_);
        other.data_ = nullptr;
        other.size_ = 0;
        other.mapped_ = false;
        other.slot_ = -1;
        other.fd_ = -1;
        other.read_fd_ = -1;
    }
    return *this;
}

void MappedFile::reset() {
    if (slot_ >= 0) g_mappings[slot_].state.store(kFree);  // before the unmap: the range may be reused
    slot_ = -1;
    if (mapped_ && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (read_fd_ >= 0) ::close(read_fd_);
    read_fd_ = -1;
    data_ = nullptr;
    size_ = 0;
    mapped_ = false;
    position_ = 0;
    buffer_.clear();
    unread_.clear();
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
    if (!S_ISREG(st.st_mode)) {
        // A pipe, a FIFO, a device: read as it comes, by the reader (read_next), in bounded pieces.
        fd_ = fd;
        return true;
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ == 0) {
        ::close(fd);
        return true;
    }
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
        read_fd_ = fd;  // kept for read_at()
        data_ = static_cast<const uint8_t*>(p);
        mapped_ = true;
        slot_ = register_mapping(p, size_, path);
        return true;
    }
    // A regular file that cannot be mapped: read it, up to the size it has on disk.
    buffer_.resize(static_cast<size_t>(size_));
    size_t done = 0;
    while (done < buffer_.size()) {
        const ssize_t n = ::read(fd, buffer_.data() + done, buffer_.size() - done);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            *error = std::strerror(errno);
            ::close(fd);
            reset();
            return false;
        }
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    buffer_.resize(done);
    data_ = buffer_.data();
    size_ = buffer_.size();
    return true;
}

int64_t MappedFile::read_at(uint64_t offset, uint8_t* buf, uint64_t n, std::string* error) const {
    if (!mapped_) {
        const uint64_t got = offset < size_ ? std::min(n, size_ - offset) : 0;
        if (got > 0) std::memcpy(buf, data_ + offset, static_cast<size_t>(got));
        return static_cast<int64_t>(got);
    }
    uint64_t done = 0;
    while (done < n) {
        const ssize_t r = ::pread(read_fd_, buf + done, static_cast<size_t>(std::min<uint64_t>(n - done, 1u << 30)),
                                  static_cast<off_t>(offset + done));
        if (r == 0) break;
        if (r < 0) {
            if (errno == EINTR) continue;
            *error = std::strerror(errno);
            return -1;
        }
        done += static_cast<uint64_t>(r);
    }
    return static_cast<int64_t>(done);
}

void MappedFile::open_stream(int fd) {
    reset();
    fd_ = fd;
}

int64_t MappedFile::read_next(uint8_t* buf, size_t capacity, std::string* error) {
    if (!unread_.empty()) {
        const size_t n = std::min(capacity, unread_.size());
        std::memcpy(buf, unread_.data(), n);
        unread_.erase(unread_.begin(), unread_.begin() + static_cast<std::ptrdiff_t>(n));
        position_ += n;
        return static_cast<int64_t>(n);
    }
    for (;;) {
        const ssize_t n = ::read(fd_, buf, capacity);
        if (n >= 0) {
            position_ += static_cast<uint64_t>(n);
            return n;
        }
        if (errno != EINTR) {
            *error = std::strerror(errno);
            return -1;
        }
    }
}

void MappedFile::unread(const uint8_t* data, size_t size) {
    unread_.insert(unread_.begin(), data, data + size);
    position_ -= size;
}

}  // namespace ws
