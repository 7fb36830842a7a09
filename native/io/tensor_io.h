// SPDX-License-Identifier: MIT
// Plumbing shared by the decoding subcommands (dump, stats, hash, convert, verify): finding a tensor and
// its bytes, decoding it piece by piece on several threads in bounded memory; outputs are written through
// OutputFile (output_file.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cli/cli.h"
#include "io/model.h"
#include "io/output_file.h"
#include "weightstream/dtype.h"
#include "weightstream/status.h"

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

// The tensor's bytes: in its mapped file, or fetched into *held (a file at a URL). On failure prints the
// error: a truncation (exit 1), an unreadable or changed URL or a stream (exit 3).
const uint8_t* tensor_bytes_or_fail(const LoadedModel& model, const TensorInfo& t, TensorBytes* held, int* exit_status);
// The same for bytes [offset, offset + nbytes) inside the tensor (a row window).
const uint8_t* range_bytes_or_fail(const LoadedModel& model, const TensorInfo& t, uint64_t offset, uint64_t nbytes,
                                   TensorBytes* held, int* exit_status);

// Decodes n_elements values of type t at src piece by piece, in element order, calling
// fn(floats, first_element, n) for each piece (floats holds n * dequant_floats_per_element(t) values and is
// valid during the call only). Each piece is decoded on up to `threads` threads; the pieces and their
// floats do not depend on the thread count. Stops early, returning ok, when fn returns false. big_endian:
// src is the data of a big-endian GGUF, swapped piece by piece in a copy before decoding. Errors are
// check_decodable()'s, and kUnsupported for big-endian data of a type without a defined layout.
Status for_each_decoded(DType t, const uint8_t* src, uint64_t n_elements, unsigned threads,
                        const std::function<bool(const float*, uint64_t, uint64_t)>& fn, bool big_endian = false);

// The identities of the model's files, for OutputFile::open (an output never replaces an input).
std::vector<FileIdentity> input_files(const LoadedModel& model);

}  // namespace ws::cli
