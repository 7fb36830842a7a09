// SPDX-License-Identifier: MIT
#include "weightstream/dtype.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <cstring>

#include "support/test_util.h"
#include "weightstream/dequant.h"

using ws::DType;

TEST_CASE("dtype table matches ggml's own type traits") {
    const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
    const auto& traits = manifest.at("ggml_type_traits");
    REQUIRE(traits.size() >= 34);
    for (const auto& t : traits) {
        const uint32_t id = t.at("id").get<uint32_t>();
        std::string upper = t.at("name").get<std::string>();
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        INFO("ggml id " << id << " " << upper);
        const ws::DTypeTraits& ours = ws::dtype_traits(ws::dtype_from_ggml_id(id));
        CHECK(std::string(ours.name) == upper);
        CHECK(ours.block_elems == t.at("blck_size").get<uint32_t>());
        CHECK(ours.block_bytes == t.at("type_size").get<uint32_t>());
        // ggml has to_float for every block type but Q8_1 (decoded as d * q here); Q8_K's is dequantize_row_q8_K.
        if (t.at("has_to_float").get<bool>()) CHECK(ws::dtype_decodable(ws::dtype_from_ggml_id(id)));
        CHECK(ws::dtype_decodable(ws::dtype_from_ggml_id(id)));
    }
}

TEST_CASE("removed and unknown ggml ids are listed as UNKNOWN(id)") {
    for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
        CHECK(ws::dtype_traits(ws::dtype_from_ggml_id(id)).kind == ws::DTypeKind::kRemoved);
        CHECK(ws::ggml_type_name(id) == "UNKNOWN(" + std::to_string(id) + ")");
    }
    CHECK(ws::ggml_type_name(43) == "UNKNOWN(43)");
    CHECK(ws::ggml_type_name(0xffffffffu) == "UNKNOWN(4294967295)");
    CHECK(ws::dtype_from_ggml_id(1000) == DType::kUnknown);
    CHECK(ws::ggml_type_name(12) == "Q4_K");
}

TEST_CASE("all 22 safetensors dtypes are known, with their bit widths") {
    const std::pair<const char*, unsigned> expected[] = {
        {"BOOL", 8},        {"U8", 8},      {"I8", 8},      {"I16", 16},    {"U16", 16},    {"F16", 16},
        {"BF16", 16},       {"I32", 32},    {"U32", 32},    {"F32", 32},    {"F64", 64},    {"I64", 64},
        {"U64", 64},        {"C64", 64},    {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
        {"F8_E5M2FNUZ", 8}, {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"F4", 4},
    };
    for (const auto& [name, bits] : expected) {
        INFO(name);
        DType t;
        REQUIRE(ws::dtype_from_safetensors_name(name, std::strlen(name), &t));
        CHECK(std::string(ws::dtype_name(t)) == name);
        const ws::DTypeTraits& traits = ws::dtype_traits(t);
        CHECK(traits.block_bytes * 8 == bits * traits.block_elems);
    }
    DType t;
    CHECK_FALSE(ws::dtype_from_safetensors_name("F32 ", 4, &t));
    CHECK_FALSE(ws::dtype_from_safetensors_name("Q4_0", 4, &t));
}

TEST_CASE("dtype_bytes_for checks block multiples and overflow") {
    uint64_t bytes = 0;
    CHECK(ws::dtype_bytes_for(DType::Q4_K, 512, &bytes));
    CHECK(bytes == 288);
    CHECK_FALSE(ws::dtype_bytes_for(DType::Q4_K, 100, &bytes));
    CHECK(ws::dtype_bytes_for(DType::F6_E2M3, 8, &bytes));
    CHECK(bytes == 6);
    CHECK_FALSE(ws::dtype_bytes_for(DType::F6_E2M3, 6, &bytes));
    CHECK_FALSE(ws::dtype_bytes_for(DType::F64, UINT64_MAX / 4, &bytes));
    CHECK_FALSE(ws::dtype_bytes_for(DType::Q4_2, 32, &bytes));
}
