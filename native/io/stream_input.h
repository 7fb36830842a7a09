// SPDX-License-Identifier: MIT
// Models read from a stream (a pipe, a FIFO, a character device: MappedFile::is_stream()), front to back in
// bounded memory, as the package reads a ReadableStream: the header through the push parser, fed one piece
// at a time (it keeps only the item it is parsing, within the caps and the header memory budget of
// ParseOptions), then the tensor data in offset order, one piece at a time. Nothing is read whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

// Reads bytes [offset, offset + size) of the stream `file` (named `path` in errors) into *out, skipping the bytes
// before offset: a job's ranges of a stream, read front to back in offset order. An empty range is read anywhere
// (it may share its offset with the range before it). False with *error set: truncated (offset: where the stream
// ended) when it ends first, not_seekable when the stream is already past offset, io for a read error.
bool read_stream_range(const std::string& path, MappedFile* file, uint64_t offset, uint64_t size,
                       std::vector<uint8_t>* out, LoadError* error);

}  // namespace ws
