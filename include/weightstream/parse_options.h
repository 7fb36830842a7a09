// SPDX-License-Identifier: MIT
// Knobs shared by the header parsers: the caps that keep hostile counts from turning into huge
// allocations, and strict (ggml's rules) versus lenient (inspection) layout checking.
#pragma once

#include <cstdint>

#include "weightstream/model_info.h"

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
    // The memory the parsed header may take (ModelInfo and the parser's own sets), counted in the nominal
    // costs of HeaderMemory. The largest real headers (vocabularies of 256k tokens) take tens of MB.
    uint64_t max_header_memory = uint64_t(1) << 29;
};

// The memory budget of one header parse. A file can describe far more memory than it holds (an array of
// empty arrays costs 12 bytes on disk and a whole Value in memory): the caps on counts and lengths alone let
// a 120 MB file take gigabytes. So array items (whose number only max_array_length caps, per array) may
// take at most kRatio bytes per byte read so far, plus kSlack; everything (KVs and tensors too, whose
// numbers max_kv_count and max_tensor_count cap) counts against ParseOptions::max_header_memory. Costs are
// nominal (64-bit sizes of the structures, fixed here rather than sizeof) so the native and the wasm build
// stop at the same byte of the same file, however it is chunked.
class HeaderMemory {
public:
    static constexpr uint64_t kRatio = 6;  // vocabularies of short strings need about 2.5
    static constexpr uint64_t kSlack = uint64_t(32) << 20;

    // Nominal costs. A string's bytes are added to the cost of what holds it.
    static constexpr uint64_t kString = 32;   // std::string
    static constexpr uint64_t kValue = 136;   // an item that is an array (a Value)
    static constexpr uint64_t kEntry = 176;   // MetadataEntry
    static constexpr uint64_t kTensor = 232;  // TensorInfo (safetensors: while pending, with its dims)
    static constexpr uint64_t kSetNode = 56;  // a name in a duplicate-check set (plus its bytes)
    static constexpr uint64_t kWarning = 48;  // Warning (plus its message)

    explicit HeaderMemory(uint64_t cap) : cap_(cap) {}

    // Adds `bytes` for an array item that ends at file offset `consumed`. False when the total would pass
    // the cap or kRatio * consumed + kSlack; then nothing is added.
    bool charge_item(uint64_t bytes, uint64_t consumed) {
        const uint64_t budget = consumed > (UINT64_MAX - kSlack) / kRatio ? UINT64_MAX : consumed * kRatio + kSlack;
        return used_ + bytes <= budget && charge_counted(bytes);
    }
    // Adds `bytes` for an item whose number is capped (a KV, a tensor): against the total cap only.
    bool charge_counted(uint64_t bytes) {
        if (bytes > cap_ - used_) return false;
        used_ += bytes;
        return true;
    }
    // How many more bytes the total cap allows (scalar items, a byte per byte read, never pass the ratio).
    uint64_t room() const { return cap_ - used_; }

private:
    uint64_t cap_;
    uint64_t used_ = 0;
};

}  // namespace ws
