// SPDX-License-Identifier: MIT
// Q8_0 and the F16/BF16 outputs for AVX2 + F16C CPUs (functions built for that target, called only after
// row_kernels() has checked the CPU). Each is its scalar reference's operations on eight elements at once:
// - Q8_0: the block's largest magnitude (ggml's MAX() order matters only with a NaN: such a block takes the
//   scalar path), d and 1/d in scalar as the reference computes them, x * id rounded half away from zero (plus
//   0.5 - 2^-25 with its sign, truncated: roundf for every float in the int32 range), and cvttps2dq, which
//   gives float_to_int32's INT32_MIN for NaN and out-of-range values, keeping the low byte;
// - F16: vcvtps2ph rounding to nearest even is fp32_to_fp16 for every non-NaN float (overflow to Inf,
//   subnormals kept); a NaN becomes 0x7e00 with its sign, as the reference drops the payload;
// - BF16: fp32_to_bf16's integer arithmetic, lane by lane.
// No FMA (the target has none and the build has -ffp-contract=off).
#include "quantize/row_kernels.h"

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)

#include <immintrin.h>

#include "weightstream/dequant.h"
#include "weightstream/quant_blocks.h"
#include "weightstream/quantize.h"

#define WS_AVX2 __attribute__((target("avx2,f16c")))

namespace ws {
namespace detail {
namespace {

// roundf(q) as an int32, as float_to_int32(std::round(q)) gives it: q plus the float just below 0.5 with q's
// sign, truncated, is roundf(q) for every float below 2^31 in magnitude (checked for all 2^32 bit patterns: the
// sum rounds up to the next integer exactly when q's fraction is 0.5 or more). NaN, +-Inf and larger values stay
// NaN/Inf/out of range and become INT32_MIN.
WS_AVX2 inline __m256i round_to_int32(__m256 q) {
    const __m256 half = _mm256_or_ps(_mm256_and_ps(q, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(0.49999997f));
    return _mm256_cvttps_epi32(_mm256_add_ps(q, half));
}

WS_AVX2 void q8_0(const float* x, uint8_t* y, int64_t k) {
    const int64_t nb = k / QK8_0;
    const __m256 sign_bit = _mm256_set1_ps(-0.0f);
    const __m256i low_byte = _mm256_set1_epi32(0xff);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t i = 0; i < nb; ++i) {
        const float* xb = x + i * QK8_0;
        uint8_t* yb = y + i * static_cast<int64_t>(sizeof(block_q8_0));
        __m256 v[4];
        for (int j = 0; j < 4; ++j) v[j] = _mm256_loadu_ps(xb + 8 * j);
        const __m256 nan =
            _mm256_or_ps(_mm256_cmp_ps(v[0], v[1], _CMP_UNORD_Q), _mm256_cmp_ps(v[2], v[3], _CMP_UNORD_Q));
        if (_mm256_movemask_ps(nan)) {
            quantize_row_q8_0_ref(xb, yb, QK8_0);
            continue;
        }
        // Without NaN, the reference's running MAX() is the largest magnitude, in any order.
        __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign_bit, v[0]), _mm256_andnot_ps(sign_bit, v[1])),
                                 _mm256_max_ps(_mm256_andnot_ps(sign_bit, v[2]), _mm256_andnot_ps(sign_bit, v[3])));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        const float amax = _mm_cvtss_f32(h);

        const float d = amax / ((1 << 7) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t dh = fp32_to_fp16(d);
        yb[0] = static_cast<uint8_t>(dh);
        yb[1] = static_cast<uint8_t>(dh >> 8);

        const __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int j = 0; j < 4; ++j) q[j] = _mm256_and_si256(round_to_int32(_mm256_mul_ps(v[j], vid)), low_byte);
        // The low bytes (0..255 each) pack without saturating; the packs interleave 128-bit halves, which the
        // permutation puts back in element order.
        const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(q[0], q[1]), _mm256_packus_epi32(q[2], q[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(yb + 2), _mm256_permutevar8x32_epi32(bytes, order));
    }
}

WS_AVX2 void f16(const float* x, uint8_t* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256 nan32 = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(_mm256_castps_si256(nan32)),
                                              _mm256_extracti128_si256(_mm256_castps_si256(nan32), 1));
        const __m128i quiet =
            _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16(static_cast<short>(0x8000))), _mm_set1_epi16(0x7e00));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + 2 * i), _mm_blendv_epi8(h, quiet, nan16));
    }
    scalar_row_kernels().f16(x + i, y + 2 * i, n - i);
}

WS_AVX2 void bf16(const float* x, uint8_t* y, int64_t n) {
    int64_t i = 0;
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
    const __m256i inf = _mm256_set1_epi32(0x7f800000);
    for (; i + 8 <= n; i += 8) {
        const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(x + i));
        const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
        const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        const __m256i rounded =
            _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd)), 16);
        const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
        const __m256i r = _mm256_blendv_epi8(rounded, quiet, nan);  // each lane 0..0xffff: packs unsaturated
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + 2 * i),
                         _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
    }
    scalar_row_kernels().bf16(x + i, y + 2 * i, n - i);
}

}  // namespace

const RowKernels kAvx2RowKernels = {q8_0, f16, bf16};

}  // namespace detail
}  // namespace ws

#endif
