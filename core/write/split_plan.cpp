// SPDX-License-Identifier: MIT
#include "weightstream/split_plan.h"

#include <climits>
#include <cstdio>

namespace ws {
namespace {

constexpr const char* kSplitNo = "split.no";
constexpr const char* kSplitCount = "split.count";
constexpr const char* kSplitTensors = "split.tensors.count";

MetadataEntry scalar_entry(const char* key, ValueType type, uint64_t bits) {
    MetadataEntry e;
    e.key = key;
    e.value.type = type;
    e.value.bits = bits;
    return e;
}

// The tensor as ggml writes it back: n_dims with trailing 1s dropped (gguf_write_to_buf stores ggml_n_dims).
TensorInfo as_ggml_writes(const TensorInfo& t) {
    TensorInfo out = t;
    out.n_dims = gguf_n_dims(t.ne);
    return out;
}

// ggml's writer pads the header to the alignment even without tensors (gguf_layout() does not, see
// gguf_writer.h); the tool's files have that padding.
void pad_header_without_tensors(GgufLayout* layout) {
    if (!layout->tensor_offsets.empty()) return;
    const uint64_t a = layout->alignment;
    layout->header.resize((layout->header.size() + a - 1) / a * a, 0);
    layout->data_offset = layout->header.size();
    layout->file_size = layout->data_offset;
}

bool is_split_key(const std::string& key) {
    return key == kSplitNo || key == kSplitCount || key == kSplitTensors;
}

}  // namespace

bool parse_split_size(const std::string& text, uint64_t* bytes, std::string* why) {
    if (text.empty() || (text.back() != 'M' && text.back() != 'G')) {
        *why = "supported units are M (megabytes) or G (gigabytes), but got: " +
               (text.empty() ? std::string("nothing") : std::string(1, text.back()));
        return false;
    }
    const std::string number = text.substr(0, text.size() - 1);
    size_t i = 0;
    const bool negative = i < number.size() && number[i] == '-';
    if (i < number.size() && (number[i] == '-' || number[i] == '+')) ++i;
    if (i == number.size()) {
        *why = "'" + text + "' has no number before its unit";
        return false;
    }
    uint64_t n = 0;
    for (; i < number.size(); ++i) {
        const char c = number[i];
        if (c < '0' || c > '9') {
            *why = "'" + text + "': a whole number of M or G is expected (1500M, not 1.5G)";
            return false;
        }
        n = n * 10 + static_cast<uint64_t>(c - '0');
        if (n > static_cast<uint64_t>(INT_MAX) + 1) break;  // the digits left cannot bring it back in range
    }
    if (negative || n == 0) {
        *why = "size must be a positive value";
        return false;
    }
    if (n > static_cast<uint64_t>(INT_MAX)) {
        *why = "'" + text + "' is larger than " + std::to_string(INT_MAX) + text.substr(text.size() - 1);
        return false;
    }
    *bytes = n * (text.back() == 'M' ? uint64_t(1000) * 1000 : uint64_t(1000) * 1000 * 1000);
    return true;
}

Result<SplitPlan> plan_gguf_split(const std::vector<MetadataEntry>& metadata, const std::vector<TensorInfo>& tensors,
                                  const SplitOptions& options) {
    const bool by_size = options.mode == SplitOptions::Mode::kSize;
    if ((by_size && options.max_bytes == 0) || (!by_size && options.max_tensors == 0)) {
        return make_error(Error::kInternal, 0, "split.options");
    }
    for (const MetadataEntry& e : metadata) {
        if (e.key == "general.alignment" &&
            (e.value.type != ValueType::kUint32 || e.value.bits != kGgufDefaultAlignment)) {
            return make_error(Error::kUnsupported, e.offset, "general.alignment");
        }
    }
    if (tensors.size() > static_cast<uint64_t>(INT32_MAX)) return make_error(Error::kTooLarge, 0, "split.count");

    // The cut, as the tool's split_strategy makes it: [first, count) per part.
    SplitPlan plan;
    plan.tensors = tensors.size();
    plan.parts.emplace_back();
    if (options.no_tensor_first_split) plan.parts.emplace_back();  // the first part keeps the metadata only
    uint64_t part_bytes = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const uint64_t padded =
            (tensors[i].nbytes + (kGgufDefaultAlignment - 1)) / kGgufDefaultAlignment * kGgufDefaultAlignment;
        if (padded < tensors[i].nbytes) return make_error(Error::kOverflow, tensors[i].info_offset, "tensor.nbytes");
        const bool cut = by_size ? part_bytes + padded > options.max_bytes || part_bytes + padded < part_bytes
                                 : i > 0 && i % options.max_tensors == 0;
        if (cut) {
            if (plan.parts.back().count == 0) return make_error(Error::kBadSplit, 0, "split.empty_part");
            if (plan.parts.size() == kMaxSplitParts) return make_error(Error::kTooLarge, 0, "split.count");
            plan.parts.emplace_back();
            plan.parts.back().first = i;
            part_bytes = padded;
        } else {
            part_bytes += padded;
        }
        if (plan.parts.back().count == 0) plan.parts.back().first = i;
        ++plan.parts.back().count;
    }

