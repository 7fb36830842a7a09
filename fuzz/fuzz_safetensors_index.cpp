// SPDX-License-Identifier: MIT
// libFuzzer target: the sharded safetensors index parser (parse_safetensors_index). Beyond "no crash": what
// it accepts keeps the contract of safetensors.h, the shard names a reader will open beside the index.
#include <set>
#include <string>

#include "parser_harness.h"
#include "weightstream/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const ws::Result<ws::SafetensorsIndex> parsed = ws::parse_safetensors_index(data, size);
    if (!parsed.ok()) {
        ws_fuzz::check(parsed.status().code != ws::Error::kOk && parsed.status().offset <= size);
        return 0;
    }
    const ws::SafetensorsIndex& index = parsed.value();
    // Shard files: distinct plain names in this folder, each holding some tensor of the map.
    const std::set<std::string> files(index.shard_files.begin(), index.shard_files.end());
    ws_fuzz::check(files.size() == index.shard_files.size());
    for (const std::string& f : index.shard_files) {
        ws_fuzz::check(!f.empty() && f[0] != '.' && f.find_first_of(std::string("/\\\0", 3)) == std::string::npos);
    }
    std::set<std::string> tensors;
    std::set<uint32_t> used;
    for (const auto& [name, shard] : index.weight_map) {
        ws_fuzz::check(shard < index.shard_files.size());
        ws_fuzz::check(tensors.insert(name).second);  // a tensor listed twice is an error
        used.insert(shard);
    }
    ws_fuzz::check(used.size() == index.shard_files.size());
    for (const ws::MetadataEntry& e : index.metadata) ws_fuzz::check(e.offset < size);
    return 0;
}
