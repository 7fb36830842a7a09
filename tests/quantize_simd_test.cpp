// SPDX-License-Identifier: MIT
// The quantizers' fast paths against their scalar references, natively (AVX2) and, built with em++ -msimd128 and
// run under node, in wasm (SIMD128): the same bytes and the same float bits for groups that would show a lane
// or tail mistake — every lane a different kind of group (random, all zero, constant, one sign only, NaN, Inf,
// subnormal, huge, tiny next to huge), at every lane position.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "decode/dequant_internal.h"
#include "decode/iquant_tables.h"
#include "quantize/group_search.h"
#include "quantize/iquant_maps.h"
#include "quantize/quantize_internal.h"

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
        case 11:
            x[rng() % static_cast<unsigned>(n)] = 0.5f;  // one value dominates: sums without it change sign
            break;
        case 12:
            for (int i = 0; i < n; ++i) x[i] = (i % 2 ? -1.f : 1.f) * (0.01f + std::fabs(x[i]));  // alternating signs
            break;
        default:
            x[rng() % static_cast<unsigned>(n)] = -0.f;
    }
}
constexpr int kKinds = 14;

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

// IQ4_NL/IQ4_XS's weights: x^2 (no imatrix), imatrix * sqrt(sigma2 + x^2) over a super-block, or plain random.
// IQ4 blocks: the kinds of fill_group, every fifth block scaled to just above GROUP_MAX_EPS (its x^2 weights and
// their products with the quants are subnormal).
void fill_iq4_blocks(int groups, int shift, std::vector<float>& x, std::mt19937_64& rng) {
    for (int g = 0; g < groups; ++g) {
        fill_group((g + shift) % kKinds, &x[g * 32], 32, rng);
        if (g % 5 == 4) {
            for (int i = 0; i < 32; ++i) x[g * 32 + i] *= 1e-12f;
        }
    }
}

void iq4_weights(int style, const std::vector<float>& x, std::vector<float>& w, std::mt19937_64& rng) {
    std::uniform_real_distribution<float> uniform(0.f, 4.f);
    float sigma2 = 0;
    for (float v : x) sigma2 += v * v;
    sigma2 *= 2.f / static_cast<float>(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        w[i] = style == 0 ? x[i] * x[i] : style == 1 ? uniform(rng) * std::sqrt(sigma2 + x[i] * x[i]) : uniform(rng);
    }
}

// Every SIMD table this machine runs, not only the one group_searches() picks (AVX2 and AVX-512 both, where the
// CPU has both).
std::vector<const ws::detail::GroupSearches*> fast_tables() {
    std::vector<const ws::detail::GroupSearches*> out;
#if defined(__wasm_simd128__)
    out.push_back(&ws::detail::kSimd128GroupSearches);
#elif defined(__x86_64__) || defined(__i386__)
    if (ws::detail::x86_features().avx2_f16c) out.push_back(&ws::detail::kAvx2GroupSearches);
    if (ws::detail::x86_features().avx512dq_vl) out.push_back(&ws::detail::kAvx512GroupSearches);
#endif
    return out;
}

}  // namespace

TEST_CASE("group searches: make_qkx2_quants lanes give the scalar bytes for every kind of group in every lane") {
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    const Qkx2Case cases[] = {
        {8, 32, 15, -1.f, 0.1f, 20, false, true},     // Q4_K
        {8, 32, 31, -0.5f, 0.1f, 15, false, true},    // Q5_K
        {8, 32, 15, -0.9f, 0.05f, 36, false, false},  // Q4_K/Q5_K with an imatrix (make_qkx3_quants)
        {16, 16, 3, -0.5f, 0.1f, 15, true, true},     // Q2_K
        {16, 16, 3, -0.9f, 0.05f, 36, false, false},  // Q2_K with an imatrix
        {24, 32, 15, -1.f, 0.1f, 20, false, true},    // tails: a last set of lanes half padded ...
        {3, 16, 3, -0.5f, 0.1f, 15, true, true},      // ... and fewer groups than lanes
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
            fast.qkx2(c.groups, c.n, c.nmax, x.data(), w.data(), L_fast.data(), s_fast.data(), m_fast.data(), c.rmin,
                      c.rdelta, c.nstep, c.use_mad);
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
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    struct {
        int groups, n, nmax;
        bool weighted;
    } const cases[] = {{16, 16, 32, false}, {16, 16, 32, true}, {16, 16, 4, true},
                       {8, 32, 4, false},   {24, 16, 32, true}, {5, 16, 32, false}};
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
            fast.qx(c.groups, c.n, c.nmax, x.data(), L_fast.data(), qw, s_fast.data());
            ws::detail::scalar_group_searches().qx(c.groups, c.n, c.nmax, x.data(), L_ref.data(), qw, s_ref.data());
            INFO("n " << c.n << " nmax " << c.nmax << " weighted " << c.weighted << " shift " << shift);
            CHECK(same_bits(L_fast, L_ref));
            CHECK(same_bits(s_fast, s_ref));
        }
    }
}

