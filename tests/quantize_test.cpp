// SPDX-License-Identifier: MIT
#include "quantize.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dequant.h"
#include "gguf.h"
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
    // Every corpus tensor of the 21 types this module quantizes: 40 tensors.
    const std::set<std::string> required = {
        "f32.weight",    "f16.weight",   "bf16.weight",  "q4_0.weight",  "q4_1.weight", "q5_0.weight",  "q5_1.weight",
        "q8_0.weight",   "q2_k.weight",  "q3_k.weight",  "q4_k.weight",  "q5_k.weight", "q6_k.weight",  "iq4_nl.weight",
        "iq4_xs.weight", "tq1_0.weight", "tq2_0.weight", "mxfp4.weight", "f32.3d",      "f16.3d",       "q8_0.3d",
        "q4_k.3d",       "q6_k.3d",      "iq4_xs.3d",    "q4_0.odd",     "q4_1.odd",    "q5_0.odd",     "q5_1.odd",
        "q8_0.odd",      "iq4_nl.odd",   "mxfp4.odd",    "f32.special",  "f16.special", "bf16.special", "nvfp4.weight",
        "q1_0.weight",   "q2_0.weight",  "nvfp4.3d",     "q1_0.3d",      "q2_0.3d"};
    for (const std::string& name : required) CHECK(checked.count(name) == 1);
    CHECK(checked.size() == required.size());
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
    // Not quantizable: plain integers, unknown ids, ggml's internal activation formats, and (until the i-quant
    // quantizers are wired in) the types of quantize_iquants.
    for (DType t : {DType::U8, DType::I32, DType::kUnknown, DType::Q8_1, DType::Q8_K, DType::Q4_0_4_4, DType::IQ2_XXS,
                    DType::IQ2_XS, DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S, DType::IQ1_S, DType::IQ1_M}) {
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
    int copied = 0, other_types = 0;
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
            if (!ws::quantize_supported(type)) {  // the grid i-quants of quantize_iquants
                ++other_types;
                continue;
            }
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
    // What the recipes cover (run tensors; 379 distinct quantizations): the imatrix paths of Q4_0, Q5_0, Q4_K,
    // Q5_K, Q6_K and IQ4_NL (Q8_0 ignores it), none of Q2_K, Q3_K, Q4_1, Q5_1 or IQ4_XS.
    const std::map<std::string, int> expected_with = {{"IQ4_NL", 52}, {"Q4_0", 4}, {"Q4_K", 30}, {"Q5_0", 4},
                                                      {"Q5_K", 5},    {"Q6_K", 1}, {"Q8_0", 5}};
    const std::map<std::string, int> expected_without = {{"IQ4_NL", 16}, {"IQ4_XS", 35}, {"Q2_K", 24}, {"Q3_K", 35},
                                                         {"Q4_0", 75},   {"Q4_K", 135},  {"Q5_0", 36}, {"Q5_1", 16},
                                                         {"Q5_K", 49},   {"Q6_K", 70},   {"Q8_0", 83}};
    CHECK(with_imatrix == expected_with);
    CHECK(without_imatrix == expected_without);
    CHECK(sha_of.size() == 379);
    CHECK(copied == 300);
    CHECK(other_types == 172);
}
