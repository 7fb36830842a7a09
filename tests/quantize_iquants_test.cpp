// SPDX-License-Identifier: MIT
#include "quantize/quantize_iquants.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "quantize/iquant_maps.h"
#include "support/test_util.h"
#include "weightstream/dequant.h"
#include "weightstream/gguf.h"
#include "weightstream/quant_blocks.h"
#include "weightstream/quantize.h"

using ws::DType;
using ws::Error;

namespace {

constexpr DType kIquantTypes[] = {DType::IQ2_XXS, DType::IQ2_XS, DType::IQ2_S, DType::IQ3_XXS,
                                  DType::IQ3_S,   DType::IQ1_S,  DType::IQ1_M};

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
    REQUIRE(ws::quantize_rows(t, src, nrows, n_per_row, imatrix, out.data()).ok());
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

// The imatrix argument for a type: ones where one is required, else none (ggml's own weights).
const float* nullptr_or(DType t, const std::vector<float>& ones) {
    return ws::quantize_requires_imatrix(t) ? ones.data() : nullptr;
}

}  // namespace

TEST_CASE("i-quant quantizers match ggml with the corpus imatrix setting swapped and on tied values") {
    // sha256 of ggml's output (quantize_<type> of ggml d99724f2 built from source with -O2 -ffp-contract=off,
    // 8 rows of 512) for inputs the corpus does not hold: the other imatrix setting of a source, and sources
    // rounded to bfloat16, whose many equal values make IQ1_M's bytes depend on the sort order of ties
    // (glibc's stable merge sort; taking the right-hand equal value first changes them).
    struct Case {
        DType type;
        const char* source;  // ref/<source>.weight.src.f32
        bool imatrix;        // with ref/iq2_xxs.weight.imatrix.f32 (every corpus imatrix is this one)
        bool bf16;           // source rounded to bfloat16 first
        const char* sha256;
    };
    const Case cases[] = {
        {DType::IQ2_S, "iq2_s", false, false, "d1b3a6f6871e54b79d65be1f8086889f905452945d9d1730bcd005d87b4922d9"},
        {DType::IQ1_M, "iq1_m", false, false, "76addef6a66ab814b182ffa0815e0d134b31d9142375ecbb1654c21b29e46299"},
        {DType::IQ3_XXS, "iq3_xxs", true, false, "dd6f9da5f641625a98a36df377b7ac6be4078ad8c437081ceaee49edcb987abc"},
        {DType::IQ3_S, "iq3_s", true, false, "fd458a3174f39d3b72dd8d4b3c3c8cc40e4fa4d0d0b271e74bc8230de5aade43"},
        {DType::IQ1_S, "iq1_s", true, true, "5da5573a022a086d1118079bea5e5dd7a4b54452c87e5283850cabc0e8e68f13"},
        {DType::IQ1_M, "iq1_m", false, true, "1aa284369947459fccf7ab3cb291d67d684e17861e26f9a0c01bcae504f269c8"},
        {DType::IQ1_M, "iq1_m", true, true, "3bed34c3c049f1c52b3ed9aa3c15488ac958723a4a55564ef451404d1dcdfbf5"},
    };
    const std::vector<float> imatrix = read_f32(ws_test::data_path("ggml/ref/iq2_xxs.weight.imatrix.f32"));
    REQUIRE(imatrix.size() == 512);
    for (const Case& c : cases) {
        INFO(ws::dtype_name(c.type) << " of " << c.source << (c.imatrix ? " with" : " without") << " imatrix"
                                    << (c.bf16 ? ", bf16" : ""));
        std::vector<float> src = read_f32(ws_test::data_path(std::string("ggml/ref/") + c.source + ".weight.src.f32"));
        REQUIRE(src.size() == 8 * 512);
        if (c.bf16) {
            for (float& v : src) v = ws::bf16_to_fp32(ws::fp32_to_bf16(v));
        }
        const std::vector<uint8_t> out = quantize_all(c.type, src.data(), 8, 512, c.imatrix ? imatrix.data() : nullptr);
        CHECK(ws_test::sha256_hex(out.data(), out.size()) == c.sha256);
    }
}