    // Each part's metadata and layout.
    const uint64_t n_parts = plan.parts.size();
    for (size_t p = 0; p < n_parts; ++p) {
        SplitPart& part = plan.parts[p];
        if (p == 0) {
            for (const MetadataEntry& e : metadata) {
                if (is_split_key(e.key)) continue;  // set again below, at the end
                part.metadata.push_back(e);
                part.metadata.back().offset = 0;
            }
        }
        part.metadata.push_back(scalar_entry(kSplitNo, ValueType::kUint16, p));
        part.metadata.push_back(scalar_entry(kSplitTensors, ValueType::kInt32, tensors.size()));
        part.metadata.push_back(scalar_entry(kSplitCount, ValueType::kUint16, n_parts));
        std::vector<TensorInfo> own;
        own.reserve(part.count);
        for (size_t i = part.first; i < part.first + part.count; ++i) own.push_back(as_ggml_writes(tensors[i]));
        WS_ASSIGN_OR_RETURN(part.layout, gguf_layout(part.metadata, own));
        pad_header_without_tensors(&part.layout);
        part.reported_bytes = part.layout.data_offset;
        for (uint64_t n : part.layout.tensor_nbytes) part.reported_bytes += n;
    }
    return plan;
}

std::string split_plan_text(const SplitPlan& plan) {
    std::string s = "n_split: " + std::to_string(plan.parts.size()) + "\n";
    for (size_t p = 0; p < plan.parts.size(); ++p) {
        char line[128];
        std::snprintf(line, sizeof line, "split %05zu: n_tensors = %zu, total_size = %lluM\n", p + 1,
                      plan.parts[p].count, static_cast<unsigned long long>(plan.parts[p].reported_bytes / 1000 / 1000));
        s += line;
    }
    return s;
}

Result<EditPlan> plan_gguf_rewrite(const ModelInfo& in, std::vector<MetadataEntry> metadata) {
    if (in.format != Format::kGguf || in.big_endian) return make_error(Error::kUnsupported, 0, "format");
    std::vector<TensorInfo> tensors;
    tensors.reserve(in.tensors.size());
    for (const TensorInfo& t : in.tensors) tensors.push_back(as_ggml_writes(t));
    for (MetadataEntry& e : metadata) e.offset = 0;
    EditPlan plan;
    WS_ASSIGN_OR_RETURN(plan.layout, gguf_layout(metadata, tensors));
    pad_header_without_tensors(&plan.layout);
    plan.metadata = std::move(metadata);
    return plan;
}

Result<EditPlan> plan_gguf_merge(const ModelInfo& in) {
    if (!in.find(kSplitCount)) return make_error(Error::kBadSplit, 0, kSplitCount);
    std::vector<MetadataEntry> metadata;
    metadata.reserve(in.metadata.size());
    for (const MetadataEntry& e : in.metadata) {
        if (e.key != kSplitCount) metadata.push_back(e);
    }
    // The tool sets split.count to 0 so that its output is not taken for a split again; gguf_set_val puts it last.
    metadata.push_back(scalar_entry(kSplitCount, ValueType::kUint16, 0));
    return plan_gguf_rewrite(in, std::move(metadata));
}

}  // namespace ws
