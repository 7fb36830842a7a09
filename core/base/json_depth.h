// SPDX-License-Identifier: MIT
// The nesting check every JSON input of the core passes before nlohmann parses it (config.json, tokenizer.json,
// tokenizer_config.json), so that a hostile file cannot make it build, or later destroy, a deep tree.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ws {

// Whether arrays and objects in text[0 .. size) nest deeper than max_depth (brackets inside strings do not
// count). Linear, no allocation; the bytes need not be valid JSON.
bool json_nests_deeper_than(const char* text, size_t size, uint32_t max_depth);

}  // namespace ws
