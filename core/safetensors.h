// SPDX-License-Identifier: MIT
// safetensors header parser, push-based.
//
// Layout (https://github.com/huggingface/safetensors): u64 little-endian N, then N bytes of UTF-8 JSON
// (may be padded with spaces), then the data section. The JSON object maps tensor names to
// {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]} (offsets relative to the data section),
// plus an optional "__metadata__": {string: string} or null. The reference crate requires the tensors,
// sorted by offset, to cover the data section exactly: from 0, no holes, no overlaps, no trailing bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model_info.h"
#include "parse_options.h"
#include "status.h"

namespace ws {

// The largest header the reference crate accepts.
constexpr uint64_t kSafetensorsMaxHeader = 100000000;

// Same contract as GgufParser: feed chunks, kNeedMoreData / kOk / error. Safe on untrusted input.
// Tensors are listed in data order (by offset), as a reader of the data section meets them.
class SafetensorsParser {
public:
    explicit SafetensorsParser(const ParseOptions& options = ParseOptions());
    Status feed(const uint8_t* data, size_t size);
    uint64_t bytes_needed() const;
    uint64_t bytes_fed() const;
    const ModelInfo& info() const;
    ModelInfo take_info();

private:
    ParseOptions options_;
    std::vector<uint8_t> buffer_;  // the first 8 + N bytes, as they arrive
    uint64_t fed_ = 0;
    uint64_t header_length_ = 0;   // N, once known
    Status status_ = {Error::kNeedMoreData, 0, ""};
    ModelInfo info_;
};

// A sharded model's `*.safetensors.index.json`: which shard file holds each tensor.
struct SafetensorsIndex {
    std::vector<std::string> shard_files;  // distinct file names, in order of first appearance
    std::vector<std::pair<std::string, uint32_t>> weight_map;  // tensor name -> index into shard_files
    std::vector<MetadataEntry> metadata;  // the index's "metadata" object, values as strings
};
Result<SafetensorsIndex> parse_safetensors_index(const uint8_t* json, size_t size);

}  // namespace ws
