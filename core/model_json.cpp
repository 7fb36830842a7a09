// SPDX-License-Identifier: MIT
#include "model_json.h"

#include <cmath>
#include <cstring>

#include "model_facts.h"
#include "row_window.h"
#include "utf8.h"

namespace ws {
namespace {

nlohmann::json scalar_to_json(ValueType type, uint64_t bits) {
    switch (type) {
        case ValueType::kBool:
            return bits != 0;
        case ValueType::kInt8:
        case ValueType::kInt16:
        case ValueType::kInt32:
        case ValueType::kInt64:
            return static_cast<int64_t>(bits);
        case ValueType::kFloat32:
        case ValueType::kFloat64: {
            Value v;
            v.type = type;
            v.bits = bits;
            const double d = v.as_double();   // float32 widened exactly
            if (std::isnan(d)) return "NaN";  // JSON has no such numbers: JavaScript's names, as strings
            if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
            return d;
        }
        default:
            return bits;
    }
}

}  // namespace

std::string hex_of(const std::string& bytes) {
    static const char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += kDigits[c >> 4];
        out += kDigits[c & 15];
    }
    return out;
}

nlohmann::json value_to_json(const Value& v) {
    if (v.type == ValueType::kString) return v.str;
    if (v.type != ValueType::kArray) return scalar_to_json(v.type, v.bits);
    nlohmann::json items = nlohmann::json::array();
    if (v.item_type == ValueType::kString) {
        for (const std::string& s : v.strings) items.push_back(s);
    } else if (v.item_type == ValueType::kArray) {
        for (const Value& a : v.arrays) items.push_back(value_to_json(a));
    } else {
        for (uint64_t i = 0; i < v.length; ++i) items.push_back(scalar_to_json(v.item_type, v.scalar_item(i).bits));
    }
    return items;
}

nlohmann::json tensor_to_json(const ModelInfo& info, const TensorInfo& t) {
    nlohmann::json j;
    j["name"] = t.name;
    if (!utf8_valid(t.name)) j["name_hex"] = hex_of(t.name);
    j["dtype"] = t.dtype_name();
    j["shape"] = t.shape();
    if (info.format == Format::kGguf) j["ne"] = std::vector<int64_t>(t.ne, t.ne + t.n_dims);
    j["offset"] = t.offset;
    j["nbytes"] = t.nbytes;
    j["n_elements"] = t.n_elements;
    j["rows"] = row_count(t);
    if (info.files.size() > 1) j["file"] = info.files[t.file_index];
    return j;
}

nlohmann::json model_to_json(const ModelInfo& info, const JsonParts& parts) {
    const bool with_metadata = parts.metadata;
    nlohmann::json j;
    if (with_metadata) {
        j["format"] = format_name(info.format);
        j["version"] = info.format == Format::kGguf ? nlohmann::json(info.version) : nlohmann::json(nullptr);
        if (info.format == Format::kGguf) j["endian"] = info.big_endian ? "big" : "little";
        j["file_size"] = info.file_size;
        j["data_offset"] = info.data_offset;
        j["alignment"] = info.alignment;
        if (info.files.size() > 1) j["files"] = info.files;
        j["facts"] = facts_to_json(info);
        nlohmann::json metadata = nlohmann::json::array();
        for (const MetadataEntry& e : info.metadata) {
            nlohmann::json m;
            m["key"] = e.key;
            if (!utf8_valid(e.key)) m["key_hex"] = hex_of(e.key);
            if (e.value.type == ValueType::kString && !utf8_valid(e.value.str)) m["bytes_hex"] = hex_of(e.value.str);
            if (e.value.type == ValueType::kArray && e.value.item_type == ValueType::kString &&
                parts.flat_array_items) {
                nlohmann::json invalid = nlohmann::json::array();
                for (size_t i = 0; i < e.value.strings.size(); ++i) {
                    if (!utf8_valid(e.value.strings[i])) {
                        invalid.push_back({{"index", i}, {"bytes_hex", hex_of(e.value.strings[i])}});
                    }
                }
                if (!invalid.empty()) m["invalid_items"] = std::move(invalid);
            }
            m["type"] = value_type_name(e.value.type);
            if (e.value.type == ValueType::kArray) {
                m["item_type"] = value_type_name(e.value.item_type);
                m["length"] = e.value.length;
            }
            const bool flat = e.value.type == ValueType::kArray && e.value.item_type != ValueType::kArray;
            m["value"] = flat && !parts.flat_array_items ? nlohmann::json::array() : value_to_json(e.value);
            metadata.push_back(std::move(m));
        }
        j["metadata"] = std::move(metadata);
    }
    nlohmann::json tensors = nlohmann::json::array();
    if (parts.tensors) {
        for (const TensorInfo& t : info.tensors) tensors.push_back(tensor_to_json(info, t));
    }
    j["tensors"] = std::move(tensors);
    if (with_metadata && !info.warnings.empty()) {
        nlohmann::json warnings = nlohmann::json::array();
        for (const Warning& w : info.warnings) {
            warnings.push_back({{"code", error_name(w.code)}, {"offset", w.offset}, {"message", w.message}});
        }
        j["warnings"] = std::move(warnings);
    }
    return j;
}

nlohmann::json stats_to_json(const TensorInfo& t, const Stats& s) {
    auto number = [&](double v) { return s.finite > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
    return {
        {"name", t.name},
        {"dtype", t.dtype_name()},
        {"n_elements", t.n_elements},
        {"min", number(s.min)},
        {"max", number(s.max)},
        {"mean", number(s.mean)},
        {"std", number(s.std)},
        {"nan", s.nan},
        {"pos_inf", s.pos_inf},
        {"neg_inf", s.neg_inf},
        {"zeros", s.zeros},
        {"histogram", {{"min", number(s.min)}, {"max", number(s.max)}, {"counts", s.histogram}, {"edges", s.edges}}}};
}

std::string json_dump(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ws
