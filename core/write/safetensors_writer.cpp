// SPDX-License-Identifier: MIT
#include "weightstream/safetensors_writer.h"

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "weightstream/safetensors.h"
#include "weightstream/utf8.h"

namespace ws {
namespace {

// A JSON string literal, escaped as serde_json and nlohmann both escape (compact, raw UTF-8, \u00XX for
// other control characters). The input is valid UTF-8, so the replace handler never fires and nothing throws.
void append_json_string(std::string* out, const std::string& s) {
    *out += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Product of the dims, each partial product within int64 like the parser's rule; false on overflow.
bool element_count(const std::vector<int64_t>& shape, uint64_t* n) {
    for (int64_t d : shape) {
        if (d == 0) {
            *n = 0;
            return true;
        }
    }
    uint64_t prod = 1;
    for (int64_t d : shape) {
        if (static_cast<uint64_t>(d) > static_cast<uint64_t>(INT64_MAX) / prod) return false;
        prod *= static_cast<uint64_t>(d);
    }
    *n = prod;
    return true;
}

// A dtype the safetensors format can name: its DType name reads back as the same DType.
bool safetensors_dtype(DType t) {
    const char* name = dtype_name(t);
    DType back = DType::kUnknown;
    return dtype_traits(t).block_elems != 0 &&
           dtype_from_safetensors_name(name, std::char_traits<char>::length(name), &back) && back == t;
}

}  // namespace

Result<SafetensorsLayout> safetensors_layout(const std::vector<MetadataEntry>& metadata,
                                             const std::vector<TensorInfo>& tensors) {
    std::string json = "{";
    std::unordered_set<std::string> seen;

    if (!metadata.empty()) {
        json += "\"__metadata__\":{";
        seen.reserve(metadata.size());
        for (size_t i = 0; i < metadata.size(); ++i) {
            const MetadataEntry& e = metadata[i];
            if (e.value.type != ValueType::kString) return make_error(Error::kBadType, i, "metadata.value");
            if (!utf8_valid(e.key)) return make_error(Error::kBadJson, i, "metadata.key");
            if (!utf8_valid(e.value.str)) return make_error(Error::kBadJson, i, "metadata.value");
            if (!seen.insert(e.key).second) return make_error(Error::kDuplicateName, i, "metadata.key");
            if (i) json += ',';
            append_json_string(&json, e.key);
            json += ':';
            append_json_string(&json, e.value.str);
        }
        json += '}';
    }

    SafetensorsLayout layout;
    layout.tensor_offsets.reserve(tensors.size());
    layout.tensor_nbytes.reserve(tensors.size());
    seen.clear();
    seen.reserve(tensors.size());
    uint64_t data_size = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = tensors[i];
        if (!safetensors_dtype(t.dtype)) return make_error(Error::kBadType, i, "tensor.dtype");
        if (!utf8_valid(t.name)) return make_error(Error::kBadJson, i, "tensor.name");
        if (t.name == "__metadata__") return make_error(Error::kBadKey, i, "tensor.name");
        if (!seen.insert(t.name).second) return make_error(Error::kDuplicateName, i, "tensor.name");
        if (t.full_shape.empty() && t.n_dims > 4) return make_error(Error::kBadShape, i, "tensor.n_dims");

        const std::vector<int64_t> shape = t.shape();
        for (int64_t d : shape) {
            if (d < 0) return make_error(Error::kBadShape, i, "tensor.shape");
        }
        uint64_t n = 0;
        uint64_t nbytes = 0;
        if (!element_count(shape, &n)) return make_error(Error::kOverflow, i, "tensor.shape");
        if (n % dtype_traits(t.dtype).block_elems != 0) return make_error(Error::kBadShape, i, "tensor.shape");
        if (!dtype_bytes_for(t.dtype, n, &nbytes)) return make_error(Error::kOverflow, i, "tensor.shape");
        if (t.nbytes != 0 && t.nbytes != nbytes) return make_error(Error::kBadShape, i, "tensor.nbytes");
        if (nbytes > UINT64_MAX - data_size) return make_error(Error::kOverflow, i, "tensor.nbytes");

        if (json.size() > 1) json += ',';
        append_json_string(&json, t.name);
        json += ":{\"dtype\":\"";
        json += dtype_name(t.dtype);
        json += "\",\"shape\":[";
        for (size_t k = 0; k < shape.size(); ++k) {
            if (k) json += ',';
            json += std::to_string(shape[k]);
        }
        json += "],\"data_offsets\":[";
        json += std::to_string(data_size);
        json += ',';
        json += std::to_string(data_size + nbytes);
        json += "]}";

        layout.tensor_offsets.push_back(data_size);
        layout.tensor_nbytes.push_back(nbytes);
        data_size += nbytes;
    }
    json += '}';

    // The crate pads with spaces so the data section starts 8-byte aligned.
    json.append((8 - json.size() % 8) % 8, ' ');
    if (json.size() > kSafetensorsMaxHeader) return make_error(Error::kTooLarge, 0, "header");

    const uint64_t n_header = json.size();
    layout.header.reserve(8 + json.size());
    for (uint32_t k = 0; k < 8; ++k) layout.header.push_back(static_cast<uint8_t>(n_header >> (8 * k)));
    layout.header.insert(layout.header.end(), json.begin(), json.end());
    layout.data_offset = layout.header.size();
    if (data_size > UINT64_MAX - layout.data_offset) return make_error(Error::kOverflow, 0, "file_size");
    layout.file_size = layout.data_offset + data_size;
    for (uint64_t& offset : layout.tensor_offsets) offset += layout.data_offset;
    return layout;
}

Result<std::vector<uint8_t>> safetensors_write(const std::vector<MetadataEntry>& metadata,
                                               const std::vector<TensorInfo>& tensors,
                                               const std::vector<std::vector<uint8_t>>& data) {
    WS_ASSIGN_OR_RETURN(SafetensorsLayout layout, safetensors_layout(metadata, tensors));
    if (data.size() != tensors.size()) return make_error(Error::kBadShape, 0, "tensor.data");
    for (size_t i = 0; i < data.size(); ++i) {
        if (data[i].size() != layout.tensor_nbytes[i]) return make_error(Error::kBadShape, i, "tensor.data");
    }
    std::vector<uint8_t> file = std::move(layout.header);
    file.reserve(layout.file_size);
    for (const std::vector<uint8_t>& d : data) file.insert(file.end(), d.begin(), d.end());
    return file;
}

}  // namespace ws
