// SPDX-License-Identifier: MIT
// Plumbing shared by the decoding subcommands (dump, stats, hash, convert, verify): finding a tensor and
// its bytes, decoding it piece by piece on several threads in bounded memory, and writing an output file
// that appears only when it is complete.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "cli.h"
#include "dtype.h"
#include "model.h"
#include "status.h"

namespace ws::cli {

// Elements in one decoded piece (32 MiB of float32: enough for every thread to get a few MiB). A multiple
// of every block size, so piece boundaries are block boundaries.
constexpr uint64_t kPieceElements = uint64_t(1) << 23;

// Reads --threads N (default: all hardware threads). Returns false after printing a usage error.
bool parse_threads(const Args& args, unsigned* threads);

// The tensor called `name` in the model opened from `path`; on failure prints "PATH: no tensor named 'X'"
// (a usage error, exit 2).
const TensorInfo* find_tensor_or_fail(const LoadedModel& model, const std::string& path, const std::string& name,
                                      int* exit_status);

// The tensor's bytes in its mapped file; on failure prints a truncation error (exit 1).
const uint8_t* tensor_bytes_or_fail(const LoadedModel& model, const TensorInfo& t, int* exit_status);

// Why this tensor cannot be decoded to float32 here ("" when it can): no decoder for its type, or a
// big-endian GGUF holding a type whose big-endian layout is undefined (see swap_to_little_endian()).
std::string decode_problem(const LoadedModel& model, const TensorInfo& t);

// Decodes n_elements values of type t at src piece by piece, in element order, calling
// fn(floats, first_element, n) for each piece (floats holds n * dequant_floats_per_element(t) values and is
// valid during the call only). Each piece is decoded on up to `threads` threads; the pieces and their
// floats do not depend on the thread count. Stops early, returning ok, when fn returns false. big_endian:
// src is the data of a big-endian GGUF, swapped piece by piece in a copy before decoding. Errors are
// check_decodable()'s, and kUnsupported for big-endian data of a type without a defined layout.
Status for_each_decoded(DType t, const uint8_t* src, uint64_t n_elements, unsigned threads,
                        const std::function<bool(const float*, uint64_t, uint64_t)>& fn, bool big_endian = false);

// An output path written completely or not at all. A regular file (or a new path) is written to
// PATH.tmp and renamed over PATH by commit(); "-" is stdout; other existing files (/dev/null, a FIFO, a
// terminal) are written directly. Every write is checked, so a full disk is reported, not truncated.
class OutputFile {
public:
    OutputFile() = default;
    ~OutputFile();  // removes PATH.tmp unless commit() succeeded
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // On failure returns false; error() says why (the system's words).
    bool open(const std::string& path);
    bool write(const void* data, size_t size);
    // Writes `size` zero bytes.
    bool write_zeros(size_t size);
    // Flushes and closes the file and renames it into place.
    bool commit();

    bool is_stdout() const { return file_ == stdout; }
    const std::string& error() const { return error_; }

private:
    bool set_error(const std::string& what);

    std::string path_;
    std::string tmp_path_;  // empty when writing to the target directly
    FILE* file_ = nullptr;
    bool committed_ = false;
    std::string error_;
};

}  // namespace ws::cli