TEST_CASE("IQ3_S keeps ggml's shift of grid indices and signs past an all-zero sub-block") {
    // ggml advances its qs/signs cursors only past sub-blocks that are not all zero, so after a zero
    // sub-block the later ones sit one slot early and the last slot stays zero (ggml's decoder then reads them
    // from the wrong place; the bytes are what matters here). Super-block 0 has sub-block 0 zero, super-block 1
    // sub-block 2. sha256 from ggml d99724f2's quantize_iq3_s on this input.
    std::vector<float> src = test_values(2 * ws::QK_K, 11);
    std::fill(src.begin(), src.begin() + 32, 0.0f);
    std::fill(src.begin() + ws::QK_K + 64, src.begin() + ws::QK_K + 96, 0.0f);
    const std::vector<uint8_t> out = quantize_all(DType::IQ3_S, src.data(), 1, 2 * ws::QK_K, nullptr);
    CHECK(ws_test::sha256_hex(out.data(), out.size()) ==
          "4bd5f42514e752dc59b4c805f44da483f43d1b6fe225eed7d34a4b5967bb4006");
    for (size_t b = 0; b < 2; ++b) {
        const uint8_t* blk = out.data() + b * sizeof(ws::block_iq3_s);
        const uint8_t* qs = blk + offsetof(ws::block_iq3_s, qs);
        const uint8_t* signs = blk + offsetof(ws::block_iq3_s, signs);
        CHECK(std::vector<uint8_t>(qs + 56, qs + 64) == std::vector<uint8_t>(8, 0));
        CHECK(std::vector<uint8_t>(signs + 28, signs + 32) == std::vector<uint8_t>(4, 0));
        CHECK(std::vector<uint8_t>(signs, signs + 4) != std::vector<uint8_t>(4, 0));
    }
}

TEST_CASE("i-quant grid maps equal ggml's iq2xs_init_impl / iq3xs_init_impl structures") {
    // sha256 of ggml's own map and neighbour lists (ggml d99724f2, dumped once from its iq2_data / iq3_data
    // after init), serialized per level vector in ggml's index order (level i in bits [b*i, b*i + b), b = 2
    // or 3; vectors with a level out of range skipped): an entry as u16 0xffff then u16 index; otherwise the
    // u16 neighbour count then the u16 neighbour indices.
    struct Expected {
        ws::IqGridId grid;
        int bits;
        size_t lists;
        size_t list_u16;
        const char* sha256;
    };
    const Expected expected[] = {
        {ws::IqGridId::kIq2xxs, 2, 6305, 119462, "358366b4af2ed620ca63e5d77bd4463f7133372698d591e4a35a6aa8e621a0f1"},
        {ws::IqGridId::kIq2xs, 2, 6049, 187770, "61a62d3810ade2b1cff03b667c5eeca10d021411fa03fc82b89d60b6a6d72c93"},
        {ws::IqGridId::kIq2s, 2, 5537, 50253, "4c1e5d9035f1491af09cfa4bb155f3b7726c04202557cd6f3ec3855e8d135b8b"},
        {ws::IqGridId::kIq1s, 2, 4513, 332234, "2b965f873c386ebe7b2c883d94d29afd5d27484fde19812d0ec050e65f39e19d"},
        {ws::IqGridId::kIq3xxs, 3, 3840, 22825, "8473f913fe821ddddf8aa459026cf1a4f0642e8bdab65c835a37ab16e33551a4"},
        {ws::IqGridId::kIq3s, 3, 3584, 28317, "8e67cab137657c5e53d7088a02d70a8e5ea64aab828f1c356af14672835ec221"},
    };
    for (const Expected& e : expected) {
        const ws::IqGridMap& g = ws::iq_grid_map(e.grid);
        INFO("grid size " << g.grid_size);
        REQUIRE(g.levels.size() == static_cast<size_t>(g.grid_size * g.dims));
        size_t n_keys = 1;
        for (int i = 0; i < g.dims; ++i) n_keys *= static_cast<size_t>(g.n_levels);
        REQUIRE(g.map.size() == n_keys);
        CHECK(g.neighbours.size() == e.list_u16);

        std::vector<uint16_t> serial;
        size_t lists = 0;
        for (uint32_t u = 0; u < (1u << (e.bits * g.dims)); ++u) {
            int key = 0;
            bool in_range = true;
            for (int i = g.dims - 1; i >= 0; --i) {
                const int l = static_cast<int>((u >> (e.bits * i)) & ((1u << e.bits) - 1));
                in_range = in_range && l < g.n_levels;
                key = key * g.n_levels + l;
            }
            if (!in_range) continue;
            const int32_t v = g.map[static_cast<size_t>(key)];
            if (v >= 0) {
                serial.push_back(0xffff);
                serial.push_back(static_cast<uint16_t>(v));
                continue;
            }
            const uint16_t* list = g.neighbours.data() + (-v - 1);
            REQUIRE(list[0] > 0);
            serial.insert(serial.end(), list, list + list[0] + 1);
            ++lists;
        }
        CHECK(lists == e.lists);
        std::vector<uint8_t> bytes(serial.size() * 2);
        for (size_t i = 0; i < serial.size(); ++i) {
            bytes[2 * i] = static_cast<uint8_t>(serial[i] & 0xff);
            bytes[2 * i + 1] = static_cast<uint8_t>(serial[i] >> 8);
        }
        CHECK(ws_test::sha256_hex(bytes.data(), bytes.size()) == e.sha256);
    }
}

