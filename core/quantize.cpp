// SPDX-License-Identifier: MIT
#include "quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dequant.h"
#include "quant_blocks.h"

namespace ws {
namespace {

// C's float -> int8_t conversion as gcc/clang compile it for x86 and wasm: truncate to int32 (out of range
// and NaN give INT32_MIN, cvttss2si's "integer indefinite"), keep the low byte. Defined for every input,
// so UBSan has nothing to flag where ggml relies on undefined behaviour.
int8_t float_to_int8(float v) {
    const int32_t i = (v >= -2147483648.0f && v < 2147483648.0f) ? static_cast<int32_t>(v) : INT32_MIN;
    return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(i) & 0xffu));
}

template <typename Block>
void store_block(uint8_t* dst, int64_t i, const Block& b) {
    std::memcpy(dst + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof(Block));
}

void store_le16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}

}  // namespace

void quantize_row_q8_0_ref(const float* x, uint8_t* y, int64_t k) {
    const int64_t nb = k / QK8_0;
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;  // absolute max
        for (int j = 0; j < QK8_0; j++) {
            const float v = std::fabs(x[i * QK8_0 + j]);
            amax = amax > v ? amax : v;  // ggml's MAX(): a NaN replaces amax, the next number replaces the NaN
        }

        const float d = amax / ((1 << 7) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        block_q8_0 b;
        b.d = fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; ++j) {
            const float x0 = x[i * QK8_0 + j] * id;
            b.qs[j] = float_to_int8(std::round(x0));
        }
        store_block(y, i, b);
    }
}

void quantize_row_q4_0_ref(const float* x, uint8_t* y, int64_t k) {
    constexpr int qk = QK4_0;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;  // absolute max
        float max = 0.0f;   // the value with that magnitude, sign kept (the first one on ties)
        for (int j = 0; j < qk; j++) {
            const float v = x[i * qk + j];
            if (amax < std::fabs(v)) {
                amax = std::fabs(v);
                max = v;
            }
        }

        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        block_q4_0 b;
        b.d = fp32_to_fp16(d);
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = x[i * qk + 0 + j] * id;
            const float x1 = x[i * qk + qk / 2 + j] * id;

            const uint8_t xi0 = static_cast<uint8_t>(std::min<int>(15, float_to_int8(x0 + 8.5f)));
            const uint8_t xi1 = static_cast<uint8_t>(std::min<int>(15, float_to_int8(x1 + 8.5f)));

            b.qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
        }
        store_block(y, i, b);
    }
}

bool quantize_supported(DType t) {
    switch (t) {
        case DType::F32:
        case DType::F16:
        case DType::BF16:
        case DType::Q8_0:
        case DType::Q4_0:
            return true;
        default:
            return false;
    }
}

Status quantize(DType t, const float* src, uint64_t n, uint8_t* dst) {
    if (!quantize_supported(t)) return make_error(Error::kUnsupported, 0, "dtype");
    if (n > static_cast<uint64_t>(INT64_MAX)) return make_error(Error::kOverflow, 0, "n_elements");
    if (n % dtype_traits(t).block_elems != 0) return make_error(Error::kBadShape, 0, "n_elements");
    switch (t) {
        case DType::F32:
            if (n) std::memcpy(dst, src, n * sizeof(float));
            break;
        case DType::F16:
            for (uint64_t i = 0; i < n; ++i) store_le16(dst + 2 * i, fp32_to_fp16(src[i]));
            break;
        case DType::BF16:
            for (uint64_t i = 0; i < n; ++i) store_le16(dst + 2 * i, fp32_to_bf16(src[i]));
            break;
        case DType::Q8_0:
            quantize_row_q8_0_ref(src, dst, static_cast<int64_t>(n));
            break;
        case DType::Q4_0:
            quantize_row_q4_0_ref(src, dst, static_cast<int64_t>(n));
            break;
        default:
            break;
    }
    return ok_status();
}

}  // namespace ws
