// SPDX-License-Identifier: MIT
// A fault injector for the crash-safety tests, preloaded into the CLI (LD_PRELOAD): it counts the calls that
// change files -- write and pwrite on a file descriptor other than 0-2, copy_file_range, ioctl (FICLONE), fsync,
// linkat, rename -- and at the call numbered WS_KILL_AT (1-based) kills the process with SIGKILL: a write or pwrite
// writes the first half of its bytes and then dies (a write torn by power loss or kill -9), any other call dies
// before it runs. Without WS_KILL_AT it only counts, and at exit writes the count to the file WS_KILL_COUNT names.
// A test runs the command once to count, then once per call number, and so kills it at every such point -- where
// killing at random times hits a short window (one pwrite of a header) a few times in a hundred.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace {

long g_calls = 0;

template <typename F>
F real(const char* name) {
    return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

long kill_at() {
    static const long at = [] {
        const char* v = getenv("WS_KILL_AT");
        return v ? atol(v) : 0L;
    }();
    return at;
}

// Counts one call; true when it is the one to die at.
bool dies_here() {
    return ++g_calls == kill_at();
}

// A write of `size` bytes that dies after its first half.
size_t torn(size_t size) {
    return size / 2;
}

struct CountAtExit {
    ~CountAtExit() {
        const char* path = getenv("WS_KILL_COUNT");
        if (!path || kill_at() != 0) return;
        if (FILE* f = fopen(path, "w")) {
            fprintf(f, "%ld\n", g_calls);
            fclose(f);
        }
    }
} count_at_exit;

}  // namespace

extern "C" {

ssize_t write(int fd, const void* data, size_t size) {
    static const auto next = real<ssize_t (*)(int, const void*, size_t)>("write");
    if (fd <= 2 || !dies_here()) return next(fd, data, size);
    next(fd, data, torn(size));
    raise(SIGKILL);
    return -1;
}

ssize_t pwrite64(int fd, const void* data, size_t size, off64_t offset) {
    static const auto next = real<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
    if (fd <= 2 || !dies_here()) return next(fd, data, size, offset);
    next(fd, data, torn(size), offset);
    raise(SIGKILL);
    return -1;
}

ssize_t pwrite(int fd, const void* data, size_t size, off_t offset) {
    return pwrite64(fd, data, size, offset);
}

ssize_t copy_file_range(int in, loff_t* in_offset, int out, loff_t* out_offset, size_t size, unsigned flags) {
    static const auto next = real<ssize_t (*)(int, loff_t*, int, loff_t*, size_t, unsigned)>("copy_file_range");
    if (dies_here()) raise(SIGKILL);
    return next(in, in_offset, out, out_offset, size, flags);
}

int ioctl(int fd, unsigned long request, ...) {
    static const auto next = real<int (*)(int, unsigned long, void*)>("ioctl");
    va_list args;
    va_start(args, request);
    void* arg = va_arg(args, void*);
    va_end(args);
    if (fd > 2 && dies_here()) raise(SIGKILL);
    return next(fd, request, arg);
}

int fsync(int fd) {
    static const auto next = real<int (*)(int)>("fsync");
    if (dies_here()) raise(SIGKILL);
    return next(fd);
}

int linkat(int from_dir, const char* from, int to_dir, const char* to, int flags) {
    static const auto next = real<int (*)(int, const char*, int, const char*, int)>("linkat");
    if (dies_here()) raise(SIGKILL);
    return next(from_dir, from, to_dir, to, flags);
}

int rename(const char* from, const char* to) {
    static const auto next = real<int (*)(const char*, const char*)>("rename");
    if (dies_here()) raise(SIGKILL);
    return next(from, to);
}

}  // extern "C"
