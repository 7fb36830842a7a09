// SPDX-License-Identifier: MIT
// I-quant dequantizers. Each kernel is ggml's dequantize_row_<type> (ggml-quants.c, ggml commit d99724f2)
// restated over raw bytes: the same float32 operations in the same order, so results are bit-identical.
// Sign flips stay multiplications by +-1.0f (exact, and what ggml does) rather than branches.
#include "dequant_iquants.h"

#include <cstddef>

#include "byte_reader.h"
#include "dequant.h"
#include "iquant_tables.h"

namespace ws {
namespace {

constexpr int64_t QK_K = 256;
constexpr int64_t QK4_NL = 32;

// Block layouts (ggml-common.h), read by byte offset because src may be unaligned. All multi-byte fields
// are little-endian; ggml's structs have no padding (it static_asserts their sizes).
namespace layout_iq2_xxs {  // block_iq2_xxs: ggml_half d; uint16_t qs[QK_K/8];
constexpr size_t kD = 0;
constexpr size_t kQs = 2;
constexpr size_t kSize = 66;
}  // namespace layout_iq2_xxs
namespace layout_iq2_xs {  // block_iq2_xs: ggml_half d; uint16_t qs[QK_K/8]; uint8_t scales[QK_K/32];
constexpr size_t kD = 0;
constexpr size_t kQs = 2;
constexpr size_t kScales = 66;
constexpr size_t kSize = 74;
}  // namespace layout_iq2_xs
namespace layout_iq2_s {  // block_iq2_s: ggml_half d; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/32]; uint8_t scales[QK_K/32];
constexpr size_t kD = 0;
constexpr size_t kQs = 2;  // 32 grid index low bytes, then 32 sign bytes
constexpr size_t kQh = 66;
constexpr size_t kScales = 74;
constexpr size_t kSize = 82;
}  // namespace layout_iq2_s
namespace layout_iq3_xxs {  // block_iq3_xxs: ggml_half d; uint8_t qs[3*QK_K/8];
constexpr size_t kD = 0;
constexpr size_t kQs = 2;                  // 64 grid indices
constexpr size_t kScalesAndSigns = 2 + 64;  // 8 u32: 4x7 sign codes + 4-bit scale each
constexpr size_t kSize = 98;
}  // namespace layout_iq3_xxs
namespace layout_iq3_s {  // block_iq3_s: ggml_half d; uint8_t qs[QK_K/4]; qh[QK_K/32]; signs[QK_K/8]; scales[QK_K/64];
constexpr size_t kD = 0;
constexpr size_t kQs = 2;
constexpr size_t kQh = 66;
constexpr size_t kSigns = 74;
constexpr size_t kScales = 106;
constexpr size_t kSize = 110;
}  // namespace layout_iq3_s
namespace layout_iq1_s {  // block_iq1_s: ggml_half d; uint8_t qs[QK_K/8]; uint16_t qh[QK_K/32];
constexpr size_t kD = 0;
constexpr size_t kQs = 2;
constexpr size_t kQh = 34;
constexpr size_t kSize = 50;
}  // namespace layout_iq1_s
namespace layout_iq1_m {  // block_iq1_m: uint8_t qs[QK_K/8]; uint8_t qh[QK_K/16]; uint8_t scales[QK_K/32];
constexpr size_t kQs = 0;
constexpr size_t kQh = 32;
constexpr size_t kScales = 48;  // read as 4 u16; their top nibbles hold the f16 block scale
constexpr size_t kSize = 56;
}  // namespace layout_iq1_m
namespace layout_iq4_nl {  // block_iq4_nl: ggml_half d; uint8_t qs[QK4_NL/2];
constexpr size_t kD = 0;
constexpr size_t kQs = 2;
constexpr size_t kSize = 18;
}  // namespace layout_iq4_nl
namespace layout_iq4_xs {  // block_iq4_xs: ggml_half d; uint16_t scales_h; uint8_t scales_l[QK_K/64]; uint8_t qs[QK_K/2];
constexpr size_t kD = 0;
constexpr size_t kScalesH = 2;
constexpr size_t kScalesL = 4;
constexpr size_t kQs = 8;
constexpr size_t kSize = 136;
}  // namespace layout_iq4_xs

// ggml writes `x * (signs & kmask_iq2xs[j] ? -1.f : 1.f)`; indexing this table gives the same factor.
constexpr float kSignFactor[2] = {1.0f, -1.0f};

inline float sign_factor(uint8_t signs, int j) { return kSignFactor[(signs & kmask_iq2xs[j]) != 0]; }

// Element j of a grid entry (byte j, as ggml reads the entry through a uint8_t pointer on little-endian).
inline float grid_u8(uint64_t entry, int j) { return static_cast<float>((entry >> (8 * j)) & 0xff); }
inline float grid_i8(uint64_t entry, int j) {
    return static_cast<float>(static_cast<int8_t>(static_cast<uint8_t>(entry >> (8 * j))));
}

// ggml: `qh & bit ? -IQ1S_DELTA : IQ1S_DELTA`.
constexpr float kIq1Delta[2] = {IQ1S_DELTA, -IQ1S_DELTA};

}  // namespace

void dequantize_row_iq2_xxs(const uint8_t* src, float* y, int64_t k) {
    namespace L = layout_iq2_xxs;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        const float d = fp16_to_fp32(load_le16(x + L::kD));
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            // 8 bytes per 32 values: 4 grid indices, then a u32 of four 7-bit sign codes and a 4-bit scale.
            const uint8_t* q = x + L::kQs + 8 * ib32;
            const uint32_t aux = load_le32(q + 4);
            const float db = d * (0.5f + (aux >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l) {
                const uint64_t grid = iq2xxs_grid[q[l]];
                const uint8_t signs = ksigns_iq2xs[(aux >> 7 * l) & 127];
                for (int j = 0; j < 8; ++j) y[j] = db * grid_u8(grid, j) * sign_factor(signs, j);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_xs(const uint8_t* src, float* y, int64_t k) {
    namespace L = layout_iq2_xs;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        const float d = fp16_to_fp32(load_le16(x + L::kD));
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const uint8_t scale = x[L::kScales + ib32];
            const float db[2] = {d * (0.5f + (scale & 0xf)) * 0.25f, d * (0.5f + (scale >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l) {
                // u16: 9-bit grid index, 7-bit sign code.
                const uint16_t q = load_le16(x + L::kQs + 2 * (4 * ib32 + l));
                const uint64_t grid = iq2xs_grid[q & 511];
                const uint8_t signs = ksigns_iq2xs[q >> 9];
                for (int j = 0; j < 8; ++j) y[j] = db[l / 2] * grid_u8(grid, j) * sign_factor(signs, j);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_s(const uint8_t* src, float* y, int64_t k) {
    namespace L = layout_iq2_s;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        const float d = fp16_to_fp32(load_le16(x + L::kD));
        const uint8_t* qs = x + L::kQs;
        const uint8_t* qh = x + L::kQh;
        const uint8_t* signs = qs + QK_K / 8;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const uint8_t scale = x[L::kScales + ib32];
            const float db[2] = {d * (0.5f + (scale & 0xf)) * 0.25f, d * (0.5f + (scale >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l) {
                const float dl = db[l / 2];
                // 10-bit grid index: low byte from qs, 2 high bits per group of 8 from qh.
                const uint64_t grid = iq2s_grid[qs[l] | ((qh[ib32] << (8 - 2 * l)) & 0x300)];
                for (int j = 0; j < 8; ++j) y[j] = dl * grid_u8(grid, j) * sign_factor(signs[l], j);
                y += 8;
            }
            qs += 4;
            signs += 4;
        }
    }
}

void dequantize_row_iq3_xxs(const uint8_t* src, float* y, int64_t k) {
    namespace L = layout_iq3_xxs;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        const float d = fp16_to_fp32(load_le16(x + L::kD));
        const uint8_t* qs = x + L::kQs;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const uint32_t aux = load_le32(x + L::kScalesAndSigns + 4 * ib32);
            const float db = d * (0.5f + (aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l) {
                const uint8_t signs = ksigns_iq2xs[(aux >> 7 * l) & 127];
                const uint32_t grid1 = iq3xxs_grid[qs[2 * l + 0]];
                const uint32_t grid2 = iq3xxs_grid[qs[2 * l + 1]];
                for (int j = 0; j < 4; ++j) {
                    y[j + 0] = db * grid_u8(grid1, j) * sign_factor(signs, j + 0);
                    y[j + 4] = db * grid_u8(grid2, j) * sign_factor(signs, j + 4);
                }
                y += 8;
            }
            qs += 8;
        }
    }
}

void dequantize_row_iq3_s(const uint8_t* src, float* y, int64_t k) {
    namespace L = layout_iq3_s;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        const float d = fp16_to_fp32(load_le16(x + L::kD));
        const uint8_t* qs = x + L::kQs;
        const uint8_t* qh = x + L::kQh;
        const uint8_t* signs = x + L::kSigns;
        // Two groups of 32 per scale byte (low nibble, high nibble); each qh byte holds the 9th index bit
        // of the 8 grid entries of one group.
        for (int ib32 = 0; ib32 < QK_K / 32; ib32 += 2) {
            const uint8_t scale = x[L::kScales + ib32 / 2];
            const float db[2] = {d * (1 + 2 * (scale & 0xf)), d * (1 + 2 * (scale >> 4))};
            for (int half = 0; half < 2; ++half) {
                for (int l = 0; l < 4; ++l) {
                    const uint32_t grid1 = iq3s_grid[qs[2 * l + 0] | ((qh[half] << (8 - 2 * l)) & 256)];
                    const uint32_t grid2 = iq3s_grid[qs[2 * l + 1] | ((qh[half] << (7 - 2 * l)) & 256)];
                    for (int j = 0; j < 4; ++j) {
                        y[j + 0] = db[half] * grid_u8(grid1, j) * sign_factor(signs[l], j + 0);
                        y[j + 4] = db[half] * grid_u8(grid2, j) * sign_factor(signs[l], j + 4);
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
    namespace L = layout_iq1_s;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        const float d = fp16_to_fp32(load_le16(x + L::kD));
        const uint8_t* qs = x + L::kQs;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            // u16 per 32 values: 4x3 high grid index bits, 3-bit scale, delta sign bit.
            const uint16_t qh = load_le16(x + L::kQh + 2 * ib);
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
    namespace L = layout_iq1_m;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        uint16_t sc[4];
        for (int s = 0; s < 4; ++s) sc[s] = load_le16(x + L::kScales + 2 * s);
        // The f16 block scale is spread over the top nibbles of the four u16 scale words, sc[0] lowest.
        const uint16_t scale = static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                     ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = fp16_to_fp32(scale);
        const uint8_t* qs = x + L::kQs;
        const uint8_t* qh = x + L::kQh;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            // Two 3-bit scales per 32 values: one for each half of 16.
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
    namespace L = layout_iq4_nl;
    const int64_t nb = k / QK4_NL;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        const uint8_t* qs = x + L::kQs;
        const float d = fp16_to_fp32(load_le16(x + L::kD));
        for (int j = 0; j < QK4_NL / 2; ++j) {
            y[j + 0] = d * kvalues_iq4nl[qs[j] & 0xf];
            y[j + QK4_NL / 2] = d * kvalues_iq4nl[qs[j] >> 4];
        }
        y += QK4_NL;
    }
}

void dequantize_row_iq4_xs(const uint8_t* src, float* y, int64_t k) {
    namespace L = layout_iq4_xs;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* x = src + i * L::kSize;
        const uint8_t* qs = x + L::kQs;
        const float d = fp16_to_fp32(load_le16(x + L::kD));
        const uint16_t scales_h = load_le16(x + L::kScalesH);
        const uint8_t* scales_l = x + L::kScalesL;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            // 6-bit scale: low 4 bits from scales_l nibbles, high 2 bits from scales_h.
            const int ls = ((scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
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
