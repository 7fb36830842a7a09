// SPDX-License-Identifier: MIT
// ModelInfo as the JSON object of ARCHITECTURE.md: what `info --json` prints and the JS `open()` exposes,
// from the same code in both builds. Building and dumping these values raises no exceptions (nlohmann
// raises them only from accessors like at(), which this file does not use).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model_info.h"

namespace ws {

nlohmann::json value_to_json(const Value& v);
nlohmann::json tensor_to_json(const ModelInfo& info, const TensorInfo& t);
nlohmann::json model_to_json(const ModelInfo& info, bool with_metadata);

// Serialises with invalid UTF-8 in strings replaced (file strings are untrusted bytes), 64-bit integers
// exact, NaN/Inf as null.
std::string json_dump(const nlohmann::json& j, int indent = 1);

}  // namespace ws
