// SPDX-License-Identifier: MIT
#include "weightstream/model_facts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "weightstream/quant_recipe.h"

namespace ws {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
    return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

bool is_integer_type(ValueType t) {
    switch (t) {
        case ValueType::kUint8:
        case ValueType::kInt8:
        case ValueType::kUint16:
        case ValueType::kInt16:
        case ValueType::kUint32:
        case ValueType::kInt32:
        case ValueType::kUint64:
        case ValueType::kInt64:
            return true;
        default:
            return false;
    }
}

bool is_layer_word(const std::string& name, size_t begin, size_t end) {
    static const char* const kWords[] = {"blk", "layers", "layer", "h", "blocks"};
    for (const char* w : kWords) {
        if (name.compare(begin, end - begin, w) == 0) return true;
    }
    return false;
}

}  // namespace

bool tensor_layer(const std::string& name, std::string* group, uint32_t* index) {
    size_t begin = 0;
    while (begin < name.size()) {
        size_t end = name.find('.', begin);
        if (end == std::string::npos) return false;  // the last component is followed by nothing
        if (is_layer_word(name, begin, end)) {
            const size_t digits = end + 1;
            const size_t digits_end = name.find('.', digits);
            // The number must be followed by more of the name: "blk.3" alone names no tensor of layer 3.
            if (digits_end != std::string::npos && digits_end + 1 < name.size() && digits_end > digits &&
                digits_end - digits <= 9 && std::all_of(name.begin() + digits, name.begin() + digits_end, [](char c) {
                    return c >= '0' && c <= '9';
                })) {
                uint32_t n = 0;
                for (size_t i = digits; i < digits_end; ++i) n = n * 10 + static_cast<uint32_t>(name[i] - '0');
                *group = name.substr(0, digits_end);
                *index = n;
                return true;
            }
        }
        begin = end + 1;
    }
    return false;
}

LayerGroups layer_groups(const ModelInfo& info) {
    LayerGroups out;
    // Prefix ("blk", "v.blk", "model.layers") -> rank of its first appearance; (rank, number) -> group.
    std::map<std::string, size_t> prefix_rank;
    std::map<std::pair<size_t, uint32_t>, size_t> by_key;
    std::string group;
    uint32_t index = 0;
    for (size_t i = 0; i < info.tensors.size(); ++i) {
        if (!tensor_layer(info.tensors[i].name, &group, &index)) {
            out.other.push_back(i);
            continue;
        }
        const std::string prefix = group.substr(0, group.rfind('.'));
        const size_t rank = prefix_rank.emplace(prefix, prefix_rank.size()).first->second;
        auto [it, added] = by_key.emplace(std::make_pair(rank, index), out.layers.size());
        if (added) {
            LayerGroup g;
            g.name = group;
            g.index = index;
            out.layers.push_back(std::move(g));
        }
        out.layers[it->second].tensors.push_back(i);
    }
    // Groups were made in order of first appearance; put them in (prefix rank, number) order.
    std::vector<LayerGroup> sorted;
    sorted.reserve(out.layers.size());
    for (const auto& [key, at] : by_key) sorted.push_back(std::move(out.layers[at]));
    out.layers = std::move(sorted);
    return out;
}

void TensorTotals::add(const TensorInfo& t) {
    parameter_count_ = saturating_add(parameter_count_, t.n_elements);
    data_bytes_ = saturating_add(data_bytes_, t.nbytes);
}

double TensorTotals::bits_per_weight() const {
    return parameter_count_ == 0 ? std::nan("")
                                 : static_cast<double>(data_bytes_) * 8.0 / static_cast<double>(parameter_count_);
}

ModelFacts model_facts(const ModelInfo& info) {
    ModelFacts f;
    TensorTotals totals;
    for (const TensorInfo& t : info.tensors) totals.add(t);
    f.parameter_count = totals.parameter_count();
    f.data_bytes = totals.data_bytes();
    f.bits_per_weight = totals.bits_per_weight();
    const MetadataEntry* e = info.find("general.file_type");
    if (e && is_integer_type(e->value.type) &&
        !(e->value.type == ValueType::kUint64 && e->value.bits > uint64_t(std::numeric_limits<int64_t>::max()))) {
        f.has_file_type = true;
        f.file_type_id = e->value.as_int64();
        Ftype ftype;
        // ftype_from_name takes the numeric id too, and knows exactly the ids llama-quantize names.
        if (f.file_type_id >= 0 && ftype_from_name(std::to_string(f.file_type_id), &ftype)) {
            f.file_type_name = ftype_name(ftype);
        }
    }
    f.layer_count = layer_groups(info).layers.size();
    return f;
}

}  // namespace ws
