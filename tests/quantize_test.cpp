// SPDX-License-Identifier: MIT
#include "quantize.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "dequant.h"
#include "support/test_util.h"

using ws::DType;
using ws::Error;

namespace {

std::vector<float> read_f32(const std::string& path) {
    const std::vector<uint8_t> bytes = ws_test::read_file(path);
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);  // as bits: the sources hold signalling NaNs
    return out;
}

std::vector<uint8_t> quantize_all(DType t, const std::vector<float>& src) {
    uint64_t nbytes = 0;
    REQUIRE(ws::dtype_bytes_for(t, src.size(), &nbytes));
    std::vector<uint8_t> out(nbytes, 0xcd);
    REQUIRE(ws::quantize(t, src.data(), src.size(), out.data()).ok());
    return out;
}

std::vector<uint8_t> block_bytes(uint16_t d, const std::vector<uint8_t>& qs) {
    std::vector<uint8_t> out(2 + qs.size());
    out[0] = static_cast<uint8_t>(d & 0xff);
    out[1] = static_cast<uint8_t>(d >> 8);
    std::copy(qs.begin(), qs.end(), out.begin() + 2);
    return out;
}

}  // namespace

TEST_CASE("quantize reproduces ggml's bytes for every F32/F16/BF16/Q8_0/Q4_0 tensor of the corpus") {
    const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
    const std::vector<uint8_t> file = ws_test::read_file(ws_test::data_path("ggml/ggml-types.gguf"));
    std::set<std::string> checked;
    for (const auto& t : manifest.at("files").at(0).at("tensors")) {
        const DType type = ws::dtype_from_ggml_id(t.at("ggml_type_id").get<uint32_t>());
        if (!ws::quantize_supported(type) || t.at("source").is_null()) continue;
        const std::string name = t.at("name").get<std::string>();
        INFO(name);
        const auto& source = t.at("source");
        const std::vector<float> src = read_f32(ws_test::data_path("ggml/" + source.at("file").get<std::string>()));
        const uint64_t nrows = source.at("nrows").get<uint64_t>();
        const uint64_t n_per_row = source.at("n_per_row").get<uint64_t>();
        REQUIRE(src.size() == nrows * n_per_row);

        const uint64_t offset = t.at("absolute_offset").get<uint64_t>();
        const uint64_t size = t.at("size_bytes").get<uint64_t>();
        REQUIRE(offset + size <= file.size());
        const std::vector<uint8_t> expected(file.begin() + offset, file.begin() + offset + size);

        // Whole tensor in one call.
        const std::vector<uint8_t> whole = quantize_all(type, src);
        CHECK(ws_test::sha256_hex(whole.data(), whole.size()) == t.at("raw_sha256").get<std::string>());
        CHECK(whole == expected);

        // Row by row, into the same buffer at each row's place.
        uint64_t row_bytes = 0;
        REQUIRE(ws::dtype_bytes_for(type, n_per_row, &row_bytes));
        std::vector<uint8_t> rows(size, 0xcd);
        for (uint64_t r = 0; r < nrows; ++r) {
            REQUIRE(ws::quantize(type, src.data() + r * n_per_row, n_per_row, rows.data() + r * row_bytes).ok());
        }
        CHECK(rows == expected);

        // Decoding our bytes gives ggml's decode.
        const std::vector<float> ref =
            read_f32(ws_test::data_path("ggml/" + t.at("reference").at("file").get<std::string>()));
        std::vector<float> decoded(src.size());
        REQUIRE(ws::dequantize(type, whole.data(), src.size(), decoded.data()).ok());
        REQUIRE(ref.size() == decoded.size());
        CHECK(std::memcmp(ref.data(), decoded.data(), ref.size() * 4) == 0);
        checked.insert(name);
    }
    const std::set<std::string> required = {"q8_0.weight", "q8_0.3d",     "q8_0.odd",    "q4_0.weight",  "q4_0.odd",
                                            "f16.weight",  "f16.special", "bf16.weight", "bf16.special", "f32.weight",
                                            "f32.special", "f16.3d",      "f32.3d"};
    for (const std::string& name : required) CHECK(checked.count(name) == 1);
}

TEST_CASE("q8_0 follows ggml's MAX() through NaN and its int8 conversion of non-finite quants") {
    std::vector<float> x(32, 1.0f);
    uint8_t out[34];

    SECTION("a NaN resets the running max, the next value replaces it") {
        x[0] = std::numeric_limits<float>::quiet_NaN();
        x[5] = -127.0f;  // amax = 127 -> d = 1
        ws::quantize_row_q8_0_ref(x.data(), out, 32);
        std::vector<uint8_t> qs(32, 1);
        qs[0] = 0;  // round(NaN) -> int8 0
        qs[5] = static_cast<uint8_t>(-127);
        CHECK(std::vector<uint8_t>(out, out + 34) == block_bytes(0x3c00, qs));
    }
    SECTION("a NaN in the last place makes the scale NaN and every quant 0") {
        x[31] = std::numeric_limits<float>::quiet_NaN();
        x[3] = 100.0f;
        ws::quantize_row_q8_0_ref(x.data(), out, 32);
        CHECK(std::vector<uint8_t>(out, out + 34) == block_bytes(0x7e00, std::vector<uint8_t>(32, 0)));
    }
    SECTION("a subnormal amax gives an infinite inverse scale: all bytes zero") {
        for (float& v : x) v = 1e-39f;
        x[7] = 0.0f;
        ws::quantize_row_q8_0_ref(x.data(), out, 32);
        CHECK(std::vector<uint8_t>(out, out + 34) == std::vector<uint8_t>(34, 0));
    }
    SECTION("all zeros") {
        for (float& v : x) v = 0.0f;
        ws::quantize_row_q8_0_ref(x.data(), out, 32);
        CHECK(std::vector<uint8_t>(out, out + 34) == std::vector<uint8_t>(34, 0));
    }
}

