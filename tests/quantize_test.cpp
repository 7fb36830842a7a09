// SPDX-License-Identifier: MIT
#include "weightstream/quantize.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "weightstream/dequant.h"
#include "weightstream/gguf.h"

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

TEST_CASE("quantize_rows reproduces ggml_quantize_chunk for every corpus tensor of a supported type") {
    const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
    std::set<std::string> checked;
    for (const auto& f : manifest.at("files")) {
        const std::vector<uint8_t> file =
            ws_test::read_file(ws_test::data_path("ggml/" + f.at("file").get<std::string>()));
        for (const auto& t : f.at("tensors")) {
            const DType type = ws::dtype_from_ggml_id(t.at("ggml_type_id").get<uint32_t>());
            if (!ws::quantize_supported(type) || t.at("source").is_null()) continue;
            const std::string name = t.at("name").get<std::string>();
            INFO(name);
            const auto& source = t.at("source");
            const std::vector<float> src = read_f32(ws_test::data_path("ggml/" + source.at("file").get<std::string>()));
            std::vector<float> imatrix;
            if (!source.at("imatrix").is_null()) {
                imatrix = read_f32(ws_test::data_path("ggml/" + source.at("imatrix").at("file").get<std::string>()));
            }
            const int64_t nrows = source.at("nrows").get<int64_t>();
            const int64_t n_per_row = source.at("n_per_row").get<int64_t>();
            REQUIRE(src.size() == static_cast<size_t>(nrows * n_per_row));
            const float* qw = imatrix.empty() ? nullptr : imatrix.data();

            const uint64_t offset = t.at("absolute_offset").get<uint64_t>();
            const uint64_t size = t.at("size_bytes").get<uint64_t>();
            REQUIRE(offset + size <= file.size());
            const std::vector<uint8_t> expected(file.begin() + offset, file.begin() + offset + size);

            // Whole tensor in one call.
            std::vector<uint8_t> whole(size, 0xcd);
            REQUIRE(ws::quantize_rows(type, src.data(), nrows, n_per_row, qw, whole.data()).ok());
            CHECK(ws_test::sha256_hex(whole.data(), whole.size()) == t.at("raw_sha256").get<std::string>());
            CHECK(std::memcmp(whole.data(), expected.data(), size) == 0);

            // Row by row, into the same buffer at each row's place.
            const uint64_t row_bytes = size / static_cast<uint64_t>(nrows);
            std::vector<uint8_t> rows(size, 0xcd);
            for (int64_t r = 0; r < nrows; ++r) {
                REQUIRE(ws::quantize_rows(type, src.data() + r * n_per_row, 1, n_per_row, qw,
                                          rows.data() + static_cast<uint64_t>(r) * row_bytes)
                            .ok());
            }
            CHECK(rows == expected);

            // The one-call API without an imatrix gives the same bytes.
            if (!qw) {
                std::vector<uint8_t> flat(size, 0xcd);
                REQUIRE(ws::quantize(type, src.data(), src.size(), flat.data()).ok());
                CHECK(flat == expected);
            }

            // Decoding our bytes gives ggml's decode.
            const std::vector<float> ref =
                read_f32(ws_test::data_path("ggml/" + t.at("reference").at("file").get<std::string>()));
            std::vector<float> decoded(src.size());
            REQUIRE(ws::dequantize(type, whole.data(), src.size(), decoded.data()).ok());
            REQUIRE(ref.size() == decoded.size());
            CHECK(std::memcmp(ref.data(), decoded.data(), ref.size() * 4) == 0);
            checked.insert(name);
        }
    }
    // Every corpus tensor ggml quantized (all but the five integer ones, whose source is null): 47.
    CHECK(checked.size() == 47);
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

TEST_CASE("quantize dispatch rejects unsupported types, bad shapes and a missing required imatrix") {
    std::vector<float> x(512, 0.5f);
    std::vector<uint8_t> out(2048, 0);
    // Not quantizable: plain integers, unknown ids and ggml's internal activation formats.
    for (DType t : {DType::U8, DType::I32, DType::kUnknown, DType::Q8_1, DType::Q8_K, DType::Q4_0_4_4}) {
        INFO(static_cast<uint32_t>(t));
        CHECK_FALSE(ws::quantize_supported(t));
        const ws::Status s = ws::quantize_rows(t, x.data(), 1, 256, x.data(), out.data());
        CHECK(s.code == Error::kUnsupported);
        CHECK(std::string(s.what) == "dtype");
        CHECK(ws::quantize(t, x.data(), 256, out.data()).code == Error::kUnsupported);
    }
    for (DType t : {DType::F32,    DType::F16,   DType::BF16,  DType::Q4_0,  DType::Q4_1,  DType::Q5_0, DType::Q5_1,
                    DType::Q8_0,   DType::Q2_K,  DType::Q3_K,  DType::Q4_K,  DType::Q5_K,  DType::Q6_K, DType::IQ4_NL,
                    DType::IQ4_XS, DType::TQ1_0, DType::TQ2_0, DType::MXFP4, DType::NVFP4, DType::Q1_0, DType::Q2_0}) {
        INFO(ws::dtype_name(t));
        CHECK(ws::quantize_supported(t));
        CHECK_FALSE(ws::quantize_requires_imatrix(t));
        // One element short of a row of 256 is never a whole number of blocks (block sizes 1..256 except 1).
        const uint32_t blk = ws::dtype_traits(t).block_elems;
        if (blk > 1)
            CHECK(ws::quantize_rows(t, x.data(), 1, 256 - blk / 2, nullptr, out.data()).code == Error::kBadShape);
        CHECK(ws::quantize_rows(t, x.data(), -1, 256, nullptr, out.data()).code == Error::kBadShape);
        CHECK(ws::quantize_rows(t, x.data(), 1, -256, nullptr, out.data()).code == Error::kBadShape);
        CHECK(ws::quantize_rows(t, x.data(), INT64_MAX / 128, 256, nullptr, out.data()).code == Error::kOverflow);
        CHECK(ws::quantize_rows(t, x.data(), 0, 256, nullptr, out.data()).ok());
        CHECK(ws::quantize_rows(t, x.data(), 2, 0, nullptr, out.data()).ok());
        CHECK(ws::quantize_rows(t, x.data(), 2, 256, x.data(), out.data()).ok());
    }
    CHECK(ws::quantize(DType::F32, x.data(), static_cast<uint64_t>(INT64_MAX) + 1, out.data()).code ==
          Error::kOverflow);
    CHECK(ws::quantize(DType::Q8_0, x.data(), 33, out.data()).code == Error::kBadShape);
    CHECK(ws::quantize(DType::Q4_0, x.data(), 48, out.data()).code == Error::kBadShape);
    CHECK(ws::quantize(DType::Q4_K, x.data(), 128, out.data()).code == Error::kBadShape);
    CHECK(ws::quantize(DType::F16, x.data(), 0, out.data()).ok());
    // ggml_quantize_requires_imatrix's three types; the table reports the requirement before they are wired in.
    CHECK(ws::quantize_requires_imatrix(DType::IQ2_XXS));
    CHECK(ws::quantize_requires_imatrix(DType::IQ2_XS));
    CHECK(ws::quantize_requires_imatrix(DType::IQ1_S));
    CHECK_FALSE(ws::quantize_requires_imatrix(DType::IQ1_M));  // llama-quantize requires one, ggml does not
    CHECK_FALSE(ws::quantize_requires_imatrix(DType::IQ2_S));

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

namespace {

// A GGUF file of the llama-quantize reference set, whole in memory, with its tensors by name.
struct RecipeFile {
    std::vector<uint8_t> bytes;
    std::map<std::string, ws::TensorInfo> tensors;
};

RecipeFile load_recipe_file(const std::string& path) {
    RecipeFile f;
    f.bytes = ws_test::read_file(path);
    ws::ParseOptions options;
    options.file_size = f.bytes.size();
    ws::GgufParser parser(options);
    const ws::Status s = parser.feed(f.bytes.data(), f.bytes.size());
    INFO(path << ": " << ws::error_name(s.code) << " at " << s.offset << " " << s.what);
    REQUIRE(s.ok());
    for (const ws::TensorInfo& t : parser.take_info().tensors) f.tensors[t.name] = t;
    return f;
}

// A tensor's values as float32: F16/BF16 converted exactly, as llama-quantize does before quantizing.
std::vector<float> tensor_f32(const RecipeFile& f, const ws::TensorInfo& t) {
    REQUIRE(t.offset + t.nbytes <= f.bytes.size());
    std::vector<float> out(t.n_elements);
    REQUIRE(ws::dequantize(t.dtype, f.bytes.data() + t.offset, t.n_elements, out.data()).ok());
    return out;
}

// llama-quantize's importance matrix of one weight: in_sum2 / counts per expert (row e of in_sum2 over
// counts[e]), every column 1.0 where an expert's count is 0. Empty when the file has no entry for the weight.
std::vector<float> recipe_imatrix(const RecipeFile& f, const std::string& weight) {
    const auto sums = f.tensors.find(weight + ".in_sum2");
    const auto counts = f.tensors.find(weight + ".counts");
    if (sums == f.tensors.end() || counts == f.tensors.end()) return {};
    const std::vector<float> s = tensor_f32(f, sums->second);
    const std::vector<float> c = tensor_f32(f, counts->second);
    REQUIRE(!c.empty());
    REQUIRE(s.size() % c.size() == 0);
    const size_t ne0 = s.size() / c.size();
    std::vector<float> values(s.size());
    for (size_t e = 0; e < c.size(); ++e) {
        for (size_t i = 0; i < ne0; ++i) values[e * ne0 + i] = c[e] > 0.0f ? s[e * ne0 + i] / c[e] : 1.0f;
    }
    return values;
}

}  // namespace

TEST_CASE("quantize_rows reproduces llama-quantize's tensors of the recipes, with and without an imatrix") {
    const std::string dir = ws_test::shared_path("recipes/");
    if (!ws_test::file_exists(dir + "manifest.json")) {
        WARN("shared corpus not present: the llama-quantize recipes are not checked");
        return;
    }
    const nlohmann::json manifest = ws_test::read_json(dir + "manifest.json");
    std::map<std::string, RecipeFile> files;  // inputs and imatrix files, loaded on first use
    auto file = [&](const std::string& name) -> const RecipeFile& {
        auto it = files.find(name);
        if (it == files.end()) it = files.emplace(name, load_recipe_file(dir + name)).first;
        return it->second;
    };
    // Runs share many tensors (same input, type and imatrix): quantize each combination once.
    std::map<std::string, std::string> sha_of;
    std::map<std::string, int> with_imatrix, without_imatrix;  // run tensors checked, by type
    int copied = 0;
    for (const auto& run : manifest.at("runs")) {
        const std::string model = run.at("model").get<std::string>();
        std::string imatrix_file = run.at("imatrix").is_null() ? "" : run.at("imatrix").get<std::string>();
        if (imatrix_file.rfind("./", 0) == 0) imatrix_file = imatrix_file.substr(2);
        for (const auto& out : run.at("tensors")) {
            const std::string name = out.at("name").get<std::string>();
            const DType type = ws::dtype_from_ggml_id(out.at("type_id").get<uint32_t>());
            const RecipeFile& input = file(model);
            REQUIRE(input.tensors.count(name) == 1);
            const ws::TensorInfo& t = input.tensors.at(name);
            if (type == t.dtype) {  // norms, ffn_gate_inp, --leave-output-tensor: copied, not quantized
                ++copied;
                continue;
            }
            REQUIRE(ws::quantize_supported(type));
            std::vector<float> imatrix;
            if (!imatrix_file.empty()) imatrix = recipe_imatrix(file(imatrix_file), name);
            const std::string key = model + "|" + name + "|" + ws::dtype_name(type) + "|" +
                                    (imatrix.empty() ? std::string() : imatrix_file);
            INFO(run.at("command").get<std::string>() << ": " << name << " as " << ws::dtype_name(type));
            auto cached = sha_of.find(key);
            if (cached == sha_of.end()) {
                // 3-D expert tensors: expert by expert, each with its slice of the imatrix.
                const int64_t n_per_row = t.ne[0], nrows = t.ne[1], n_expert = t.ne[2] * t.ne[3];
                REQUIRE((imatrix.empty() || imatrix.size() == static_cast<size_t>(n_per_row * n_expert)));
                const std::vector<float> src = tensor_f32(input, t);
                const uint64_t nbytes = out.at("nbytes").get<uint64_t>();
                REQUIRE(nbytes % static_cast<uint64_t>(n_expert) == 0);
                const uint64_t expert_bytes = nbytes / static_cast<uint64_t>(n_expert);
                std::vector<uint8_t> q(nbytes, 0xcd);
                for (int64_t e = 0; e < n_expert; ++e) {
                    const float* qw = imatrix.empty() ? nullptr : imatrix.data() + e * n_per_row;
                    REQUIRE(ws::quantize_rows(type, src.data() + e * nrows * n_per_row, nrows, n_per_row, qw,
                                              q.data() + static_cast<uint64_t>(e) * expert_bytes)
                                .ok());
                }
                cached = sha_of.emplace(key, ws_test::sha256_hex(q.data(), q.size())).first;
            }
            CHECK(cached->second == out.at("raw_sha256").get<std::string>());
            ++(imatrix.empty() ? without_imatrix : with_imatrix)[ws::dtype_name(type)];
        }
    }
    // What the recipes cover (run tensors; 517 distinct quantizations): the imatrix paths of the i-quants, Q4_0,
    // Q5_0, Q4_K, Q5_K, Q6_K and IQ4_NL (Q8_0 ignores it), none of Q2_K, Q3_K, Q4_1, Q5_1 or IQ4_XS (their
    // imatrix paths are pinned to ggml's hashes below).
    const std::map<std::string, int> expected_with = {{"IQ1_S", 27},   {"IQ2_S", 37},  {"IQ2_XXS", 49}, {"IQ3_S", 37},
                                                      {"IQ3_XXS", 19}, {"IQ4_NL", 52}, {"Q4_0", 4},     {"Q4_K", 30},
                                                      {"Q5_0", 4},     {"Q5_K", 5},    {"Q6_K", 1},     {"Q8_0", 5}};
    const std::map<std::string, int> expected_without = {{"IQ3_S", 3}, {"IQ4_NL", 16}, {"IQ4_XS", 35}, {"Q2_K", 24},
                                                         {"Q3_K", 35}, {"Q4_0", 75},   {"Q4_K", 135},  {"Q5_0", 36},
                                                         {"Q5_1", 16}, {"Q5_K", 49},   {"Q6_K", 70},   {"Q8_0", 83}};
    CHECK(with_imatrix == expected_with);
    CHECK(without_imatrix == expected_without);
    CHECK(sha_of.size() == 517);
    CHECK(copied == 300);
}

namespace {

// Hostile rows of 512 values from an integer hash (no libm, so every platform builds the same floats): NaN,
// Inf of both signs, whole blocks of Inf/NaN, magnitudes near FLT_MAX and 1e30, subnormal blocks, -0 and the
// smallest subnormal, ties, constants, and an amax just below 8 (MXFP4's log2f case). The only NaN used is
// 0xffc00000, the x86 default NaN, so every NaN a computation meets has the same bits (see the NaN note below).
std::vector<float> hostile_rows(int* nrows_out) {
    const int n = 512, nrows = 12;
    std::vector<float> x(static_cast<size_t>(n) * nrows);
    const float nan = -std::numeric_limits<float>::quiet_NaN();  // 0xffc00000, the x86 default NaN
    const float inf = std::numeric_limits<float>::infinity();
    const float scales[nrows] = {1.f, 1.f, 1.f, 3e38f, 1e30f, 1e-39f, 1.f, 0.f, 1.f, 1.f, 1.f, 1e-20f};
    for (int r = 0; r < nrows; ++r) {
        float* row = x.data() + r * n;
        for (int j = 0; j < n; ++j) {
            const uint32_t h = (static_cast<uint32_t>(r * n + j) * 2654435761u) >> 11;
            row[j] = static_cast<float>(static_cast<int>(h % 2001u) - 1000) / 1000.0f * scales[r];
        }
        switch (r) {
            case 0:
                row[5] = nan;
                row[300] = nan;
                break;  // a NaN in two blocks
            case 1:
                row[17] = inf;
                row[400] = -inf;
                break;  // an Inf of each sign
            case 2:
                for (int j = 0; j < 64; ++j) row[j] = j % 2 ? inf : -inf;  // whole blocks of Inf
                for (int j = 256; j < 320; ++j) row[j] = nan;
                break;  // and of NaN
            case 6:
                for (int j = 0; j < 256; ++j) row[j] *= 1e-40f;  // subnormal half, huge half
                for (int j = 256; j < 512; ++j) row[j] *= 1e20f;
                break;
            case 7:
                for (int j = 0; j < n; j += 3) row[j] = -0.0f;
                row[100] = 1e-45f;
                break;  // zeros, -0, min subnormal
            case 8:
                for (int j = 0; j < n; ++j) row[j] = j % 2 ? 0.5f : -0.5f;
                break;  // ties
            case 9:
                for (int j = 0; j < n; ++j) row[j] = 1.0f;
                break;  // constant
            case 10:
                for (int j = 0; j < n; j += 32) row[j] = 7.9999995f;
                break;  // log2f rounds up
            default:
                break;
        }
    }
    *nrows_out = nrows;
    return x;
}

// The corpus imatrix formula with every third column zero.
std::vector<float> imatrix_with_zeros() {
    std::vector<float> im(512);
    for (int j = 0; j < 512; ++j) {
        im[j] = j % 3 == 0 ? 0.0f
                           : 0.25f + static_cast<float>((static_cast<uint64_t>(j) * 2654435761u >> 7) % 1000) / 400.0f;
    }
    return im;
}

struct Expected {
    DType type;
    const char* without_imatrix;
    const char* with_imatrix;
};

}  // namespace

// The sha256 below were computed by ggml itself: ggml-org/ggml d99724f2 src/ggml-quants.c built with gcc 12 -O2
// -ffp-contract=off (x86-64), calling quantize_<type>(src, dst, nrows, 512, imatrix) -- the function
// ggml_quantize_chunk dispatches to -- on the same inputs (a local harness, not part of this repository).
TEST_CASE("quantize_rows matches ggml's importance-weighted paths on the corpus sources") {
    // The recipes exercise no imatrix path of Q2_K, Q3_K, Q4_1, Q5_1 or IQ4_XS; these cover every type's. Input:
    // ref/<type>.weight.src.f32 (8 rows of 512, the eight row classes) with the corpus imatrix vector.
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"q4_0.weight", "6456bd16245ca9364b93d2e11dea583dd22a79213398c629f1692ca4a10c5853"},
        {"q4_1.weight", "1f6384cce2f5ea60a68b42a620499218fddfe6fdaf343d82061e5c15cfd015ae"},
        {"q5_0.weight", "e84ff3c164ea90386bad5c8b722734f8762d332ba1d6f544ae0a760ca9f3b9cd"},
        {"q5_1.weight", "4ffc7f502132fc408a297fae769836920cf8f35ae6cee7989c9b537c61fa9916"},
        {"q2_k.weight", "2dd4069106c3a69b4646bc11329e0eb978a5540f1266ba6f16c1486df1dc0e94"},
        {"q3_k.weight", "ff199c282a8b932bbd9f5f23b545d1b9dfa16c00a1e608914eb9a11a6d0f04f0"},
        {"q4_k.weight", "1805e4b6287e5d0e0e15012583e5c152c83fade7c2c4f39b408158d99fcdb1b8"},
        {"q5_k.weight", "a066ddaa5f99e44c558a06213c01924b9e5ad1825f53ae4f7e25525a3269d5fb"},
        {"q6_k.weight", "cabc1a06c2cace578e9033d3dedd0679d8aeaeddb33336255c4455c6102effd8"},
        {"iq4_nl.weight", "3792ed733a355b44aed294db48c1ed664629cf0a008befc8f9011dc9170dd520"},
        {"iq4_xs.weight", "e5f6337fe64460c613a6f70b29f881c7d26ee1c51e0c8b0ea6992aa9660ab5f8"},
    };
    const std::vector<float> imatrix = read_f32(ws_test::data_path("ggml/ref/iq2_xxs.weight.imatrix.f32"));
    REQUIRE(imatrix.size() == 512);
    const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
    for (const auto& [name, sha] : expected) {
        INFO(name);
        DType type = DType::kUnknown;
        for (const auto& t : manifest.at("files").at(0).at("tensors")) {
            if (t.at("name") == name) type = ws::dtype_from_ggml_id(t.at("ggml_type_id").get<uint32_t>());
        }
        const std::vector<float> src = read_f32(ws_test::data_path("ggml/ref/" + name + ".src.f32"));
        REQUIRE(src.size() == 8 * 512);
        uint64_t nbytes = 0;
        REQUIRE(ws::dtype_bytes_for(type, src.size(), &nbytes));
        std::vector<uint8_t> q(nbytes, 0xcd);
        REQUIRE(ws::quantize_rows(type, src.data(), 8, 512, imatrix.data(), q.data()).ok());
        CHECK(ws_test::sha256_hex(q.data(), q.size()) == sha);
        // The imatrix changes the bytes (the corpus tensor is the imatrix-free quantization).
        std::vector<uint8_t> plain(nbytes, 0xcd);
        REQUIRE(ws::quantize_rows(type, src.data(), 8, 512, nullptr, plain.data()).ok());
        CHECK(plain != q);
    }
}

