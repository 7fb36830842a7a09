// SPDX-License-Identifier: MIT
// The SIMD kernels of Q8_0 and the F16/BF16 outputs (core/quantize/row_kernels.h) against their scalar references:
// every length up to a few vectors (the tails), blocks with a NaN or an Inf anywhere, all-zero blocks, subnormal
// and huge magnitudes, exact halves (roundf's ties away from zero), and a sweep of float32 bit patterns. Built
// natively and, under Node, in the wasm kernel test (wasm/CMakeLists.txt).
#include "quantize/row_kernels.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "decode/dequant_internal.h"
#include "weightstream/dequant.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"

namespace {

using ws::detail::row_kernels;
using ws::detail::scalar_row_kernels;

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Q8_0 of x by both, compared byte for byte; the outputs start misaligned to catch alignment assumptions.
void same_q8_0(const std::vector<float>& x) {
    REQUIRE(x.size() % 32 == 0);
    const size_t bytes = x.size() / 32 * 34;
    std::vector<uint8_t> fast(bytes + 1, 0xcd), ref(bytes + 1, 0xcd);
    row_kernels().q8_0(x.data(), fast.data() + 1, static_cast<int64_t>(x.size()));
    scalar_row_kernels().q8_0(x.data(), ref.data() + 1, static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < fast.size(); ++i) {
        INFO("block " << (i - 1) / 34 << " byte " << (i - 1) % 34);
        REQUIRE(int(fast[i]) == int(ref[i]));
    }
}

// F16 and BF16 of x by both, from every start offset of x up to 9 (the tails of each length).
void same_floats(const std::vector<float>& x) {
    for (size_t from = 0; from < 10 && from <= x.size(); ++from) {
        const int64_t n = static_cast<int64_t>(x.size() - from);
        std::vector<uint8_t> fast(2 * x.size() + 1, 0xcd), ref(2 * x.size() + 1, 0xcd);
        row_kernels().f16(x.data() + from, fast.data() + 1, n);
        scalar_row_kernels().f16(x.data() + from, ref.data() + 1, n);
        REQUIRE(fast == ref);
        row_kernels().bf16(x.data() + from, fast.data() + 1, n);
        scalar_row_kernels().bf16(x.data() + from, ref.data() + 1, n);
        REQUIRE(fast == ref);
    }
}

}  // namespace

TEST_CASE("row kernels are the SIMD ones where the CPU has them") {
#if defined(__wasm_simd128__)
    CHECK(&row_kernels() == &ws::detail::kSimd128RowKernels);
#elif defined(__x86_64__) || defined(__i386__)
    if (ws::detail::x86_features().avx2_f16c) CHECK(&row_kernels() == &ws::detail::kAvx2RowKernels);
#endif
    CHECK(scalar_row_kernels().q8_0 == &ws::quantize_row_q8_0_ref);
}

TEST_CASE("q8_0 kernel gives the reference's bytes for ordinary, zero, tiny and huge blocks") {
    std::mt19937 rng(23);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float scale : {1.0f, 0.02f, 1e-20f, 1e-38f, 1e-42f, 1e-45f, 3e4f, 1e30f, 3e38f}) {
        for (int blocks = 1; blocks <= 5; ++blocks) {
            std::vector<float> x(32 * blocks);
            for (float& v : x) v = normal(rng) * scale;
            same_q8_0(x);
        }
    }
    std::vector<float> zeros(32 * 3, 0.0f);
    zeros[40] = -0.0f;
    same_q8_0(zeros);
    std::vector<float> one_subnormal(32, 0.0f);
    one_subnormal[17] = from_bits(1);  // d rounds to 0: id 0
    same_q8_0(one_subnormal);
    one_subnormal[3] = -from_bits(0x00400000);  // d subnormal, 1/d infinite: x * id is Inf or NaN (0 * Inf)
    same_q8_0(one_subnormal);
}

TEST_CASE("q8_0 kernel rounds exact halves away from zero as roundf does") {
    // amax 127 makes d 1 and id 1: each value is its own quant.
    std::vector<float> x(64);
    for (int j = 0; j < 64; ++j) x[j] = (j % 2 ? -1.0f : 1.0f) * (static_cast<float>(j % 31) * 4.0f + 0.5f);
    x[0] = 127.0f;
    x[32] = -127.0f;
    x[5] = 0.49999997f;
    x[6] = -0.49999997f;
    x[7] = 126.5f;
    x[40] = std::nextafter(2.5f, 3.0f);
    x[41] = std::nextafter(-2.5f, -3.0f);
    same_q8_0(x);
    // Every half from 0.5 to 126.5 and its two neighbours, both signs, block by block (127 first: d = id = 1).
    std::vector<float> halves;
    for (int k = 0; k < 127; ++k) {
        const float h = static_cast<float>(k) + 0.5f;
        for (float v : {h, std::nextafter(h, 0.0f), std::nextafter(h, 200.0f)}) {
            if (halves.size() % 32 == 0) halves.push_back(127.0f);
            halves.push_back(v);
            if (halves.size() % 32 == 0) halves.push_back(127.0f);
            halves.push_back(-v);
        }
    }
    while (halves.size() % 32 != 0) halves.push_back(0.0f);
    same_q8_0(halves);
}

