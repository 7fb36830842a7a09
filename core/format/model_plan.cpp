// SPDX-License-Identifier: MIT
#include "weightstream/model_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "weightstream/split.h"

namespace ws {
namespace {

constexpr char kIndexSuffix[] = ".index.json";

bool ends_with(const std::string& s, const char* suffix) {
    const size_t n = std::char_traits<char>::length(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool ends_with_any_case(const std::string& s, const char* suffix) {
    const size_t n = std::char_traits<char>::length(suffix);
    if (s.size() < n) return false;
    for (size_t i = 0; i < n; ++i) {
        char c = s[s.size() - n + i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != suffix[i]) return false;
    }
    return true;
}

bool is_index_name(const std::string& name) {
    return ends_with(name, kIndexSuffix);
}

bool is_model_file_name(const std::string& name) {
    return ends_with_any_case(name, ".gguf") || ends_with_any_case(name, ".safetensors") ||
           ends_with_any_case(name, ".safetensors.index.json");
}

// "P-NNNNN-of-NNNNN.safetensors" -> P, or "" when the name is not a shard's.
std::string shard_prefix(const std::string& name) {
    static const std::string kSuffix = ".safetensors";
    if (name.size() < 15 + kSuffix.size() || !ends_with(name, kSuffix.c_str())) return "";
    const size_t p = name.size() - kSuffix.size() - 15;  // "-NNNNN-of-NNNNN" is 15 characters
    const std::string tail = name.substr(p, 15);
    if (tail[0] != '-' || tail.compare(6, 4, "-of-") != 0) return "";
    for (size_t i : {1, 2, 3, 4, 5, 10, 11, 12, 13, 14}) {
        if (tail[i] < '0' || tail[i] > '9') return "";
    }
    return name.substr(0, p);
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

std::string too_many_parts(uint32_t count, uint32_t max) {
    return "a split of " + std::to_string(count) + " parts, more than the " + std::to_string(max) + " allowed";
}

}  // namespace

Format format_from_name(const std::string& name) {
    if (ends_with(name, ".gguf")) return Format::kGguf;
    if (ends_with(name, ".safetensors")) return Format::kSafetensors;
    return Format::kUnknown;
}

std::vector<std::string> folder_models(const std::vector<std::string>& names) {
    static const std::string kIndex = ".safetensors.index.json";
    std::set<std::string> index_prefixes;
    for (const std::string& f : names) {
        if (ends_with(f, kIndex.c_str())) index_prefixes.insert(f.substr(0, f.size() - kIndex.size()));
    }
    std::vector<std::string> out;
    std::map<std::string, std::pair<uint32_t, std::string>> splits;  // prefix + count -> lowest part present
    for (const std::string& f : names) {
        if (!is_model_file_name(f)) continue;
        SplitName split;
        if (parse_split_name(f, &split) && split.count > 1) {
            const std::string key = split.prefix + "\n" + std::to_string(split.count);
            auto it = splits.find(key);
            if (it == splits.end() || split.part < it->second.first) splits[key] = {split.part, f};
            continue;
        }
        const std::string prefix = shard_prefix(f);
        if (!prefix.empty() && index_prefixes.count(prefix)) continue;  // its index is the model
        out.push_back(f);
    }
    for (const auto& s : splits) out.push_back(s.second.second);
    return out;
}

Status ModelPlan::fail(Error code, const char* what, std::string message, uint32_t source) {
    message_ = std::move(message);
    failed_source_ = source;
    return make_error(code, 0, what);
}

Status ModelPlan::plan(const std::vector<PlanSource>& sources, const PlanOptions& options) {
    *this = ModelPlan();
    if (sources.empty()) return fail(Error::kBadSource, "sources", "no source given");
    if (sources.size() == 1) return plan_one(sources[0], 0, options);
    size_t unnamed = 0;
    for (const PlanSource& s : sources) unnamed += s.named ? 0 : 1;
    if (unnamed) {
        return fail(Error::kBadSource, "sources",
                    "open(): " + std::to_string(unnamed) + " of the " + std::to_string(sources.size()) +
                        " sources have no file name: give each as a File, a URL, a path or a {name, source} "
                        "record, so that the parts of the model can be told apart");
    }
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < sources.size(); ++i) {
        if (!options.model_files_only || is_model_file_name(sources[i].name)) ids.push_back(i);
    }
    if (ids.empty()) {
        return fail(Error::kBadSource, "sources",
                    "none of the " + std::to_string(sources.size()) +
                        " files is a model file: choose .gguf or .safetensors files (and a .safetensors.index.json)");
    }
    if (ids.size() == 1) return plan_one(sources[ids[0]], ids[0], options);
    return plan_list(sources, ids, options);
}

Status ModelPlan::plan_one(const PlanSource& source, uint32_t id, const PlanOptions& options) {
    kind_ = PlanKind::kSingle;
    parts_ = {PlanPart{source.name, id}};
    if (!source.named) return ok_status();
    const bool expand = source.siblings && options.split;
    SplitName split;
    if (expand && parse_split_name(source.name, &split) && split.count > 1) {
        if (split.count > options.max_split_parts) {
            return fail(Error::kTooLarge, "split.count", too_many_parts(split.count, options.max_split_parts), id);
        }
        kind_ = PlanKind::kSplit;
        parts_.clear();
        for (uint32_t k = 1; k <= split.count; ++k) {
            parts_.push_back(PlanPart{split_part_path(split.prefix, k, split.count), k == split.part ? id : kSibling});
        }
        return ok_status();
    }
    if (is_index_name(source.name)) {
        if (!expand) {
            return fail(Error::kBadSource, "sources",
                        "the index of a sharded safetensors model: give its .safetensors shards with it", id);
        }
        kind_ = PlanKind::kShards;
        parts_.clear();
        index_source_ = id;
        index_name_ = source.name;
    }
    return ok_status();
}

Status ModelPlan::plan_list(const std::vector<PlanSource>& sources, const std::vector<uint32_t>& ids,
                            const PlanOptions& options) {
    std::unordered_set<std::string> names;
    for (uint32_t i : ids) {
        if (!names.insert(sources[i].name).second) {
            return fail(Error::kBadSplit, "sources", "the file " + sources[i].name + " was given twice");
        }
    }
    std::vector<uint32_t> indexes, rest;
    for (uint32_t i : ids) (is_index_name(sources[i].name) ? indexes : rest).push_back(i);
    if (indexes.size() > 1) {
        std::vector<std::string> listed;
        for (uint32_t i : indexes) listed.push_back(sources[i].name);
        return fail(Error::kBadSplit, "sources", "several indexes: " + joined(listed));
    }
    kind_ = PlanKind::kShards;
    if (indexes.size() == 1) {
        index_source_ = indexes[0];
        index_name_ = sources[indexes[0]].name;
        for (uint32_t i : rest) given_with_index_.push_back(PlanPart{sources[i].name, i});
        return ok_status();
    }
    const bool all_shards =
        std::all_of(rest.begin(), rest.end(), [&](uint32_t i) { return ends_with(sources[i].name, ".safetensors"); });
    if (all_shards) {
        for (uint32_t i : rest) parts_.push_back(PlanPart{sources[i].name, i});
        std::sort(parts_.begin(), parts_.end(), [](const PlanPart& a, const PlanPart& b) { return a.name < b.name; });
        return ok_status();
    }
    return plan_split(sources, rest, options);
}

Status ModelPlan::plan_split(const std::vector<PlanSource>& sources, const std::vector<uint32_t>& ids,
                             const PlanOptions& options) {
    std::vector<SplitName> splits(ids.size());
    std::vector<std::string> not_split;
    for (size_t k = 0; k < ids.size(); ++k) {
        if (!parse_split_name(sources[ids[k]].name, &splits[k])) not_split.push_back(sources[ids[k]].name);
    }
    if (!not_split.empty()) {
        return fail(Error::kBadSource, "sources",
                    "open(): several files that are not the parts of one model (" + joined(not_split) +
                        "): give every part of a split GGUF (name-00001-of-0000N.gguf), or safetensors shards with "
                        "or without their index");
    }
    const SplitName& first = splits[0];
    for (const SplitName& s : splits) {
        if (s.prefix != first.prefix || s.count != first.count) {
            return fail(Error::kBadSplit, "sources", "the files are parts of different split models");
        }
    }
    if (first.count > options.max_split_parts) {
        return fail(Error::kTooLarge, "split.count", too_many_parts(first.count, options.max_split_parts), ids[0]);
    }
    // Names are distinct, so each part number appears at most once.
    std::vector<uint32_t> by_part(first.count, kSibling);
    for (size_t k = 0; k < ids.size(); ++k) by_part[splits[k].part - 1] = ids[k];
    std::vector<std::string> missing;
    for (uint32_t k = 0; k < first.count; ++k) {
        if (by_part[k] == kSibling) missing.push_back(split_part_path(first.prefix, k + 1, first.count));
    }
    if (!missing.empty()) {
        return fail(Error::kBadSplit, "sources", "missing parts of the split model: " + joined(missing));
    }
    kind_ = PlanKind::kSplit;
    for (uint32_t k = 0; k < first.count; ++k) parts_.push_back(PlanPart{sources[by_part[k]].name, by_part[k]});
    return ok_status();
}

Status ModelPlan::check_index_size(uint64_t size) {
    if (size <= kMaxIndexBytes) return ok_status();
    message_ = "larger than " + std::to_string(kMaxIndexBytes) + " bytes";
    return make_error(Error::kTooLarge, 0, "index");
}

Status ModelPlan::set_index(const uint8_t* json, size_t size) {
    message_.clear();
    if (index_source_ == kSibling || have_index_) return make_error(Error::kInternal, 0, "set_index");
    WS_TRY(check_index_size(size));
    Result<SafetensorsIndex> parsed = parse_safetensors_index(json, size);
    if (!parsed.ok()) return parsed.status();
    index_ = std::move(parsed).value();
    if (index_.shard_files.empty()) return fail(Error::kBadSplit, "weight_map", index_name_ + " names no tensor");
    have_index_ = true;
    const bool given_alone = given_with_index_.empty();
    if (given_alone) {
        // Found next to the index.
        for (const std::string& f : index_.shard_files) parts_.push_back(PlanPart{f, kSibling});
    } else {
        std::unordered_map<std::string, uint32_t> by_name;
        for (const PlanPart& p : given_with_index_) by_name.emplace(p.name, p.source);
        std::vector<std::string> missing;
        for (const std::string& f : index_.shard_files) {
            if (!by_name.count(f)) missing.push_back(f);
        }
        if (!missing.empty()) {
            return fail(Error::kBadSplit, "weight_map", index_name_ + " names shards not given: " + joined(missing));
        }
        const std::unordered_set<std::string> named(index_.shard_files.begin(), index_.shard_files.end());
        std::vector<std::string> unused;
        for (const PlanPart& p : given_with_index_) {
            if (!named.count(p.name)) unused.push_back(p.name);
        }
        if (!unused.empty())
            return fail(Error::kBadSplit, "weight_map", index_name_ + " does not name " + joined(unused));
        for (const std::string& f : index_.shard_files) parts_.push_back(PlanPart{f, by_name[f]});
    }
    return ok_status();
}

Result<ModelInfo> ModelPlan::merge(std::vector<ModelInfo> parts, uint32_t* failed_part) {
    uint32_t unused = kNoPart;
    uint32_t& failed = failed_part ? *failed_part : unused;
    failed = kNoPart;
    kept_.clear();
    message_.clear();
    if (parts.size() != parts_.size() || kind_ == PlanKind::kSingle || (index_source_ != kSibling && !have_index_)) {
        return make_error(Error::kInternal, 0, "merge: parts");
    }
    std::vector<std::string> names;
    for (const PlanPart& p : parts_) names.push_back(p.name);
    Result<ModelInfo> merged = make_error(Error::kInternal, 0, "merge");
    if (kind_ == PlanKind::kSplit) {
        merged = combine_gguf_split(std::move(parts), names, &failed);
    } else if (have_index_) {
        merged = combine_safetensors_shards(index_, std::move(parts), &failed, &message_);
    } else {
        return combine_safetensors_shards(std::move(parts), names, &kept_, &failed);
    }
    if (merged.ok()) {
        for (uint32_t i = 0; i < parts_.size(); ++i) kept_.push_back(i);
    }
    return merged;
}

}  // namespace ws
