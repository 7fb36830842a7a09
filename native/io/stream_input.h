// SPDX-License-Identifier: MIT
// Models read from a stream (a pipe, a FIFO, a character device: MappedFile::is_stream()), front to back in
// bounded memory, as the package reads a ReadableStream: the header through the push parser, fed one piece
// at a time (it keeps only the item it is parsing, within the caps and the header memory budget of
// ParseOptions), then the tensor data in offset order, one piece at a time. Nothing is read whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "io/mapped_file.h"
#include "io/model.h"

namespace ws {

// Bytes read from a stream at a time.
constexpr size_t kStreamPiece = size_t(1) << 20;

// Parses the header of the stream `file` (named `path` in errors) into *info. The file's size is unknown
// (ParseOptions::file_size is ignored; info->file_size is 0) unless known_size says it (an HTTP response's
// Content-Length). The stream is left at the start of the data section. On failure fills *error (kIo for a
// read error, else the parser's status).
bool read_stream_header(const std::string& path, MappedFile* file, ParseOptions options, ModelInfo* info,
                        LoadError* error, uint64_t known_size = kUnknownSize);

// Reads tensor t's bytes from the stream, calling fn(bytes, size) for each piece (at most kStreamPiece
// bytes, valid during the call). The stream must not be past t.offset yet (unless t is empty): it skips
// the bytes before it.
// Returns ok, or kTruncated (offset: where the stream ended) when it ends before the tensor does, or
// kInternal when the stream is already past t.offset; *io_error is set instead for a read error.
Status read_stream_tensor(MappedFile* file, const TensorInfo& t, const std::function<void(const uint8_t*, size_t)>& fn,
                          std::string* io_error);

}  // namespace ws