TEST_CASE("group searches: make_q3_quants lanes give the scalar bytes for every kind of group in every lane") {
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    std::mt19937_64 rng(11);
    for (const int groups : {16, 24, 5}) {
        for (int shift = 0; shift < kKinds; ++shift) {
            const size_t total = static_cast<size_t>(groups) * 16;
            std::vector<float> x(total);
            for (int g = 0; g < groups; ++g) fill_group((g + shift) % kKinds, &x[g * 16], 16, rng);
            std::vector<int8_t> L_fast(total, 0x5d), L_ref(total, 0x3b);
            std::vector<float> s_fast(groups), s_ref(groups);
            fast.q3(groups, 16, 4, x.data(), L_fast.data(), s_fast.data());
            ws::detail::scalar_group_searches().q3(groups, 16, 4, x.data(), L_ref.data(), s_ref.data());
            INFO("groups " << groups << " shift " << shift);
            CHECK(same_bits(L_fast, L_ref));
            CHECK(same_bits(s_fast, s_ref));
        }
    }
}

TEST_CASE("group searches: the IQ4 scale search lanes give the scalar scales for every kind of block, any count") {
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    std::mt19937_64 rng(11);
    // 8 and 16: whole lane sets; the others end in a padded partial set (IQ4_NL's rows of any block count).
    for (int groups : {8, 16, 1, 3, 13, 33}) {
        for (int style = 0; style < 3; ++style) {
            for (int shift = 0; shift < kKinds; ++shift) {
                const size_t total = static_cast<size_t>(groups) * 32;
                std::vector<float> x(total), w(total);
                fill_iq4_blocks(groups, shift, x, rng);
                iq4_weights(style, x, w, rng);
                if (shift == 1) w[5] = kNaN;  // a NaN weight too
                std::vector<float> s_fast(groups + 1, 7.f), s_ref(groups + 1, 7.f);
                fast.iq4_scales(groups, x.data(), w.data(), s_fast.data());
                ws::detail::scalar_group_searches().iq4_scales(groups, x.data(), w.data(), s_ref.data());
                INFO("groups " << groups << " weights " << style << " shift " << shift);
                CHECK(same_bits(s_fast, s_ref));  // the one past the end untouched too
            }
        }
    }
}

TEST_CASE("group searches: the IQ4 index lanes give best_index_int8's indices for every kind of block and scale") {
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    std::mt19937_64 rng(13);
    const float odd_ids[] = {0.f, -0.f, kInf, -kInf, kNaN, 1e-40f, 3e38f, 1.f, -1.f};
    for (int groups : {8, 1, 5, 24}) {
        for (int shift = 0; shift < kKinds; ++shift) {
            const size_t total = static_cast<size_t>(groups) * 32;
            std::vector<float> x(total), w(total), scales(groups), ids(groups);
            fill_iq4_blocks(groups, shift, x, rng);
            iq4_weights(0, x, w, rng);
            ws::detail::scalar_group_searches().iq4_scales(groups, x.data(), w.data(), scales.data());
            for (int g = 0; g < groups; ++g) {
                // the quantizers' ids (1 / scale) in most blocks, every odd one somewhere
                ids[g] = (g + shift) % 3 == 0 ? odd_ids[(g + shift) % 9] : scales[g] != 0.f ? 1 / scales[g] : 0.f;
            }
            std::vector<uint8_t> L_fast(total + 1, 0xcd), L_ref(total + 1, 0xcd);
            fast.iq4_indices(groups, x.data(), ids.data(), L_fast.data());
            ws::detail::scalar_group_searches().iq4_indices(groups, x.data(), ids.data(), L_ref.data());
            INFO("groups " << groups << " shift " << shift);
            CHECK(same_bits(L_fast, L_ref));
        }
    }
}

