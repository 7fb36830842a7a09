// SPDX-License-Identifier: MIT
#include "weightstream/model_json.h"

#include <cmath>
#include <cstring>

#include "weightstream/model_facts.h"
#include "weightstream/row_window.h"
#include "weightstream/utf8.h"

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

namespace {

void write_scalar(ValueType type, uint64_t bits, JsonWriter* w) {
    switch (type) {
        case ValueType::kBool:
            w->boolean(bits != 0);
            return;
        case ValueType::kInt8:
        case ValueType::kInt16:
        case ValueType::kInt32:
        case ValueType::kInt64:
            w->int64(static_cast<int64_t>(bits));
            return;
        case ValueType::kFloat32:
        case ValueType::kFloat64: {
            Value v;
            v.type = type;
            v.bits = bits;
            const double d = v.as_double();
            if (std::isnan(d)) {
                w->string("NaN");
            } else if (std::isinf(d)) {
                w->string(d > 0 ? "Infinity" : "-Infinity");
            } else {
                w->number(d);
            }
            return;
        }
        default:
            w->uint(bits);
            return;
    }
}

// value_to_json(v), written. invalid: for an array of strings, the indices of its items that are not
// well-formed UTF-8 when the caller has found them (ascending), else null. Returns false if a string item
// it checked itself was not well-formed.
bool write_value(const Value& v, const std::vector<size_t>* invalid, JsonWriter* w) {
    if (v.type == ValueType::kString) return w->string(v.str);
    if (v.type != ValueType::kArray) {
        write_scalar(v.type, v.bits, w);
        return true;
    }
    bool valid = true;
    w->begin_array();
    if (v.item_type == ValueType::kString && invalid) {
        size_t next = 0;  // into *invalid
        for (size_t i = 0; i < v.strings.size(); ++i) {
            if (next < invalid->size() && (*invalid)[next] == i) {
                w->string(v.strings[i]);
                ++next;
            } else {
                w->valid_string(v.strings[i]);
            }
        }
    } else if (v.item_type == ValueType::kString) {
        for (const std::string& s : v.strings) valid &= w->string(s);
    } else if (v.item_type == ValueType::kArray) {
        for (const Value& a : v.arrays) write_value(a, nullptr, w);
    } else {
        for (uint64_t i = 0; i < v.length; ++i) write_scalar(v.item_type, v.item_bits(i), w);
    }
    w->end_array();
    return valid;
}

// Keys in nlohmann's order (byte-wise ascending), here and below.
void write_tensor(const ModelInfo& info, const TensorInfo& t, JsonWriter* w) {
    w->begin_object();
    w->key("dtype");
    w->string(t.dtype_name());
    if (info.files.size() > 1) {
        w->key("file");
        w->string(info.files[t.file_index]);
    }
    w->key("n_elements");
    w->uint(t.n_elements);
    w->key("name");
    w->string(t.name);
    if (!utf8_valid(t.name)) {
        w->key("name_hex");
        w->string(hex_of(t.name));
    }
    w->key("nbytes");
    w->uint(t.nbytes);
    if (info.format == Format::kGguf) {
        w->key("ne");
        w->begin_array();
        for (uint32_t d = 0; d < t.n_dims; ++d) w->int64(t.ne[d]);
        w->end_array();
    }
    w->key("offset");
    w->uint(t.offset);
    w->key("rows");
    w->uint(row_count(t));
    w->key("shape");
    w->begin_array();
    for (int64_t d : t.shape()) w->int64(d);
    w->end_array();
    w->end_object();
}

// The members from "invalid_items" on. invalid: as for write_value. Returns write_value's answer.
bool write_entry_rest(const MetadataEntry& e, const JsonParts& parts, const std::vector<size_t>* invalid,
                      JsonWriter* w) {
    const Value& v = e.value;
    if (invalid && !invalid->empty()) {
        w->key("invalid_items");
        w->begin_array();
        for (size_t i : *invalid) {
            w->begin_object();
            w->key("bytes_hex");
            w->string(hex_of(v.strings[i]));
            w->key("index");
            w->uint(i);
            w->end_object();
        }
        w->end_array();
    }
    if (v.type == ValueType::kArray) {
        w->key("item_type");
        w->string(value_type_name(v.item_type));
    }
    w->key("key");
    w->string(e.key);
    if (!utf8_valid(e.key)) {
        w->key("key_hex");
        w->string(hex_of(e.key));
    }
    if (v.type == ValueType::kArray) {
        w->key("length");
        w->uint(v.length);
    }
    w->key("type");
    w->string(value_type_name(v.type));
    w->key("value");
    const bool flat = v.type == ValueType::kArray && v.item_type != ValueType::kArray;
    if (flat && !parts.flat_array_items) {
        w->begin_array();
        w->end_array();
        return true;
    }
    return write_value(v, invalid, w);
}

void write_entry(const MetadataEntry& e, const JsonParts& parts, JsonWriter* w) {
    const Value& v = e.value;
    w->begin_object();
    if (v.type == ValueType::kString && !utf8_valid(v.str)) {
        w->key("bytes_hex");
        w->string(hex_of(v.str));
    }
    if (v.type == ValueType::kArray && v.item_type == ValueType::kString && parts.flat_array_items) {
        // "invalid_items" comes before the items, but a vocabulary seldom has one: write the items as if
        // all were well-formed, checking each as it is escaped (one pass over 100k+ strings, not two), and
        // only if one was not, go back and write the entry again with the list.
        const JsonWriter::Mark mark = w->hold();
        const bool valid = write_entry_rest(e, parts, nullptr, w);
        if (valid) {
            w->release();
        } else {
            w->rewind(mark);
            std::vector<size_t> invalid;
            for (size_t i = 0; i < v.strings.size(); ++i) {
                if (!utf8_valid(v.strings[i])) invalid.push_back(i);
            }
            write_entry_rest(e, parts, &invalid, w);
        }
    } else {
        write_entry_rest(e, parts, nullptr, w);
    }
    w->end_object();
}

// "facts": include/weightstream/model_facts.h's derived facts (from the whole info, whatever the parts).
void write_facts(const ModelInfo& info, JsonWriter* w) {
    const ModelFacts f = model_facts(info);
    w->begin_object();
    w->key("bits_per_weight");
    if (std::isnan(f.bits_per_weight)) {
        w->null();
    } else {
        w->number(f.bits_per_weight);
    }
    w->key("data_bytes");
    w->uint(f.data_bytes);
    w->key("file_type");
    if (f.file_type_name) {
        w->string(f.file_type_name);
    } else {
        w->null();
    }
    w->key("file_type_id");
    if (f.has_file_type) {
        w->int64(f.file_type_id);
    } else {
        w->null();
    }
    w->key("layers");
    w->uint(f.layer_count);
    w->key("parameter_count");
    w->uint(f.parameter_count);
    w->end_object();
}

}  // namespace

