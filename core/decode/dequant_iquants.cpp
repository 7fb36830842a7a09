// SPDX-License-Identifier: MIT
// I-quant dequantizers. Each kernel is ggml's dequantize_row_<type> (ggml-quants.c, ggml commit d99724f2)
// restated over raw bytes: the same float32 operations in the same order, so results are bit-identical.
// Blocks are copied to aligned locals (load_block) because src may sit at any address. Multi-byte fields
// are then read in host order like ggml does, which quant_blocks.h pins to little-endian. Sign flips are an
// XOR of the sign bit: ggml writes `x * (s ? -1.f : 1.f)`, which gcc and clang compile at -O2/-O3 to exactly
// that (a multiplication by -1 would leave a NaN's sign alone; the flip also flips it).
#include "decode/dequant_iquants.h"

#include <cstring>

#include "decode/iquant_tables.h"
#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"

namespace ws {
namespace {

// x with its sign bit flipped where bit j of signs is set: ggml's `x * (signs & kmask_iq2xs[j] ? -1.f : 1.f)`
// as its builds compute it (see the file comment).
inline float apply_sign(float x, uint8_t signs, int j) {
    return f32_from_bits(f32_to_bits(x) ^ (static_cast<uint32_t>((signs & kmask_iq2xs[j]) != 0) << 31));
}

// Element j of a grid entry (byte j, as ggml reads the entry through a uint8_t pointer on little-endian).
inline float grid_u8(uint64_t entry, int j) {
    return static_cast<float>((entry >> (8 * j)) & 0xff);
}
inline float grid_i8(uint64_t entry, int j) {
    return static_cast<float>(static_cast<int8_t>(static_cast<uint8_t>(entry >> (8 * j))));
}

// ggml: `qh & bit ? -IQ1S_DELTA : IQ1S_DELTA`.
constexpr float kIq1Delta[2] = {IQ1S_DELTA, -IQ1S_DELTA};

}  // namespace

void dequantize_row_iq2_xxs(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq2_xxs x = load_block<block_iq2_xxs>(src, i);
        const float d = fp16_to_fp32(x.d);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            // Per 32 values two u32: four grid index bytes, then four 7-bit sign codes and a 4-bit scale.
            uint32_t aux32[2];
            std::memcpy(aux32, x.qs + 4 * ib32, sizeof aux32);
            uint8_t aux8[4];
            std::memcpy(aux8, &aux32[0], sizeof aux8);
            const float db = d * (0.5f + (aux32[1] >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l) {
                const uint64_t grid = iq2xxs_grid[aux8[l]];
                const uint8_t signs = ksigns_iq2xs[(aux32[1] >> 7 * l) & 127];
                for (int j = 0; j < 8; ++j) y[j] = apply_sign(db * grid_u8(grid, j), signs, j);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_xs(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq2_xs x = load_block<block_iq2_xs>(src, i);
        const float d = fp16_to_fp32(x.d);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const float db[2] = {d * (0.5f + (x.scales[ib32] & 0xf)) * 0.25f,
                                 d * (0.5f + (x.scales[ib32] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l) {
                // 9-bit grid index, 7-bit sign code.
                const uint64_t grid = iq2xs_grid[x.qs[4 * ib32 + l] & 511];
                const uint8_t signs = ksigns_iq2xs[x.qs[4 * ib32 + l] >> 9];
                for (int j = 0; j < 8; ++j) y[j] = apply_sign(db[l / 2] * grid_u8(grid, j), signs, j);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_s(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq2_s x = load_block<block_iq2_s>(src, i);
        const float d = fp16_to_fp32(x.d);
        const uint8_t* qs = x.qs;
        const uint8_t* signs = qs + QK_K / 8;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const float db[2] = {d * (0.5f + (x.scales[ib32] & 0xf)) * 0.25f,
                                 d * (0.5f + (x.scales[ib32] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l) {
                const float dl = db[l / 2];
                // 10-bit grid index: low byte from qs, 2 high bits per group of 8 from qh.
                const uint64_t grid = iq2s_grid[qs[l] | ((x.qh[ib32] << (8 - 2 * l)) & 0x300)];
                for (int j = 0; j < 8; ++j) y[j] = apply_sign(dl * grid_u8(grid, j), signs[l], j);
                y += 8;
            }
            qs += 4;
            signs += 4;
        }
    }
}

void dequantize_row_iq3_xxs(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq3_xxs x = load_block<block_iq3_xxs>(src, i);
        const float d = fp16_to_fp32(x.d);
        const uint8_t* qs = x.qs;
        const uint8_t* scales_and_signs = qs + QK_K / 4;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            uint32_t aux32;
            std::memcpy(&aux32, scales_and_signs + 4 * ib32, sizeof aux32);
            const float db = d * (0.5f + (aux32 >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l) {
                const uint8_t signs = ksigns_iq2xs[(aux32 >> 7 * l) & 127];
                const uint32_t grid1 = iq3xxs_grid[qs[2 * l + 0]];
                const uint32_t grid2 = iq3xxs_grid[qs[2 * l + 1]];
                for (int j = 0; j < 4; ++j) {
                    y[j + 0] = apply_sign(db * grid_u8(grid1, j), signs, j + 0);
                    y[j + 4] = apply_sign(db * grid_u8(grid2, j), signs, j + 4);
                }
                y += 8;
            }
            qs += 8;
        }
    }
}

void dequantize_row_iq3_s(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq3_s x = load_block<block_iq3_s>(src, i);
        const float d = fp16_to_fp32(x.d);
        const uint8_t* qs = x.qs;
        const uint8_t* qh = x.qh;
        const uint8_t* signs = x.signs;
        // One scale byte per 64 values (low nibble, then high nibble for the second 32); one qh byte holds
        // the 9th grid index bit of the 8 entries of a group of 32.
        for (int ib32 = 0; ib32 < QK_K / 32; ib32 += 2) {
            const float db[2] = {d * (1 + 2 * (x.scales[ib32 / 2] & 0xf)), d * (1 + 2 * (x.scales[ib32 / 2] >> 4))};
            for (int half = 0; half < 2; ++half) {
                for (int l = 0; l < 4; ++l) {
                    const uint32_t grid1 = iq3s_grid[qs[2 * l + 0] | ((qh[half] << (8 - 2 * l)) & 256)];
                    const uint32_t grid2 = iq3s_grid[qs[2 * l + 1] | ((qh[half] << (7 - 2 * l)) & 256)];
                    for (int j = 0; j < 4; ++j) {
                        y[j + 0] = apply_sign(db[half] * grid_u8(grid1, j), signs[l], j + 0);
                        y[j + 4] = apply_sign(db[half] * grid_u8(grid2, j), signs[l], j + 4);
                    }
                    y += 8;
                }
                qs += 8;
                signs += 4;
            }
            qh += 2;
        }
    }
}

void dequantize_row_iq1_s(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq1_s x = load_block<block_iq1_s>(src, i);
        const float d = fp16_to_fp32(x.d);
        const uint8_t* qs = x.qs;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            // qh per 32 values: 4x3 high grid index bits, a 3-bit scale, the delta sign bit.
            const uint16_t qh = x.qh[ib];
            const float dl = d * (2 * ((qh >> 12) & 7) + 1);
            const float delta = kIq1Delta[qh >> 15];
            for (int l = 0; l < 4; ++l) {
                const uint64_t grid = iq1s_grid[qs[l] | (((qh >> 3 * l) & 7) << 8)];
                for (int j = 0; j < 8; ++j) y[j] = dl * (grid_i8(grid, j) + delta);
                y += 8;
            }
            qs += 4;
        }
    }
}

void dequantize_row_iq1_m(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq1_m x = load_block<block_iq1_m>(src, i);
        uint16_t sc[4];
        std::memcpy(sc, x.scales, sizeof sc);
        // The f16 super-block scale is spread over the top nibbles of the four u16 scale words, sc[0] lowest.
        const uint16_t scale =
            static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = fp16_to_fp32(scale);
        const uint8_t* qs = x.qs;
        const uint8_t* qh = x.qh;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            // Two 3-bit scales per 32 values, one per half of 16.
            const float dl1 = d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1);
            const float dl2 = d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1);
            // Each qh nibble: 3 high grid index bits and the delta sign of one group of 8.
            const uint16_t idx[4] = {
                static_cast<uint16_t>(qs[0] | ((qh[0] << 8) & 0x700)),
                static_cast<uint16_t>(qs[1] | ((qh[0] << 4) & 0x700)),
                static_cast<uint16_t>(qs[2] | ((qh[1] << 8) & 0x700)),
                static_cast<uint16_t>(qs[3] | ((qh[1] << 4) & 0x700)),
            };
            const float delta[4] = {
                kIq1Delta[(qh[0] >> 3) & 1],
                kIq1Delta[(qh[0] >> 7) & 1],
                kIq1Delta[(qh[1] >> 3) & 1],
                kIq1Delta[(qh[1] >> 7) & 1],
            };
            for (int l = 0; l < 4; ++l) {
                const float dl = l < 2 ? dl1 : dl2;
                const uint64_t grid = iq1s_grid[idx[l]];
                for (int j = 0; j < 8; ++j) y[j] = dl * (grid_i8(grid, j) + delta[l]);
                y += 8;
            }
            qs += 4;
            qh += 2;
        }
    }
}

void dequantize_row_iq4_nl(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK4_NL;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq4_nl x = load_block<block_iq4_nl>(src, i);
        const float d = fp16_to_fp32(x.d);
        for (int j = 0; j < QK4_NL / 2; ++j) {
            y[j + 0] = d * kvalues_iq4nl[x.qs[j] & 0xf];
            y[j + QK4_NL / 2] = d * kvalues_iq4nl[x.qs[j] >> 4];
        }
        y += QK4_NL;
    }
}

void dequantize_row_iq4_xs(const uint8_t* src, float* y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const block_iq4_xs x = load_block<block_iq4_xs>(src, i);
        const uint8_t* qs = x.qs;
        const float d = fp16_to_fp32(x.d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            // 6-bit scale: low 4 bits from a scales_l nibble, high 2 bits from scales_h.
            const int ls = ((x.scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((x.scales_h >> 2 * ib) & 3) << 4);
            const float dl = d * (ls - 32);
            for (int j = 0; j < 16; ++j) {
                y[j + 0] = dl * kvalues_iq4nl[qs[j] & 0xf];
                y[j + 16] = dl * kvalues_iq4nl[qs[j] >> 4];
            }
            y += 32;
            qs += 16;
        }
    }
}

}  // namespace ws
