// SPDX-License-Identifier: MIT
// ggml's quantization block layouts (ggml-common.h, ggml-org/ggml d99724f2), one struct per type, with ggml's
// names so kernels can be compared with ggml-quants.c line by line. Every block is a fixed number of bytes
// in the file, little-endian, with no padding; the static_asserts pin that down.
//
// `ggml_half` fields hold IEEE binary16 bits (decode with fp16_to_fp32 from dequant.h). Block bytes in a file
// or stream may sit at any address, so kernels never cast a byte pointer to a block pointer: load_block()
// copies a block into an aligned local instead (the copy is what keeps UBSan quiet about alignment).
#pragma once

#include <cstdint>
#include <cstring>

// Reading multi-byte fields by memcpy only gives the file's little-endian values on a little-endian host
// (x86, Arm, WebAssembly): refuse to build anywhere else rather than decode garbage.
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "quant_blocks.h reads block fields by memcpy and needs a little-endian host"
#endif

namespace ws {

using ggml_half = uint16_t;  // IEEE binary16 bits

constexpr int QK_K = 256;         // elements of a k-quant / i-quant super-block
constexpr int K_SCALE_SIZE = 12;  // packed 6-bit scales and mins of q4_K / q5_K

// ---- legacy quants: 32 elements, one f16 scale (and a min for the _1 types) --------------------------------

constexpr int QK4_0 = 32;
struct block_q4_0 {
    ggml_half d;            // scale
    uint8_t qs[QK4_0 / 2];  // element j in the low nibble of qs[j], element j + 16 in the high nibble
};
static_assert(sizeof(block_q4_0) == 18, "block_q4_0 is 18 bytes");

constexpr int QK4_1 = 32;
struct block_q4_1 {
    ggml_half d;            // scale
    ggml_half m;            // min (added, not subtracted)
    uint8_t qs[QK4_1 / 2];  // nibbles as in q4_0, unsigned 0..15
};
static_assert(sizeof(block_q4_1) == 20, "block_q4_1 is 20 bytes");

constexpr int QK5_0 = 32;
struct block_q5_0 {
    ggml_half d;            // scale
    uint8_t qh[4];          // 5th bits: bit j (little-endian u32) belongs to element j
    uint8_t qs[QK5_0 / 2];  // low 4 bits, nibbles as in q4_0
};
static_assert(sizeof(block_q5_0) == 22, "block_q5_0 is 22 bytes");

constexpr int QK5_1 = 32;
struct block_q5_1 {
    ggml_half d;            // scale
    ggml_half m;            // min
    uint8_t qh[4];          // 5th bits as in q5_0
    uint8_t qs[QK5_1 / 2];  // low 4 bits as in q5_0
};
static_assert(sizeof(block_q5_1) == 24, "block_q5_1 is 24 bytes");

constexpr int QK8_0 = 32;
struct block_q8_0 {
    ggml_half d;       // scale
    int8_t qs[QK8_0];  // signed quants
};
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 is 34 bytes");

constexpr int QK8_1 = 32;
struct block_q8_1 {    // ggml's activation format (no to_float in ggml); decoded as d * q
    ggml_half d;       // scale
    ggml_half s;       // d * sum(qs)
    int8_t qs[QK8_1];  // signed quants
};
static_assert(sizeof(block_q8_1) == 36, "block_q8_1 is 36 bytes");

// ---- 1- and 2-bit types with one f16 scale -------------------------------------------------------------------

constexpr int QK1_0 = 128;
struct block_q1_0 {
    ggml_half d;            // scale: a set bit means +d, a clear bit -d
    uint8_t qs[QK1_0 / 8];  // bit j % 8 of qs[j / 8] is element j (LSB first)
};
static_assert(sizeof(block_q1_0) == 18, "block_q1_0 is 18 bytes");

constexpr int QK2_0 = 64;
struct block_q2_0 {
    ggml_half d;            // scale: value (q - 1) * d, q in 0..3
    uint8_t qs[QK2_0 / 4];  // bits 2*(j % 4).. of qs[j / 4] are element j (LSB first)
};
static_assert(sizeof(block_q2_0) == 18, "block_q2_0 is 18 bytes");

// ---- microscaling 4-bit floats (E2M1 elements, kvalues_mxfp4 holds them doubled) -----------------------------

constexpr int QK_MXFP4 = 32;
struct block_mxfp4 {
    uint8_t e;                 // E8M0 shared exponent: scale 2^(e - 127), applied halved to the doubled table
    uint8_t qs[QK_MXFP4 / 2];  // E2M1 codes, nibbles as in q4_0
};
static_assert(sizeof(block_mxfp4) == 17, "block_mxfp4 is 17 bytes");

constexpr int QK_NVFP4 = 64;
constexpr int QK_NVFP4_SUB = 16;  // elements per UE4M3 scale
struct block_nvfp4 {
    uint8_t d[QK_NVFP4 / QK_NVFP4_SUB];  // UE4M3 scale of each 16-element sub-block
    uint8_t qs[QK_NVFP4 / 2];            // E2M1 codes: 8 bytes per sub-block, nibbles as in q4_0 within it
};
static_assert(sizeof(block_nvfp4) == 36, "block_nvfp4 is 36 bytes");

// ---- ternary -------------------------------------------------------------------------------------------------

struct block_tq1_0 {
    uint8_t qs[(QK_K - 4 * QK_K / 64) / 5];  // 5 trits per byte, base-3 digits scaled to fill the byte
    uint8_t qh[QK_K / 64];                   // 4 trits per byte, same encoding
    ggml_half d;                             // scale: value (trit - 1) * d
};
static_assert(sizeof(block_tq1_0) == 54, "block_tq1_0 is 54 bytes");

struct block_tq2_0 {
    uint8_t qs[QK_K / 4];  // 2 bits per element, value (q - 1) * d
    ggml_half d;           // scale
};
static_assert(sizeof(block_tq2_0) == 66, "block_tq2_0 is 66 bytes");

// ---- k-quants: 256-element super-blocks with quantized sub-block scales --------------------------------------

struct block_q2_K {
    uint8_t scales[QK_K / 16];  // per 16 elements: scale in the low nibble, min in the high nibble
    uint8_t qs[QK_K / 4];       // 2-bit quants
    ggml_half d;                // super-block scale of the scales
    ggml_half dmin;             // super-block scale of the mins
};
static_assert(sizeof(block_q2_K) == 84, "block_q2_K is 84 bytes");

struct block_q3_K {
    uint8_t hmask[QK_K / 8];  // high (3rd) bit of each quant; a clear bit subtracts 4
    uint8_t qs[QK_K / 4];     // low 2 bits
    uint8_t scales[12];       // 16 6-bit scales (biased by 32), packed
    ggml_half d;              // super-block scale
};
static_assert(sizeof(block_q3_K) == 110, "block_q3_K is 110 bytes");

struct block_q4_K {
    ggml_half d;                   // super-block scale of the scales
    ggml_half dmin;                // super-block scale of the mins
    uint8_t scales[K_SCALE_SIZE];  // 8 6-bit scales and 8 6-bit mins, packed (get_scale_min_k4)
    uint8_t qs[QK_K / 2];          // 4-bit quants: 32 bytes per 64 elements, low nibbles first
};
static_assert(sizeof(block_q4_K) == 144, "block_q4_K is 144 bytes");

struct block_q5_K {
    ggml_half d;                   // super-block scale of the scales
    ggml_half dmin;                // super-block scale of the mins
    uint8_t scales[K_SCALE_SIZE];  // as in q4_K
    uint8_t qh[QK_K / 8];          // 5th bits: in 64-element group g, element l takes bit 2g of qh[l],
                                   // element 32 + l bit 2g + 1
    uint8_t qs[QK_K / 2];          // low 4 bits as in q4_K
};
static_assert(sizeof(block_q5_K) == 176, "block_q5_K is 176 bytes");

struct block_q6_K {
    uint8_t ql[QK_K / 2];      // low 4 bits: 64 bytes per 128 elements, low nibbles first
    uint8_t qh[QK_K / 4];      // high 2 bits: 32 bytes per 128 elements, 4 elements per byte
    int8_t scales[QK_K / 16];  // signed 8-bit scale per 16 elements
    ggml_half d;               // super-block scale
};
static_assert(sizeof(block_q6_K) == 210, "block_q6_K is 210 bytes");

struct block_q8_K {            // ggml's activation format; decoded as ggml's dequantize_row_q8_K
    float d;                   // scale (float32, not f16)
    int8_t qs[QK_K];           // quants
    int16_t bsums[QK_K / 16];  // sums of quants in groups of 16
};
static_assert(sizeof(block_q8_K) == 292, "block_q8_K is 292 bytes");

// ---- i-quants (decoded in dequant_iquants.cpp with ggml's grids) ---------------------------------------------

struct block_iq2_xxs {
    ggml_half d;            // super-block scale
    uint16_t qs[QK_K / 8];  // per 32 elements 4 u16: grid indices, signs and a 4-bit scale
};
static_assert(sizeof(block_iq2_xxs) == 66, "block_iq2_xxs is 66 bytes");

struct block_iq2_xs {
    ggml_half d;                // super-block scale
    uint16_t qs[QK_K / 8];      // 9-bit grid index + 7-bit sign index per 8 elements
    uint8_t scales[QK_K / 32];  // two 4-bit scales per 32 elements
};
static_assert(sizeof(block_iq2_xs) == 74, "block_iq2_xs is 74 bytes");

struct block_iq2_s {
    ggml_half d;                // super-block scale
    uint8_t qs[QK_K / 4];       // low 8 bits of grid indices, then sign bytes
    uint8_t qh[QK_K / 32];      // high 2 bits of grid indices
    uint8_t scales[QK_K / 32];  // two 4-bit scales per 32 elements
};
static_assert(sizeof(block_iq2_s) == 82, "block_iq2_s is 82 bytes");

struct block_iq3_xxs {
    ggml_half d;               // super-block scale
    uint8_t qs[3 * QK_K / 8];  // grid indices, then per 32 elements a u32 of signs and a 4-bit scale
};
static_assert(sizeof(block_iq3_xxs) == 98, "block_iq3_xxs is 98 bytes");

constexpr int IQ3S_N_SCALE = QK_K / 64;
struct block_iq3_s {
    ggml_half d;                   // super-block scale
    uint8_t qs[QK_K / 4];          // low 8 bits of grid indices
    uint8_t qh[QK_K / 32];         // 9th bits of grid indices
    uint8_t signs[QK_K / 8];       // one sign bit per element
    uint8_t scales[IQ3S_N_SCALE];  // two 4-bit scales per 64 elements
};
static_assert(sizeof(block_iq3_s) == 110, "block_iq3_s is 110 bytes");

struct block_iq1_s {
    ggml_half d;             // super-block scale
    uint8_t qs[QK_K / 8];    // low 8 bits of grid indices
    uint16_t qh[QK_K / 32];  // high 3 bits of 4 indices, a 3-bit scale and the delta sign per 32 elements
};
static_assert(sizeof(block_iq1_s) == 50, "block_iq1_s is 50 bytes");

struct block_iq1_m {
    uint8_t qs[QK_K / 8];       // low 8 bits of grid indices
    uint8_t qh[QK_K / 16];      // high 3 bits + delta sign bit, for two groups of 8 per byte
    uint8_t scales[QK_K / 32];  // 3-bit block scales; the f16 super-block scale is spread over the top
                                // nibbles of these bytes read as four u16 (no separate d field)
};
static_assert(sizeof(block_iq1_m) == 56, "block_iq1_m is 56 bytes");

constexpr int QK4_NL = 32;
struct block_iq4_nl {
    ggml_half d;             // scale
    uint8_t qs[QK4_NL / 2];  // indices into kvalues_iq4nl, nibbles as in q4_0
};
static_assert(sizeof(block_iq4_nl) == 18, "block_iq4_nl is 18 bytes");

struct block_iq4_xs {
    ggml_half d;                  // super-block scale
    uint16_t scales_h;            // high 2 bits of the eight 6-bit sub-block scales
    uint8_t scales_l[QK_K / 64];  // low 4 bits of the sub-block scales
    uint8_t qs[QK_K / 2];         // indices into kvalues_iq4nl, 16 bytes per 32 elements as in q4_0
};
static_assert(sizeof(block_iq4_xs) == 136, "block_iq4_xs is 136 bytes");

// Copies block i of a run of Block-sized records starting at src (any alignment) into an aligned local.
template <typename Block>
inline Block load_block(const uint8_t* src, int64_t i) {
    Block b;
    std::memcpy(&b, src + i * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
    return b;
}

}  // namespace ws
