// SPDX-License-Identifier: MIT
#include "weightstream/split.h"

#include <unordered_map>
#include <unordered_set>

namespace ws {
namespace {

bool parse_digits(const std::string& s, size_t pos, size_t n, uint32_t* out) {
    uint32_t v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + static_cast<uint32_t>(s[i] - '0');
    }
    *out = v;
    return true;
}

// The value of an unsigned integer key, or false when it is missing or not an integer.
bool split_key(const ModelInfo& info, const char* key, uint64_t* out) {
    const MetadataEntry* e = info.find(key);
    if (!e || value_type_size(e->value.type) == 0 || e->value.type == ValueType::kFloat32 ||
        e->value.type == ValueType::kFloat64 || e->value.type == ValueType::kBool) {
        return false;
    }
    *out = e->value.bits;
    return true;
}

}  // namespace

bool parse_split_name(const std::string& path, SplitName* out) {
    // "-NNNNN-of-NNNNN.gguf" is 20 characters.
    static const char kSuffix[] = ".gguf";
    if (path.size() < 20 + 1 || path.compare(path.size() - 5, 5, kSuffix) != 0) return false;
    const size_t p = path.size() - 20;
    if (path[p] != '-' || path.compare(p + 6, 4, "-of-") != 0) return false;
    SplitName name;
    if (!parse_digits(path, p + 1, 5, &name.part) || !parse_digits(path, p + 10, 5, &name.count)) return false;
    if (name.part == 0 || name.count == 0 || name.part > name.count) return false;
    name.prefix = path.substr(0, p);
    *out = name;
    return true;
}

std::string split_part_path(const std::string& prefix, uint32_t part, uint32_t count) {
    auto five_digits = [](uint32_t v) {
        const std::string digits = std::to_string(v);
        return std::string(digits.size() < 5 ? 5 - digits.size() : 0, '0') + digits;
    };
    return prefix + "-" + five_digits(part) + "-of-" + five_digits(count) + ".gguf";
}

Result<ModelInfo> combine_gguf_split(std::vector<ModelInfo> parts, const std::vector<std::string>& names,
                                     uint32_t* failed_part) {
    uint32_t unused = 0;
    uint32_t& failed = failed_part ? *failed_part : unused;
    failed = kNoPart;
    if (parts.empty() || parts.size() != names.size()) return make_error(Error::kInternal, 0, "split.parts");
    const uint64_t count = parts.size();
    uint64_t declared_tensors = 0;
    if (!split_key(parts[0], "split.tensors.count", &declared_tensors)) {
        return make_error(Error::kBadSplit, 0, "split.tensors.count");
    }
    ModelInfo merged = std::move(parts[0]);
    merged.files = names;
    std::unordered_set<std::string> seen;
    for (uint64_t i = 0; i < count; ++i) {
        ModelInfo& part = i == 0 ? merged : parts[i];
        failed = static_cast<uint32_t>(i);
        uint64_t no = 0, n = 0;
        if (!split_key(part, "split.no", &no) || no != i) {
            return make_error(Error::kBadSplit, part.find("split.no") ? part.find("split.no")->offset : 0, "split.no");
        }
        if (!split_key(part, "split.count", &n) || n != count) {
            return make_error(Error::kBadSplit, part.find("split.count") ? part.find("split.count")->offset : 0,
                              "split.count");
        }
        for (TensorInfo& t : part.tensors) {
            if (!seen.insert(t.name).second) return make_error(Error::kDuplicateName, t.info_offset, "tensor.name");
            t.file_index = static_cast<uint32_t>(i);
        }
        if (i == 0) continue;
        merged.file_size += part.file_size;
        for (TensorInfo& t : part.tensors) merged.tensors.push_back(std::move(t));
        for (Warning& w : part.warnings) merged.warnings.push_back(std::move(w));
    }
    failed = 0;  // the first part declares the count
    if (merged.tensors.size() != declared_tensors) {
        return make_error(Error::kBadSplit, merged.find("split.tensors.count")->offset, "split.tensors.count");
    }
    failed = kNoPart;
    return merged;
}