TEST_CASE("q8_0 kernel follows the reference through NaN and Inf anywhere in a block") {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
    for (float special : {nan, -nan, inf, -inf, from_bits(0x7f800001u)}) {
        for (int at = 0; at < 32; ++at) {
            std::vector<float> x(96);
            for (float& v : x) v = uniform(rng);
            x[32 + at] = special;
            if (at % 4 == 0) x[at] = special;  // the first block too
            same_q8_0(x);
        }
    }
    std::vector<float> all_nan(32, nan);
    same_q8_0(all_nan);
    std::vector<float> all_inf(32, -inf);
    same_q8_0(all_inf);
}

TEST_CASE("f16 and bf16 kernels give the reference's bits for every tail and every class of float") {
    std::vector<float> specials = {0.0f,
                                   -0.0f,
                                   65504.0f,
                                   65519.996f,
                                   65520.0f,
                                   -65520.0f,
                                   1e10f,
                                   from_bits(0x33000000u),  // 2^-25: half the smallest f16 subnormal (a tie)
                                   from_bits(0x33000001u),
                                   from_bits(0x387fe000u),  // the f16 subnormal/normal edge
                                   from_bits(0x38800000u),
                                   from_bits(0x00000001u),
                                   from_bits(0x807fffffu),
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   from_bits(0x7fc00000u),
                                   from_bits(0xffc12345u),
                                   from_bits(0x7f800001u),  // signalling
                                   from_bits(0xff80ffffu),
                                   from_bits(0x3f808000u),  // bf16 ties, to even both ways
                                   from_bits(0x3f818000u),
                                   from_bits(0x7f7fffffu),
                                   1.0009766f,
                                   1.0004883f};
    same_floats(specials);
    std::vector<float> sweep;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 2654435) sweep.push_back(from_bits(static_cast<uint32_t>(u)));
    same_floats(sweep);
    // The low bits right at each rounding boundary, every exponent.
    std::vector<float> edges;
    for (uint32_t e = 0; e < 256; ++e) {
        for (uint32_t low : {0x0fffu, 0x1000u, 0x1001u, 0x2fffu, 0x3000u, 0x7fffu, 0x8000u, 0x8001u, 0x18000u}) {
            edges.push_back(from_bits((e << 23) | low));
            edges.push_back(from_bits(0x80000000u | (e << 23) | low));
        }
    }
    same_floats(edges);
}

TEST_CASE("validate_row_data finds a non-finite F32, F16 or BF16 value at any position") {
    for (int n : {1, 7, 255, 256, 257, 600}) {
        std::vector<float> f32(n, 1.5f);
        std::vector<uint8_t> f16(2 * n), bf16(2 * n);
        scalar_row_kernels().f16(f32.data(), f16.data(), n);
        scalar_row_kernels().bf16(f32.data(), bf16.data(), n);
        const uint8_t* f32_bytes = reinterpret_cast<const uint8_t*>(f32.data());
        CHECK(ws::validate_row_data(ws::DType::F32, f32_bytes, 4 * n));
        CHECK(ws::validate_row_data(ws::DType::F16, f16.data(), 2 * n));
        CHECK(ws::validate_row_data(ws::DType::BF16, bf16.data(), 2 * n));
        for (int at : {0, n / 2, n - 1}) {
            std::vector<float> bad = f32;
            bad[at] = std::numeric_limits<float>::infinity();
            CHECK_FALSE(ws::validate_row_data(ws::DType::F32, reinterpret_cast<const uint8_t*>(bad.data()), 4 * n));
            std::vector<uint8_t> h = f16;
            h[2 * at + 1] = 0x7e;  // a NaN
            CHECK_FALSE(ws::validate_row_data(ws::DType::F16, h.data(), 2 * n));
            std::vector<uint8_t> b = bf16;
            b[2 * at + 1] = 0xff;
            b[2 * at] = 0x80;  // -Inf
            CHECK_FALSE(ws::validate_row_data(ws::DType::BF16, b.data(), 2 * n));
        }
    }
}
