// SPDX-License-Identifier: MIT
// Plain floats, integers and the small floats of safetensors -> float32.
#include <cstdint>
#include <cstring>

#include "base/le_bytes.h"
#include "weightstream/dequant.h"

namespace ws {
namespace {

// ---- small floats: one float32 bit pattern per code, computed at compile time --------------------------------

enum class Specials : uint8_t {
    kIeee,  // all-ones exponent: Inf (mantissa 0) or NaN (e5m2)
    kFn,    // only the all-ones code (per sign) is NaN, no Inf (e4m3fn)
    kFnuz,  // only the negative-zero code 0x80 is NaN, no Inf, no -0 (the *fnuz types)
    kNone,  // every code is a finite number (OCP MX e2m3, e3m2, e2m1)
};

struct MiniFormat {
    uint32_t exp_bits;
    uint32_t man_bits;
    int32_t bias;
    Specials specials;
};

constexpr uint32_t kQuietNan = 0x7fc00000u;

// The float32 bits of `code` in a sign/exponent/mantissa format with at most 5 exponent bits: every such value
// is a normal float32 (or zero), so the bits are assembled directly, subnormals normalised by shifting.
constexpr uint32_t minifloat_bits(uint32_t code, MiniFormat f) {
    const uint32_t width = 1 + f.exp_bits + f.man_bits;
    const uint32_t sign = ((code >> (width - 1)) & 1u) << 31;
    const uint32_t exp_max = (1u << f.exp_bits) - 1;
    const uint32_t man_mask = (1u << f.man_bits) - 1;
    const uint32_t e = (code >> f.man_bits) & exp_max;
    uint32_t m = code & man_mask;

    if (f.specials == Specials::kIeee && e == exp_max) return sign | (m == 0 ? 0x7f800000u : kQuietNan);
    if (f.specials == Specials::kFn && e == exp_max && m == man_mask) return sign | kQuietNan;
    if (f.specials == Specials::kFnuz && code == (1u << (width - 1))) return kQuietNan;
    if (e == 0 && m == 0) return sign;

    int32_t exp2 = static_cast<int32_t>(e) - f.bias;  // unbiased exponent of the leading 1
    if (e == 0) {
        // Subnormal m * 2^(1 - bias - man_bits): shift the leading 1 up to the implicit-bit position.
        exp2 = 1 - f.bias;
        while ((m & (1u << f.man_bits)) == 0) {
            m <<= 1;
            --exp2;
        }
        m &= man_mask;
    }
    return sign | (static_cast<uint32_t>(exp2 + 127) << 23) | (m << (23 - f.man_bits));
}

template <uint32_t N>
struct BitsTable {
    uint32_t bits[N];
};

template <uint32_t N>
constexpr BitsTable<N> make_table(MiniFormat f) {
    BitsTable<N> t{};
    for (uint32_t c = 0; c < N; ++c) t.bits[c] = minifloat_bits(c, f);
    return t;
}

// e8m0fnu: an unsigned power of two 2^(code - 127); 0 is the float32 subnormal 2^-127, 0xff is NaN.
constexpr BitsTable<256> make_e8m0_table() {
    BitsTable<256> t{};
    for (uint32_t c = 0; c < 256; ++c) t.bits[c] = c == 0xff ? kQuietNan : c == 0 ? 0x00400000u : c << 23;
    return t;
}

constexpr BitsTable<256> kF8E4M3 = make_table<256>({4, 3, 7, Specials::kFn});
constexpr BitsTable<256> kF8E5M2 = make_table<256>({5, 2, 15, Specials::kIeee});
constexpr BitsTable<256> kF8E4M3Fnuz = make_table<256>({4, 3, 8, Specials::kFnuz});
constexpr BitsTable<256> kF8E5M2Fnuz = make_table<256>({5, 2, 16, Specials::kFnuz});
constexpr BitsTable<256> kF8E8M0 = make_e8m0_table();
constexpr BitsTable<64> kF6E2M3 = make_table<64>({2, 3, 1, Specials::kNone});
constexpr BitsTable<64> kF6E3M2 = make_table<64>({3, 2, 3, Specials::kNone});
constexpr BitsTable<16> kF4E2M1 = make_table<16>({2, 1, 1, Specials::kNone});

// Spot checks of the generator against values the formats' specifications list.
static_assert(kF8E4M3.bits[0x7e] == 0x43e00000u, "e4m3fn max is 448");
static_assert(kF8E4M3.bits[0x01] == 0x3b000000u, "e4m3fn min subnormal is 2^-9");
static_assert(kF8E5M2.bits[0x7b] == 0x47600000u, "e5m2 max is 57344");
static_assert(kF8E5M2.bits[0xfc] == 0xff800000u, "e5m2 0xfc is -Inf");
static_assert(kF8E4M3Fnuz.bits[0x7f] == 0x43700000u, "e4m3fnuz max is 240");
static_assert(kF8E5M2Fnuz.bits[0x7f] == 0x47600000u, "e5m2fnuz max is 57344");
static_assert(kF6E2M3.bits[0x1f] == 0x40f00000u, "e2m3 max is 7.5");
static_assert(kF6E3M2.bits[0x1f] == 0x41e00000u, "e3m2 max is 28");
static_assert(kF4E2M1.bits[0x7] == 0x40c00000u && kF4E2M1.bits[0x1] == 0x3f000000u, "e2m1 is 0.5 .. 6");

void decode_bytes(const BitsTable<256>& table, const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = f32_from_bits(table.bits[src[i]]);
}

}  // namespace

void dequantize_row_f32(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = f32_from_bits(load_le32(src + 4 * i));
}

void dequantize_row_f16(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = fp16_to_fp32(load_le16(src + 2 * i));
}

void dequantize_row_bf16(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = bf16_to_fp32(load_le16(src + 2 * i));
}

void dequantize_row_f64(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) {
        const uint64_t bits = load_le64(src + 8 * i);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        dst[i] = static_cast<float>(d);
    }
}