TEST_CASE("group searches: the IQ4 index lanes agree with best_index_int8 on every float near each midpoint") {
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    // best_index_int8 rounds x - lo and hi - x; the lanes count midpoints (group_lanes.h): they differ, if
    // anywhere, next to a midpoint. Every float within 2^18 ulps of each one, the ends of the table, the
    // specials, and random bit patterns.
    std::vector<float> x;
    const int8_t* v = ws::kvalues_iq4nl;
    for (int k = 0; k < 16; ++k) {
        const float centres[] = {static_cast<float>(v[k]), k < 15 ? (v[k] + v[k + 1]) / 2.f : 113.f};
        for (float c : centres) {
            float up = c, down = c;
            for (int i = 0; i < (1 << 18); ++i) {
                x.push_back(up);
                x.push_back(down);
                up = std::nextafter(up, kInf);
                down = std::nextafter(down, -kInf);
            }
        }
    }
    for (float s : {kInf, -kInf, kNaN, -kNaN, 0.f, -0.f, 1e-45f, -1e-45f, 3e38f, -3e38f}) x.push_back(s);
    std::mt19937 rng(17);
    for (int i = 0; i < (1 << 20); ++i) {
        const uint32_t bits = static_cast<uint32_t>(rng());
        float f;
        std::memcpy(&f, &bits, sizeof f);
        x.push_back(f);
    }
    x.resize((x.size() + 31) / 32 * 32, 0.f);
    const int groups = static_cast<int>(x.size() / 32);
    const std::vector<float> ids(groups, 1.f);
    std::vector<uint8_t> L_fast(x.size()), L_ref(x.size());
    fast.iq4_indices(groups, x.data(), ids.data(), L_fast.data());
    for (size_t i = 0; i < x.size(); ++i) L_ref[i] = static_cast<uint8_t>(ws::detail::best_index_int8(16, v, x[i]));
    size_t first_mismatch = x.size();
    for (size_t i = 0; i < x.size() && first_mismatch == x.size(); ++i) {
        if (L_fast[i] != L_ref[i]) first_mismatch = i;
    }
    INFO("first mismatch at x = " << (first_mismatch < x.size() ? x[first_mismatch] : 0.f));
    CHECK(first_mismatch == x.size());
}

TEST_CASE("group searches: the SIMD searches are the ones chosen where the CPU has them") {
#if defined(__wasm_simd128__)
    CHECK(&ws::detail::group_searches() == &ws::detail::kSimd128GroupSearches);
#elif defined(__x86_64__) || defined(__i386__)
    if (ws::detail::x86_features().avx512dq_vl) {
        CHECK(&ws::detail::group_searches() == &ws::detail::kAvx512GroupSearches);
    } else if (ws::detail::x86_features().avx2_f16c) {
        CHECK(&ws::detail::group_searches() == &ws::detail::kAvx2GroupSearches);
    }
#endif
}

