// SPDX-License-Identifier: MIT
#include "io/header_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "cli/cli.h"
#include "cli/tensor_hash.h"
#include "io/crypto_library.h"
#include "io/output_file.h"

namespace ws {
namespace {

// An entry: the magic line, then one line each for the ETag, Last-Modified, file size, header length and the
// sha256 of everything from the ETag line to the end of the header bytes (with the checksum line left out),
// then the header bytes.
constexpr char kMagic[] = "weightstream-header-cache 1\n";
constexpr char kSuffix[] = ".hdr";

bool g_disabled = false;

std::string sha256_hex(const std::string& a, const std::vector<uint8_t>& b) {
    cli::Hasher h(cli::HashAlgo::kSha256);
    h.update(a.data(), a.size());
    h.update(b.data(), b.size());
    return h.hex();
}

// Whether a cache directory or entry is this user's and no one else may write it. A checksum is no defence
// against someone who can plant an entry (they recompute it), and a 304 for the entry's ETag would then vouch
// for header bytes of their choosing.
bool private_to_user(const struct stat& st) {
    return st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// $XDG_CACHE_HOME/weightstream/headers (an absolute XDG_CACHE_HOME only, as the XDG spec says), else
// $HOME/.cache/weightstream/headers; created (0700) if missing. Empty when there is none, or when it is not a
// directory private to this user (private_to_user()).
std::string cache_dir() {
    std::string base;
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') {
        base = xdg;
    } else if (const char* home = std::getenv("HOME"); home && home[0] == '/') {
        base = std::string(home) + "/.cache";
    } else {
        return "";
    }
    std::string dir = base;
    for (const char* part : {"", "/weightstream", "/headers"}) {
        dir += part;
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "";
    }
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !private_to_user(st)) return "";
    return dir;
}

std::string entry_path(const std::string& dir, const std::string& url) {
    return dir + "/" + sha256_hex(url, {}) + kSuffix;
}

// The entry at `path`, if it is a regular file private to this user (not a link, FIFO or device: the cache
// writes none; opened without blocking, so that a FIFO planted there cannot hang the command).
bool read_all(const std::string& path, std::vector<uint8_t>* out) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return false;
    struct stat st;
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && private_to_user(st) &&
              static_cast<uint64_t>(st.st_size) <= kHeaderCacheBytes;
    if (ok) {
        out->resize(static_cast<size_t>(st.st_size));
        size_t got = 0;
        while (got < out->size()) {
            const ssize_t n = ::read(fd, out->data() + got, out->size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += static_cast<size_t>(n);
        }
        ok = got == out->size();
    }
    ::close(fd);
    return ok;
}

// The next '\n'-terminated line of `bytes` from *at (without the '\n').
bool next_line(const std::vector<uint8_t>& bytes, size_t* at, std::string* line) {
    const auto begin = bytes.begin() + static_cast<std::ptrdiff_t>(*at);
    const auto nl = std::find(begin, bytes.end(), '\n');
    if (nl == bytes.end()) return false;
    line->assign(begin, nl);
    *at = static_cast<size_t>(nl - bytes.begin()) + 1;
    return true;
}

// Removes the least recently used entries until the directory holds at most kHeaderCacheBytes.
void evict(const std::string& dir) {
    struct Entry {
        std::string path;
        uint64_t size;
        struct timespec mtime;
    };
    std::vector<Entry> entries;
    uint64_t total = 0;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() <= sizeof kSuffix - 1 ||
            name.compare(name.size() - (sizeof kSuffix - 1), std::string::npos, kSuffix) != 0) {
            continue;
        }
        struct stat st;
        const std::string path = dir + "/" + name;
        if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        entries.push_back({path, static_cast<uint64_t>(st.st_size), st.st_mtim});
        total += static_cast<uint64_t>(st.st_size);
    }
    ::closedir(d);
    if (total <= kHeaderCacheBytes) return;
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    for (const Entry& e : entries) {
        if (total <= kHeaderCacheBytes) break;
        if (::unlink(e.path.c_str()) == 0) total -= e.size;
    }
}

}  // namespace

void set_header_cache_disabled(bool disabled) {
    g_disabled = disabled;
}

bool header_cache_enabled() {
    // Entries are named and checked by SHA-256: without libcrypto there is no cache (never an error).
    if (g_disabled || !crypto_library(nullptr)) return false;
    const char* env = std::getenv("WEIGHTSTREAM_CACHE");
    return !(env && std::string(env) == "0");
}

bool header_cache_load(const std::string& url, CachedHeader* out) {
    const std::string dir = cache_dir();
    if (dir.empty()) return false;
    const std::string path = entry_path(dir, url);
    std::vector<uint8_t> bytes;
    if (!read_all(path, &bytes)) return false;
    const size_t magic = sizeof kMagic - 1;
    if (bytes.size() < magic || std::string(bytes.begin(), bytes.begin() + magic) != kMagic) return false;
    size_t at = magic;
    std::string etag, last_modified, size_text, length_text, checksum;
    uint64_t size = 0, length = 0;
    if (!next_line(bytes, &at, &etag) || !next_line(bytes, &at, &last_modified) || !next_line(bytes, &at, &size_text) ||
        !next_line(bytes, &at, &length_text) || !next_line(bytes, &at, &checksum) ||
        !cli::parse_u64(size_text, &size) || !cli::parse_u64(length_text, &length) || length != bytes.size() - at ||
        length > size) {
        return false;
    }
    out->etag = etag;
    out->last_modified = last_modified;
    out->size = size;
    out->bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.end());
    const std::string fields = etag + "\n" + last_modified + "\n" + size_text + "\n" + length_text + "\n";
    if (sha256_hex(fields, out->bytes) != checksum || (etag.empty() && last_modified.empty())) return false;
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now: the last to go
    return true;
}

void header_cache_store(const std::string& url, const CachedHeader& entry) {
    if (entry.bytes.size() > kHeaderCacheBytes / 4 || (entry.etag.empty() && entry.last_modified.empty()) ||
        entry.etag.find('\n') != std::string::npos || entry.last_modified.find('\n') != std::string::npos) {
        return;
    }
    const std::string dir = cache_dir();
    if (dir.empty()) return;
    const std::string fields = entry.etag + "\n" + entry.last_modified + "\n" + std::to_string(entry.size) + "\n" +
                               std::to_string(entry.bytes.size()) + "\n";
    const std::string head = std::string(kMagic) + fields + sha256_hex(fields, entry.bytes) + "\n";
    // Something else at the entry's name (a FIFO, a link: the cache writes neither) goes first: OutputFile
    // writes into an existing file that is not a regular one (a FIFO would block it) rather than replace it.
    const std::string path = entry_path(dir, url);
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && ::unlink(path.c_str()) != 0) return;
    OutputFile out;
    if (!out.open(path, {}) || !out.write(head.data(), head.size()) ||
        !out.write(entry.bytes.data(), entry.bytes.size()) || !out.commit()) {
        return;  // a cache that cannot be written is no cache, not an error
    }
    evict(dir);
}

}  // namespace ws