void dequantize_row_c64(const uint8_t* src, float* dst, int64_t k) {
    dequantize_row_f32(src, dst, 2 * k);
}

void dequantize_row_i8(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<float>(static_cast<int8_t>(src[i]));
}

void dequantize_row_i16(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<float>(static_cast<int16_t>(load_le16(src + 2 * i)));
}

void dequantize_row_i32(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<float>(static_cast<int32_t>(load_le32(src + 4 * i)));
}

void dequantize_row_i64(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<float>(static_cast<int64_t>(load_le64(src + 8 * i)));
}

void dequantize_row_u8(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<float>(src[i]);
}

void dequantize_row_u16(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<float>(load_le16(src + 2 * i));
}

void dequantize_row_u32(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<float>(load_le32(src + 4 * i));
}

void dequantize_row_u64(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = static_cast<float>(load_le64(src + 8 * i));
}

void dequantize_row_bool(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k; ++i) dst[i] = src[i] != 0 ? 1.0f : 0.0f;
}

void dequantize_row_f8_e4m3(const uint8_t* src, float* dst, int64_t k) {
    decode_bytes(kF8E4M3, src, dst, k);
}
void dequantize_row_f8_e5m2(const uint8_t* src, float* dst, int64_t k) {
    decode_bytes(kF8E5M2, src, dst, k);
}
void dequantize_row_f8_e8m0(const uint8_t* src, float* dst, int64_t k) {
    decode_bytes(kF8E8M0, src, dst, k);
}
void dequantize_row_f8_e4m3fnuz(const uint8_t* src, float* dst, int64_t k) {
    decode_bytes(kF8E4M3Fnuz, src, dst, k);
}
void dequantize_row_f8_e5m2fnuz(const uint8_t* src, float* dst, int64_t k) {
    decode_bytes(kF8E5M2Fnuz, src, dst, k);
}

namespace {

void decode_f6(const BitsTable<64>& table, const uint8_t* src, float* dst, int64_t k) {
    for (int64_t g = 0; g < k / 4; ++g) {
        const uint8_t* p = src + 3 * g;
        const uint32_t w =
            static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16);
        for (int j = 0; j < 4; ++j) dst[4 * g + j] = f32_from_bits(table.bits[(w >> (6 * j)) & 63u]);
    }
}

}  // namespace

void dequantize_row_f6_e2m3(const uint8_t* src, float* dst, int64_t k) {
    decode_f6(kF6E2M3, src, dst, k);
}
void dequantize_row_f6_e3m2(const uint8_t* src, float* dst, int64_t k) {
    decode_f6(kF6E3M2, src, dst, k);
}

void dequantize_row_f4(const uint8_t* src, float* dst, int64_t k) {
    for (int64_t i = 0; i < k / 2; ++i) {
        dst[2 * i + 0] = f32_from_bits(kF4E2M1.bits[src[i] & 0x0f]);
        dst[2 * i + 1] = f32_from_bits(kF4E2M1.bits[src[i] >> 4]);
    }
}

}  // namespace ws