void write_model_json(const ModelInfo& info, const JsonParts& parts, JsonWriter* w) {
    const bool with_metadata = parts.metadata;
    w->begin_object();
    if (with_metadata) {
        w->key("alignment");
        w->uint(info.alignment);
        w->key("data_offset");
        w->uint(info.data_offset);
        if (info.format == Format::kGguf) {
            w->key("endian");
            w->string(info.big_endian ? "big" : "little");
        }
        w->key("facts");
        write_facts(info, w);
        w->key("file_size");
        w->uint(info.file_size);
        if (info.files.size() > 1) {
            w->key("files");
            w->begin_array();
            for (const std::string& f : info.files) w->string(f);
            w->end_array();
        }
        w->key("format");
        w->string(format_name(info.format));
        w->key("metadata");
        w->begin_array();
        for (const MetadataEntry& e : info.metadata) write_entry(e, parts, w);
        w->end_array();
    }
    w->key("tensors");
    w->begin_array();
    if (parts.tensors) {
        for (const TensorInfo& t : info.tensors) write_tensor(info, t, w);
    }
    w->end_array();
    if (with_metadata) {
        w->key("version");
        if (info.format == Format::kGguf) {
            w->uint(info.version);
        } else {
            w->null();
        }
        if (!info.warnings.empty()) {
            w->key("warnings");
            w->begin_array();
            for (const Warning& warning : info.warnings) {
                w->begin_object();
                w->key("code");
                w->string(error_name(warning.code));
                w->key("message");
                w->string(warning.message);
                w->key("offset");
                w->uint(warning.offset);
                w->end_object();
            }
            w->end_array();
        }
    }
    w->end_object();
}

std::string model_json(const ModelInfo& info, const JsonParts& parts, int indent) {
    JsonWriter w(indent);
    write_model_json(info, parts, &w);
    return w.finish();
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
