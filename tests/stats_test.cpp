// SPDX-License-Identifier: MIT
#include "weightstream/stats.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "support/same_stats.h"

using ws::GridHistogram;
using ws::Stats;
using ws::StatsAccumulator;

namespace {

Stats whole(const std::vector<float>& x, uint32_t bins = 32) {
    StatsAccumulator acc;
    acc.add(x.data(), x.size());
    return acc.finish(bins);
}

// Bin k holds the finite values in [edges[k], edges[k + 1]), the last one also max: counted directly.
std::vector<uint64_t> counted(const std::vector<float>& x, const std::vector<double>& edges) {
    const size_t bins = edges.size() - 1;
    std::vector<uint64_t> counts(bins, 0);
    for (float v : x) {
        if (!std::isfinite(v)) continue;
        size_t k = bins - 1;
        while (k > 0 && v < edges[k]) --k;
        counts[k]++;
    }
    return counts;
}

std::vector<float> mixed(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> x(n);
    for (float& v : x) v = normal(rng);
    x[7] = std::numeric_limits<float>::quiet_NaN();
    x[n / 3] = std::numeric_limits<float>::infinity();
    x[n / 2] = -std::numeric_limits<float>::infinity();
    x[n / 5] = 3.0f;  // an outlier
    x[n / 7] = 0.0f;
    x[n / 9] = -0.0f;
    return x;
}

}  // namespace

TEST_CASE("stats are the same bits whatever the chunking") {
    const std::vector<float> x = mixed(3 * ws::kStatsRun + 1234, 1);
    const Stats ref = whole(x);
    std::mt19937 rng(2);
    for (int trial = 0; trial < 8; ++trial) {
        StatsAccumulator acc;
        size_t at = 0;
        while (at < x.size()) {
            const size_t n = std::min<size_t>(x.size() - at, 1 + rng() % (trial < 4 ? 97 : 200000));
            acc.add(x.data() + at, n);
            at += n;
        }
        ws_test::check_same_stats(acc.finish(), ref);
    }
    CHECK(ref.count == x.size());
    CHECK(ref.nan == 1);
    CHECK(ref.pos_inf == 1);
    CHECK(ref.neg_inf == 1);
    CHECK(ref.zeros >= 2);
    CHECK(ref.max == 3.0);
    CHECK(ref.histogram == counted(x, ref.edges));
}

TEST_CASE("runs summarised apart and histograms merged in any grouping give the same stats") {
    const std::vector<float> x = mixed(5 * ws::kStatsRun, 3);
    const Stats ref = whole(x);
    std::vector<ws::RunSummary> runs;
    GridHistogram forward, backward;
    std::vector<GridHistogram> parts(5);
    for (size_t r = 0; r < 5; ++r) {
        runs.push_back(ws::summarise_run(x.data() + r * ws::kStatsRun, ws::kStatsRun));
        parts[r].add(x.data() + r * ws::kStatsRun, ws::kStatsRun);
    }
    for (size_t r = 0; r < 5; ++r) forward.merge(parts[r]);
    for (size_t r = 5; r-- > 0;) backward.merge(parts[r]);
    for (const GridHistogram* h : {&forward, &backward}) {
        StatsAccumulator acc;
        acc.add_runs(runs.data(), runs.size());
        acc.add_histogram(*h);
        ws_test::check_same_stats(acc.finish(), ref);
    }
}

TEST_CASE("the histogram's grid does not depend on the order of the values") {
    // Growing ranges in both directions, tiny and huge magnitudes, subnormals.
    std::vector<float> x;
    for (int i = 0; i < 20000; ++i) x.push_back(1.0f + static_cast<float>(i) * 1e-7f);
    x.push_back(-1e-40f);
    x.push_back(5e30f);
    x.push_back(std::numeric_limits<float>::denorm_min());
    std::vector<float> reversed(x.rbegin(), x.rend());
    std::vector<float> shuffled = x;
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(4));
    const Stats a = whole(x, 64), b = whole(reversed, 64), c = whole(shuffled, 64);
    CHECK(a.histogram == b.histogram);
    CHECK(a.histogram == c.histogram);
    CHECK(a.edges == b.edges);
    CHECK(a.edges == c.edges);
    CHECK(a.histogram == counted(x, a.edges));
}

TEST_CASE("histogram edges are the equal-width edges rounded down to the grid") {
    for (uint32_t bins : {1u, 7u, 32u, 4096u}) {
        INFO(bins << " bins");
        // A narrow range far from zero (norm weights): equal-width bins must not collapse.
        std::vector<float> x;
        std::mt19937 rng(bins);
        std::uniform_real_distribution<float> u(0.98f, 1.02f);
        for (int i = 0; i < 100000; ++i) x.push_back(u(rng));
        const Stats s = whole(x, bins);
        REQUIRE(s.edges.size() == bins + 1);
        CHECK(s.edges.front() == s.min);
        CHECK(s.edges.back() == s.max);
        const double width = s.max - s.min;
        for (uint32_t k = 1; k < bins; ++k) {
            const double ideal = s.min + width / bins * k;
            CHECK(s.edges[k] <= ideal);
            CHECK(s.edges[k] >= ideal - 2 * width / GridHistogram::kFineBins);
        }
        CHECK(s.histogram == counted(x, s.edges));
        if (bins == 32) {
            for (uint64_t c : s.histogram) CHECK(c > 2500);  // uniform: about 3125 each
        }
    }
}

TEST_CASE("stats of constant, empty, non-finite and extreme inputs") {
    const std::vector<float> constant(1000, 0.5f);
    const Stats c = whole(constant);
    CHECK(c.min == 0.5);
    CHECK(c.max == 0.5);
    CHECK(c.std == 0.0);
    CHECK(c.histogram[0] == 1000);
    CHECK(c.edges.front() == 0.5);
    CHECK(c.edges.back() == 0.5);

    const Stats none = whole({});
    CHECK(none.count == 0);
    CHECK(none.finite == 0);
    CHECK(std::isnan(none.mean));
    CHECK(none.histogram == std::vector<uint64_t>(32, 0));

    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const Stats nonfinite = whole({nan, inf, -inf, nan});
    CHECK(nonfinite.finite == 0);
    CHECK(nonfinite.nan == 2);
    CHECK(std::isnan(nonfinite.min));

    const float big = std::numeric_limits<float>::max();
    const std::vector<float> extreme = {-big, big, 0.0f, std::numeric_limits<float>::denorm_min(), -1.0f, 1.0f};
    const Stats e = whole(extreme);
    CHECK(e.min == -big);
    CHECK(e.max == big);
    CHECK(e.histogram == counted(extreme, e.edges));
    CHECK(e.histogram[0] == 1);
    CHECK(e.histogram[31] == 1);
    CHECK(e.histogram[15] + e.histogram[16] == 4);
}
