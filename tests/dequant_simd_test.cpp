// SPDX-License-Identifier: MIT
// The fast kernels dequant_row_fn() picks (AVX2 + F16C natively; SIMD128 when this test is built with em++
// -msimd128 and run under node) against the scalar reference kernels: the same
// bits for every type, on random blocks (NaN, Inf and subnormal scales included), at every block count a
// SIMD loop or tail could get wrong, at misaligned addresses, in exact-size allocations.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "decode/dequant_internal.h"
#include "weightstream/dequant.h"
#include "weightstream/dtype.h"

using ws::DType;

namespace {

std::vector<DType> decodable_types() {
    std::vector<DType> out;
    for (uint32_t v = 0; v < static_cast<uint32_t>(DType::kEnd); ++v) {
        if (ws::dtype_decodable(static_cast<DType>(v))) out.push_back(static_cast<DType>(v));
    }
    return out;
}

// Random bytes; in "special" mode a quarter of them come from a set that makes f16/bf16/f32 fields (scales
// at any offset) NaN, Inf, subnormal, zero or negative, and small-float codes hit their special values.
std::vector<uint8_t> random_bytes(size_t n, bool special, std::mt19937_64& rng) {
    static const uint8_t kSpecial[] = {0x00, 0x01, 0x03, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f, 0x80, 0x81, 0xfc, 0xfe, 0xff};
    std::vector<uint8_t> out(n);
    for (uint8_t& b : out) {
        const uint64_t r = rng();
        b = special && (r & 3) == 0 ? kSpecial[(r >> 8) % sizeof kSpecial] : static_cast<uint8_t>(r >> 16);
    }
    return out;
}

// Q4_1 and Q5_1 compute x * d + m. When d and m are both NaN the addition has two NaN operands, and x86
// returns the payload of the first source operand, which the compiler chooses (addition commutes): GCC even
// picks differently in the vectorized body and the remainder of the scalar reference loop, and ggml's build
// may pick either. Only there does a fast kernel just have to give a NaN too.
bool two_nan_operands(DType t, const uint8_t* src, size_t element) {
    if (t != DType::Q4_1 && t != DType::Q5_1) return false;
    const ws::DTypeTraits& traits = ws::dtype_traits(t);
    const uint8_t* block = src + element / traits.block_elems * traits.block_bytes;
    const auto is_nan = [](const uint8_t* p) {
        return std::isnan(ws::fp16_to_fp32(static_cast<uint16_t>(p[0] | p[1] << 8)));
    };
    return is_nan(block) && is_nan(block + 2);  // d, then m
}

// Decodes src (copied to `src_shift` bytes past an allocation's start, ending exactly at its end) with the
// fast and the scalar kernel into outputs one float past an allocation's start (so not 32-byte aligned),
// and returns the index of the first float whose bits differ, or -1.
int64_t first_difference(DType t, const std::vector<uint8_t>& bytes, int64_t k, size_t src_shift,
                         ws::DequantRowFn fn = nullptr) {
    if (fn == nullptr) fn = ws::dequant_row_fn(t);
    const size_t n_out = static_cast<size_t>(k) * ws::dequant_floats_per_element(t);
    std::unique_ptr<uint8_t[]> src(new uint8_t[bytes.size() + src_shift]);
    if (!bytes.empty()) std::memcpy(src.get() + src_shift, bytes.data(), bytes.size());
    std::unique_ptr<float[]> fast(new float[n_out + 1]), ref(new float[n_out + 1]);
    fn(src.get() + src_shift, fast.get() + 1, k);
    ws::dequant_row_fn_scalar(t)(src.get() + src_shift, ref.get() + 1, k);
    if (std::memcmp(fast.get() + 1, ref.get() + 1, n_out * sizeof(float)) == 0) return -1;
    for (size_t i = 0; i < n_out; ++i) {
        if (ws::f32_to_bits(fast[i + 1]) == ws::f32_to_bits(ref[i + 1])) continue;
        const bool nan_pair = std::isnan(fast[i + 1]) && std::isnan(ref[i + 1]);
        if (!nan_pair || !two_nan_operands(t, src.get() + src_shift, i)) return static_cast<int64_t>(i);
    }
    return -1;
}

int64_t first_difference(DType t, const std::vector<uint8_t>& bytes, size_t src_shift = 0,
                         ws::DequantRowFn fn = nullptr) {
    const ws::DTypeTraits& traits = ws::dtype_traits(t);
    const int64_t k = static_cast<int64_t>(bytes.size() / traits.block_bytes * traits.block_elems);
    return first_difference(t, bytes, k, src_shift, fn);
}

std::vector<uint8_t> le_bytes(const std::vector<uint64_t>& values, size_t width) {
    std::vector<uint8_t> out;
    for (uint64_t v : values) {
        for (size_t i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
    return out;
}

}  // namespace

TEST_CASE("a fast kernel is in use for every decodable type on an AVX2 + F16C CPU and in wasm") {
#if defined(__x86_64__) || defined(__i386__)
    // Every AVX2 CPU made has F16C too; the dispatcher checks both (and the OS's register state).
    CHECK((ws::detail::dequant_row_fn_x86(DType::Q8_0) != nullptr) ==
          static_cast<bool>(__builtin_cpu_supports("avx2")));
    if (ws::detail::dequant_row_fn_x86(DType::Q8_0) == nullptr) return;
    for (DType t : decodable_types()) {
        INFO(ws::dtype_name(t));
        CHECK(ws::dequant_row_fn(t) != nullptr);
        CHECK(ws::dequant_row_fn(t) != ws::dequant_row_fn_scalar(t));
    }
#endif
#if defined(__wasm_simd128__)
    for (DType t : decodable_types()) {
        INFO(ws::dtype_name(t));
        CHECK(ws::detail::dequant_row_fn_wasm(t) != nullptr);
        CHECK(ws::dequant_row_fn(t) == ws::detail::dequant_row_fn_wasm(t));
    }
#endif
    CHECK(ws::dequant_row_fn_scalar(DType::Q4_2) == nullptr);
    CHECK(ws::dequant_row_fn(DType::Q4_2) == nullptr);
    CHECK(ws::dequant_row_fn_scalar(DType::Q4_K) == ws::dequantize_row_q4_K);
}

namespace {

// Random blocks of every type through `pick(t)` (skipping types it has no kernel for) against the scalar one.
void check_random_blocks(ws::DequantRowFn (*pick)(DType)) {
    std::mt19937_64 rng(20240607);
    for (DType t : decodable_types()) {
        const ws::DequantRowFn fn = pick(t);
        if (fn == nullptr) continue;
        const ws::DTypeTraits& traits = ws::dtype_traits(t);
        // Block types: 1, 2, 3, 7, 33 blocks. Element types (blocks of 1, 2 or 4 elements): every count up to
        // 80 elements covers each SIMD tail; 4099 groups cover the main loops.
        std::vector<uint64_t> blocks = {1, 2, 3, 7, 33};
        if (traits.block_elems <= 4) {
            blocks.clear();
            for (uint64_t n = 1; n * traits.block_elems <= 80; ++n) blocks.push_back(n);
            blocks.push_back(4099);
        }
        for (uint64_t nb : blocks) {
            for (int special = 0; special < 2; ++special) {
                for (size_t shift : {0, 1, 3}) {
                    const std::vector<uint8_t> bytes = random_bytes(nb * traits.block_bytes, special != 0, rng);
                    INFO(traits.name << ": " << nb << " blocks, special " << special << ", src shifted " << shift);
                    REQUIRE(first_difference(t, bytes, shift, fn) == -1);
                }
            }
        }
    }
}

}  // namespace

TEST_CASE("fast kernels equal the scalar reference on random blocks of every type") {
    check_random_blocks(ws::dequant_row_fn);
}

TEST_CASE("the x86 AVX2 kernels equal the scalar reference where AVX-512 kernels would be picked") {
    check_random_blocks([](DType t) { return ws::detail::dequant_row_fn_x86(t, false); });
}

TEST_CASE("fast kernels decode zero elements without touching memory") {
    for (DType t : decodable_types()) {
        INFO(ws::dtype_name(t));
        ws::dequant_row_fn(t)(nullptr, nullptr, 0);
    }
}

TEST_CASE("fast F16 and BF16 decode every 16-bit code like the scalar kernel") {
    std::vector<uint64_t> codes(65536);
    for (uint64_t c = 0; c < codes.size(); ++c) codes[c] = c;
    const std::vector<uint8_t> bytes = le_bytes(codes, 2);
    for (DType t : {DType::F16, DType::BF16, DType::I16, DType::U16}) {
        INFO(ws::dtype_name(t));
        CHECK(first_difference(t, bytes) == -1);
        CHECK(first_difference(t, bytes, 1) == -1);
    }
}

TEST_CASE("fast BF16 decodes outputs of 4 MiB and more (streaming stores on x86) like the scalar kernel") {
    // Every 16-bit code 16 times and 13 more, so the output passes 4 MiB and ends in a partial vector; the
    // helper's destination starts 4 bytes past an allocation, so the aligning prologue runs too.
    std::vector<uint64_t> codes((size_t{1} << 20) + 13);
    for (size_t c = 0; c < codes.size(); ++c) codes[c] = (c * 40503u) & 0xffffu;
    const std::vector<uint8_t> bytes = le_bytes(codes, 2);
    CHECK(first_difference(DType::BF16, bytes) == -1);
    CHECK(first_difference(DType::BF16, bytes, 1) == -1);
}

TEST_CASE("fast small-float and byte kernels decode every code like the scalar kernel") {
    std::vector<uint8_t> all(256 * 3);  // every byte value three times, so each lands in different lanes
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>(i * 7 % 256 + i / 256);
    for (DType t : {DType::F8_E4M3, DType::F8_E5M2, DType::F8_E8M0, DType::F8_E4M3FNUZ, DType::F8_E5M2FNUZ, DType::F4,
                    DType::I8, DType::U8, DType::BOOL}) {
        INFO(ws::dtype_name(t));
        CHECK(first_difference(t, all) == -1);
    }
    // F6: every 6-bit code at each of the four positions of a 3-byte group.
    std::vector<uint8_t> f6;
    for (uint32_t code = 0; code < 64; ++code) {
        for (int pos = 0; pos < 4; ++pos) {
            const uint32_t w = code << (6 * pos) | static_cast<uint32_t>(63 - code) << (6 * ((pos + 1) % 4));
            for (int i = 0; i < 3; ++i) f6.push_back(static_cast<uint8_t>(w >> (8 * i)));
        }
    }
    CHECK(first_difference(DType::F6_E2M3, f6) == -1);
    CHECK(first_difference(DType::F6_E3M2, f6) == -1);
}

TEST_CASE("fast 32- and 64-bit integer kernels round to nearest even like the scalar kernel") {
    // Exact values, ties and near-ties at every magnitude: 2^e plus small and large offsets, negated too.
    std::vector<uint64_t> values = {0,
                                    1,
                                    0x7fffffffffffffffull,
                                    0x8000000000000000ull,
                                    0xffffffffffffffffull,
                                    (1ull << 53) + 1,
                                    (1ull << 60) + (1ull << 36),
                                    (1ull << 60) + (1ull << 36) + 1,
                                    (1ull << 60) + (1ull << 37) + (1ull << 36),
                                    (1ull << 63) + (1ull << 39) + 1};
    for (int e = 0; e < 64; ++e) {
        const uint64_t p = 1ull << e;
        for (uint64_t off : {uint64_t(0), uint64_t(1), p >> 24, p >> 25, (p >> 25) + 1, (p >> 24) + (p >> 25),
                             (p >> 25) - 1, p - 1, p >> 1, (p >> 1) + 1, uint64_t(0x7ff), uint64_t(0x800)}) {
            values.push_back(p + off);
            values.push_back(p - off);
        }
    }
    std::mt19937_64 rng(7);
    for (int i = 0; i < 4000; ++i) values.push_back(rng() >> (rng() % 64));
    const size_t n = values.size();
    for (size_t i = 0; i < n; ++i) values.push_back(0 - values[i]);
    for (DType t : {DType::I64, DType::U64}) {
        INFO(ws::dtype_name(t));
        const std::vector<uint8_t> bytes = le_bytes(values, 8);
        CHECK(first_difference(t, bytes) == -1);
        // The AVX2 emulation, also on CPUs where the AVX-512 kernel is the one in use.
        if (const ws::DequantRowFn avx2 = ws::detail::dequant_row_fn_x86(t, false)) {
            const int64_t k = static_cast<int64_t>(values.size());
            std::vector<float> fast(values.size()), ref(values.size());
            avx2(bytes.data(), fast.data(), k);
            ws::dequant_row_fn_scalar(t)(bytes.data(), ref.data(), k);
            CHECK(std::memcmp(fast.data(), ref.data(), fast.size() * sizeof(float)) == 0);
        }
    }
    for (DType t : {DType::I32, DType::U32}) {
        INFO(ws::dtype_name(t));
        CHECK(first_difference(t, le_bytes(values, 4)) == -1);
        std::vector<uint64_t> high_halves;
        for (uint64_t v : values) high_halves.push_back(v >> 32);
        CHECK(first_difference(t, le_bytes(high_halves, 4)) == -1);
    }
}