TEST_CASE("group searches: the lanes give the scalar bytes on 32768 groups of four weight distributions") {
    // Rounding-order mistakes (a reassociated product, a sum taken after instead of before) show on a few groups
    // in ten thousand: these many catch them where the kinds above do not.
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    const ws::detail::GroupSearches& ref = ws::detail::scalar_group_searches();
    std::mt19937_64 rng(99);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    std::exponential_distribution<float> expo(1.f);
    constexpr int kGroups = 32768;
    for (int mode = 0; mode < 4; ++mode) {
        std::vector<float> x(kGroups * 32), w(kGroups * 32);
        for (float& v : x) {
            v = mode == 0   ? normal(rng)
                : mode == 1 ? uniform(rng)
                : mode == 2 ? (uniform(rng) > 0 ? expo(rng) : -0.1f * expo(rng))
                            : normal(rng) * normal(rng) * normal(rng);
        }
        for (size_t i = 0; i < x.size(); ++i) w[i] = std::fabs(x[i]) + 0.25f * std::fabs(uniform(rng));
        INFO("distribution " << mode);
        std::vector<uint8_t> U1(x.size()), U2(x.size());
        std::vector<int8_t> S1(x.size()), S2(x.size());
        std::vector<float> a1(kGroups * 2), a2(kGroups * 2), b1(kGroups * 2), b2(kGroups * 2);
        fast.qkx2(kGroups, 32, 15, x.data(), w.data(), U1.data(), a1.data(), b1.data(), -1.f, 0.1f, 20, false);
        ref.qkx2(kGroups, 32, 15, x.data(), w.data(), U2.data(), a2.data(), b2.data(), -1.f, 0.1f, 20, false);
        CHECK((same_bits(U1, U2) && same_bits(a1, a2) && same_bits(b1, b2)));
        fast.qkx2(kGroups * 2, 16, 3, x.data(), w.data(), U1.data(), a1.data(), b1.data(), -0.5f, 0.1f, 15, true);
        ref.qkx2(kGroups * 2, 16, 3, x.data(), w.data(), U2.data(), a2.data(), b2.data(), -0.5f, 0.1f, 15, true);
        CHECK((same_bits(U1, U2) && same_bits(a1, a2) && same_bits(b1, b2)));
        fast.qx(kGroups * 2, 16, 32, x.data(), S1.data(), nullptr, a1.data());
        ref.qx(kGroups * 2, 16, 32, x.data(), S2.data(), nullptr, a2.data());
        CHECK((same_bits(S1, S2) && same_bits(a1, a2)));
        fast.q3(kGroups * 2, 16, 4, x.data(), S1.data(), a1.data());
        ref.q3(kGroups * 2, 16, 4, x.data(), S2.data(), a2.data());
        CHECK((same_bits(S1, S2) && same_bits(a1, a2)));
        fast.iq4_scales(kGroups, x.data(), w.data(), a1.data());
        ref.iq4_scales(kGroups, x.data(), w.data(), a2.data());
        CHECK(same_bits(a1, a2));
    }
}

