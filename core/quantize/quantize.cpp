// SPDX-License-Identifier: MIT
#include "weightstream/quantize.h"

#include <cstring>

#include "quantize/quantize_internal.h"
#include "quantize/quantize_iquants.h"
#include "quantize/row_kernels.h"
#include "weightstream/dequant.h"

namespace ws {
namespace {

// ggml_quantize_chunk's float types: F32 copied as bits, F16 as ggml_fp32_to_fp16_row, BF16 as
// ggml_fp32_to_bf16_row_ref.
void quantize_f32(const float* x, uint8_t* y, int64_t n, const float*) {
    if (n) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}
void quantize_f16(const float* x, uint8_t* y, int64_t n, const float*) {
    detail::row_kernels().f16(x, y, n);
}
void quantize_bf16(const float* x, uint8_t* y, int64_t n, const float*) {
    detail::row_kernels().bf16(x, y, n);
}

// The i-quants (quantize_iquants.h) take rows in bulk; the table takes one row at a time.
using IquantRowsFn = void (*)(const float*, uint8_t*, int64_t, int64_t, const float*);
template <IquantRowsFn fn>
void row_of(const float* x, uint8_t* y, int64_t n, const float* imatrix) {
    fn(x, y, 1, n, imatrix);
}

struct Quantizer {
    DType type;
    detail::QuantizeRowFn fn;
    bool requires_imatrix;  // ggml_quantize_requires_imatrix
};

constexpr Quantizer kQuantizers[] = {
    {DType::F32, quantize_f32, false},
    {DType::F16, quantize_f16, false},
    {DType::BF16, quantize_bf16, false},
    {DType::Q4_0, detail::quantize_q4_0, false},
    {DType::Q4_1, detail::quantize_q4_1, false},
    {DType::Q5_0, detail::quantize_q5_0, false},
    {DType::Q5_1, detail::quantize_q5_1, false},
    {DType::Q8_0, detail::quantize_q8_0, false},
    {DType::Q2_K, detail::quantize_q2_K, false},
    {DType::Q3_K, detail::quantize_q3_K, false},
    {DType::Q4_K, detail::quantize_q4_K, false},
    {DType::Q5_K, detail::quantize_q5_K, false},
    {DType::Q6_K, detail::quantize_q6_K, false},
    {DType::IQ4_NL, detail::quantize_iq4_nl, false},
    {DType::IQ4_XS, detail::quantize_iq4_xs, false},
    {DType::TQ1_0, detail::quantize_tq1_0, false},
    {DType::TQ2_0, detail::quantize_tq2_0, false},
    {DType::MXFP4, detail::quantize_mxfp4, false},
    {DType::NVFP4, detail::quantize_nvfp4, false},
    {DType::Q1_0, detail::quantize_q1_0, false},
    {DType::Q2_0, detail::quantize_q2_0, false},
    {DType::IQ2_XXS, row_of<quantize_iq2_xxs>, true},
    {DType::IQ2_XS, row_of<quantize_iq2_xs>, true},
    {DType::IQ2_S, row_of<quantize_iq2_s>, false},
    {DType::IQ3_XXS, row_of<quantize_iq3_xxs>, false},
    {DType::IQ3_S, row_of<quantize_iq3_s>, false},
    {DType::IQ1_S, row_of<quantize_iq1_s>, true},
    {DType::IQ1_M, row_of<quantize_iq1_m>, false},
};

const Quantizer* find_quantizer(DType t) {
    for (const Quantizer& q : kQuantizers) {
        if (q.type == t) return &q;
    }
    return nullptr;
}

}  // namespace

bool quantize_supported(DType t) {
    const Quantizer* q = find_quantizer(t);
    return q && q->fn;
}

bool quantize_requires_imatrix(DType t) {
    const Quantizer* q = find_quantizer(t);
    return q && q->requires_imatrix;
}

Status quantize_rows(DType t, const float* src, int64_t nrows, int64_t n_per_row, const float* imatrix, uint8_t* dst) {
    const Quantizer* q = find_quantizer(t);
    if (!q || !q->fn) return make_error(Error::kUnsupported, 0, "dtype");
    if (nrows < 0 || n_per_row < 0) return make_error(Error::kBadShape, 0, "nrows/n_per_row");
    const DTypeTraits& traits = dtype_traits(t);
    if (n_per_row % traits.block_elems != 0) return make_error(Error::kBadShape, 0, "n_per_row");
    // The element count and the byte count of the whole tensor must both fit in int64.
    uint64_t row_bytes = 0;
    const bool fits = dtype_bytes_for(t, static_cast<uint64_t>(n_per_row), &row_bytes) &&
                      (nrows == 0 || (n_per_row <= INT64_MAX / nrows &&
                                      row_bytes <= static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(nrows)));
    if (!fits) return make_error(Error::kOverflow, 0, "nrows * n_per_row");
    if (q->requires_imatrix && !imatrix) return make_error(Error::kUnsupported, 0, "imatrix");
    for (int64_t r = 0; r < nrows; ++r) {
        q->fn(src + r * n_per_row, dst + static_cast<uint64_t>(r) * row_bytes, n_per_row, imatrix);
    }
    return ok_status();
}

Status quantize(DType t, const float* src, uint64_t n, uint8_t* dst) {
    if (n > static_cast<uint64_t>(INT64_MAX)) {
        if (!quantize_supported(t)) return make_error(Error::kUnsupported, 0, "dtype");
        return make_error(Error::kOverflow, 0, "n_elements");
    }
    return quantize_rows(t, src, 1, static_cast<int64_t>(n), nullptr, dst);
}

}  // namespace ws
