// SPDX-License-Identifier: MIT
#include "io/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h>  // FICLONE
#endif

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
// Written bytes are handed to the disk (sync_file_range, SYNC_FILE_RANGE_WRITE: start the writeback, do not wait)
// every this many, so that commit()'s fsync waits for the last few only instead of the whole file: writing back
// a 250 MB output at the end took 0.15 s, a serial step that no thread count shortens.
constexpr uint64_t kWritebackBytes = uint64_t(8) << 20;
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

// This process's mark in its temporary files' names: ".HOST.PID" (HOST a hash of the host name, 8 hex digits),
// so that a later run can tell a temporary file left by a dead process of this host (a kill -9 between the
// link and the rename at commit, or where there is no O_TMPFILE) from one a live writer is using.
std::string host_mark() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
    uint32_t h = 2166136261u;  // FNV-1a
    for (const char* c = name; *c; ++c) h = (h ^ static_cast<uint8_t>(*c)) * 16777619u;
    static const char kHex[] = "0123456789abcdef";
    std::string s;
    for (int shift = 28; shift >= 0; shift -= 4) s += kHex[(h >> shift) & 15];
    return s;
}

std::string temporary_name(const std::string& path) {
    return path + ".tmp-" + random_suffix() + "." + host_mark() + "." + std::to_string(::getpid());
}

// Removes the temporary files of `path` that a process of this host and user left when it was killed: named
// PATH.tmp-RANDOM.HOST.PID, owned by this user, HOST this host's mark and PID no longer running. Others (another
// user's, another host's on a shared file system, a live writer's, an older version's without the mark) are left.
void remove_stale_temporaries(const std::string& path) {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp-";
    const std::string host = "." + host_mark() + ".";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.compare(0, prefix.size(), prefix) != 0) continue;
        const size_t mark = name.rfind(host);
        if (mark == std::string::npos || mark < prefix.size()) continue;
        const std::string pid_text = name.substr(mark + host.size());
        if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
        if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
        const std::string full = dir + "/" + name;
        struct stat st;
        if (::lstat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
        ::unlink(full.c_str());
    }
    ::closedir(d);
}

// The name by which an unnamed (O_TMPFILE) file can be linked into a directory without privileges.
std::string proc_fd_path(int fd) {
    return "/proc/self/fd/" + std::to_string(fd);
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
    if (fd_ > 1) ::close(fd_);  // an unnamed temporary file is gone with its last descriptor
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
        direct_ = true;
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
        direct_ = true;
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
    return create_temporary();
}

bool OutputFile::open_replacing(const std::string& path, const FileIdentity& expected) {
    path_ = path;
    buffer_.assign(kBufferBytes, 0);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return set_error(std::strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_dev != expected.dev || st.st_ino != expected.ino) {
        return set_error("it was replaced by another file (left as it is)");
    }
    mode_ = st.st_mode & 07777;
    keep_owner_ = true;
    uid_ = st.st_uid;
    gid_ = st.st_gid;
    replacing_ = true;
    expected_ = expected;
    return create_temporary();
}

