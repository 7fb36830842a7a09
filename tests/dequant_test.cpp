// SPDX-License-Identifier: MIT
#include "weightstream/dequant.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "weightstream/dtype.h"
#include "weightstream/quant_blocks.h"

using ws::DType;

namespace {

uint32_t bits_of(float f) {
    return ws::f32_to_bits(f);
}

// Bytes placed one past an aligned start of an exact-size heap allocation: ASan flags any over-read and
// UBSan any misaligned multi-byte load a kernel might do.
struct UnalignedCopy {
    UnalignedCopy(const uint8_t* data, size_t size) : storage(new uint8_t[size + 1]), size_(size) {
        if (size) std::memcpy(storage.get() + 1, data, size);
    }
    const uint8_t* data() const { return storage.get() + 1; }
    std::unique_ptr<uint8_t[]> storage;
    size_t size_;
};

// Decodes with dequantize() into an exact-size output, checking the status.
std::vector<float> decode(DType t, const uint8_t* src, uint64_t n) {
    std::vector<float> out(n * ws::dequant_floats_per_element(t));
    const ws::Status s = ws::dequantize(t, src, n, out.data());
    REQUIRE(s.ok());
    return out;
}

// Index of the first float whose bits differ, or -1.
int64_t first_mismatch(const float* a, const float* b, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (bits_of(a[i]) != bits_of(b[i])) return static_cast<int64_t>(i);
    }
    return -1;
}

struct CorpusTensor {
    std::string name;
    std::string type_name;  // ggml's lower-case name ("q4_K")
    uint32_t type_id;
    uint64_t n_elements;
    std::vector<uint8_t> bytes;
    std::string reference_file;
    bool raw_reference;  // ref/NAME.raw (integers, F64) instead of ref/NAME.f32
};

// Every tensor of the two ggml corpus files, read at the manifest's offsets (no GGUF parser involved).
const std::vector<CorpusTensor>& corpus() {
    static const std::vector<CorpusTensor> tensors = [] {
        std::vector<CorpusTensor> out;
        const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
        for (const auto& file : manifest.at("files")) {
            const std::vector<uint8_t> gguf =
                ws_test::read_file(ws_test::data_path("ggml/" + file.at("file").get<std::string>()));
            for (const auto& t : file.at("tensors")) {
                CorpusTensor ct;
                ct.name = t.at("name").get<std::string>();
                ct.type_name = t.at("ggml_type").get<std::string>();
                ct.type_id = t.at("ggml_type_id").get<uint32_t>();
                ct.n_elements = t.at("n_elements").get<uint64_t>();
                const uint64_t offset = t.at("absolute_offset").get<uint64_t>();
                const uint64_t size = t.at("size_bytes").get<uint64_t>();
                REQUIRE(offset + size <= gguf.size());
                ct.bytes.assign(gguf.begin() + static_cast<std::ptrdiff_t>(offset),
                                gguf.begin() + static_cast<std::ptrdiff_t>(offset + size));
                REQUIRE(ws_test::sha256_hex(ct.bytes.data(), ct.bytes.size()) == t.at("raw_sha256").get<std::string>());
                ct.reference_file = t.at("reference").at("file").get<std::string>();
                ct.raw_reference = t.at("reference").at("format").get<std::string>() != "f32le";
                out.push_back(std::move(ct));
            }
        }
        return out;
    }();
    return tensors;
}

std::vector<float> read_f32_file(const std::string& rel) {
    const std::vector<uint8_t> bytes = ws_test::read_file(ws_test::data_path("ggml/" + rel));
    std::vector<float> out(bytes.size() / 4);
    for (size_t i = 0; i < out.size(); ++i) {
        uint32_t u;
        std::memcpy(&u, bytes.data() + 4 * i, 4);
        out[i] = ws::f32_from_bits(u);
    }
    return out;
}

// ---- independent definitions of the small float formats: fields -> ldexp in double -> float ---------------

struct SmallFloat {
    const char* name;
    DType dtype;
    int exp_bits;
    int man_bits;
    int bias;
    bool has_sign;
    // Which codes are NaN / Inf, as each format's definition says.
    bool (*is_nan)(uint32_t code);
    bool (*is_inf)(uint32_t code);
};

bool never(uint32_t) {
    return false;
}
bool e4m3fn_nan(uint32_t c) {
    return (c & 0x7f) == 0x7f;
}  // S.1111.111
bool e5m2_nan(uint32_t c) {
    return (c & 0x7c) == 0x7c && (c & 0x03);
}  // exponent all ones, mantissa != 0
bool e5m2_inf(uint32_t c) {
    return (c & 0x7f) == 0x7c;
}
bool fnuz_nan(uint32_t c) {
    return c == 0x80;
}  // the negative-zero code
bool e8m0_nan(uint32_t c) {
    return c == 0xff;
}

