// SPDX-License-Identifier: MIT
// Models stored in several files: llama.cpp's split GGUF (`name-00001-of-00003.gguf`, keys split.no,
// split.count, split.tensors.count) and Hugging Face's sharded safetensors (`*.safetensors.index.json`
// naming the shard of every tensor). Parts are parsed one by one; these functions check that they fit
// together and merge them into one ModelInfo whose tensors know their file (TensorInfo::file_index).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/model_info.h"
#include "weightstream/safetensors.h"
#include "weightstream/status.h"

namespace ws {

// Recognises llama.cpp's split naming. For "dir/m-00002-of-00003.gguf": prefix "dir/m", part 2, count 3.
struct SplitName {
    std::string prefix;
    uint32_t part = 0;  // 1-based
    uint32_t count = 0;
};
bool parse_split_name(const std::string& path, SplitName* out);
// The path of part `part` (1-based) of a split: prefix + "-%05u-of-%05u.gguf".
std::string split_part_path(const std::string& prefix, uint32_t part, uint32_t count);

// What *failed_part holds when a merge error is not about one part (the index's own weight map).
constexpr uint32_t kNoPart = UINT32_MAX;

// Merges the parts of a split GGUF, given in part order with their file names. Checks split.no,
// split.count and split.tensors.count against the parts, and that tensor names are unique across
// parts. Metadata comes from the first part; file_size is the sum over the parts.
// On an error, *failed_part (when given) is the part the Status offset is in, or kNoPart.
Result<ModelInfo> combine_gguf_split(std::vector<ModelInfo> parts, const std::vector<std::string>& names,
                                     uint32_t* failed_part = nullptr);

// Merges the shards of a safetensors model: `shards` parsed in index.shard_files order. Every shard must
// be a safetensors file, every tensor of the weight map in its shard, and every shard tensor in the map. Metadata: the
// index's `metadata` entries, then the first shard's `__metadata__`.
// On an error, *failed_shard (when given) is the shard the Status offset is in, or kNoPart (the index); for a
// weight map that disagrees with the shards, *problem (when given) says how, naming the tensor (its first 200
// bytes) and the shards.
Result<ModelInfo> combine_safetensors_shards(const SafetensorsIndex& index, std::vector<ModelInfo> shards,
                                             uint32_t* failed_shard = nullptr, std::string* problem = nullptr);

// Merges safetensors shards given without their index, in the order given (`names`: their file names): a
// shard holding no tensor is left out, as an index could not name it; *kept lists the shards that are the
// model's files. Every shard must be a safetensors file (kBadSplit "weight_map") and tensor names unique
// across shards (kDuplicateName); none holding a tensor is kBadSplit "shards". Metadata: the first kept
// shard's `__metadata__`. *failed_shard as above (kNoPart: the shards as a whole).
Result<ModelInfo> combine_safetensors_shards(std::vector<ModelInfo> shards, const std::vector<std::string>& names,
                                             std::vector<uint32_t>* kept, uint32_t* failed_shard = nullptr);

}  // namespace ws