bool OutputFile::create_temporary() {
    install_signal_handlers();
    remove_stale_temporaries(path_);
#ifdef O_TMPFILE
    // Unnamed until commit(): nothing is left behind by a kill, whatever the signal.
    const int fd = ::open(dir_of(path_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (::access(proc_fd_path(fd).c_str(), F_OK) == 0) {
            fd_ = fd;
            unnamed_ = true;
            return true;
        }
        ::close(fd);  // no /proc to link it by: a named temporary file
    }
#endif
    for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
        const std::string candidate = temporary_name(path_);
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

// Links the unnamed temporary file beside OUT under a random name, for the rename (registered first, so that
// a signal in between removes it).
bool OutputFile::name_temporary() {
    for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
        const std::string candidate = temporary_name(path_);
        slot_ = claim_slot(candidate);
        if (slot_ < 0) return set_error(candidate.size() >= PATH_MAX ? "name too long" : "too many open outputs");
        if (::linkat(AT_FDCWD, proc_fd_path(fd_).c_str(), AT_FDCWD, candidate.c_str(), AT_SYMLINK_FOLLOW) == 0) {
            tmp_path_ = candidate;
            unnamed_ = false;
            return true;
        }
        const int e = errno;
        release_slot(slot_);
        slot_ = -1;
        if (e != EEXIST) return set_error(std::strerror(e));
    }
    return set_error("no unused temporary name");
}

bool OutputFile::copy_of(int fd, uint64_t size, bool* cloned) {
    *cloned = false;
    if (fd_ < 0 || direct_) return set_error("not open");
#ifdef FICLONE
    if (::ioctl(fd_, FICLONE, fd) == 0) {
        struct stat st;
        if (::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) == size) {
            *cloned = true;
            return true;
        }
        if (::ftruncate(fd_, 0) != 0) return set_error(std::strerror(errno));  // the file changed size: copy
    }
#endif
    uint64_t done = 0;
    bool by_range = true;
    while (done < size) {
        ssize_t n = -1;
        if (by_range) {
            off_t in_offset = static_cast<off_t>(done);
            n = ::copy_file_range(fd, &in_offset, fd_, nullptr,
                                  static_cast<size_t>(std::min<uint64_t>(size - done, 1u << 30)), 0);
            if (n < 0 && done == 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP)) {
                by_range = false;  // not between these files: read and write
                continue;
            }
        } else {
            n = ::pread(fd, buffer_.data(), static_cast<size_t>(std::min<uint64_t>(size - done, buffer_.size())),
                        static_cast<off_t>(done));
            for (ssize_t w = 0; n > 0 && w < n;) {
                const ssize_t m = ::write(fd_, buffer_.data() + w, static_cast<size_t>(n - w));
                if (m < 0 && errno == EINTR) continue;
                if (m < 0) return set_error(std::strerror(errno));
                w += m;
            }
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return set_error(std::strerror(errno));
        if (n == 0) return set_error("the input ended early (it shrank while it was copied)");
        done += static_cast<uint64_t>(n);
    }
    return true;
}

bool OutputFile::write_at(uint64_t offset, const void* data, size_t size) {
    if (fd_ < 0 || prepared_) return set_error("not open");
    if (!flush()) return false;
    const uint8_t* p = static_cast<const uint8_t*>(data);
    for (size_t done = 0; done < size;) {
        const ssize_t n = ::pwrite(fd_, p + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return set_error(n < 0 ? std::strerror(errno) : "nothing written");
        done += static_cast<size_t>(n);
    }
    return true;
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
    written_ += done;
    if (!direct_ && written_ - handed_ >= kWritebackBytes) {
        // Only a hint (the pages are written back anyway): its failure is fsync's to report.
        (void)::sync_file_range(fd_, static_cast<off_t>(handed_), static_cast<off_t>(written_ - handed_),
                                SYNC_FILE_RANGE_WRITE);
        handed_ = written_;
    }
    return true;
}

bool OutputFile::write(const void* data, size_t size) {
    if (fd_ < 0 || prepared_) return set_error("not open");
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

bool OutputFile::prepare() {
    if (prepared_) return true;
    if (fd_ < 0) return set_error("not open");
    if (!flush()) return false;
    if (!direct_) {
        // The owner first (fchown clears set-id bits, which fchmod then restores). Only root may give a file
        // away; for anyone else it fails and the file stays theirs, with the old permission bits.
        if (keep_owner_) (void)!fchown(fd_, uid_, gid_);
        if (fchmod(fd_, mode_) != 0) return set_error(std::strerror(errno));
        if (fsync(fd_) != 0) return set_error(std::strerror(errno));
    }
    std::vector<uint8_t>().swap(buffer_);
    prepared_ = true;
    return true;
}

bool OutputFile::commit() {
    if (!prepare()) return false;
    if (direct_) {  // stdout or a device: nothing to rename
        if (fd_ > 1) ::close(fd_);
        fd_ = -1;
        committed_ = true;
        return true;
    }
    if (unnamed_ && !name_temporary()) return false;
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return set_error(std::strerror(errno));
    if (replacing_) {
        // The file edited must still be the one at the path: one renamed into place meanwhile (a download, a
        // sync) is not replaced by an edit of the file it replaced. (What is renamed in between this check and
        // the rename below is replaced: the window is this function's two system calls.)
        struct stat st;
        if (::stat(path_.c_str(), &st) != 0) return set_error(std::strerror(errno));
        if (st.st_dev != expected_.dev || st.st_ino != expected_.ino) {
            return set_error("it was replaced by another file while it was edited (left as it is)");
        }
    }
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
