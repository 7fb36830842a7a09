// SPDX-License-Identifier: MIT
#include "info_transfer.h"

#include <cstddef>
#include <cstring>

#include "weightstream/model_json.h"
#include "weightstream/utf8.h"

namespace ws {

bool is_flat_array(const Value& v) {
    return v.type == ValueType::kArray && v.item_type != ValueType::kArray;
}

std::string info_json_without_tables(const ModelInfo& info) {
    JsonParts parts;
    parts.flat_array_items = false;
    parts.tensors = false;
    return model_json(info, parts, -1);
}

bool exact_in_double(uint64_t v) {
    return v < (uint64_t(1) << 53);
}

bool pack_strings(const std::vector<std::string>& strings, PackedStrings* out) {
    *out = PackedStrings();
    size_t total = 0;
    for (const std::string& s : strings) total += s.size();
    if (total > UINT32_MAX) return false;
    // UTF-16 never needs more code units than UTF-8 has bytes: size the buffer once, trim it at the end.
    out->utf16.resize(total);
    out->utf16_ends.resize(strings.size());
    size_t used = 0;
    for (size_t i = 0; i < strings.size(); ++i) {
        const ptrdiff_t units = utf8_to_utf16(strings[i], out->utf16.data() + used);
        if (units < 0) {
            out->invalid.push_back(static_cast<uint32_t>(i));
        } else {
            used += static_cast<size_t>(units);
        }
        out->utf16_ends[i] = static_cast<uint32_t>(used);
    }
    out->utf16.resize(used);
    return true;
}

}  // namespace ws
