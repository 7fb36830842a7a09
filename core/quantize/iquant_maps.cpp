// SPDX-License-Identifier: MIT
// Derives the quantizers' grid maps and neighbour lists (ggml-quants.c iq2xs_init_impl, iq3xs_init_impl,
// ggml commit d99724f2) from the decode grids.
//
// ggml measures distances between its 2*level+1 grid values, which is 4 times the squared level distance,
// so ordering by level distance gives the same lists. ggml sorts each point's distances to every entry with
// a total order on (distance, index); walking the distances in increasing order and the entries in index
// order within one distance gives that order without sorting.
#include "quantize/iquant_maps.h"

#include "decode/iquant_tables.h"

namespace ws {
namespace {

struct GridSpec {
    int dims;
    int n_levels;
    int grid_size;
    int nwant;  // distinct distances in each neighbour list
};

// Level of each element, from the grids' value sets (iquant_tables.h): IQ2 {8, 25, 43} -> byte >> 4;
// IQ1S int8 {-1, 0, 1} -> value + 1; IQ3XXS {4, 12, ..., 52, 62} -> byte >> 3; IQ3S {1, 3, ..., 15} -> byte >> 1.
void derive_levels(IqGridId g, const GridSpec& s, std::vector<uint8_t>& levels) {
    levels.resize(static_cast<size_t>(s.grid_size) * static_cast<size_t>(s.dims));
    for (int j = 0; j < s.grid_size; ++j) {
        for (int i = 0; i < s.dims; ++i) {
            uint8_t level = 0;
            switch (g) {
                case IqGridId::kIq2xxs:
                    level = static_cast<uint8_t>(((iq2xxs_grid[j] >> (8 * i)) & 0xff) >> 4);
                    break;
                case IqGridId::kIq2xs:
                    level = static_cast<uint8_t>(((iq2xs_grid[j] >> (8 * i)) & 0xff) >> 4);
                    break;
                case IqGridId::kIq2s:
                    level = static_cast<uint8_t>(((iq2s_grid[j] >> (8 * i)) & 0xff) >> 4);
                    break;
                case IqGridId::kIq1s:
                    level =
                        static_cast<uint8_t>(static_cast<int8_t>(static_cast<uint8_t>(iq1s_grid[j] >> (8 * i))) + 1);
                    break;
                case IqGridId::kIq3xxs:
                    level = static_cast<uint8_t>(((iq3xxs_grid[j] >> (8 * i)) & 0xff) >> 3);
                    break;
                case IqGridId::kIq3s:
                    level = static_cast<uint8_t>(((iq3s_grid[j] >> (8 * i)) & 0xff) >> 1);
                    break;
            }
            levels[static_cast<size_t>(j) * s.dims + i] = level;
        }
    }
}

IqGridMap build(IqGridId g, const GridSpec& s) {
    IqGridMap m;
    m.dims = s.dims;
    m.n_levels = s.n_levels;
    m.grid_size = s.grid_size;
    derive_levels(g, s, m.levels);
    m.level_floats.assign(m.levels.begin(), m.levels.end());

    int stride[8];
    int n_keys = 1;
    for (int i = 0; i < s.dims; ++i) {
        stride[i] = n_keys;
        n_keys *= s.n_levels;
    }
    m.map.assign(static_cast<size_t>(n_keys), -1);
    for (int j = 0; j < s.grid_size; ++j) {
        int key = 0;
        for (int i = 0; i < s.dims; ++i) key += m.levels[static_cast<size_t>(j) * s.dims + i] * stride[i];
        m.map[static_cast<size_t>(key)] = j;
    }

    // Element-major copy of the levels so the distance loop below runs over contiguous bytes.
    const size_t n = static_cast<size_t>(s.grid_size);
    std::vector<uint8_t> by_element(static_cast<size_t>(s.dims) * n);
    for (size_t j = 0; j < n; ++j) {
        for (int i = 0; i < s.dims; ++i) by_element[i * n + j] = m.levels[j * s.dims + i];
    }
    // Squared level distances are at most dims * (n_levels - 1)^2 = 196, so they fit a byte.
    std::vector<uint8_t> dist(n);
    bool present[256];
    for (int key = 0; key < n_keys; ++key) {
        if (m.map[static_cast<size_t>(key)] >= 0) continue;
        for (size_t j = 0; j < n; ++j) dist[j] = 0;
        for (int i = 0; i < s.dims; ++i) {
            const int l = (key / stride[i]) % s.n_levels;
            const uint8_t* e = &by_element[i * n];
            for (size_t j = 0; j < n; ++j) {
                const int diff = e[j] - l;
                dist[j] = static_cast<uint8_t>(dist[j] + diff * diff);
            }
        }
        for (bool& p : present) p = false;
        for (size_t j = 0; j < n; ++j) present[dist[j]] = true;

        const size_t start = m.neighbours.size();
        m.map[static_cast<size_t>(key)] = -(1 + static_cast<int32_t>(start));
        m.neighbours.push_back(0);
        int have = 0;
        for (int d = 0; d < 256 && have < s.nwant; ++d) {
            if (!present[d]) continue;
            ++have;
            for (size_t j = 0; j < n; ++j) {
                if (dist[j] == d) m.neighbours.push_back(static_cast<uint16_t>(j));
            }
        }
        m.neighbours[start] = static_cast<uint16_t>(m.neighbours.size() - start - 1);
    }
    // Exact-size copy: shrink_to_fit does nothing without exceptions (libstdc++), and growth left up to 2x.
    m.neighbours = std::vector<uint16_t>(m.neighbours.begin(), m.neighbours.end());
    return m;
}

}  // namespace

const IqGridMap& iq_grid_map(IqGridId g) {
    // One static per grid: a quantizer only pays for the grid it uses. C++11 makes each initialization
    // thread-safe; single-threaded wasm builds simply run it once.
    switch (g) {
        case IqGridId::kIq2xxs: {
            static const IqGridMap m = build(g, {8, 3, 256, 2});
            return m;
        }
        case IqGridId::kIq2xs: {
            static const IqGridMap m = build(g, {8, 3, 512, 2});
            return m;
        }
        case IqGridId::kIq2s: {
            static const IqGridMap m = build(g, {8, 3, 1024, 1});
            return m;
        }
        case IqGridId::kIq1s: {
            static const IqGridMap m = build(g, {8, 3, NGRID_IQ1S, 3});
            return m;
        }
        case IqGridId::kIq3xxs: {
            static const IqGridMap m = build(g, {4, 8, 256, 2});
            return m;
        }
        case IqGridId::kIq3s:
            break;
    }
    // kIq3s (the switch covers every enumerator, so nothing else gets here).
    static const IqGridMap m = build(IqGridId::kIq3s, {4, 8, 512, 3});
    return m;
}

}  // namespace ws
