// SPDX-License-Identifier: MIT
// Checks that two Stats are the same bits, field by field (the doubles compared as bit patterns: the statistics
// promise bit-identical numbers however the values arrive).
#pragma once

#include <catch2/catch.hpp>
#include <cstring>

#include "weightstream/stats.h"

namespace ws_test {

inline bool same_bits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

inline void check_same_stats(const ws::Stats& a, const ws::Stats& b) {
    CHECK(a.count == b.count);
    CHECK(a.finite == b.finite);
    CHECK(same_bits(a.min, b.min));
    CHECK(same_bits(a.max, b.max));
    CHECK(same_bits(a.mean, b.mean));
    CHECK(same_bits(a.std, b.std));
    CHECK(a.nan == b.nan);
    CHECK(a.pos_inf == b.pos_inf);
    CHECK(a.neg_inf == b.neg_inf);
    CHECK(a.zeros == b.zeros);
    CHECK(a.histogram == b.histogram);
    CHECK(a.edges == b.edges);
}

}  // namespace ws_test
