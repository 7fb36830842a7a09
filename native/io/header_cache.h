// SPDX-License-Identifier: MIT
// The header cache: the header bytes of remote models (what the header parser was fed) in
// $XDG_CACHE_HOME/weightstream/headers (default ~/.cache/weightstream/headers), one file per URL named by
// the sha256 of the URL (so neither the URL, a token in its query nor its user:password is written down;
// HF_TOKEN and --header values are never stored). An entry records the file's validator (ETag, else
// Last-Modified) and size; model.cpp uses it only after the server has confirmed that validator with a
// conditional 1-byte request (304 Not Modified), and re-parses the bytes locally, so the result is the
// network's own. Entries are written atomically (temporary file + rename), the directory is kept under
// kHeaderCacheBytes by removing the least recently used entries (a hit refreshes its mtime), and an entry
// that cannot be read or does not check out (magic, lengths, checksum; a regular file, not a link, FIFO or
// device, opened without blocking) is ignored, never an error. The directory and its entries must be the
// user's own and writable by no one else (else the cache is not used): whoever can write an entry can forge
// one, checksum included, for a 304 to vouch for.
// `--no-cache` or WEIGHTSTREAM_CACHE=0 turns it off.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ws {

// The most the cache directory holds; an entry larger than a quarter of it is not stored.
constexpr uint64_t kHeaderCacheBytes = uint64_t(256) << 20;

struct CachedHeader {
    std::string etag, last_modified;  // the validator the entry was stored under (one may be empty)
    uint64_t size = 0;                // the file's size
    std::vector<uint8_t> bytes;       // the header bytes, from offset 0
};

// Set by main from --no-cache.
void set_header_cache_disabled(bool disabled);
// False with --no-cache, WEIGHTSTREAM_CACHE=0, or without a usable cache directory.
bool header_cache_enabled();
// The entry of `url`, if there is a readable, intact one.
bool header_cache_load(const std::string& url, CachedHeader* out);
// Stores (replaces) the entry of `url`; any failure leaves the cache as it was.
void header_cache_store(const std::string& url, const CachedHeader& entry);

}  // namespace ws