TEST_CASE("group searches: the grid neighbour lanes pick the scalar search's neighbour on every grid and list") {
    // Every neighbour list of every grid (lengths 1 to 292: all remainders modulo the lanes), and made-up lists
    // of every length 1..40 with repeated entries (exact ties, which the first in list order wins), at scales
    // and values of every kind: random, zero and negative weights, NaN and Inf values, weights and scales,
    // overflowing distances (never taken: list[1]).
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    const ws::detail::GroupSearches& ref = ws::detail::scalar_group_searches();
    const float iq1s_plus[3] = {-1 + ws::IQ1S_DELTA, ws::IQ1S_DELTA, 1 + ws::IQ1S_DELTA};
    const float iq1s_minus[3] = {-1 - ws::IQ1S_DELTA, -ws::IQ1S_DELTA, 1 - ws::IQ1S_DELTA};
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::uniform_real_distribution<float> uniform(0.f, 1.f);
    const ws::IqGridId grids[] = {ws::IqGridId::kIq2xxs, ws::IqGridId::kIq2xs,  ws::IqGridId::kIq2s,
                                  ws::IqGridId::kIq1s,   ws::IqGridId::kIq3xxs, ws::IqGridId::kIq3s};
    for (const ws::IqGridId id : grids) {
        const ws::IqGridMap& g = ws::iq_grid_map(id);
        const bool iq1 = id == ws::IqGridId::kIq1s;
        INFO("grid " << static_cast<int>(id));
        std::vector<std::vector<uint16_t>> lists;
        for (const int32_t v : g.map) {
            if (v >= 0) continue;
            const uint16_t* list = g.neighbours.data() + (-v - 1);
            lists.emplace_back(list, list + list[0] + 1);
        }
        for (int len = 1; len <= 40; ++len) {
            for (int rep = 0; rep < 8; ++rep) {
                std::vector<uint16_t> list = {static_cast<uint16_t>(len)};
                const int distinct = 1 + static_cast<int>(rng() % static_cast<unsigned>(len));
                for (int j = 0; j < len; ++j)
                    list.push_back(static_cast<uint16_t>(rng() % (j < distinct ? g.grid_size : 4)));
                lists.push_back(list);
            }
        }
        int checked = 0, mismatches = 0;
        for (size_t c = 0; c < lists.size(); ++c) {
            const int kind = static_cast<int>(c % 12);
            float xval[8], weight[8];
            const float max_level = static_cast<float>(2 * g.n_levels - 1);
            float scale = 0.05f + uniform(rng);
            for (int i = 0; i < g.dims; ++i) {
                xval[i] = iq1 ? normal(rng) * scale : uniform(rng) * max_level * scale;
                weight[i] = uniform(rng);
            }
            switch (kind) {
                case 1:
                    weight[rng() % static_cast<unsigned>(g.dims)] = 0.f;
                    break;
                case 2:
                    for (int i = 0; i < g.dims; ++i) weight[i] = 0.f;
                    break;  // every distance 0: list[1]
                case 3:
                    xval[rng() % static_cast<unsigned>(g.dims)] = kNaN;
                    break;  // every distance NaN
                case 4:
                    xval[g.dims - 1] = kInf;
                    break;
                case 5:
                    weight[0] = kNaN;
                    break;
                case 6:
                    scale = kNaN;
                    break;
                case 7:
                    for (int i = 0; i < g.dims; ++i) xval[i] = 3e38f;
                    break;  // distances overflow to Inf
                case 8:
                    weight[rng() % static_cast<unsigned>(g.dims)] = -1.f;
                    break;  // negative distances
                case 9:
                    scale = 0.f;
                    break;  // ties between neighbours
                case 10:
                    for (int i = 0; i < g.dims; ++i) xval[i] = std::round(xval[i] / scale) * scale;
                    break;
                case 11:
                    for (int i = 0; i < g.dims; ++i) xval[i] *= 1e-20f;
                    break;  // subnormal terms
                default:
                    break;
            }
            for (const float* xg : {static_cast<const float*>(nullptr), iq1s_plus, iq1s_minus}) {
                if ((xg != nullptr) != iq1) continue;
                const int a =
                    fast.grid_neighbour(g.dims, g.level_floats.data(), lists[c].data(), xval, weight, scale, xg);
                const int b =
                    ref.grid_neighbour(g.dims, g.level_floats.data(), lists[c].data(), xval, weight, scale, xg);
                ++checked;
                if (a != b) {
                    ++mismatches;
                    UNSCOPED_INFO("list " << c << " kind " << kind << ": lanes " << a << ", scalar " << b);
                }
            }
        }
        CHECK(checked > 1000);
        CHECK(mismatches == 0);
    }
}

TEST_CASE("group searches: the IQ1_M pair-sum lanes give the scalar sums for every kind of sub-block and order") {
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    const ws::detail::GroupSearches& ref = ws::detail::scalar_group_searches();
    const float xp[3] = {-1 + ws::IQ1S_DELTA, ws::IQ1S_DELTA, 1 + ws::IQ1S_DELTA};
    const float xm[3] = {-1 - ws::IQ1S_DELTA, -ws::IQ1S_DELTA, 1 - ws::IQ1S_DELTA};
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> uniform(0.f, 4.f);
    constexpr int kStride = ws::detail::kIq1mPairStride;
    for (int c = 0; c < 3 * kKinds; ++c) {
        float xb[16], weight[16];
        fill_group(c % kKinds, xb, 16, rng);
        for (int i = 0; i < 16; ++i) weight[i] = c < kKinds ? xb[i] * xb[i] : uniform(rng);
        if (c >= 2 * kKinds) weight[rng() % 16] = kNaN;
        int order[16];
        for (int j = 0; j < 16; ++j) order[j] = j;
        std::shuffle(order, order + 16, rng);  // any permutation: the lanes must follow it, not the values
        std::vector<float> qx1(4 * kStride), q21(4 * kStride), qx2(4 * kStride), q22(4 * kStride);
        fast.iq1m_sums(xb, weight, order, xp, xm, qx1.data(), q21.data());
        ref.iq1m_sums(xb, weight, order, xp, xm, qx2.data(), q22.data());
        bool same = true;
        for (int k = 0; k < 4; ++k) {
            same =
                same && std::memcmp(&qx1[k * kStride], &qx2[k * kStride], sizeof(float) * ws::detail::kIq1mPairs) == 0;
            same =
                same && std::memcmp(&q21[k * kStride], &q22[k * kStride], sizeof(float) * ws::detail::kIq1mPairs) == 0;
        }
        INFO("sub-block " << c);
        CHECK(same);
    }
}

