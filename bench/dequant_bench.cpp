// SPDX-License-Identifier: MIT
#include "dequant_bench.h"

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"

namespace ws::bench {

uint64_t splitmix64(uint64_t* state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

namespace {

// A float with a random sign and a magnitude spread over [lo, hi) on a log scale.
float random_magnitude(uint64_t* state, float lo, float hi) {
    const uint64_t r = splitmix64(state);
    const double u = static_cast<double>(r >> 11) * 0x1p-53;
    const double v = lo * std::pow(static_cast<double>(hi) / lo, u);
    return static_cast<float>((r & 1) ? -v : v);
}

// Byte offsets of the f16 scale fields within one block of t (none for types without them).
std::vector<size_t> f16_scale_offsets(DType t) {
    switch (t) {
        case DType::Q4_0:
            return {offsetof(block_q4_0, d)};
        case DType::Q4_1:
            return {offsetof(block_q4_1, d), offsetof(block_q4_1, m)};
        case DType::Q5_0:
            return {offsetof(block_q5_0, d)};
        case DType::Q5_1:
            return {offsetof(block_q5_1, d), offsetof(block_q5_1, m)};
        case DType::Q8_0:
            return {offsetof(block_q8_0, d)};
        case DType::Q2_K:
            return {offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)};
        case DType::Q3_K:
            return {offsetof(block_q3_K, d)};
        case DType::Q4_K:
            return {offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)};
        case DType::Q5_K:
            return {offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)};
        case DType::Q6_K:
            return {offsetof(block_q6_K, d)};
        case DType::IQ2_XXS:
            return {offsetof(block_iq2_xxs, d)};
        case DType::IQ2_XS:
            return {offsetof(block_iq2_xs, d)};
        case DType::IQ3_XXS:
            return {offsetof(block_iq3_xxs, d)};
        case DType::IQ1_S:
            return {offsetof(block_iq1_s, d)};
        case DType::IQ4_NL:
            return {offsetof(block_iq4_nl, d)};
        case DType::IQ3_S:
            return {offsetof(block_iq3_s, d)};
        case DType::IQ2_S:
            return {offsetof(block_iq2_s, d)};
        case DType::IQ4_XS:
            return {offsetof(block_iq4_xs, d)};
        case DType::TQ1_0:
            return {offsetof(block_tq1_0, d)};
        case DType::TQ2_0:
            return {offsetof(block_tq2_0, d)};
        case DType::Q1_0:
            return {offsetof(block_q1_0, d)};
        case DType::Q2_0:
            return {offsetof(block_q2_0, d)};
        default:
            return {};
    }
}

void store_le(uint8_t* p, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

std::vector<DType> decodable_types() {
    std::vector<DType> types;
    for (uint32_t v = 0; v < static_cast<uint32_t>(DType::kEnd); ++v) {
        const DType t = static_cast<DType>(v);
        if (dtype_decodable(t)) types.push_back(t);
    }
    return types;
}

std::vector<uint8_t> synthetic_tensor(DType t, uint64_t n_elements, uint64_t seed) {
    uint64_t bytes = 0;
    if (!dtype_bytes_for(t, n_elements, &bytes)) return {};
    std::vector<uint8_t> out(bytes);
    uint64_t state = seed * 0x2545f4914f6cdd1dull + static_cast<uint64_t>(t);
    for (size_t i = 0; i + 8 <= out.size(); i += 8) store_le(&out[i], splitmix64(&state), 8);
    for (size_t i = out.size() & ~size_t(7); i < out.size(); ++i) out[i] = static_cast<uint8_t>(splitmix64(&state));

    const DTypeTraits& traits = dtype_traits(t);
    const uint64_t blocks = n_elements / traits.block_elems;
    switch (t) {
        case DType::F32:
        case DType::C64:
            for (size_t i = 0; i + 4 <= out.size(); i += 4) {
                const float f = random_magnitude(&state, 1e-4f, 1.0f);
                std::memcpy(&out[i], &f, 4);
            }
            return out;
        case DType::F64:
            for (size_t i = 0; i < out.size(); i += 8) {
                const double d = random_magnitude(&state, 1e-4f, 1.0f);
                std::memcpy(&out[i], &d, 8);
            }
            return out;
        case DType::F16:
            for (size_t i = 0; i < out.size(); i += 2)
                store_le(&out[i], fp32_to_fp16(random_magnitude(&state, 1e-4f, 1.0f)), 2);
            return out;
        case DType::BF16:
            for (size_t i = 0; i < out.size(); i += 2)
                store_le(&out[i], fp32_to_bf16(random_magnitude(&state, 1e-4f, 1.0f)), 2);
            return out;
        case DType::MXFP4:
            for (uint64_t b = 0; b < blocks; ++b)
                out[b * traits.block_bytes] = static_cast<uint8_t>(118 + splitmix64(&state) % 10);
            return out;
        default:
            break;
    }
    const std::vector<size_t> scales = f16_scale_offsets(t);
    for (uint64_t b = 0; b < blocks; ++b) {
        for (size_t offset : scales) {
            const float d = std::fabs(random_magnitude(&state, 1e-4f, 1e-1f));
            store_le(&out[b * traits.block_bytes + offset], fp32_to_fp16(d), 2);
        }
    }
    return out;
}

double best_seconds(int reps, const std::function<void()>& fn) {
    double best = 1e300;
    for (int i = 0; i < reps; ++i) {
        const auto start = std::chrono::steady_clock::now();
        fn();
        const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
        best = std::min(best, elapsed.count());
    }
    return best;
}

double store_gbps(float* dst, uint64_t n, int reps) {
    float value = 0.0f;
    const double seconds = best_seconds(reps, [&] {
        value += 1.0f;  // a new value each run, so no run can be skipped
        for (uint64_t i = 0; i < n; ++i) dst[i] = value;
    });
    return static_cast<double>(n) * sizeof(float) / seconds / 1e9;
}

}  // namespace ws::bench
