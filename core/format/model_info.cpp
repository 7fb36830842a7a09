// SPDX-License-Identifier: MIT
#include "weightstream/model_info.h"

#include <cstring>

namespace ws {

const char* format_name(Format f) {
    switch (f) {
        case Format::kGguf:
            return "gguf";
        case Format::kSafetensors:
            return "safetensors";
        case Format::kUnknown:
            break;
    }
    return "unknown";
}

const char* value_type_name(ValueType t) {
    switch (t) {
        case ValueType::kUint8:
            return "uint8";
        case ValueType::kInt8:
            return "int8";
        case ValueType::kUint16:
            return "uint16";
        case ValueType::kInt16:
            return "int16";
        case ValueType::kUint32:
            return "uint32";
        case ValueType::kInt32:
            return "int32";
        case ValueType::kFloat32:
            return "float32";
        case ValueType::kBool:
            return "bool";
        case ValueType::kString:
            return "string";
        case ValueType::kArray:
            return "array";
        case ValueType::kUint64:
            return "uint64";
        case ValueType::kInt64:
            return "int64";
        case ValueType::kFloat64:
            return "float64";
        case ValueType::kCount:
            break;
    }
    return "unknown";
}

uint32_t value_type_size(ValueType t) {
    switch (t) {
        case ValueType::kUint8:
        case ValueType::kInt8:
        case ValueType::kBool:
            return 1;
        case ValueType::kUint16:
        case ValueType::kInt16:
            return 2;
        case ValueType::kUint32:
        case ValueType::kInt32:
        case ValueType::kFloat32:
            return 4;
        case ValueType::kUint64:
        case ValueType::kInt64:
        case ValueType::kFloat64:
            return 8;
        default:
            return 0;
    }
}

double Value::as_double() const {
    switch (type) {
        case ValueType::kFloat32: {
            const uint32_t b = static_cast<uint32_t>(bits);
            float f;
            std::memcpy(&f, &b, sizeof f);
            return f;
        }
        case ValueType::kFloat64: {
            double d;
            std::memcpy(&d, &bits, sizeof d);
            return d;
        }
        case ValueType::kInt8:
        case ValueType::kInt16:
        case ValueType::kInt32:
        case ValueType::kInt64:
            return static_cast<double>(static_cast<int64_t>(bits));
        default:
            return static_cast<double>(bits);
    }
}

Value Value::scalar_item(uint64_t i) const {
    Value item;
    item.type = item_type;
    item.bits = item_bits(i);
    return item;
}

uint64_t Value::item_bits(uint64_t i) const {
    const uint32_t size = value_type_size(item_type);
    const uint8_t* p = raw.data() + i * size;
    uint64_t item = 0;
    for (uint32_t b = 0; b < size; ++b) item |= static_cast<uint64_t>(p[b]) << (8 * b);
    const bool is_signed =
        item_type == ValueType::kInt8 || item_type == ValueType::kInt16 || item_type == ValueType::kInt32;
    if (is_signed && ((item >> (8 * size - 1)) & 1)) item |= ~uint64_t(0) << (8 * size);  // sign-extend
    return item;
}

MetadataEntry string_entry(const std::string& key, const std::string& value) {
    MetadataEntry e;
    e.key = key;
    e.value.type = ValueType::kString;
    e.value.str = value;
    return e;
}

std::string TensorInfo::dtype_name() const {
    const DTypeKind kind = dtype_traits(dtype).kind;
    if (kind == DTypeKind::kUnknown || kind == DTypeKind::kRemoved) return ggml_type_name(type_id);
    return ws::dtype_name(dtype);
}

std::vector<int64_t> TensorInfo::shape() const {
    if (!full_shape.empty()) return full_shape;
    std::vector<int64_t> s;
    for (uint32_t i = n_dims; i-- > 0;) s.push_back(ne[i]);
    return s;
}

const MetadataEntry* ModelInfo::find(const std::string& key) const {
    for (const MetadataEntry& e : metadata) {
        if (e.key == key) return &e;
    }
    return nullptr;
}

const TensorInfo* ModelInfo::find_tensor(const std::string& name) const {
    for (const TensorInfo& t : tensors) {
        if (t.name == name) return &t;
    }
    return nullptr;
}

}  // namespace ws