TEST_CASE("group searches: the IQ1 pair-sum and best-candidate lanes give the scalar sums and choices") {
    // Prefix sums of sorted sub-blocks of every kind (NaN and Inf ones too), then the choice over the pairs'
    // sums, also over made-up sums where many candidates tie or pass the test one after another.
    const ws::detail::GroupSearches& fast = *GENERATE(from_range(fast_tables()));
    const ws::detail::GroupSearches& ref = ws::detail::scalar_group_searches();
    const float xp[3] = {-1 + ws::IQ1S_DELTA, ws::IQ1S_DELTA, 1 + ws::IQ1S_DELTA};
    const float xm[3] = {-1 - ws::IQ1S_DELTA, -ws::IQ1S_DELTA, 1 - ws::IQ1S_DELTA};
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<float> uniform(0.f, 4.f);
    constexpr int kStride = ws::detail::kIq1sPairStride;
    for (int c = 0; c < 4 * kKinds; ++c) {
        float xb[32];
        fill_group(c % kKinds, xb, 32, rng);
        std::sort(xb, xb + 32, [](float a, float b) { return a < b; });
        float sumx[ws::detail::kIq1sPrefixSize] = {}, sumw[ws::detail::kIq1sPrefixSize] = {};
        for (int j = 0; j < 32; ++j) {
            const float w = c < 2 * kKinds ? xb[j] * xb[j] : uniform(rng);
            sumx[j + 1] = sumx[j] + w * xb[j];
            sumw[j + 1] = sumw[j] + w;
        }
        std::vector<float> qx1(2 * kStride), q21(2 * kStride), qx2(2 * kStride), q22(2 * kStride);
        fast.iq1s_sums(sumx, sumw, xp, xm, qx1.data(), q21.data());
        ref.iq1s_sums(sumx, sumw, xp, xm, qx2.data(), q22.data());
        bool same = true;
        for (int k = 0; k < 2; ++k) {
            same =
                same && std::memcmp(&qx1[k * kStride], &qx2[k * kStride], sizeof(float) * ws::detail::kIq1sPairs) == 0;
            same =
                same && std::memcmp(&q21[k * kStride], &q22[k * kStride], sizeof(float) * ws::detail::kIq1sPairs) == 0;
        }
        INFO("sub-block " << c);
        CHECK(same);
        if (c % 3 == 1) {  // ties: repeated sums; a rising sequence: many choices in a row
            for (int p = 0; p < kStride; ++p) {
                qx2[p] = qx2[kStride + p] = c % 2 ? 1.f : static_cast<float>(p % 50);
                q22[p] = q22[kStride + p] = c % 2 ? 2.f : 1.f;
            }
        }
        for (const int pairs : {ws::detail::kIq1sPairs, 153, 1, 17, 100}) {
            for (const int nk : {1, 2}) {
                float best1 = -FLT_MAX, best2 = -FLT_MAX, scale1 = 0.5f, scale2 = 0.5f;
                const int a = fast.best_candidate(pairs, nk, kStride, qx2.data(), q22.data(), &best1, &scale1);
                const int b = ref.best_candidate(pairs, nk, kStride, qx2.data(), q22.data(), &best2, &scale2);
                CHECK(a == b);
                CHECK(std::memcmp(&best1, &best2, sizeof best1) == 0);
                CHECK(std::memcmp(&scale1, &scale2, sizeof scale1) == 0);
            }
        }
    }
}
