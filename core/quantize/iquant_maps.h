// SPDX-License-Identifier: MIT
// Search structures of ggml's i-quant quantizers (ggml-quants.c iq2xs_init_impl / iq3xs_init_impl), derived
// at first use from the decode grids of iquant_tables.h instead of being stored as literal tables.
//
// A grid entry is a point of `dims` elements, each a level 0..n_levels-1 (the decoded value is a fixed
// function of the level: IQ2 grids 8/25/43, IQ1S -1/0/1, IQ3 2*level+1 up to a scale). A quantizer rounds a
// group of values to levels and looks the level vector up: either it is an entry of the grid, or it has a
// list of neighbours to choose from, which are, as in ggml, all entries at the `nwant` smallest distinct
// squared distances from it, ordered by (distance, entry index).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ws {

enum class IqGridId : uint8_t {
    kIq2xxs,  // iq2xxs_grid: 256 entries of 8 elements, 3 levels, neighbours at 2 distances
    kIq2xs,   // iq2xs_grid:  512 x 8, 3 levels, 2 distances
    kIq2s,    // iq2s_grid:   1024 x 8, 3 levels, 1 distance
    kIq1s,    // iq1s_grid:   2048 x 8, 3 levels, 3 distances (IQ1_S and IQ1_M)
    kIq3xxs,  // iq3xxs_grid: 256 x 4, 8 levels, 2 distances
    kIq3s,    // iq3s_grid:   512 x 4, 8 levels, 3 distances
};

struct IqGridMap {
    int dims = 0;       // elements per entry: 8 or 4
    int n_levels = 0;   // levels per element: 3 or 8
    int grid_size = 0;  // entries
    // levels[j * dims + i]: level of element i of entry j.
    std::vector<uint8_t> levels;
    // levels as floats, same layout: the neighbour searches gather them (GroupSearches::grid_neighbour).
    std::vector<float> level_floats;
    // Indexed by the key of a level vector (key(l) = sum of l[i] * n_levels^i, n_levels^dims keys): the entry
    // index when the vector is an entry, else -(1 + p) where neighbours[p] starts its list.
    std::vector<int32_t> map;
    // Lists one after another: a count n >= 1, then n entry indices.
    std::vector<uint16_t> neighbours;

    // Heap bytes held by the four arrays.
    size_t heap_bytes() const {
        return levels.capacity() + level_floats.capacity() * sizeof(float) + map.capacity() * sizeof(int32_t) +
               neighbours.capacity() * sizeof(uint16_t);
    }
};

// The structures of grid g, built on the first call (thread-safe: a function-local static per grid) and kept
// for the life of the program. IQ1S's, the largest, holds 0.77 MB and takes ~30 ms to build; all six 1.79 MB.
const IqGridMap& iq_grid_map(IqGridId g);

}  // namespace ws
