// SPDX-License-Identifier: MIT
// Opens a model from the command line's path: one GGUF or safetensors file, any part of a split GGUF
// (all parts are opened), or a sharded safetensors `*.index.json` (all shards are opened); each of these
// also at an http:// or https:// URL (http_source.h), its parts and shards next to it. A remote file's
// header is read with the core's growing ranges (weightstream/header_reads.h), its tensors' bytes
// only when a command asks for them (read_tensor()); a server that ignores Range gives a stream, read
// front to back like a pipe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/http_source.h"
#include "io/mapped_file.h"
#include "weightstream/model_info.h"
#include "weightstream/parse_options.h"
#include "weightstream/status.h"

namespace ws {

struct LoadError {
    std::string file;  // which file
    // The code and, for an invalid file, the byte offset and field. A source error (is_source_error(): io,
    // network, http, source_changed, not_seekable) means the file could not be read (exit 3) rather than being
    // invalid (exit 1).
    Status status;
    std::string message;  // for a source error: its detail (the system's words, the HTTP status, what changed);
                          // for a model plan's errors: its text
    // For invalid files: their first bytes (up to kLoadErrorHead), so a caller can tell what is there instead
    // of a model (scan flags a Git LFS pointer or an HTML page).
    std::string head;

    bool source_failed() const { return is_source_error(status.code); }
};

constexpr size_t kLoadErrorHead = 512;

// Bytes of a tensor for a command: a pointer into a mapped file, or (a file at a URL) the range fetched
// into `buffer`, which holds exactly the bytes asked for (one tensor, or one row window).
struct TensorBytes {
    const uint8_t* data = nullptr;
    std::vector<uint8_t> buffer;
};

struct LoadedModel {
    ModelInfo info;
    // Per file: its URL's reader, or null for a local file. Declared before `files` so that a stream's pipe
    // is closed before its writer thread is joined.
    std::vector<std::unique_ptr<HttpFile>> remotes;
    std::vector<MappedFile> files;   // indexed by TensorInfo::file_index (a remote file's: empty, or a stream)
    std::vector<std::string> paths;  // as shown in messages (a URL without its user:password part)

    // A local file's tensor bytes, or nullptr when its range does not lie inside its file or the file is
    // remote (read_tensor() serves both).
    const uint8_t* tensor_data(const TensorInfo& t) const;
    // Whether the tensor's range lies inside its file (for a stream, not yet known: true).
    bool tensor_in_file(const TensorInfo& t) const;
    bool remote(const TensorInfo& t) const { return t.file_index < remotes.size() && remotes[t.file_index]; }
    // Bytes [offset, offset + nbytes) of t's file, which lie inside t: from the mapping, or fetched. False
    // with *error set: a source error (the URL could not be read or changed, a stream cannot seek), or
    // kTruncated when the file ends inside the range.
    bool read_tensor(const TensorInfo& t, uint64_t offset, uint64_t nbytes, TensorBytes* out, LoadError* error) const;
    // Bytes [offset, offset + nbytes) of file `file`: from the mapping, or fetched. False with *error set: a
    // source error (the file is a stream, which cannot seek: not_seekable; its URL could not be read or
    // changed), or truncated when the range lies outside the file.
    bool read_range(size_t file, uint64_t offset, uint64_t nbytes, TensorBytes* out, LoadError* error) const;
    // Whether file `file` is local and regular (not at a URL, not a stream): what copy_range() reads.
    bool local(size_t file) const {
        return file < files.size() && !(file < remotes.size() && remotes[file]) && !files[file].is_stream();
    }
    // Bytes [offset, offset + nbytes) of the local file `file` copied into buf (MappedFile::read_at). False with
    // *error set: truncated when the range lies outside the file, source_changed when the file shrank since it
    // was opened, io when it cannot be read.
    bool copy_range(size_t file, uint64_t offset, uint64_t nbytes, uint8_t* buf, LoadError* error) const;
};

bool load_model(const std::string& path, const ParseOptions& options, LoadedModel* model, LoadError* error);

}  // namespace ws
