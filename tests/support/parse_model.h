// SPDX-License-Identifier: MIT
// A whole model file held in memory, parsed and decoded for a test (Catch2 REQUIREs that it parses).
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "weightstream/dequant.h"
#include "weightstream/header_parser.h"

namespace ws_test {

inline ws::ModelInfo parse_model_bytes(const std::vector<uint8_t>& bytes) {
    ws::ParseOptions options;
    options.file_size = bytes.size();
    ws::HeaderParser parser(options);
    REQUIRE(parser.feed(bytes.data(), bytes.size()).ok());
    return parser.take_info();
}

// Tensor t of a little-endian file as float32.
inline std::vector<float> decode_tensor(const std::vector<uint8_t>& file, const ws::TensorInfo& t) {
    std::vector<float> out(static_cast<size_t>(t.n_elements));
    REQUIRE(ws::dequantize(t.dtype, file.data() + t.offset, t.n_elements, out.data()).ok());
    return out;
}

}  // namespace ws_test