TEST_CASE("q4_0 keeps the signed max, the first on ties, and ggml's handling of zeros and Inf") {
    std::vector<float> x(32, 1.0f);
    uint8_t out[18];

    SECTION("an all-zero block has scale -0 and quants 8") {
        for (float& v : x) v = 0.0f;
        ws::quantize_row_q4_0_ref(x.data(), out, 32);
        CHECK(std::vector<uint8_t>(out, out + 18) == block_bytes(0x8000, std::vector<uint8_t>(16, 0x88)));
    }
    SECTION("the first of equal magnitudes sets the sign; the opposite extreme clamps to 15") {
        x[0] = 8.0f;
        x[16] = -8.0f;  // pairs with element 0 in qs[0]
        ws::quantize_row_q4_0_ref(x.data(), out, 32);
        // d = 8 / -8 = -1, id = -1: 8 -> -8 + 8.5 -> 0; -8 -> 16.5 -> 15; 1 -> 7.5 -> 7.
        std::vector<uint8_t> qs(16, 0x77);
        qs[0] = 0xf0;
        CHECK(std::vector<uint8_t>(out, out + 18) == block_bytes(0xbc00, qs));
    }
    SECTION("an Inf makes the scale -Inf, its own quant NaN -> 0 and the others 8") {
        x[3] = std::numeric_limits<float>::infinity();
        ws::quantize_row_q4_0_ref(x.data(), out, 32);
        std::vector<uint8_t> qs(16, 0x88);
        qs[3] = 0x80;
        CHECK(std::vector<uint8_t>(out, out + 18) == block_bytes(0xfc00, qs));
    }
}

TEST_CASE("quantize dispatch rejects unsupported types and partial blocks") {
    std::vector<float> x(64, 0.5f);
    std::vector<uint8_t> out(256, 0);
    CHECK(ws::quantize(DType::Q4_1, x.data(), 64, out.data()).code == Error::kUnsupported);
    CHECK(ws::quantize(DType::Q4_K, x.data(), 64, out.data()).code == Error::kUnsupported);
    CHECK(ws::quantize(DType::U8, x.data(), 64, out.data()).code == Error::kUnsupported);
    CHECK(ws::quantize(DType::kUnknown, x.data(), 64, out.data()).code == Error::kUnsupported);
    CHECK(ws::quantize(DType::Q8_0, x.data(), 33, out.data()).code == Error::kBadShape);
    CHECK(ws::quantize(DType::Q4_0, x.data(), 48, out.data()).code == Error::kBadShape);
    CHECK(ws::quantize(DType::F16, x.data(), 0, out.data()).ok());
    CHECK(ws::quantize_supported(DType::BF16));
    CHECK_FALSE(ws::quantize_supported(DType::Q5_0));

    // 0.5 exactly: F16 0x3800, BF16 0x3f00, F32 bits 0x3f000000, little-endian.
    REQUIRE(ws::quantize(DType::F16, x.data(), 2, out.data()).ok());
    CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 4) == std::vector<uint8_t>{0x00, 0x38, 0x00, 0x38});
    REQUIRE(ws::quantize(DType::BF16, x.data(), 1, out.data()).ok());
    CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 2) == std::vector<uint8_t>{0x00, 0x3f});
    REQUIRE(ws::quantize(DType::F32, x.data(), 1, out.data()).ok());
    CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 4) == std::vector<uint8_t>{0x00, 0x00, 0x00, 0x3f});
}

TEST_CASE("q8_0 and q4_0 decode within their quantization step") {
    // Rounding costs at most half a step; q4_0 clamps the extreme opposite its max to 7 steps (a full step
    // off); the f16 scale adds at most 2^-11 relative, i.e. amax * 2^-10 over the quant range.
    std::vector<float> x(256);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.1f) * 3.0f;
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
        const std::vector<uint8_t> q = quantize_all(t, x);
        std::vector<float> back(x.size());
        REQUIRE(ws::dequantize(t, q.data(), x.size(), back.data()).ok());
        for (size_t b = 0; b < x.size() / 32; ++b) {
            float amax = 0.0f;
            for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
            const float bound = t == DType::Q8_0 ? amax / 127.0f * 0.5f : amax / 8.0f;
            for (size_t j = 0; j < 32; ++j) {
                INFO(ws::dtype_name(t) << " element " << b * 32 + j);
                CHECK(std::fabs(back[b * 32 + j] - x[b * 32 + j]) <= bound + amax * 0x1p-10f);
            }
        }
    }
}
