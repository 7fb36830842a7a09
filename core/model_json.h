// SPDX-License-Identifier: MIT
// ModelInfo as the JSON object of ARCHITECTURE.md: what `info --json` prints and the JS `open()` exposes,
// from the same code in both builds. Building and dumping these values raises no exceptions (nlohmann
// raises them only from accessors like at(), which this file does not use).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model_info.h"
#include "stats.h"

namespace ws {

nlohmann::json value_to_json(const Value& v);
nlohmann::json tensor_to_json(const ModelInfo& info, const TensorInfo& t);
nlohmann::json model_to_json(const ModelInfo& info, bool with_metadata);
// One entry of `stats --json`'s "tensors": name, dtype, n_elements, min, max, mean, std (null without finite
// values), nan, pos_inf, neg_inf, zeros and histogram {min, max, counts, edges} (core/stats.h).
nlohmann::json stats_to_json(const TensorInfo& t, const Stats& s);

// Serialises with invalid UTF-8 in strings replaced (file strings are untrusted bytes), 64-bit integers
// exact, NaN/Inf as null.
std::string json_dump(const nlohmann::json& j, int indent = 1);

}  // namespace ws
