// SPDX-License-Identifier: MIT
// Shared helpers for the Catch2 tests: fixture paths and file loading.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weightstream/model_info.h"

namespace ws_test {

// Committed fixtures (tests/data) and the full reference corpus (../shared/testdata, present in CI).
inline std::string data_path(const std::string& rel) {
    return std::string(WS_TESTDATA) + "/" + rel;
}
inline std::string shared_path(const std::string& rel) {
    return std::string(WS_SHARED_TESTDATA) + "/" + rel;
}
inline bool file_exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

inline std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open fixture " + path);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline nlohmann::json read_json(const std::string& path) {
    const std::vector<uint8_t> bytes = read_file(path);
    return nlohmann::json::parse(bytes.begin(), bytes.end());
}

// A tensor description for the writers: name, type and dims in ggml order (innermost first, up to 4).
inline ws::TensorInfo tensor(const std::string& name, ws::DType t, std::vector<int64_t> ne) {
    ws::TensorInfo info;
    info.name = name;
    info.dtype = t;
    info.n_dims = static_cast<uint32_t>(ne.size());
    for (size_t i = 0; i < ne.size(); ++i) info.ne[i] = ne[i];
    return info;
}

// Hex sha256 of bytes (OpenSSL).
std::string sha256_hex(const uint8_t* data, size_t size);

}  // namespace ws_test