const SmallFloat kSmallFloats[] = {
    {"F8_E4M3", DType::F8_E4M3, 4, 3, 7, true, e4m3fn_nan, never},
    {"F8_E5M2", DType::F8_E5M2, 5, 2, 15, true, e5m2_nan, e5m2_inf},
    {"F8_E4M3FNUZ", DType::F8_E4M3FNUZ, 4, 3, 8, true, fnuz_nan, never},
    {"F8_E5M2FNUZ", DType::F8_E5M2FNUZ, 5, 2, 16, true, fnuz_nan, never},
    {"F8_E8M0", DType::F8_E8M0, 8, 0, 127, false, e8m0_nan, never},
    {"F6_E2M3", DType::F6_E2M3, 2, 3, 1, true, never, never},
    {"F6_E3M2", DType::F6_E3M2, 3, 2, 3, true, never, never},
    {"F4", DType::F4, 2, 1, 1, true, never, never},
};

double small_float_value(const SmallFloat& f, uint32_t code) {
    const int width = (f.has_sign ? 1 : 0) + f.exp_bits + f.man_bits;
    const bool negative = f.has_sign && ((code >> (width - 1)) & 1);
    const int e = static_cast<int>((code >> f.man_bits) & ((1u << f.exp_bits) - 1));
    const int m = static_cast<int>(code & ((1u << f.man_bits) - 1));
    double v;
    if (f.dtype == DType::F8_E8M0) {
        v = std::ldexp(1.0, e - f.bias);  // no zero, no subnormals: every code is a power of two
    } else if (e == 0) {
        v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.man_bits);
    } else {
        v = std::ldexp(static_cast<double>((1 << f.man_bits) + m), e - f.bias - f.man_bits);
    }
    return negative ? -v : v;
}

// Packs codes into the safetensors byte layout (little-endian bit stream), written independently of the
// decoder: bit k of the stream is bit k % 8 of byte k / 8.
std::vector<uint8_t> pack_bits(const std::vector<uint32_t>& codes, int width) {
    std::vector<uint8_t> out((codes.size() * width + 7) / 8, 0);
    for (size_t i = 0; i < codes.size(); ++i) {
        for (int b = 0; b < width; ++b) {
            const size_t bit = i * width + b;
            if ((codes[i] >> b) & 1) out[bit / 8] = static_cast<uint8_t>(out[bit / 8] | (1u << (bit % 8)));
        }
    }
    return out;
}

// Independent binary16 value: fields -> ldexp in double.
double f16_value(uint16_t h) {
    const int e = (h >> 10) & 0x1f;
    const int m = h & 0x3ff;
    const double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? INFINITY : std::ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

}  // namespace

TEST_CASE("every ggml corpus tensor decodes to ggml's reference bytes") {
    // Every type the corpus holds, listed so that none is skipped silently: each must be seen and pass.
    const std::set<std::string> expected_types = {
        "f32",   "f16",   "bf16",    "q4_0",   "q4_1",    "q5_0",  "q5_1",   "q8_0",  "q2_K",  "q3_K",   "q4_K",
        "q5_K",  "q6_K",  "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s", "iq2_s", "iq4_xs", "iq1_m",
        "tq1_0", "tq2_0", "mxfp4",   "nvfp4",  "q1_0",    "q2_0",  "i8",     "i16",   "i32",   "i64",    "f64"};
    std::set<std::string> seen;
    size_t checked = 0;
    for (const CorpusTensor& t : corpus()) {
        INFO("tensor " << t.name << " (" << t.type_name << ")");
        const DType dtype = ws::dtype_from_ggml_id(t.type_id);
        REQUIRE(ws::dtype_decodable(dtype));
        REQUIRE(expected_types.count(t.type_name) == 1);
        uint64_t expect_bytes = 0;
        REQUIRE(ws::dtype_bytes_for(dtype, t.n_elements, &expect_bytes));
        REQUIRE(expect_bytes == t.bytes.size());

        const UnalignedCopy src(t.bytes.data(), t.bytes.size());
        const std::vector<float> got = decode(dtype, src.data(), t.n_elements);
        if (!t.raw_reference) {
            const std::vector<float> want = read_f32_file(t.reference_file);
            REQUIRE(want.size() == t.n_elements);
            INFO("first mismatch at element " << first_mismatch(got.data(), want.data(), want.size()));
            CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
        } else {
            // ggml has no to_float for these: the stored bytes are the reference, and each value converts
            // to float32 with static_cast (round to nearest even for I32/I64; F64 narrowed).
            const std::vector<uint8_t> raw = ws_test::read_file(ws_test::data_path("ggml/" + t.reference_file));
            REQUIRE(raw == t.bytes);
            const size_t width = raw.size() / t.n_elements;
            for (uint64_t i = 0; i < t.n_elements; ++i) {
                const uint8_t* p = raw.data() + i * width;
                float want = 0;
                switch (dtype) {
                    case DType::I8:
                        want = static_cast<float>(static_cast<int8_t>(p[0]));
                        break;
                    case DType::I16: {
                        int16_t v;
                        std::memcpy(&v, p, 2);
                        want = static_cast<float>(v);
                        break;
                    }
                    case DType::I32: {
                        int32_t v;
                        std::memcpy(&v, p, 4);
                        want = static_cast<float>(v);
                        break;
                    }
                    case DType::I64: {
                        int64_t v;
                        std::memcpy(&v, p, 8);
                        want = static_cast<float>(v);
                        break;
                    }
                    case DType::F64: {
                        double v;
                        std::memcpy(&v, p, 8);
                        want = static_cast<float>(v);
                        break;
                    }
                    default:
                        FAIL("unexpected raw type");
                }
                INFO("element " << i);
                if (std::isnan(want)) {
                    CHECK(std::isnan(got[i]));
                } else {
                    CHECK(bits_of(got[i]) == bits_of(want));
                }
            }
        }
        seen.insert(t.type_name);
        ++checked;
    }
    CHECK(seen == expected_types);
    CHECK(checked == 52);  // 46 in ggml-types.gguf + 6 in ggml-types-ext.gguf
}

