// SPDX-License-Identifier: MIT
// Knobs shared by the header parsers: the caps that keep hostile counts from turning into huge
// allocations, and strict (ggml's rules) versus lenient (inspection) layout checking.
#pragma once

#include <cstdint>

#include "model_info.h"

namespace ws {

constexpr uint64_t kUnknownSize = UINT64_MAX;
// The default cap on the parts of a split GGUF opened as one model: llama.cpp's largest published splits
// have a few hundred parts.
constexpr uint32_t kDefaultMaxSplitParts = 1024;

struct ParseOptions {
    // Total bytes of the file, for checking that every tensor lies inside it. kUnknownSize (a stream of
    // unknown length) skips those checks; the data phase then reports truncation.
    uint64_t file_size = kUnknownSize;

    // strict: what ggml accepts (tensor data exactly contiguous, padded to the alignment, in header
    // order; zero padding). lenient (default): aligned, non-overlapping tensors in any order are read and
    // each oddity becomes a Warning.
    bool strict = false;

    // The format the caller expects (from a file name or Content-Type). The bytes decide; the hint only
    // picks which parser explains the error when they announce neither format.
    Format format_hint = Format::kUnknown;

    uint64_t max_header_bytes = uint64_t(1) << 30;  // GGUF directory or safetensors JSON (the latter is
                                                    // also capped at 100,000,000 like the Rust crate)
    uint64_t max_string_bytes = uint64_t(1) << 26;  // one metadata string (chat templates run to ~100 KB)
    uint64_t max_array_length = uint64_t(1) << 26;  // items in one metadata array (vocabularies ~256k)
    uint64_t max_kv_count = uint64_t(1) << 20;
    uint64_t max_tensor_count = uint64_t(1) << 20;
    uint32_t max_array_depth = 4;  // arrays of arrays: the spec allows them, ggml does not

    // Parts of a split GGUF opened for one model (model_plan.h): a name such as `-00001-of-99999` is
    // refused (kTooLarge) rather than making the reader open 99,999 files.
    uint32_t max_split_parts = kDefaultMaxSplitParts;
};

}  // namespace ws