Result<ModelInfo> combine_safetensors_shards(const SafetensorsIndex& index, std::vector<ModelInfo> shards,
                                             uint32_t* failed_shard, std::string* problem) {
    uint32_t unused = 0;
    uint32_t& failed = failed_shard ? *failed_shard : unused;
    failed = kNoPart;
    std::string ignored;
    std::string& why = problem ? *problem : ignored;
    const auto quoted = [](const std::string& name) { return "'" + name.substr(0, 200) + "'"; };
    if (shards.size() != index.shard_files.size() || shards.empty()) {
        return make_error(Error::kInternal, 0, "shards");
    }
    for (uint32_t i = 0; i < shards.size(); ++i) {
        failed = i;
        if (shards[i].format != Format::kSafetensors) return make_error(Error::kBadSplit, 0, "weight_map");
    }
    failed = kNoPart;
    std::unordered_map<std::string, uint32_t> shard_of(index.weight_map.begin(), index.weight_map.end());
    ModelInfo merged;
    merged.format = Format::kSafetensors;
    merged.alignment = 1;
    merged.data_offset = shards[0].data_offset;
    merged.files = index.shard_files;
    merged.metadata = index.metadata;
    for (MetadataEntry& e : shards[0].metadata) merged.metadata.push_back(std::move(e));
    for (uint32_t i = 0; i < shards.size(); ++i) {
        merged.file_size += shards[i].file_size;
        for (TensorInfo& t : shards[i].tensors) {
            const auto it = shard_of.find(t.name);
            if (it == shard_of.end() || it->second != i) {
                failed = i;
                why = it == shard_of.end()
                          ? index.shard_files[i] + " holds tensor " + quoted(t.name) +
                                ", which the index's weight_map does not list"
                          : "the index's weight_map puts tensor " + quoted(t.name) + " in " +
                                index.shard_files[it->second] + ", but " + index.shard_files[i] + " holds it";
                return make_error(Error::kBadSplit, t.info_offset, "weight_map");
            }
            shard_of.erase(it);
            t.file_index = i;
            merged.tensors.push_back(std::move(t));
        }
        for (Warning& w : shards[i].warnings) merged.warnings.push_back(std::move(w));
    }
    if (!shard_of.empty()) {
        // The first in the index's order, for a message that does not depend on hashing.
        for (const auto& [name, shard] : index.weight_map) {
            if (!shard_of.count(name)) continue;
            why = "the index's weight_map puts tensor " + quoted(name) + " in " + index.shard_files[shard] +
                  ", which does not hold it" +
                  (shard_of.size() > 1 ? " (and " + std::to_string(shard_of.size() - 1) + " more)" : "");
            break;
        }
        return make_error(Error::kBadSplit, 0, "weight_map");
    }
    return merged;
}

Result<ModelInfo> combine_safetensors_shards(std::vector<ModelInfo> shards, const std::vector<std::string>& names,
                                             std::vector<uint32_t>* kept, uint32_t* failed_shard) {
    uint32_t unused = 0;
    uint32_t& failed = failed_shard ? *failed_shard : unused;
    failed = kNoPart;
    kept->clear();
    if (shards.size() != names.size()) return make_error(Error::kInternal, 0, "shards");
    for (uint32_t i = 0; i < shards.size(); ++i) {
        if (!shards[i].tensors.empty()) kept->push_back(i);
    }
    for (uint32_t i : *kept) {
        failed = i;
        if (shards[i].format != Format::kSafetensors) return make_error(Error::kBadSplit, 0, "weight_map");
    }
    failed = kNoPart;
    if (kept->empty()) return make_error(Error::kBadSplit, 0, "shards");
    ModelInfo merged;
    merged.format = Format::kSafetensors;
    merged.alignment = 1;
    merged.data_offset = shards[kept->front()].data_offset;
    merged.metadata = std::move(shards[kept->front()].metadata);
    std::unordered_set<std::string> seen;
    for (uint32_t file = 0; file < kept->size(); ++file) {
        ModelInfo& shard = shards[(*kept)[file]];
        merged.files.push_back(names[(*kept)[file]]);
        merged.file_size += shard.file_size;
        for (TensorInfo& t : shard.tensors) {
            if (!seen.insert(t.name).second) {
                failed = (*kept)[file];
                return make_error(Error::kDuplicateName, t.info_offset, "tensor.name");
            }
            t.file_index = file;
            merged.tensors.push_back(std::move(t));
        }
        for (Warning& w : shard.warnings) merged.warnings.push_back(std::move(w));
    }
    return merged;
}

}  // namespace ws
