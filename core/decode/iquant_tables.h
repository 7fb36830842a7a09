// SPDX-License-Identifier: MIT
// Lookup tables of ggml's i-quant formats. They are part of the formats themselves: a stored grid index
// means "the 8 (or 4) values of entry i of this table", so decoders must use ggml's exact tables.
//
// Grids hold one lattice point per entry, one value per byte, element j in byte j (bits 8j..8j+7):
//   iq2xxs_grid/iq2xs_grid/iq2s_grid: 8 values from {8, 25, 43}      (IQ2_XXS, IQ2_XS, IQ2_S)
//   iq3xxs_grid: 4 values from {4, 12, 20, 28, 36, 44, 52, 62}        (IQ3_XXS)
//   iq3s_grid:   4 values from {1, 3, ..., 15}                        (IQ3_S)
//   iq1s_grid:   8 int8 values from {-1, 0, 1}                        (IQ1_S, IQ1_M)
// The grids are data (iquant_tables.cpp, copied from ggml-common.h); the sign tables are derived here.
#pragma once

#include <array>
#include <cstdint>

namespace ws {

constexpr int NGRID_IQ1S = 2048;
// IQ1_S / IQ1_M values are d * (grid + delta) with delta = +-IQ1S_DELTA (ggml's IQ1_M decoder uses
// IQ1S_DELTA too; IQ1M_DELTA has the same value and is what its quantizer searches with).
constexpr float IQ1S_DELTA = 0.125f;
constexpr float IQ1M_DELTA = 0.125f;

extern const uint64_t iq2xxs_grid[256];
extern const uint64_t iq2xs_grid[512];
extern const uint64_t iq2s_grid[1024];
extern const uint32_t iq3xxs_grid[256];
extern const uint32_t iq3s_grid[512];
extern const uint64_t iq1s_grid[NGRID_IQ1S];

// The 16 non-linear levels of IQ4_NL and IQ4_XS (ggml-common.h kvalues_iq4nl).
constexpr int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

namespace detail {

// Sign byte for a 7-bit stored sign code: the code gives the signs of elements 0..6, and the sign of
// element 7 is implied because quantizers keep an even number of negative values per group of 8.
constexpr std::array<uint8_t, 128> make_ksigns_iq2xs() {
    std::array<uint8_t, 128> t{};
    for (unsigned i = 0; i < 128; ++i) {
        unsigned parity = 0;
        for (unsigned b = 0; b < 7; ++b) parity ^= (i >> b) & 1u;
        t[i] = static_cast<uint8_t>(i | (parity << 7));
    }
    return t;
}

constexpr std::array<uint8_t, 8> make_kmask_iq2xs() {
    std::array<uint8_t, 8> t{};
    for (unsigned i = 0; i < 8; ++i) t[i] = static_cast<uint8_t>(1u << i);
    return t;
}

}  // namespace detail

// ksigns_iq2xs[code]: bit j set = element j is negative. kmask_iq2xs[j] selects element j's bit.
inline constexpr std::array<uint8_t, 128> ksigns_iq2xs = detail::make_ksigns_iq2xs();
inline constexpr std::array<uint8_t, 8> kmask_iq2xs = detail::make_kmask_iq2xs();

}  // namespace ws