// NaN/Inf: ggml_quantize_chunk does not validate floats, and neither does quantize_rows; both give the same bytes
// (hashes from ggml, as above). What ggml does with them, type by type: a NaN is skipped by the `amax < |v|`
// searches (Q4_0, Q5_0, MXFP4, NVFP4, Q2_0) but replaces the running max in ggml's MAX() (Q8_0, TQ1_0, TQ2_0: the
// scale turns NaN when the NaN is the block's last value), and poisons the sums of the min/scale searches (Q4_1,
// Q5_1, k-quants, IQ4: NaN scale or min); an Inf gives an Inf or NaN scale; the quants of such blocks come from
// out-of-range float->int conversions (x86/wasm "integer indefinite"). MXFP4 gives Inf the exponent 0 and
// subnormal maxima exponents near 250 (ggml's unchecked float->uint8_t). llama-quantize rejects such output
// afterwards (ggml_validate_row_data: NaN/Inf f16 scales) but not a NaN that ggml quantized to a finite code.
// One thing is not reproducible across builds of ggml itself: when NaNs of different signs or payloads meet,
// which one an x86 operation returns depends on the compiler's operand order (ggml's own gcc and clang builds can
// differ), so a NaN scale's sign/payload can differ from ggml's there (seen: Q4_0/Q5_0 with an imatrix).
TEST_CASE("quantize_rows gives ggml's bytes for NaN, Inf, huge and subnormal rows") {
    const std::vector<Expected> expected = {
        {DType::Q4_0, "3746f4515ec4e37bd4521e666c2610d0f7d5b4839087d01845133a8e6c86fd24",
         "39c4bb2ab8827b6e9a40c66f39aef5e676f39655115b4af1d4e0de944e3e3028"},
        {DType::Q4_1, "93f0850e921762c13de01ef93e7632e267d42cbc190d0eeae684ffa401b9d5f1",
         "1218c0b95cf736a8522e3fdb9bba59c1da31d849ea7b1e756de50d4e329002f2"},
        {DType::Q5_0, "15c4044b3153f42a84a55656708ac0766cea08790585f94deec7ee9c988725b8",
         "1b0d82a81d05ea892b74c733caa040d093958d36a1a55384c3f569dca6efd795"},
        {DType::Q5_1, "02a5a5fa1d218f3cb52f3e1b0a9a5c8828ff7468b904095ab9be36bd487309ef",
         "00aa96551cdd6d14b5462963c63e4fe7bbff4729b2345c0781d957f8dcde48c6"},
        {DType::Q8_0, "068c5fa049c441f9240b3cfe353f1e448d69a39b9e3ec03b4cb5ef660915925e",
         "068c5fa049c441f9240b3cfe353f1e448d69a39b9e3ec03b4cb5ef660915925e"},
        {DType::Q2_K, "68b4a498b0854ebf5c59a5ab4623d0cf349b29c5bf06b3bd6c45effc093c3832",
         "3c0aa75210b9daefbfb70af228011fd2917c156fe36b3fe29dce4a3ae75dff37"},
        {DType::Q3_K, "04fb33863c1bb0d3c377a486302611b3f413e6b0206e03a8c586ef9300266075",
         "6f4ea9c3086b9bec67cd62ef99b1ef7134f9bc633946fa97f1063a5c91fe8f8f"},
        {DType::Q4_K, "36d00943ff74d779819cb546a8929b7084ab790a79c497ef2d93fe3d5d7c9307",
         "f85e24b89219bcf6e591e78663f83cdd6aa27becd62c4483d3c22ed812a2093f"},
        {DType::Q5_K, "e4e430bdf1c20ee1c0f5e394595d7d53c461fa8bef2ad149deed374df932b3a2",
         "8ede13bb10aaf9352c7334768ab38e15cd7ac3052e58b5e60b3c193b1cc787b8"},
        {DType::Q6_K, "d6757afbc3d6c88a316e58342912718f994be5b23bf289cfa013bd03cc6741f4",
         "09d03657fb5cedd01e7ad4171506ec3abe0e2968b38186a9085030c48974ea1c"},
        {DType::IQ4_NL, "2de301e74dd4f3e8dc6b969e69a6c735101acf0ffc13b173268b60955e90c647",
         "a5a4257df1ee2fbf5fa74e684ad923c3414a32d91b189e817bd98eb27fcb0a46"},
        {DType::IQ4_XS, "b4593855e6645291d6d5ee515ed4adeaadb2045161656bfb885ff8098b329d1c",
         "6f5f59cc7b077477ea7393ffed70b9c4f3516ef4168498570287b821abc9232b"},
        {DType::TQ1_0, "5526b4cb69462f36690766614e9cd35cdf318ac221909ef0c71f514a17f31de1",
         "5526b4cb69462f36690766614e9cd35cdf318ac221909ef0c71f514a17f31de1"},
        {DType::TQ2_0, "c5bda207d33400bb2e8fc1147eeb2fe6f8060e4f83ecb47f76ffb214eee8de3b",
         "c5bda207d33400bb2e8fc1147eeb2fe6f8060e4f83ecb47f76ffb214eee8de3b"},
        {DType::MXFP4, "1adb98525944ff08169a4229a0b97cd4e05111b9be345a28795e4541c6830ca3",
         "1adb98525944ff08169a4229a0b97cd4e05111b9be345a28795e4541c6830ca3"},
        {DType::NVFP4, "aa0126808bb85aa2030e7cfd416f2c778946727c7f526b7f32a4bf5a7340caed",
         "aa0126808bb85aa2030e7cfd416f2c778946727c7f526b7f32a4bf5a7340caed"},
        {DType::Q1_0, "b4fb849605d4fcce5ed33ea96af875082d91932b2f756f8bfcda18082accda2e",
         "b4fb849605d4fcce5ed33ea96af875082d91932b2f756f8bfcda18082accda2e"},
        {DType::Q2_0, "fc44f06ec6264fd15a54747c0cb51fd8760d4803a17b3b4517a33ad58cb48055",
         "fc44f06ec6264fd15a54747c0cb51fd8760d4803a17b3b4517a33ad58cb48055"},
    };
    int nrows = 0;
    const std::vector<float> x = hostile_rows(&nrows);
    const std::vector<float> im = imatrix_with_zeros();
    for (const Expected& e : expected) {
        INFO(ws::dtype_name(e.type));
        uint64_t nbytes = 0;
        REQUIRE(ws::dtype_bytes_for(e.type, x.size(), &nbytes));
        std::vector<uint8_t> q(nbytes, 0xcd);
        REQUIRE(ws::quantize_rows(e.type, x.data(), nrows, 512, nullptr, q.data()).ok());
        CHECK(ws_test::sha256_hex(q.data(), q.size()) == e.without_imatrix);
        std::fill(q.begin(), q.end(), 0xcd);
        REQUIRE(ws::quantize_rows(e.type, x.data(), nrows, 512, im.data(), q.data()).ok());
        CHECK(ws_test::sha256_hex(q.data(), q.size()) == e.with_imatrix);
    }
}

