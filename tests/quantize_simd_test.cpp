// SPDX-License-Identifier: MIT
// The quantizers' fast paths against their scalar references, natively (AVX2) and, built with em++ -msimd128 and
// run under node, in wasm (SIMD128): the same bytes and the same float bits for groups that would show a lane
// or tail mistake — every lane a different kind of group (random, all zero, constant, one sign only, NaN, Inf,
// subnormal, huge, tiny next to huge), at every lane position.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "decode/dequant_internal.h"
#include "quantize/group_search.h"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Group kind k of n values (kinds cycle through the lanes, shifted per batch so each kind visits each lane).
void fill_group(int kind, float* x, int n, std::mt19937_64& rng) {
    std::normal_distribution<float> normal(0.f, 0.02f);
    for (int i = 0; i < n; ++i) x[i] = normal(rng);
    switch (kind) {
        case 0:
            break;  // random
        case 1:
            for (int i = 0; i < n; ++i) x[i] = 0.f;
            break;
        case 2:
            for (int i = 0; i < n; ++i) x[i] = 0.125f;  // max == min (after min = 0: not flat), all positive
            break;
        case 3:
            for (int i = 0; i < n; ++i) x[i] = -std::fabs(x[i]);  // one sign only
            break;
        case 4:
            x[n / 3] = kNaN;
            break;
        case 5:
            x[n - 1] = kInf;
            break;
        case 6:
            x[0] = -kInf;
            break;
        case 7:
            for (int i = 0; i < n; ++i) x[i] = x[i] * 1e-37f;  // subnormal products and quotients
            break;
        case 8:
            x[n / 2] = 3e38f;
            break;  // huge: nearest_int out of its exact range
        case 9:
            for (int i = 0; i < n; ++i) x[i] = -1e-16f;  // below GROUP_MAX_EPS
            break;
        case 10:
            for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 3) - 1.f;  // ties in the search
            break;
        default:
            x[rng() % static_cast<unsigned>(n)] = -0.f;
    }
}
constexpr int kKinds = 12;

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

struct Qkx2Case {
    int groups, n, nmax;
    float rmin, rdelta;
    int nstep;
    bool use_mad, weights_from_x;  // weights |x| (Q2_K) or av_x + |x| (Q4_K/Q5_K) style, else random imatrix-like
};

}  // namespace

TEST_CASE("group searches: make_qkx2_quants lanes give the scalar bytes for every kind of group in every lane") {
    const Qkx2Case cases[] = {
        {8, 32, 15, -1.f, 0.1f, 20, false, true},     // Q4_K
        {8, 32, 31, -0.5f, 0.1f, 15, false, true},    // Q5_K
        {8, 32, 15, -0.9f, 0.05f, 36, false, false},  // Q4_K/Q5_K with an imatrix (make_qkx3_quants)
        {16, 16, 3, -0.5f, 0.1f, 15, true, true},     // Q2_K
        {16, 16, 3, -0.9f, 0.05f, 36, false, false},  // Q2_K with an imatrix
    };
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<float> uniform(0.f, 4.f);
    for (const Qkx2Case& c : cases) {
        for (int shift = 0; shift < kKinds; ++shift) {
            const size_t total = static_cast<size_t>(c.groups) * c.n;
            std::vector<float> x(total), w(total);
            for (int g = 0; g < c.groups; ++g) fill_group((g + shift) % kKinds, &x[g * c.n], c.n, rng);
            for (size_t i = 0; i < total; ++i) w[i] = c.weights_from_x ? std::fabs(x[i]) + 0.01f : uniform(rng);
            if (shift == 1) w[3] = kNaN;  // a NaN weight too
            std::vector<uint8_t> L_fast(total, 0xcd), L_ref(total, 0xab);
            std::vector<float> s_fast(c.groups), s_ref(c.groups), m_fast(c.groups), m_ref(c.groups);
            ws::detail::group_searches().qkx2(c.groups, c.n, c.nmax, x.data(), w.data(), L_fast.data(), s_fast.data(),
                                              m_fast.data(), c.rmin, c.rdelta, c.nstep, c.use_mad);
            ws::detail::scalar_group_searches().qkx2(c.groups, c.n, c.nmax, x.data(), w.data(), L_ref.data(),
                                                     s_ref.data(), m_ref.data(), c.rmin, c.rdelta, c.nstep, c.use_mad);
            INFO("n " << c.n << " nmax " << c.nmax << " nstep " << c.nstep << " shift " << shift);
            CHECK(same_bits(L_fast, L_ref));
            CHECK(same_bits(s_fast, s_ref));
            CHECK(same_bits(m_fast, m_ref));
        }
    }
}

TEST_CASE("group searches: make_qx_quants lanes give the scalar bytes for every kind of group in every lane") {
    struct {
        int groups, n, nmax;
        bool weighted;
    } const cases[] = {{16, 16, 32, false}, {16, 16, 32, true}, {16, 16, 4, true}, {8, 32, 4, false}};
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> uniform(0.f, 4.f);
    for (const auto& c : cases) {
        for (int shift = 0; shift < kKinds; ++shift) {
            const size_t total = static_cast<size_t>(c.groups) * c.n;
            std::vector<float> x(total), w(total);
            for (int g = 0; g < c.groups; ++g) fill_group((g + shift) % kKinds, &x[g * c.n], c.n, rng);
            for (float& v : w) v = uniform(rng);
            const float* qw = c.weighted ? w.data() : nullptr;
            std::vector<int8_t> L_fast(total, 0x5d), L_ref(total, 0x3b);
            std::vector<float> s_fast(c.groups), s_ref(c.groups);
            ws::detail::group_searches().qx(c.groups, c.n, c.nmax, x.data(), L_fast.data(), qw, s_fast.data());
            ws::detail::scalar_group_searches().qx(c.groups, c.n, c.nmax, x.data(), L_ref.data(), qw, s_ref.data());
            INFO("n " << c.n << " nmax " << c.nmax << " weighted " << c.weighted << " shift " << shift);
            CHECK(same_bits(L_fast, L_ref));
            CHECK(same_bits(s_fast, s_ref));
        }
    }
}

TEST_CASE("group searches: the SIMD searches are the ones chosen where the CPU has them") {
#if defined(__wasm_simd128__)
    CHECK(&ws::detail::group_searches() == &ws::detail::kSimd128GroupSearches);
#elif defined(__x86_64__) || defined(__i386__)
    if (ws::detail::x86_features().avx2_f16c) CHECK(&ws::detail::group_searches() == &ws::detail::kAvx2GroupSearches);
#endif
}
