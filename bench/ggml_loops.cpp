// SPDX-License-Identifier: MIT
#include "ggml_loops.h"

#include <cstdint>
#include <cstring>

#include "decode/dequant_internal.h"
#include "weightstream/quant_blocks.h"

namespace ws::bench {
namespace {

float bits_to_float(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

uint32_t float_to_bits(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
}

// ggml_compute_fp16_to_fp32 (ggml-impl.h): normals by a shift, an exponent offset and a 2^-112 scale,
// subnormals by the magic-bias subtraction, the choice by comparing the doubled bits with 2^27.
float ggml_fp16_to_fp32(uint16_t h) {
    const uint32_t w = static_cast<uint32_t>(h) << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w;
    const float normalized = bits_to_float((two_w >> 4) + (0xe0u << 23)) * 0x1.0p-112f;
    const float denormalized = bits_to_float((two_w >> 17) | (126u << 23)) - 0.5f;
    return bits_to_float(sign | (two_w < (1u << 27) ? float_to_bits(denormalized) : float_to_bits(normalized)));
}

// ggml reads ggml_bf16_t {uint16_t bits} in host order: a little-endian host, as ours.
inline __attribute__((always_inline)) void bf16_row(const uint8_t* src, float* dst, int64_t k) {
    const auto* x = reinterpret_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < k; ++i) dst[i] = bits_to_float(static_cast<uint32_t>(x[i]) << 16);
}
void bf16_loop(const uint8_t* src, float* dst, int64_t k) {
    bf16_row(src, dst, k);
}
#if WS_DEQUANT_X86
// The loop compiled for the widest ISA, as ggml's -march=native build is, picked by the core's own CPUID
// check (a target_clones resolver would bring libgcc's CPU probe into every start of the CLI).
__attribute__((target("avx2"))) void bf16_loop_avx2(const uint8_t* src, float* dst, int64_t k) {
    bf16_row(src, dst, k);
}
__attribute__((target("avx512f"))) void bf16_loop_avx512(const uint8_t* src, float* dst, int64_t k) {
    bf16_row(src, dst, k);
}
#endif

// GGML_RESTRICT on both, as ggml declares them: what lets the compiler vectorize the loop.
void q4_0_blocks(const block_q4_0* __restrict x, float* __restrict dst, int64_t k) {
    for (int64_t i = 0; i < k / QK4_0; ++i) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK4_0 / 2; ++j) {
            const int x0 = (x[i].qs[j] & 0x0f) - 8;
            const int x1 = (x[i].qs[j] >> 4) - 8;
            dst[i * QK4_0 + j] = static_cast<float>(x0) * d;
            dst[i * QK4_0 + j + QK4_0 / 2] = static_cast<float>(x1) * d;
        }
    }
}

// GGML_RESTRICT on both, as ggml declares them: what lets the compiler vectorize the loop.
void q4_1_blocks(const block_q4_1* __restrict x, float* __restrict dst, int64_t k) {
    for (int64_t i = 0; i < k / QK4_1; ++i) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        const float m = ggml_fp16_to_fp32(x[i].m);
        for (int j = 0; j < QK4_1 / 2; ++j) {
            const int x0 = x[i].qs[j] & 0x0f;
            const int x1 = x[i].qs[j] >> 4;
            dst[i * QK4_1 + j] = static_cast<float>(x0) * d + m;
            dst[i * QK4_1 + j + QK4_1 / 2] = static_cast<float>(x1) * d + m;
        }
    }
}

void q4_0_loop(const uint8_t* src, float* dst, int64_t k) {
    q4_0_blocks(reinterpret_cast<const block_q4_0*>(src), dst, k);
}

void q4_1_loop(const uint8_t* src, float* dst, int64_t k) {
    q4_1_blocks(reinterpret_cast<const block_q4_1*>(src), dst, k);
}

}  // namespace

DequantRowFn ggml_loop(DType t) {
    switch (t) {
        case DType::BF16:
#if WS_DEQUANT_X86
            if (detail::x86_features().avx512dq_vl) return bf16_loop_avx512;
            if (detail::x86_features().avx2_f16c) return bf16_loop_avx2;
#endif
            return bf16_loop;
        case DType::Q4_0:
            return q4_0_loop;
        case DType::Q4_1:
            return q4_1_loop;
        default:
            return nullptr;
    }
}

}  // namespace ws::bench