TEST_CASE("mxfp4 takes its exponent from float32 log2f, which rounds up just below a power of two") {
    // amax = 8 - 2^-21: log2f gives exactly 3.0 (the true 2.99999991 rounds to it), so e = 3 - 2 + 127 = 128 and
    // d = 1: the value takes code 6 (8 * d). Exponent bits would say 2 (e = 127, d = 0.5, code 7 = 6.0).
    std::vector<float> x(32, 0.0f);
    uint8_t out[17];
    auto expect = [&](float amax, uint8_t e, uint8_t code) {
        INFO(amax);
        x[0] = amax;
        REQUIRE(ws::quantize_rows(DType::MXFP4, x.data(), 1, 32, nullptr, out).ok());
        std::vector<uint8_t> want(17, 0);
        want[0] = e;
        want[1] = code;
        CHECK(std::vector<uint8_t>(out, out + 17) == want);
    };
    expect(7.9999995f, 128, 0x06);
    expect(0.24999999f, 123, 0x06);  // log2f = -2 exactly: e = -4 + 127, d = 2^-5; 0.25 = 8 d
    expect(7.0f, 127, 0x07);         // floor(2.807) = 2: e = 127, d = 0.5, 7 -> 6 (code 7)
    expect(8.0f, 128, 0x06);
    expect(std::numeric_limits<float>::infinity(), 0, 0x00);  // Inf: floorf(Inf) converts to INT32_MIN -> 0
    expect(1e-40f, 248, 0x00);  // log2f = -132.9: -133 - 2 + 127 = -8 -> 248 as uint8_t, scale 2^120
    expect(-0.0f, 0, 0x00);     // amax 0: e = 0
}
