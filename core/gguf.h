// SPDX-License-Identifier: MIT
// GGUF header parser, push-based.
//
// Layout (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), all integers in the file's byte
// order (little-endian, or big-endian when the version reads byte-swapped):
//   "GGUF" magic, u32 version (1, 2 or 3),
//   n_tensors, n_kv: u64 (u32 in v1),
//   n_kv x { key: string, u32 value type, value }
//       string = length (u64; u32 in v1) + bytes, no terminator
//       array  = u32 item type, count (u64; u32 in v1), items (arrays of arrays allowed, depth capped)
//   n_tensors x { name: string, u32 n_dims (<= 4), n_dims x ne (i64; u32 in v1), u32 type, u64 offset }
//   padding to general.alignment (default 32; only when there are tensors), then the data section;
//   each tensor's offset is relative to the data section.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model_info.h"
#include "parse_options.h"
#include "status.h"

namespace ws {

// Parses a GGUF header fed in chunks of any size. Safe on untrusted input: every count and length is
// checked against the bytes that remain and the caps of ParseOptions before anything is allocated.
// Feeding the whole file in one call and feeding it in any chunking give the same ModelInfo.
class GgufParser {
public:
    explicit GgufParser(const ParseOptions& options = ParseOptions());

    // Appends the next bytes of the file (they continue at offset bytes_fed()). Returns kOk when the
    // header is complete (further feeds are ignored), kNeedMoreData when it wants bytes_needed() more,
    // or an error (sticky: later feeds return it again). Only the bytes of the item being parsed are
    // buffered; a chunk that holds the whole header is parsed in place without copying.
    Status feed(const uint8_t* data, size_t size);

    // When feed() returned kNeedMoreData: at least this many more bytes are needed to make progress.
    uint64_t bytes_needed() const;
    uint64_t bytes_fed() const;

    // After kOk: the parsed header (format, version, metadata, tensors, warnings, data_offset).
    const ModelInfo& info() const;
    ModelInfo take_info();
    ~GgufParser();
    GgufParser(const GgufParser&) = delete;
    GgufParser& operator=(const GgufParser&) = delete;

private:
    struct State;
    State* state_;
};

// Checks that `info` (a parsed GGUF header) lays its tensor data out as ggml requires: offsets exactly
// contiguous in header order, each padded to the alignment. Used by `verify`; the parser itself applies
// it when ParseOptions::strict is set.
Status gguf_check_strict_layout(const ModelInfo& info);

}  // namespace ws
