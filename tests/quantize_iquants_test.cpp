// SPDX-License-Identifier: MIT
#include "quantize_iquants.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "dequant.h"
#include "gguf.h"
#include "iquant_maps.h"
#include "support/test_util.h"

using ws::DType;
using ws::Error;

namespace {

constexpr DType kIquantTypes[] = {DType::IQ2_XXS, DType::IQ2_XS, DType::IQ2_S, DType::IQ3_XXS,
                                  DType::IQ3_S,   DType::IQ1_S,  DType::IQ1_M};

bool is_iquant(DType t) {
    for (DType u : kIquantTypes) {
        if (u == t) return true;
    }
    return false;
}

std::vector<float> read_f32(const std::string& path) {
    const std::vector<uint8_t> bytes = ws_test::read_file(path);
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
}

uint64_t row_bytes(DType t, int64_t n_per_row) {
    uint64_t n = 0;
    REQUIRE(ws::dtype_bytes_for(t, static_cast<uint64_t>(n_per_row), &n));
    return n;
}

std::vector<uint8_t> quantize_all(DType t, const float* src, int64_t nrows, int64_t n_per_row, const float* imatrix) {
    std::vector<uint8_t> out(static_cast<size_t>(row_bytes(t, n_per_row) * static_cast<uint64_t>(nrows)), 0xcd);
    REQUIRE(ws::quantize_iquant_rows(t, src, nrows, n_per_row, imatrix, out.data()).ok());
    return out;
}

// A deterministic pseudo-random row set with outliers, so groups land on and off every grid.
std::vector<float> test_values(size_t n, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t s = seed;
    for (size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        const float u = static_cast<float>(s >> 8) * 0x1p-24f - 0.5f;
        v[i] = (i % 37 == 0) ? 8.0f * u : u;
    }
    return v;
}

}  // namespace

TEST_CASE("i-quant quantizers reproduce ggml's bytes for the corpus tensors, whole and row by row") {
    const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
    const std::vector<uint8_t> file = ws_test::read_file(ws_test::data_path("ggml/ggml-types.gguf"));
    std::map<DType, int> checked;
    for (const auto& t : manifest.at("files").at(0).at("tensors")) {
        const DType type = ws::dtype_from_ggml_id(t.at("ggml_type_id").get<uint32_t>());
        if (!is_iquant(type)) continue;
        const std::string name = t.at("name").get<std::string>();
        INFO(name);
        const auto& source = t.at("source");
        const std::vector<float> src = read_f32(ws_test::data_path("ggml/" + source.at("file").get<std::string>()));
        const int64_t nrows = source.at("nrows").get<int64_t>();
        const int64_t n_per_row = source.at("n_per_row").get<int64_t>();
        REQUIRE(src.size() == static_cast<size_t>(nrows * n_per_row));
        std::vector<float> imatrix;
        if (!source.at("imatrix").is_null()) {
            imatrix = read_f32(ws_test::data_path("ggml/" + source.at("imatrix").at("file").get<std::string>()));
            REQUIRE(imatrix.size() == static_cast<size_t>(n_per_row));
        }
        CHECK(t.at("quantized_with_imatrix").get<bool>() == !imatrix.empty());
        const float* qw = imatrix.empty() ? nullptr : imatrix.data();

        const uint64_t offset = t.at("absolute_offset").get<uint64_t>();
        const uint64_t size = t.at("size_bytes").get<uint64_t>();
        REQUIRE(offset + size <= file.size());
        const std::vector<uint8_t> expected(file.begin() + static_cast<int64_t>(offset),
                                            file.begin() + static_cast<int64_t>(offset + size));

        const std::vector<uint8_t> whole = quantize_all(type, src.data(), nrows, n_per_row, qw);
        REQUIRE(whole.size() == expected.size());
        CHECK(std::memcmp(whole.data(), expected.data(), expected.size()) == 0);
        CHECK(ws_test::sha256_hex(whole.data(), whole.size()) == t.at("raw_sha256").get<std::string>());

        const uint64_t rb = row_bytes(type, n_per_row);
        std::vector<uint8_t> rows(static_cast<size_t>(size), 0xcd);
        for (int64_t r = 0; r < nrows; ++r) {
            REQUIRE(ws::quantize_iquant_rows(type, src.data() + r * n_per_row, 1, n_per_row, qw,
                                             rows.data() + static_cast<uint64_t>(r) * rb)
                        .ok());
        }
        CHECK(rows == expected);

        // Decoding our bytes with the core's dequantizer gives ggml's decode, bit for bit.
        const std::vector<float> ref =
            read_f32(ws_test::data_path("ggml/" + t.at("reference").at("file").get<std::string>()));
        REQUIRE(ref.size() == src.size());
        std::vector<float> decoded(src.size());
        REQUIRE(ws::dequantize(type, whole.data(), decoded.size(), decoded.data()).ok());
        CHECK(std::memcmp(decoded.data(), ref.data(), ref.size() * sizeof(float)) == 0);
        ++checked[type];
    }
    for (DType t : kIquantTypes) CHECK(checked[t] == 1);
}