TEST_CASE("corpus integer tensors hold the extremes and convert with rounding") {
    // i32/i64 extremes are not representable in float32: INT32_MAX rounds up to 2^31, INT64_MIN is exact.
    for (const CorpusTensor& t : corpus()) {
        if (t.type_name != "i64") continue;
        const std::vector<float> got = decode(DType::I64, t.bytes.data(), t.n_elements);
        bool saw_min = false;
        for (uint64_t i = 0; i < t.n_elements; ++i) {
            int64_t v;
            std::memcpy(&v, t.bytes.data() + 8 * i, 8);
            if (v == INT64_MIN) {
                saw_min = true;
                CHECK(got[i] == -0x1p63f);
            }
        }
        CHECK(saw_min);
    }
    const uint8_t i32_max[4] = {0xff, 0xff, 0xff, 0x7f};
    float out = 0;
    ws::dequantize_row_i32(i32_max, &out, 1);
    CHECK(out == 0x1p31f);
    // 2^24 + 1 is a tie between 2^24 and 2^24 + 2: round to even gives 2^24; 2^24 + 3 gives 2^24 + 4.
    const uint8_t u32_ties[8] = {0x01, 0x00, 0x00, 0x01, 0x03, 0x00, 0x00, 0x01};
    float ties[2];
    ws::dequantize_row_u32(u32_ties, ties, 2);
    CHECK(ties[0] == 16777216.0f);
    CHECK(ties[1] == 16777220.0f);
    const uint8_t u64_max[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    ws::dequantize_row_u64(u64_max, &out, 1);
    CHECK(out == 0x1p64f);
    const uint8_t bools[4] = {0, 1, 2, 255};
    float b[4];
    ws::dequantize_row_bool(bools, b, 4);
    CHECK((b[0] == 0.0f && b[1] == 1.0f && b[2] == 1.0f && b[3] == 1.0f));
    const uint8_t u16[2] = {0xff, 0xff};
    ws::dequantize_row_u16(u16, &out, 1);
    CHECK(out == 65535.0f);
}

TEST_CASE("F32 and C64 are copied as bits, signalling NaNs included") {
    const uint32_t words[4] = {0x7f800001u, 0xffc12345u, 0x00000001u, 0x80000000u};
    uint8_t bytes[16];
    for (int i = 0; i < 4; ++i) {
        for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<uint8_t>(words[i] >> (8 * b));
    }
    float f32[4];
    ws::dequantize_row_f32(bytes, f32, 4);
    float c64[4];
    ws::dequantize_row_c64(bytes, c64, 2);  // two complex elements -> four floats
    for (int i = 0; i < 4; ++i) {
        CHECK(bits_of(f32[i]) == words[i]);
        CHECK(bits_of(c64[i]) == words[i]);
    }
    CHECK(ws::dequant_floats_per_element(DType::C64) == 2);
    std::vector<float> via_dispatch = decode(DType::C64, bytes, 2);
    CHECK(via_dispatch.size() == 4);
    CHECK(bits_of(via_dispatch[0]) == 0x7f800001u);
}

TEST_CASE("every F8, F6 and F4 code point decodes to its format's value") {
    for (const SmallFloat& f : kSmallFloats) {
        INFO(f.name);
        const int width = (f.has_sign ? 1 : 0) + f.exp_bits + f.man_bits;
        const uint32_t n_codes = 1u << width;
        std::vector<uint32_t> codes(n_codes);
        for (uint32_t c = 0; c < n_codes; ++c) codes[c] = c;
        const std::vector<uint8_t> packed = pack_bits(codes, width);
        REQUIRE(packed.size() * 8 == n_codes * static_cast<size_t>(width));
        const std::vector<float> got = decode(f.dtype, packed.data(), n_codes);
        size_t n_nan = 0;
        size_t n_inf = 0;
        for (uint32_t c = 0; c < n_codes; ++c) {
            INFO("code 0x" << std::hex << c);
            const bool negative = f.has_sign && ((c >> (width - 1)) & 1);
            if (f.is_nan(c)) {
                ++n_nan;
                REQUIRE(std::isnan(got[c]));
                // The project's rule: the quiet NaN with the code's sign; FNUZ's one NaN is positive.
                const uint32_t sign = (negative && f.is_nan != fnuz_nan) ? 0x80000000u : 0;
                CHECK(bits_of(got[c]) == (0x7fc00000u | sign));
            } else if (f.is_inf(c)) {
                ++n_inf;
                CHECK(got[c] == (negative ? -INFINITY : INFINITY));
            } else {
                const float want = static_cast<float>(small_float_value(f, c));
                CHECK(bits_of(got[c]) == bits_of(want));  // exact, including the sign of zero
            }
        }
        // Counts each format's definition gives.
        if (f.dtype == DType::F8_E4M3) CHECK((n_nan == 2 && n_inf == 0));
        if (f.dtype == DType::F8_E5M2) CHECK((n_nan == 6 && n_inf == 2));
        if (f.dtype == DType::F8_E4M3FNUZ || f.dtype == DType::F8_E5M2FNUZ) CHECK((n_nan == 1 && n_inf == 0));
        if (f.dtype == DType::F8_E8M0) CHECK((n_nan == 1 && n_inf == 0));
    }
}

TEST_CASE("small floats: landmark values from the format specifications") {
    auto one = [](DType t, uint8_t code) {
        float out[2] = {0, 0};
        ws::dequant_row_fn(t)(&code, out, t == DType::F4 ? 2 : 1);
        return out[0];
    };
    CHECK(one(DType::F8_E4M3, 0x7e) == 448.0f);
    CHECK(one(DType::F8_E4M3, 0x01) == 0x1p-9f);
    CHECK(one(DType::F8_E4M3, 0x38) == 1.0f);
    CHECK(one(DType::F8_E5M2, 0x7b) == 57344.0f);
    CHECK(one(DType::F8_E5M2, 0x01) == 0x1p-16f);
    CHECK(one(DType::F8_E5M2, 0x3c) == 1.0f);
    CHECK(one(DType::F8_E4M3FNUZ, 0x7f) == 240.0f);
    CHECK(one(DType::F8_E4M3FNUZ, 0x01) == 0x1p-10f);
    CHECK(one(DType::F8_E4M3FNUZ, 0x40) == 1.0f);
    CHECK(one(DType::F8_E5M2FNUZ, 0x7f) == 57344.0f);
    CHECK(one(DType::F8_E5M2FNUZ, 0x01) == 0x1p-17f);
    CHECK(one(DType::F8_E5M2FNUZ, 0x40) == 1.0f);
    CHECK(one(DType::F8_E8M0, 0x7f) == 1.0f);
    CHECK(one(DType::F8_E8M0, 0x00) == 0x1p-127f);  // a float32 subnormal
    CHECK(one(DType::F8_E8M0, 0xfe) == 0x1p127f);
    CHECK(one(DType::F4, 0x07) == 6.0f);
    CHECK(one(DType::F4, 0x0f) == -6.0f);
    CHECK(one(DType::F4, 0x01) == 0.5f);
}

TEST_CASE("F4 and F6 unpack sub-byte elements in stream order") {
    // F4: the first element in the low nibble (PyTorch float4_e2m1fn_x2).
    const uint8_t f4[2] = {0x21, 0xf7};  // codes 1, 2, 7, 0xf
    float out4[4];
    ws::dequantize_row_f4(f4, out4, 4);
    CHECK(out4[0] == 0.5f);
    CHECK(out4[1] == 1.0f);
    CHECK(out4[2] == 6.0f);
    CHECK(out4[3] == -6.0f);

    // F6 E2M3: codes 0x01 (0.125), 0x3f (-7.5), 0x08 (1.0), 0x20 (-0.0) as the 24-bit value 0x808fc1.
    const uint8_t e2m3[3] = {0xc1, 0x8f, 0x80};
    float out6[4];
    ws::dequantize_row_f6_e2m3(e2m3, out6, 4);
    CHECK(out6[0] == 0.125f);
    CHECK(out6[1] == -7.5f);
    CHECK(out6[2] == 1.0f);
    CHECK(bits_of(out6[3]) == 0x80000000u);

    // F6 E3M2: codes 0x1f (28), 0x21 (-0.0625), 0x04 (0.25), 0x0c (1.0) as 0x30485f; then a second group.
    const uint8_t e3m2[6] = {0x5f, 0x48, 0x30, 0x00, 0x00, 0xfc};
    float out6b[8];
    ws::dequantize_row_f6_e3m2(e3m2, out6b, 8);
    CHECK(out6b[0] == 28.0f);
    CHECK(out6b[1] == -0.0625f);
    CHECK(out6b[2] == 0.25f);
    CHECK(out6b[3] == 1.0f);
    CHECK(out6b[4] == 0.0f);
    CHECK(out6b[5] == 0.0f);
    CHECK(out6b[6] == 0.0f);
    CHECK(out6b[7] == -28.0f);  // 0xfc << 16 puts code 0x3f in bits 18..23

    // Shapes that are not whole packing groups are refused.
    float dummy[4];
    CHECK(ws::dequantize(DType::F4, f4, 3, dummy).code == ws::Error::kBadShape);
    CHECK(ws::dequantize(DType::F6_E2M3, e2m3, 2, dummy).code == ws::Error::kBadShape);
}

TEST_CASE("fp16 decode matches the binary16 definition for all 65536 codes") {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float got = ws::fp16_to_fp32(static_cast<uint16_t>(h));
        const uint32_t sign = (h & 0x8000u) << 16;
        INFO("h = 0x" << std::hex << h);
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0) {
            // NaN: sign and payload kept, made quiet (what ggml's decode gives on x86, and F16C).
            CHECK(bits_of(got) == (sign | 0x7fc00000u | ((h & 0x3ffu) << 13)));
        } else {
            CHECK(bits_of(got) == bits_of(static_cast<float>(f16_value(static_cast<uint16_t>(h)))));
        }
    }
    CHECK(bits_of(ws::fp16_to_fp32(0x7e00)) == 0x7fc00000u);
    CHECK(bits_of(ws::fp16_to_fp32(0xfe00)) == 0xffc00000u);
    CHECK(bits_of(ws::fp16_to_fp32(0x7c01)) == 0x7fc02000u);
    CHECK(ws::fp16_to_fp32(0x0001) == 0x1p-24f);
}

