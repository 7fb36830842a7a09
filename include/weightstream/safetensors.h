// SPDX-License-Identifier: MIT
// safetensors header parser, push-based.
//
// Layout (https://github.com/huggingface/safetensors): u64 little-endian N, then N bytes of UTF-8 JSON
// (an object: '{' after optional JSON whitespace, may be padded with trailing spaces), then the data section. The JSON
// object maps tensor names to {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]} (offsets relative to the
// data section), plus an optional "__metadata__": {string: string} or null. The reference crate requires the tensors,
// sorted by offset, to cover the data section exactly: from 0, no holes, no overlaps, no trailing bytes.
//
// Checks, at least as strict as the reference crate's (safetensors/src/tensor.rs, validate()):
//   N <= 100,000,000 and <= ParseOptions::max_header_bytes (kTooLarge), 8 + N <= file size (kTruncated);
//   the JSON parses as a whole (leading and trailing whitespace allowed) and is an object (kBadJson at
//   its first byte that is not whitespace when that is not '{');
//   "__metadata__" is null or an object of strings (kBadJson), keys unique (kDuplicateName);
//   each tensor is an object with a known dtype (kBadType), a shape of non-negative integers (a negative
//   dim is kBadShape) and data_offsets [begin, end] with begin <= end (kBadOffset); other fields are
//   ignored, as serde does without deny_unknown_fields; a repeated field is kDuplicateName;
//   element count = product of the dims, every partial product <= INT64_MAX (kOverflow), elements x
//   dtype bits a whole number of bytes (kBadShape) equal to end - begin (kBadShape);
//   sorted by (begin, end, name), each begin equals the previous end, from 0 (kBadOffset);
//   when the file size is known, the last end is exactly the data section's size (kTruncated or
//   kTrailingData).
// Beyond the crate: a tensor name that appears twice is kDuplicateName (serde keeps the last one), and
// shapes have at most kSafetensorsMaxDims dims (kBadShape) so a header cannot make the parser allocate
// eight bytes per byte of JSON.
//
// Status::offset is the absolute file offset of the offending token: the JSON position where nlohmann
// stopped for syntax errors, the value for a bad field, the tensor's name for a missing field, the
// data_offsets array for layout errors, 0 for a header length over the caps, the first trailing byte
// for kTrailingData and the end of the file (the first missing byte) for kTruncated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weightstream/model_info.h"
#include "weightstream/parse_options.h"
#include "weightstream/status.h"

namespace ws {

// The largest header the reference crate accepts.
constexpr uint64_t kSafetensorsMaxHeader = 100000000;
// The most dims one tensor may have (numpy 2's limit; PyTorch and numpy 1 stop earlier).
constexpr uint32_t kSafetensorsMaxDims = 64;

// Same contract as GgufParser: feed chunks, kNeedMoreData / kOk / error (sticky). Safe on untrusted
// input. Only the first 8 + N bytes are buffered (none when one chunk holds them all); they are released
// once parsed. Feeding the whole file at once and feeding it in any chunking give the same ModelInfo.
//
// The result: format kSafetensors, version 0, alignment 1, data_offset 8 + N, file_size the
// ParseOptions::file_size when known (else 0), __metadata__ entries as kString values in JSON order,
// tensors in data order (as a reader of the data section meets them). TensorInfo::type_id is the DType
// value; ne is in ggml order (ne[0] = the last, contiguous dim); a tensor of rank > 4 keeps its dims in
// full_shape (see model_info.h); a scalar (shape []) has n_dims 0 and one element.
class SafetensorsParser {
public:
    explicit SafetensorsParser(const ParseOptions& options = ParseOptions());

    // Appends the next bytes of the file (they continue at offset bytes_fed()). Returns kOk when the
    // header is complete (further feeds are ignored), kNeedMoreData when it wants bytes_needed() more,
    // or an error (later feeds return it again).
    Status feed(const uint8_t* data, size_t size);

    // When feed() returned kNeedMoreData: at least this many more bytes are needed to make progress.
    uint64_t bytes_needed() const;
    uint64_t bytes_fed() const;

    // After kOk: the parsed header.
    const ModelInfo& info() const;
    ModelInfo take_info();

private:
    Status read_length(const uint8_t* first8);
    Status parse_header(const uint8_t* file);  // file: the first 8 + N bytes

    ParseOptions options_;
    std::vector<uint8_t> buffer_;  // the first 8 + N bytes, as they arrive
    uint64_t fed_ = 0;
    uint64_t header_length_ = 0;  // N, once known
    bool have_length_ = false;
    Status status_ = {Error::kNeedMoreData, 0, ""};
    ModelInfo info_;
};

// A sharded model's `*.safetensors.index.json`: which shard file holds each tensor.
struct SafetensorsIndex {
    std::vector<std::string> shard_files;                      // distinct file names, in order of first appearance
    std::vector<std::pair<std::string, uint32_t>> weight_map;  // tensor name -> index into shard_files
    std::vector<MetadataEntry> metadata;                       // the index's "metadata" object, values as strings
};

// Parses `{"metadata": {...}, "weight_map": {tensor: file, ...}}`. Safe on untrusted input; other
// top-level keys are ignored. weight_map is required; its file names must be plain names in the
// index's folder (not empty, no '/', '\\' or NUL, not starting with '.'), else kBadJson "weight_map";
// a tensor listed twice is kDuplicateName. metadata is optional: string values are kept as they are,
// any other value as its JSON text ("total_size": 123 -> "123"); MetadataEntry::offset is the key's
// position in the index. Status::offset is a position in the index file.
Result<SafetensorsIndex> parse_safetensors_index(const uint8_t* json, size_t size);

}  // namespace ws
