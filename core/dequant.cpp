// SPDX-License-Identifier: MIT
// The dequantize() dispatcher: DType -> row kernel (a platform's fast kernel, else the scalar reference).
#include "dequant.h"

#include "dequant_internal.h"
#include "dequant_iquants.h"

namespace ws {

DequantRowFn dequant_row_fn_scalar(DType t) {
    switch (t) {
        case DType::F32:
            return dequantize_row_f32;
        case DType::F16:
            return dequantize_row_f16;
        case DType::BF16:
            return dequantize_row_bf16;
        case DType::F64:
            return dequantize_row_f64;
        case DType::C64:
            return dequantize_row_c64;
        case DType::I8:
            return dequantize_row_i8;
        case DType::I16:
            return dequantize_row_i16;
        case DType::I32:
            return dequantize_row_i32;
        case DType::I64:
            return dequantize_row_i64;
        case DType::U8:
            return dequantize_row_u8;
        case DType::U16:
            return dequantize_row_u16;
        case DType::U32:
            return dequantize_row_u32;
        case DType::U64:
            return dequantize_row_u64;
        case DType::BOOL:
            return dequantize_row_bool;
        case DType::F8_E4M3:
            return dequantize_row_f8_e4m3;
        case DType::F8_E5M2:
            return dequantize_row_f8_e5m2;
        case DType::F8_E8M0:
            return dequantize_row_f8_e8m0;
        case DType::F8_E4M3FNUZ:
            return dequantize_row_f8_e4m3fnuz;
        case DType::F8_E5M2FNUZ:
            return dequantize_row_f8_e5m2fnuz;
        case DType::F6_E2M3:
            return dequantize_row_f6_e2m3;
        case DType::F6_E3M2:
            return dequantize_row_f6_e3m2;
        case DType::F4:
            return dequantize_row_f4;
        case DType::Q4_0:
            return dequantize_row_q4_0;
        case DType::Q4_1:
            return dequantize_row_q4_1;
        case DType::Q5_0:
            return dequantize_row_q5_0;
        case DType::Q5_1:
            return dequantize_row_q5_1;
        case DType::Q8_0:
            return dequantize_row_q8_0;
        case DType::Q2_K:
            return dequantize_row_q2_K;
        case DType::Q3_K:
            return dequantize_row_q3_K;
        case DType::Q4_K:
            return dequantize_row_q4_K;
        case DType::Q5_K:
            return dequantize_row_q5_K;
        case DType::Q6_K:
            return dequantize_row_q6_K;
        case DType::IQ2_XXS:
            return dequantize_row_iq2_xxs;
        case DType::IQ2_XS:
            return dequantize_row_iq2_xs;
        case DType::IQ3_XXS:
            return dequantize_row_iq3_xxs;
        case DType::IQ1_S:
            return dequantize_row_iq1_s;
        case DType::IQ4_NL:
            return dequantize_row_iq4_nl;
        case DType::IQ3_S:
            return dequantize_row_iq3_s;
        case DType::IQ2_S:
            return dequantize_row_iq2_s;
        case DType::IQ4_XS:
            return dequantize_row_iq4_xs;
        case DType::IQ1_M:
            return dequantize_row_iq1_m;
        case DType::TQ1_0:
            return dequantize_row_tq1_0;
        case DType::TQ2_0:
            return dequantize_row_tq2_0;
        case DType::MXFP4:
            return dequantize_row_mxfp4;
        case DType::NVFP4:
            return dequantize_row_nvfp4;
        case DType::Q1_0:
            return dequantize_row_q1_0;
        case DType::Q2_0:
            return dequantize_row_q2_0;
        default:
            return nullptr;  // Q8_1, Q8_K (no to_float in ggml), removed and unknown ids
    }
}

DequantRowFn dequant_row_fn(DType t) {
    if (const DequantRowFn fast = detail::dequant_row_fn_x86(t)) return fast;
    if (const DequantRowFn fast = detail::dequant_row_fn_wasm(t)) return fast;
    return dequant_row_fn_scalar(t);
}

Status dequantize(DType t, const uint8_t* src, uint64_t n_elements, float* dst) {
    const DequantRowFn fn = dequant_row_fn(t);
    if (fn == nullptr) return make_error(Error::kUnsupported, 0, "dequantize: type has no decoder");
    const DTypeTraits& traits = dtype_traits(t);
    if (n_elements % traits.block_elems != 0) return make_error(Error::kBadShape, 0, "dequantize: partial block");
    if (n_elements > static_cast<uint64_t>(INT64_MAX)) return make_error(Error::kOverflow, 0, "dequantize: n");
    if (n_elements != 0) fn(src, dst, static_cast<int64_t>(n_elements));
    return ok_status();
}

}  // namespace ws
