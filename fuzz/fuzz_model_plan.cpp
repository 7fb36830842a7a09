// SPDX-License-Identifier: MIT
// libFuzzer target: the model plan (include/weightstream/model_plan.h), from names and an index to the merge. Input:
//   byte 0      options: bit 0 split, bit 1 model_files_only, bits 2..7 max_split_parts (0: the default)
//   then        the sources, one a line ('\n'): a first byte '1' (named, with siblings), '0' (named,
//               without) or another (unnamed), then the name
//   after "\n\n" the index's bytes, given to set_index() when the plan wants one
// The parts handed to merge() are made to fit the plan (split keys, the index's weight map), with a tensor
// or a key broken by the input's last byte, so that both the merge's success and its errors are reached.
// Checks: no crash, the plan within its caps, sources and failed parts in range, merged tensors in files.
#include <set>
#include <string>
#include <vector>

#include "parser_harness.h"
#include "weightstream/model_plan.h"

namespace {

ws::MetadataEntry uint_entry(const char* key, uint64_t v) {
    ws::MetadataEntry e;
    e.key = key;
    e.value.type = ws::ValueType::kUint32;
    e.value.bits = v;
    return e;
}

ws::TensorInfo tensor(const std::string& name) {
    ws::TensorInfo t;
    t.name = name;
    t.dtype = ws::DType::F32;
    return t;
}

// Parsed parts that fit `plan` (with `twist` breaking one of them when it is not 0).
std::vector<ws::ModelInfo> parts_for(const ws::ModelPlan& plan, const std::string& index, uint8_t twist) {
    const size_t n = plan.parts().size();
    std::vector<ws::ModelInfo> parts(n);
    for (size_t i = 0; i < n; ++i) {
        ws::ModelInfo& p = parts[i];
        if (plan.kind() == ws::PlanKind::kSplit) {
            p.format = ws::Format::kGguf;
            p.metadata = {uint_entry("split.no", i), uint_entry("split.count", n),
                          uint_entry("split.tensors.count", n)};
            p.tensors.push_back(tensor("t" + std::to_string(i)));
        } else {
            p.format = ws::Format::kSafetensors;
        }
    }
    if (plan.kind() == ws::PlanKind::kShards) {
        ws::Result<ws::SafetensorsIndex> parsed =
            ws::parse_safetensors_index(reinterpret_cast<const uint8_t*>(index.data()), index.size());
        if (parsed.ok() && plan.index_source() != ws::kSibling) {
            for (const auto& [name, shard] : parsed.value().weight_map) {
                if (shard < n) parts[shard].tensors.push_back(tensor(name));
            }
        } else {
            for (size_t i = 0; i < n; ++i) {
                if ((twist >> (i % 8)) & 1) parts[i].tensors.push_back(tensor(plan.parts()[i].name));
            }
        }
    }
    if (twist % 5 == 1 && n > 0) parts[twist % n].tensors.push_back(tensor("t0"));  // a duplicate name
    if (twist % 5 == 2 && n > 0) parts[twist % n].format = ws::Format::kGguf;
    if (twist % 5 == 3 && n > 0) parts[twist % n].metadata.clear();
    return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    ws::PlanOptions options;
    options.split = data[0] & 1;
    options.model_files_only = data[0] & 2;
    if (data[0] >> 2) options.max_split_parts = data[0] >> 2;

    const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    const size_t end = rest.find("\n\n");
    const std::string names = rest.substr(0, end);
    const std::string index = end == std::string::npos ? std::string() : rest.substr(end + 2);
    std::vector<ws::PlanSource> sources;
    for (size_t at = 0; at <= names.size();) {
        size_t line_end = names.find('\n', at);
        if (line_end == std::string::npos) line_end = names.size();
        const std::string line = names.substr(at, line_end - at);
        ws::PlanSource s;
        s.named = !line.empty() && (line[0] == '0' || line[0] == '1');
        s.siblings = !line.empty() && line[0] == '1';
        if (s.named) s.name = line.substr(1);
        sources.push_back(s);
        at = line_end + 1;
    }

    ws::ModelPlan plan;
    ws::Status s = plan.plan(sources, options);
    if (!s.ok()) {
        ws_fuzz::check(!plan.message().empty());
        ws_fuzz::check(plan.failed_source() == ws::kSibling || plan.failed_source() < sources.size());
        return 0;
    }
    ws_fuzz::check(plan.message().empty());
    if (plan.index_source() != ws::kSibling) {
        ws_fuzz::check(plan.index_source() < sources.size());
        s = plan.set_index(reinterpret_cast<const uint8_t*>(index.data()), index.size());
        if (!s.ok()) return 0;
    }
    const std::vector<ws::PlanPart>& parts = plan.parts();
    ws_fuzz::check(!parts.empty());
    if (plan.kind() == ws::PlanKind::kSingle) ws_fuzz::check(parts.size() == 1);
    if (plan.kind() == ws::PlanKind::kSplit) ws_fuzz::check(parts.size() <= options.max_split_parts);
    std::set<std::string> distinct;
    std::set<uint32_t> given;
    for (const ws::PlanPart& p : parts) {
        ws_fuzz::check(distinct.insert(p.name).second);
        if (p.source == ws::kSibling) continue;
        ws_fuzz::check(p.source < sources.size() && sources[p.source].name == p.name);
        ws_fuzz::check(given.insert(p.source).second);
    }
    if (plan.kind() == ws::PlanKind::kSingle) return 0;

    uint32_t failed = 0;
    ws::Result<ws::ModelInfo> merged = plan.merge(parts_for(plan, index, data[size - 1]), &failed);
    if (!merged.ok()) {
        ws_fuzz::check(failed == ws::kNoPart || failed < parts.size());
        return 0;
    }
    const ws::ModelInfo& m = merged.value();
    ws_fuzz::check(m.files.size() == plan.kept().size() && !m.files.empty());
    for (size_t i = 0; i < plan.kept().size(); ++i) ws_fuzz::check(m.files[i] == parts[plan.kept()[i]].name);
    for (const ws::TensorInfo& t : m.tensors) ws_fuzz::check(t.file_index < m.files.size());
    return 0;
}