TEST_CASE("fp16 and bf16 round trips and NaN rules") {
    for (uint32_t h = 0; h < 65536; ++h) {
        INFO("h = 0x" << std::hex << h);
        const uint16_t h16 = static_cast<uint16_t>(h);
        const bool f16_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
        const uint16_t back16 = ws::fp32_to_fp16(ws::fp16_to_fp32(h16));
        CHECK(back16 == (f16_nan ? static_cast<uint16_t>((h & 0x8000) | 0x7e00) : h16));
        const bool bf16_nan = (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0;
        const uint16_t back_bf = ws::fp32_to_bf16(ws::bf16_to_fp32(h16));
        CHECK(back_bf == (bf16_nan ? static_cast<uint16_t>(h | 0x40) : h16));
        CHECK(bits_of(ws::bf16_to_fp32(h16)) == h << 16);
    }
    // Rounding: ties to even, overflow to Inf, subnormals kept.
    CHECK(ws::fp32_to_fp16(65504.0f) == 0x7bff);
    CHECK(ws::fp32_to_fp16(65519.0f) == 0x7bff);
    CHECK(ws::fp32_to_fp16(65520.0f) == 0x7c00);  // the tie above the max rounds to even: Inf
    CHECK(ws::fp32_to_fp16(-1e9f) == 0xfc00);
    CHECK(ws::fp32_to_fp16(0x1p-25f) == 0x0000);           // tie between 0 and 2^-24: even is 0
    CHECK(ws::fp32_to_fp16(0x1.8p-24f) == 0x0002);         // tie between 1 and 2 ulps: even is 2
    CHECK(ws::fp32_to_fp16(1.0f + 0x1p-11f) == 0x3c00);    // tie: even mantissa 0
    CHECK(ws::fp32_to_fp16(1.0f + 0x1.8p-10f) == 0x3c02);  // tie between 1 and 2: even 2
    CHECK(ws::fp32_to_fp16(ws::f32_from_bits(0x7f800001u)) == 0x7e00);
    CHECK(ws::fp32_to_fp16(ws::f32_from_bits(0xffc12345u)) == 0xfe00);
    CHECK(ws::fp32_to_bf16(1.0f + 0x1p-8f) == 0x3f80);    // tie: even
    CHECK(ws::fp32_to_bf16(1.0f + 0x1.8p-7f) == 0x3f82);  // tie: even
    CHECK(ws::fp32_to_bf16(ws::f32_from_bits(0x7f800001u)) == 0x7fc0);
    CHECK(ws::fp32_to_bf16(ws::f32_from_bits(0xff812345u)) == 0xffc1);
    CHECK(ws::fp32_to_bf16(ws::f32_from_bits(0x00000001u)) == 0x0000);  // f32 subnormal rounds to 0
    CHECK(ws::fp32_to_bf16(ws::f32_from_bits(0x00008000u)) == 0x0000);  // tie: even
    CHECK(ws::fp32_to_bf16(ws::f32_from_bits(0x00018000u)) == 0x0002);  // tie: even
}

TEST_CASE("fp32_to_fp16 / fp32_to_bf16 reproduce the corpus's F16 and BF16 tensors from their sources") {
    const std::map<std::string, bool> tensors = {{"f16.weight", false},
                                                 {"f16.special", false},
                                                 {"f16.3d", false},
                                                 {"bf16.weight", true},
                                                 {"bf16.special", true}};
    size_t checked = 0;
    for (const CorpusTensor& t : corpus()) {
        const auto it = tensors.find(t.name);
        if (it == tensors.end()) continue;
        INFO(t.name);
        const std::vector<float> src = read_f32_file("ref/" + t.name + ".src.f32");
        REQUIRE(src.size() == t.n_elements);
        REQUIRE(t.bytes.size() == 2 * src.size());
        for (size_t i = 0; i < src.size(); ++i) {
            const uint16_t h = it->second ? ws::fp32_to_bf16(src[i]) : ws::fp32_to_fp16(src[i]);
            const uint16_t stored = static_cast<uint16_t>(t.bytes[2 * i] | (t.bytes[2 * i + 1] << 8));
            INFO("element " << i << " src bits 0x" << std::hex << bits_of(src[i]));
            CHECK(h == stored);
        }
        ++checked;
    }
    CHECK(checked == tensors.size());
}

TEST_CASE("the dispatcher covers exactly the decodable types") {
    for (uint32_t v = 0; v < static_cast<uint32_t>(DType::kEnd); ++v) {
        const DType t = static_cast<DType>(v);
        const ws::DTypeTraits& traits = ws::dtype_traits(t);
        INFO("dtype " << v << " " << traits.name);
        CHECK((ws::dequant_row_fn(t) != nullptr) == ws::dtype_decodable(t));
        // Every type with a block layout decodes; removed and unknown ids do not.
        CHECK(ws::dtype_decodable(t) == (traits.block_elems != 0));
        if (!ws::dtype_decodable(t)) {
            float out = 0;
            const uint8_t byte = 0;
            CHECK(ws::dequantize(t, &byte, 0, &out).code == ws::Error::kUnsupported);
        }
    }
    float out[32];
    const uint8_t bytes[18] = {};
    CHECK(ws::dequantize(DType::Q4_0, bytes, 16, out).code == ws::Error::kBadShape);
    CHECK(ws::dequantize(DType::Q4_0, bytes, 0, out).ok());
    CHECK(ws::dequantize(DType::Q4_2, bytes, 0, out).code == ws::Error::kUnsupported);
    CHECK(ws::dequantize(DType::kUnknown, bytes, 1, out).code == ws::Error::kUnsupported);
}

TEST_CASE("garbage blocks of every type decode without touching memory outside their buffers") {
    std::mt19937_64 rng(20260821);
    for (uint32_t v = 0; v < static_cast<uint32_t>(DType::kEnd); ++v) {
        const DType t = static_cast<DType>(v);
        const ws::DTypeTraits& traits = ws::dtype_traits(t);
        if (!ws::dtype_decodable(t)) continue;
        INFO(traits.name);
        for (uint32_t n_blocks : {1u, 3u, 17u}) {
            std::vector<uint8_t> bytes(static_cast<size_t>(n_blocks) * traits.block_bytes);
            for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
            const UnalignedCopy src(bytes.data(), bytes.size());
            const uint64_t n = static_cast<uint64_t>(n_blocks) * traits.block_elems;
            const std::vector<float> whole = decode(t, src.data(), n);
            // Block by block through the kernel gives the same floats (no state between blocks).
            std::vector<float> by_block(whole.size());
            const size_t block_floats = traits.block_elems * ws::dequant_floats_per_element(t);
            for (uint32_t b = 0; b < n_blocks; ++b) {
                const UnalignedCopy one(bytes.data() + b * traits.block_bytes, traits.block_bytes);
                std::unique_ptr<float[]> exact(new float[block_floats]);
                ws::dequant_row_fn(t)(one.data(), exact.get(), traits.block_elems);
                std::memcpy(by_block.data() + b * block_floats, exact.get(), block_floats * sizeof(float));
            }
            CHECK(first_mismatch(whole.data(), by_block.data(), whole.size()) == -1);
        }
    }
}

TEST_CASE("NaN, Inf and subnormal scales propagate as in ggml") {
    constexpr uint16_t kInf = 0x7c00;
    constexpr uint16_t kNan = 0x7e00;
    constexpr uint16_t kSub = 0x0001;  // 2^-24

    SECTION("q8_0: q * d") {
        uint8_t block[34];
        for (int j = 0; j < 32; ++j) block[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
        float y[32];
        block[0] = kSub & 0xff;
        block[1] = kSub >> 8;
        ws::dequantize_row_q8_0(block, y, 32);
        for (int j = 0; j < 32; ++j) CHECK(y[j] == std::ldexp(static_cast<float>(j - 16), -24));
        block[0] = kInf & 0xff;
        block[1] = kInf >> 8;
        ws::dequantize_row_q8_0(block, y, 32);
        CHECK(std::isnan(y[16]));  // 0 * Inf
        CHECK(y[17] == INFINITY);
        CHECK(y[0] == -INFINITY);
        block[0] = kNan & 0xff;
        block[1] = kNan >> 8;
        ws::dequantize_row_q8_0(block, y, 32);
        for (int j = 0; j < 32; ++j) CHECK(std::isnan(y[j]));
    }
    SECTION("q4_1: q * d + m with a NaN min") {
        ws::block_q4_1 b{};
        b.d = 0x3c00;  // 1.0
        b.m = kNan;
        for (uint8_t& q : b.qs) q = 0x21;
        uint8_t bytes[sizeof b];
        std::memcpy(bytes, &b, sizeof b);
        float y[32];
        ws::dequantize_row_q4_1(bytes, y, 32);
        for (float f : y) CHECK(std::isnan(f));
        b.m = 0xbc00;  // -1.0
        b.d = kSub;
        std::memcpy(bytes, &b, sizeof b);
        ws::dequantize_row_q4_1(bytes, y, 32);
        CHECK(y[0] == 0x1p-24f * 1 - 1.0f);
        CHECK(y[16] == 0x1p-24f * 2 - 1.0f);
    }
    SECTION("q4_K: an Inf super-block scale makes zero quants NaN") {
        ws::block_q4_K b{};
        b.d = kInf;
        b.dmin = 0;
        for (uint8_t& s : b.scales) s = 1;  // every sub-block scale non-zero
        for (int l = 0; l < 128; ++l) b.qs[l] = static_cast<uint8_t>(l % 2);
        uint8_t bytes[sizeof b];
        std::memcpy(bytes, &b, sizeof b);
        float y[256];
        ws::dequantize_row_q4_K(bytes, y, 256);
        CHECK(std::isnan(y[0]));  // Inf * 0 - 0
        CHECK(y[1] == INFINITY);
        CHECK(std::isnan(y[32]));  // high nibbles are all 0
    }
    SECTION("q6_K: subnormal d times scale times quant") {
        ws::block_q6_K b{};
        b.d = kSub;
        for (int8_t& s : b.scales) s = -3;
        uint8_t bytes[sizeof b];
        std::memcpy(bytes, &b, sizeof b);
        float y[256];
        ws::dequantize_row_q6_K(bytes, y, 256);
        for (float f : y) CHECK(f == 0x1p-24f * -3 * -32);  // all quants 0 -> q = -32
    }
    SECTION("q1_0: -d of a NaN scale flips the NaN's sign bit") {
        ws::block_q1_0 b{};
        b.d = kNan;
        b.qs[0] = 0x01;
        uint8_t bytes[sizeof b];
        std::memcpy(bytes, &b, sizeof b);
        float y[128];
        ws::dequantize_row_q1_0(bytes, y, 128);
        CHECK(bits_of(y[0]) == 0x7fc00000u);
        CHECK(bits_of(y[1]) == 0xffc00000u);
        b.d = kInf;
        std::memcpy(bytes, &b, sizeof b);
        ws::dequantize_row_q1_0(bytes, y, 128);
        CHECK(y[0] == INFINITY);
        CHECK(y[1] == -INFINITY);
    }
    SECTION("mxfp4: E8M0 scales 0 and 1 are float32 subnormals, 255 overflows") {
        uint8_t block[17] = {};
        block[1] = 0x72;  // element 0: code 2 (doubled 2), element 16: code 7 (doubled 12)
        block[2] = 0x01;  // element 1: code 1 (doubled 1), element 17: code 0
        float y[32];
        block[0] = 0;  // scale 2^-128 after halving
        ws::dequantize_row_mxfp4(block, y, 32);
        CHECK(y[0] == 0x1p-127f);
        CHECK(y[1] == 0x1p-128f);
        CHECK(y[16] == 0x1.8p-125f);
        block[0] = 1;
        ws::dequantize_row_mxfp4(block, y, 32);
        CHECK(y[0] == 0x1p-126f);
        block[0] = 255;  // 2^127: ggml has no NaN scale
        ws::dequantize_row_mxfp4(block, y, 32);
        CHECK(y[1] == 0x1p127f);
        CHECK(y[0] == INFINITY);  // 2 * 2^127 overflows
        CHECK(y[16] == INFINITY);
        CHECK(y[17] == 0.0f);
    }
    SECTION("nvfp4: UE4M3 0x7f is a zero scale, 0xff is 240 (top bit ignored)") {
        uint8_t block[36] = {};
        block[0] = 0x7f;
        block[1] = 0xff;
        block[2] = 0x01;                               // subnormal: 1 * 2^-9, halved
        block[3] = 0x38;                               // 1.0, halved
        for (int i = 4; i < 36; ++i) block[i] = 0x22;  // code 2 (doubled 1.0 -> value 1.0 * scale)
        float y[64];
        ws::dequantize_row_nvfp4(block, y, 64);
        CHECK(y[0] == 0.0f);
        CHECK(y[16] == 480.0f);  // scale 240 times the doubled 1.0
        CHECK(y[32] == 0x1p-9f);
        CHECK(y[48] == 1.0f);
    }
    SECTION("tq2_0 and q2_0: (q - 1) * d with an Inf scale") {
        ws::block_tq2_0 t{};
        t.d = kInf;
        t.qs[0] = 0xe4;  // elements 0, 32, 64, 96 of the first 128: q = 0, 1, 2, 3
        uint8_t tb[sizeof t];
        std::memcpy(tb, &t, sizeof t);
        float y[256];
        ws::dequantize_row_tq2_0(tb, y, 256);
        CHECK(y[0] == -INFINITY);
        CHECK(std::isnan(y[32]));
        CHECK(y[64] == INFINITY);
        CHECK(y[96] == INFINITY);
        ws::block_q2_0 q{};
        q.d = kSub;
        q.qs[0] = 0xe4;  // elements 0..3: q = 0, 1, 2, 3
        uint8_t qb[sizeof q];
        std::memcpy(qb, &q, sizeof q);
        ws::dequantize_row_q2_0(qb, y, 64);
        CHECK(y[0] == -0x1p-24f);
        CHECK(y[1] == 0.0f);
        CHECK(y[2] == 0x1p-24f);
        CHECK(y[3] == 0x1p-23f);
    }
}

namespace {

void put_le(std::vector<uint8_t>* b, uint64_t v, int width) {
    for (int i = 0; i < width; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A binary16 code's value from its fields, in double (exact), for codes that are finite.
double half_value(uint16_t h) {
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -mag : mag;
}

}  // namespace

TEST_CASE("Q8_K decodes as ggml's dequantize_row_q8_K: float32 d times each int8 (bsums ignored)") {
    // block_q8_K: float d, int8 qs[256], int16 bsums[16] = 292 bytes.
    const float ds[2] = {0.1f, -3.0e-5f};
    std::vector<uint8_t> bytes;
    for (int b = 0; b < 2; ++b) {
        put_le(&bytes, bits_of(ds[b]), 4);
        for (int j = 0; j < 256; ++j) bytes.push_back(static_cast<uint8_t>(j * 37 + b));  // every int8 value
        for (int j = 0; j < 16; ++j) put_le(&bytes, 0x8001u + 77u * j, 2);                // garbage bsums
    }
    REQUIRE(bytes.size() == 2 * 292);
    const UnalignedCopy src(bytes.data(), bytes.size());
    const std::vector<float> got = decode(DType::Q8_K, src.data(), 512);
    for (int b = 0; b < 2; ++b) {
        for (int j = 0; j < 256; ++j) {
            const int q = static_cast<int8_t>(static_cast<uint8_t>(j * 37 + b));
            // The double product of two floats is exact; rounding it once gives float32's product.
            const float want = static_cast<float>(static_cast<double>(ds[b]) * q);
            INFO("block " << b << " element " << j << " q " << q);
            CHECK(bits_of(got[256 * b + j]) == bits_of(want));
        }
    }
    CHECK(ws::dequant_row_fn_scalar(DType::Q8_K) == ws::dequantize_row_q8_K);
    // A NaN d gives NaN everywhere; Inf gives +-Inf, and NaN where q is 0 (Inf * 0).
    std::vector<uint8_t> special(bytes.begin(), bytes.begin() + 292);
    const uint32_t inf = 0x7f800000u;
    std::memcpy(special.data(), &inf, 4);
    const std::vector<float> s = decode(DType::Q8_K, special.data(), 256);
    for (int j = 0; j < 256; ++j) {
        const int q = static_cast<int8_t>(static_cast<uint8_t>(j * 37));
        INFO("element " << j);
        if (q == 0) {
            CHECK(std::isnan(s[j]));
        } else {
            CHECK(s[j] == (q > 0 ? INFINITY : -INFINITY));
        }
    }
}

TEST_CASE("Q8_1 decodes as d * q from its 36-byte block (f16 d, f16 s ignored, 32 int8)") {
    CHECK(ws::dtype_traits(DType::Q8_1).block_bytes == 36);
    CHECK(ws::dtype_traits(DType::Q8_1).block_elems == 32);
    const uint16_t d_codes[3] = {0x2e66, 0xb800, 0x0003};  // ~0.0999, -0.5, a subnormal
    std::vector<uint8_t> bytes;
    for (int b = 0; b < 3; ++b) {
        put_le(&bytes, d_codes[b], 2);
        put_le(&bytes, 0x7e00, 2);  // s: NaN, must not matter
        for (int j = 0; j < 32; ++j) bytes.push_back(static_cast<uint8_t>(j * 9 - 128 + b));
    }
    REQUIRE(bytes.size() == 3 * 36);
    const UnalignedCopy src(bytes.data(), bytes.size());
    const std::vector<float> got = decode(DType::Q8_1, src.data(), 96);
    for (int b = 0; b < 3; ++b) {
        const float d = static_cast<float>(half_value(d_codes[b]));  // exact: binary16 fits float32
        for (int j = 0; j < 32; ++j) {
            const int q = static_cast<int8_t>(static_cast<uint8_t>(j * 9 - 128 + b));
            const float want = static_cast<float>(static_cast<double>(d) * q);
            INFO("block " << b << " element " << j);
            CHECK(bits_of(got[32 * b + j]) == bits_of(want));
        }
    }
    CHECK(ws::dequant_row_fn_scalar(DType::Q8_1) == ws::dequantize_row_q8_1);
}
