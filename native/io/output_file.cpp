// SPDX-License-Identifier: MIT
#include "io/output_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <mutex>

namespace ws {
namespace {

// All writes go through this buffer, input bytes included: copying them here makes a fault on a mapped
// input that shrank happen in our memcpy (a SIGBUS the input's handler reports) instead of in write(2),
// which would return EFAULT and be mistaken for an output error.
constexpr size_t kBufferBytes = size_t(1) << 20;
constexpr int kMaxTemporaryFiles = 64;  // concurrent outputs of one process
constexpr int kNameAttempts = 100;      // random names tried before giving up

// The temporary files the signal handlers remove. Fixed storage, no allocation, so a handler can walk it
// at any moment: a slot is claimed (kWriting), its path written, then published (kPublished); handlers
// read only published paths, and a path is not touched again until its slot is free.
enum SlotState : int { kFree, kWriting, kPublished };
struct TemporarySlot {
    std::atomic<int> state{kFree};
    char path[PATH_MAX] = {};
};
// Constant-initialized, like mapped_file.cpp's slots: zero bytes in .bss, no start-up loop over 256 KiB.
TemporarySlot g_temporary[kMaxTemporaryFiles];

int claim_slot(const std::string& path) {
    if (path.size() >= PATH_MAX) return -1;
    for (int i = 0; i < kMaxTemporaryFiles; ++i) {
        int expected = kFree;
        if (g_temporary[i].state.compare_exchange_strong(expected, kWriting)) {
            std::memcpy(g_temporary[i].path, path.c_str(), path.size() + 1);
            g_temporary[i].state.store(kPublished);
            return i;
        }
    }
    return -1;
}

void release_slot(int slot) {
    if (slot >= 0) g_temporary[slot].state.store(kFree);
}

void on_fatal_signal(int sig) {
    remove_temporary_outputs();
    std::signal(sig, SIG_DFL);
    std::raise(sig);  // the process ends as the signal's default says (exit status 128 + sig in a shell)
}

// Once per process: the interrupting signals remove the temporary files, unless they are ignored (nohup).
void install_signal_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction old;
            if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
            struct sigaction sa;
            std::memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_fatal_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sig, &sa, nullptr);
        }
    });
}

std::string random_suffix() {
    uint8_t bytes[8];
    if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
        // No entropy source: still unique per attempt; O_EXCL keeps it safe, only less hard to guess.
        static std::atomic<uint64_t> counter{0};
        const uint64_t v = (static_cast<uint64_t>(::getpid()) << 32) ^ counter.fetch_add(1) ^
                           static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&counter));
        std::memcpy(bytes, &v, sizeof bytes);
    }
    static const char kHex[] = "0123456789abcdef";
    std::string s;
    for (uint8_t b : bytes) {
        s += kHex[b >> 4];
        s += kHex[b & 15];
    }
    return s;
}

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

mode_t default_mode() {
    const mode_t mask = ::umask(0);  // reading the umask means setting it; put it straight back
    ::umask(mask);
    return 0666 & ~mask;
}

}  // namespace

void remove_temporary_outputs() {
    for (TemporarySlot& s : g_temporary) {
        if (s.state.load() == kPublished) ::unlink(s.path);
    }
}

OutputFile::OutputFile() = default;

OutputFile::~OutputFile() {
    discard();
}

void OutputFile::discard() {
    if (fd_ > 1) ::close(fd_);
    fd_ = -1;
    if (!committed_ && !tmp_path_.empty()) ::unlink(tmp_path_.c_str());
    release_slot(slot_);  // after the unlink: a signal in between removes it again, harmlessly
    slot_ = -1;
}

bool OutputFile::set_error(const std::string& what) {
    if (error_.empty()) error_ = "cannot write " + path_ + ": " + what;
    discard();
    return false;
}

bool OutputFile::open(const std::string& path, const std::vector<FileIdentity>& inputs) {
    path_ = path;
    buffer_.assign(kBufferBytes, 0);
    if (path == "-") {
        fd_ = 1;
        return true;
    }
    struct stat st;
    const bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists) {
        for (const FileIdentity& in : inputs) {
            if (in.dev == st.st_dev && in.ino == st.st_ino) return set_error("it is the input file (the same inode)");
        }
    }
    if (exists && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) return set_error("is a directory");
        fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd_ < 0) return set_error(std::strerror(errno));
        return true;
    }
    if (exists) {
        mode_ = st.st_mode & 07777;
        keep_owner_ = true;
        uid_ = st.st_uid;
        gid_ = st.st_gid;
    } else {
        mode_ = default_mode();
    }
    install_signal_handlers();
    for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
        const std::string candidate = path + ".tmp-" + random_suffix();
        // Registered before it exists, so no signal can leave it behind.
        slot_ = claim_slot(candidate);
        if (slot_ < 0) return set_error(candidate.size() >= PATH_MAX ? "name too long" : "too many open outputs");
        fd_ = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd_ >= 0) {
            tmp_path_ = candidate;
            return true;
        }
        const int e = errno;
        release_slot(slot_);
        slot_ = -1;
        if (e != EEXIST) return set_error(std::strerror(e));
    }
    return set_error("no unused temporary name");
}

bool OutputFile::flush() {
    size_t done = 0;
    while (done < buffered_) {
        const ssize_t n = ::write(fd_, buffer_.data() + done, buffered_ - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return set_error(std::strerror(errno));
        }
        done += static_cast<size_t>(n);
    }
    buffered_ = 0;
    return true;
}

bool OutputFile::write(const void* data, size_t size) {
    if (fd_ < 0) return set_error("not open");
    const uint8_t* p = static_cast<const uint8_t*>(data);
    while (size > 0) {
        const size_t n = std::min(size, buffer_.size() - buffered_);
        std::memcpy(buffer_.data() + buffered_, p, n);
        buffered_ += n;
        p += n;
        size -= n;
        if (buffered_ == buffer_.size() && !flush()) return false;
    }
    return true;
}

bool OutputFile::write_zeros(size_t size) {
    static const uint8_t kZeros[4096] = {};
    while (size > 0) {
        const size_t n = std::min(size, sizeof kZeros);
        if (!write(kZeros, n)) return false;
        size -= n;
    }
    return true;
}

bool OutputFile::commit() {
    if (fd_ < 0) return set_error("not open");
    if (!flush()) return false;
    if (tmp_path_.empty()) {  // stdout or a device: nothing to rename
        if (fd_ > 1) ::close(fd_);
        fd_ = -1;
        committed_ = true;
        return true;
    }
    // The owner first (fchown clears set-id bits, which fchmod then restores). Only root may give a file
    // away; for anyone else it fails and the file stays theirs, with the old permission bits.
    if (keep_owner_) (void)!fchown(fd_, uid_, gid_);
    if (fchmod(fd_, mode_) != 0) return set_error(std::strerror(errno));
    if (fsync(fd_) != 0) return set_error(std::strerror(errno));
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return set_error(std::strerror(errno));
    if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) return set_error(std::strerror(errno));
    committed_ = true;
    release_slot(slot_);
    slot_ = -1;
    // The rename itself survives a crash once the directory is synced (best effort: not every file
    // system lets a directory be opened for it).
    const int dir = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        fsync(dir);
        ::close(dir);
    }
    tmp_path_.clear();
    return true;
}

}  // namespace ws
