// SPDX-License-Identifier: MIT
// ModelInfo as the JSON object of ARCHITECTURE.md: what `info --json` prints and the JS `open()` exposes,
// from the same code in both builds. Building and dumping these values raises no exceptions (nlohmann
// raises them only from accessors like at(), which this file does not use).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "weightstream/json_writer.h"
#include "weightstream/model_info.h"
#include "weightstream/stats.h"

namespace ws {

nlohmann::json value_to_json(const Value& v);
// Which parts model_json writes. The wasm transfer (wasm/info_transfer.h) hands the tensor table and the
// items of flat arrays (of scalars or strings) on another way: then "tensors" is [] and such arrays print
// "value": [] and no "invalid_items" (their length and everything else as usual).
struct JsonParts {
    bool metadata = true;  // false: the tensors only (`tensors --json`)
    bool flat_array_items = true;
    bool tensors = true;
};
// The ModelInfo object of ARCHITECTURE.md, written as it is read (no DOM: a vocabulary is 100k+ strings), the
// same bytes as json_dump of the equivalent nlohmann object with that indent. Metadata: format, version,
// endian (GGUF), facts (include/weightstream/model_facts.h: {parameter_count, data_bytes, bits_per_weight (null without
// parameters), file_type ("Q4_K_M", or null when general.file_type is absent or an id llama-quantize does not
// name), file_type_id (null when absent), layers}, from the whole info whatever the parts), file_size,
// data_offset, alignment, files (several files), metadata [{key, type, item_type,
// length, value, ...}], tensors, warnings (when there are any). A tensor: name, dtype, shape, ne (GGUF),
// offset, nbytes, n_elements, rows (row_window.h's count: what a row window addresses), file (several files).
void write_model_json(const ModelInfo& info, const JsonParts& parts, JsonWriter* w);
std::string model_json(const ModelInfo& info, const JsonParts& parts, int indent);
// One entry of `stats --json`'s "tensors": name, dtype, n_elements, min, max, mean, std (null without finite
// values), nan, pos_inf, neg_inf, zeros and histogram {min, max, counts, edges} (include/weightstream/stats.h).
nlohmann::json stats_to_json(const TensorInfo& t, const Stats& s);

// Lossless where JSON is not: a float that is NaN or infinite is the string "NaN", "Infinity" or "-Infinity"
// (the entry's type still says float32/float64); a string that is not valid UTF-8 is printed with its
// ill-formed sequences replaced by U+FFFD, and its bytes are kept beside it in hex: "bytes_hex" for a string
// value, "invalid_items": [{index, bytes_hex}] for the items of a string array, "key_hex" for a key and
// "name_hex" for a tensor name.
std::string hex_of(const std::string& bytes);

// Serialises with invalid UTF-8 in strings replaced (file strings are untrusted bytes), 64-bit integers
// exact.
std::string json_dump(const nlohmann::json& j, int indent = 1);

}  // namespace ws