TEST_CASE("i-quant quantizers store an all-zero super-block as zero bytes") {
    const std::vector<float> zeros(2 * ws::QK_K, 0.0f);
    const std::vector<float> ones(ws::QK_K, 1.0f);
    for (DType t : kIquantTypes) {
        INFO(ws::dtype_name(t));
        for (const float* qw : {ones.data(), static_cast<const float*>(nullptr)}) {
            if (!qw && ws::quantize_requires_imatrix(t)) continue;
            const std::vector<uint8_t> out = quantize_all(t, zeros.data(), 2, ws::QK_K, qw);
            CHECK(out == std::vector<uint8_t>(out.size(), 0));
            std::vector<float> decoded(zeros.size(), 1.0f);
            REQUIRE(ws::dequantize(t, out.data(), decoded.size(), decoded.data()).ok());
            CHECK(decoded == zeros);
        }
    }
}

TEST_CASE("i-quant quantizers take NaN and Inf without crashing and without touching other super-blocks") {
    // ggml (d99724f2) aborts on most of these (GGML_ASSERT(scale >= 0) or a failed neighbour search); here
    // the bytes are deterministic and confined to the super-block that holds the value.
    const std::vector<float> finite = test_values(ws::QK_K, 7);
    const std::vector<float> ones(2 * ws::QK_K, 1.0f);
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 3e38f};
    for (DType t : kIquantTypes) {
        INFO(ws::dtype_name(t));
        const std::vector<uint8_t> alone = quantize_all(t, finite.data(), 1, ws::QK_K, nullptr_or(t, ones));
        std::vector<float> src(finite);
        src.insert(src.end(), finite.begin(), finite.end());
        for (float special : specials) {
            for (int where : {0, 1, 100, 255}) {
                INFO("value " << special << " at " << where);
                std::vector<float> bad(src);
                bad[static_cast<size_t>(where)] = special;
                const std::vector<uint8_t> a = quantize_all(t, bad.data(), 1, 2 * ws::QK_K, nullptr_or(t, ones));
                const std::vector<uint8_t> b = quantize_all(t, bad.data(), 1, 2 * ws::QK_K, nullptr_or(t, ones));
                CHECK(a == b);
                REQUIRE(a.size() == 2 * alone.size());
                CHECK(std::equal(alone.begin(), alone.end(), a.begin() + static_cast<int64_t>(alone.size())));
            }
        }
        // Non-finite importance weights in the first super-block leave the second one alone too.
        std::vector<float> qw(ones);
        qw[3] = std::numeric_limits<float>::quiet_NaN();
        qw[200] = std::numeric_limits<float>::infinity();
        const std::vector<uint8_t> c = quantize_all(t, src.data(), 1, 2 * ws::QK_K, qw.data());
        CHECK(c == quantize_all(t, src.data(), 1, 2 * ws::QK_K, qw.data()));
        const std::vector<uint8_t> with_ones = quantize_all(t, finite.data(), 1, ws::QK_K, ones.data());
        CHECK(std::equal(with_ones.begin(), with_ones.end(), c.begin() + static_cast<int64_t>(with_ones.size())));
    }
}

TEST_CASE("i-quant quantizers refuse a missing imatrix where ggml requires one, and bad shapes") {
    const std::vector<float> src = test_values(ws::QK_K, 3);
    std::vector<uint8_t> dst(1024, 0xcd);
    const std::vector<uint8_t> untouched(dst);
    for (DType t : kIquantTypes) {
        INFO(ws::dtype_name(t));
        const bool required = t == DType::IQ2_XXS || t == DType::IQ2_XS || t == DType::IQ1_S;
        CHECK(ws::quantize_requires_imatrix(t) == required);
        const ws::Status s = ws::quantize_rows(t, src.data(), 1, ws::QK_K, nullptr, dst.data());
        if (required) {
            CHECK(s.code == Error::kUnsupported);
            CHECK(std::string(s.what) == "imatrix");
            CHECK(dst == untouched);
        } else {
            CHECK(s.ok());
            dst = untouched;
        }
        const ws::Status odd = ws::quantize_rows(t, src.data(), 1, 128, src.data(), dst.data());
        CHECK(odd.code == Error::kBadShape);
        CHECK(std::string(odd.what) == "n_per_row");
        CHECK(ws::quantize_rows(t, src.data(), -1, ws::QK_K, src.data(), dst.data()).code == Error::kBadShape);
        CHECK(ws::quantize_rows(t, src.data(), INT64_MAX / 256, 512, src.data(), dst.data()).code == Error::kOverflow);
        CHECK(dst == untouched);
        CHECK(ws::quantize_rows(t, src.data(), 0, ws::QK_K, src.data(), dst.data()).ok());
        CHECK(ws::quantize_rows(t, src.data(), 3, 0, src.data(), dst.data()).ok());
        CHECK(dst == untouched);
    }
    for (DType t : {DType::Q4_K, DType::IQ4_NL, DType::IQ4_XS, DType::F32})
        CHECK_FALSE(ws::quantize_requires_imatrix(t));
}
