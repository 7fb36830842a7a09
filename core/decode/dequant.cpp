// SPDX-License-Identifier: MIT
// The kernel table (one row per dtype: scalar reference, fast kernels, big-endian block fields) and the
// entry points that read it: dequantize(), dequant_row_fn() and swap_to_little_endian().
#include "weightstream/dequant.h"

#include <algorithm>

#include "decode/dequant_internal.h"
#include "decode/dequant_iquants.h"

namespace ws {
namespace detail {
namespace {

#if WS_DEQUANT_X86
#define WS_AVX2(fn) avx2::fn
#else
#define WS_AVX2(fn) nullptr
#endif
#if WS_DEQUANT_SIMD128
#define WS_SIMD128(fn) simd128::fn
#else
#define WS_SIMD128(fn) nullptr
#endif

// Big-endian block layouts as gguf-py's gguf_convert_endian.py swaps them: plain types per element (its
// reader and writer also give the integer types and F64 the file's byte order), Q4_0/Q8_0 the f16 d, Q4_K d
// and dmin, Q6_K the f16 d at byte 208; MXFP4 is bytes only. Other quantized types: no defined order.
constexpr BlockSwap kNoOrder = {false, 0, {0, 0}, {0, 0}};
constexpr BlockSwap kBytes = {true, 0, {0, 0}, {0, 0}};
constexpr BlockSwap swap1(uint16_t offset, uint8_t width) {
    return {true, 1, {offset, 0}, {width, 0}};
}
constexpr BlockSwap kHalf0 = swap1(0, 2);
constexpr BlockSwap kTwoHalves = {true, 2, {0, 2}, {2, 2}};

// clang-format off
// Indexed by codec_slot(): the ggml ids 0 .. kGgmlCount - 1, then the safetensors-only dtypes in enum order.
constexpr DTypeCodec kDTypeCodecs[] = {
    // dtype             scalar reference             x86 AVX2                  AVX-512            wasm SIMD128                big-endian fields
    {DType::F32,         dequantize_row_f32,         WS_AVX2(f32),             nullptr,           WS_SIMD128(f32),            swap1(0, 4)},
    {DType::F16,         dequantize_row_f16,         WS_AVX2(f16),             nullptr,           WS_SIMD128(f16),            kHalf0},
    {DType::Q4_0,        dequantize_row_q4_0,        WS_AVX2(q4_0),            nullptr,           WS_SIMD128(q4_0),           kHalf0},
    {DType::Q4_1,        dequantize_row_q4_1,        WS_AVX2(q4_1),            nullptr,           WS_SIMD128(q4_1),           kNoOrder},
    {DType::Q4_2,        nullptr,                    nullptr,                  nullptr,           nullptr,                    kNoOrder},
    {DType::Q4_3,        nullptr,                    nullptr,                  nullptr,           nullptr,                    kNoOrder},
    {DType::Q5_0,        dequantize_row_q5_0,        WS_AVX2(q5_0),            nullptr,           WS_SIMD128(q5_0),           kNoOrder},
    {DType::Q5_1,        dequantize_row_q5_1,        WS_AVX2(q5_1),            nullptr,           WS_SIMD128(q5_1),           kNoOrder},
    {DType::Q8_0,        dequantize_row_q8_0,        WS_AVX2(q8_0),            nullptr,           WS_SIMD128(q8_0),           kHalf0},
    {DType::Q8_1,        dequantize_row_q8_1,        WS_AVX2(q8_1),            nullptr,           WS_SIMD128(q8_1),           kNoOrder},
    {DType::Q2_K,        dequantize_row_q2_K,        WS_AVX2(q2_K),            nullptr,           WS_SIMD128(q2_K),           kNoOrder},
    {DType::Q3_K,        dequantize_row_q3_K,        WS_AVX2(q3_K),            nullptr,           WS_SIMD128(q3_K),           kNoOrder},
    {DType::Q4_K,        dequantize_row_q4_K,        WS_AVX2(q4_K),            nullptr,           WS_SIMD128(q4_K),           kTwoHalves},
    {DType::Q5_K,        dequantize_row_q5_K,        WS_AVX2(q5_K),            nullptr,           WS_SIMD128(q5_K),           kNoOrder},
    {DType::Q6_K,        dequantize_row_q6_K,        WS_AVX2(q6_K),            nullptr,           WS_SIMD128(q6_K),           swap1(208, 2)},
    {DType::Q8_K,        dequantize_row_q8_K,        WS_AVX2(q8_K),            nullptr,           WS_SIMD128(q8_K),           kNoOrder},
    {DType::IQ2_XXS,     dequantize_row_iq2_xxs,     WS_AVX2(iq2_xxs),         nullptr,           WS_SIMD128(iq2_xxs),        kNoOrder},
    {DType::IQ2_XS,      dequantize_row_iq2_xs,      WS_AVX2(iq2_xs),          nullptr,           WS_SIMD128(iq2_xs),         kNoOrder},
    {DType::IQ3_XXS,     dequantize_row_iq3_xxs,     WS_AVX2(iq3_xxs),         nullptr,           WS_SIMD128(iq3_xxs),        kNoOrder},
    {DType::IQ1_S,       dequantize_row_iq1_s,       WS_AVX2(iq1_s),           nullptr,           WS_SIMD128(iq1_s),          kNoOrder},
    {DType::IQ4_NL,      dequantize_row_iq4_nl,      WS_AVX2(iq4_nl),          nullptr,           WS_SIMD128(iq4_nl),         kNoOrder},
    {DType::IQ3_S,       dequantize_row_iq3_s,       WS_AVX2(iq3_s),           nullptr,           WS_SIMD128(iq3_s),          kNoOrder},
    {DType::IQ2_S,       dequantize_row_iq2_s,       WS_AVX2(iq2_s),           nullptr,           WS_SIMD128(iq2_s),          kNoOrder},
    {DType::IQ4_XS,      dequantize_row_iq4_xs,      WS_AVX2(iq4_xs),          nullptr,           WS_SIMD128(iq4_xs),         kNoOrder},
    {DType::I8,          dequantize_row_i8,          WS_AVX2(i8),              nullptr,           WS_SIMD128(i8),             kBytes},
    {DType::I16,         dequantize_row_i16,         WS_AVX2(i16),             nullptr,           WS_SIMD128(i16),            swap1(0, 2)},
    {DType::I32,         dequantize_row_i32,         WS_AVX2(i32),             nullptr,           WS_SIMD128(i32),            swap1(0, 4)},
    {DType::I64,         dequantize_row_i64,         WS_AVX2(i64),             WS_AVX2(i64_avx512), WS_SIMD128(i64),            swap1(0, 8)},
    {DType::F64,         dequantize_row_f64,         WS_AVX2(f64),             nullptr,           WS_SIMD128(f64),            swap1(0, 8)},
    {DType::IQ1_M,       dequantize_row_iq1_m,       WS_AVX2(iq1_m),           nullptr,           WS_SIMD128(iq1_m),          kNoOrder},
    {DType::BF16,        dequantize_row_bf16,        WS_AVX2(bf16),            nullptr,           WS_SIMD128(bf16),           swap1(0, 2)},
    {DType::Q4_0_4_4,    nullptr,                    nullptr,                  nullptr,           nullptr,                    kNoOrder},
    {DType::Q4_0_4_8,    nullptr,                    nullptr,                  nullptr,           nullptr,                    kNoOrder},
    {DType::Q4_0_8_8,    nullptr,                    nullptr,                  nullptr,           nullptr,                    kNoOrder},
    {DType::TQ1_0,       dequantize_row_tq1_0,       WS_AVX2(tq1_0),           nullptr,           WS_SIMD128(tq1_0),          kNoOrder},
    {DType::TQ2_0,       dequantize_row_tq2_0,       WS_AVX2(tq2_0),           nullptr,           WS_SIMD128(tq2_0),          kNoOrder},
    {DType::IQ4_NL_4_4,  nullptr,                    nullptr,                  nullptr,           nullptr,                    kNoOrder},
    {DType::IQ4_NL_4_8,  nullptr,                    nullptr,                  nullptr,           nullptr,                    kNoOrder},
    {DType::IQ4_NL_8_8,  nullptr,                    nullptr,                  nullptr,           nullptr,                    kNoOrder},
    {DType::MXFP4,       dequantize_row_mxfp4,       WS_AVX2(mxfp4),           nullptr,           WS_SIMD128(mxfp4),          kBytes},
    {DType::NVFP4,       dequantize_row_nvfp4,       WS_AVX2(nvfp4),           nullptr,           WS_SIMD128(nvfp4),          kNoOrder},
    {DType::Q1_0,        dequantize_row_q1_0,        WS_AVX2(q1_0),            nullptr,           WS_SIMD128(q1_0),           kNoOrder},
    {DType::Q2_0,        dequantize_row_q2_0,        WS_AVX2(q2_0),            nullptr,           WS_SIMD128(q2_0),           kNoOrder},
    // safetensors only (no GGUF file holds them, so no big-endian layout)
    {DType::BOOL,        dequantize_row_bool,        WS_AVX2(boolean),         nullptr,           WS_SIMD128(boolean),        kNoOrder},
    {DType::U8,          dequantize_row_u8,          WS_AVX2(u8),              nullptr,           WS_SIMD128(u8),             kNoOrder},
    {DType::U16,         dequantize_row_u16,         WS_AVX2(u16),             nullptr,           WS_SIMD128(u16),            kNoOrder},
    {DType::U32,         dequantize_row_u32,         WS_AVX2(u32),             nullptr,           WS_SIMD128(u32),            kNoOrder},
    {DType::U64,         dequantize_row_u64,         WS_AVX2(u64),             WS_AVX2(u64_avx512), WS_SIMD128(u64),            kNoOrder},
    {DType::C64,         dequantize_row_c64,         WS_AVX2(c64),             nullptr,           WS_SIMD128(c64),            kNoOrder},
    {DType::F8_E4M3,     dequantize_row_f8_e4m3,     WS_AVX2(f8_e4m3),         nullptr,           WS_SIMD128(f8_e4m3),        kNoOrder},
    {DType::F8_E5M2,     dequantize_row_f8_e5m2,     WS_AVX2(f8_e5m2),         nullptr,           WS_SIMD128(f8_e5m2),        kNoOrder},
    {DType::F8_E8M0,     dequantize_row_f8_e8m0,     WS_AVX2(f8_e8m0),         nullptr,           WS_SIMD128(f8_e8m0),        kNoOrder},
    {DType::F8_E4M3FNUZ, dequantize_row_f8_e4m3fnuz, WS_AVX2(f8_e4m3fnuz),     nullptr,           WS_SIMD128(f8_e4m3fnuz),    kNoOrder},
    {DType::F8_E5M2FNUZ, dequantize_row_f8_e5m2fnuz, WS_AVX2(f8_e5m2fnuz),     nullptr,           WS_SIMD128(f8_e5m2fnuz),    kNoOrder},
    {DType::F6_E2M3,     dequantize_row_f6_e2m3,     WS_AVX2(f6_e2m3),         nullptr,           WS_SIMD128(f6_e2m3),        kNoOrder},
    {DType::F6_E3M2,     dequantize_row_f6_e3m2,     WS_AVX2(f6_e3m2),         nullptr,           WS_SIMD128(f6_e3m2),        kNoOrder},
    {DType::F4,          dequantize_row_f4,          WS_AVX2(f4),              nullptr,           WS_SIMD128(f4),             kNoOrder},
};
// clang-format on

constexpr size_t kGgmlSlots = static_cast<size_t>(DType::kGgmlCount);
constexpr size_t kSlots = kGgmlSlots + (static_cast<size_t>(DType::kEnd) - static_cast<size_t>(DType::BOOL));

// The table index of t, kSlots for ids outside both ranges.
constexpr size_t codec_slot(DType t) {
    const uint32_t v = static_cast<uint32_t>(t);
    if (v < kGgmlSlots) return v;
    if (v >= static_cast<uint32_t>(DType::BOOL) && v < static_cast<uint32_t>(DType::kEnd)) {
        return kGgmlSlots + (v - static_cast<uint32_t>(DType::BOOL));
    }
    return kSlots;
}

constexpr bool rows_in_slot_order() {
    for (size_t i = 0; i < kSlots; ++i) {
        if (codec_slot(kDTypeCodecs[i].dtype) != i) return false;
    }
    return true;
}
static_assert(sizeof(kDTypeCodecs) / sizeof(kDTypeCodecs[0]) == kSlots, "one row per dtype");
static_assert(rows_in_slot_order(), "each row sits at its dtype's slot");

constexpr DTypeCodec kNoCodec = {DType::kUnknown, nullptr, nullptr, nullptr, nullptr, kNoOrder};

}  // namespace

const DTypeCodec& dtype_codec(DType t) {
    const size_t slot = codec_slot(t);
    return slot < kSlots ? kDTypeCodecs[slot] : kNoCodec;
}

DequantRowFn dequant_row_fn_x86(DType t, bool allow_avx512) {
#if WS_DEQUANT_X86
    const X86Features& cpu = x86_features();
    const DTypeCodec& row = dtype_codec(t);
    if (allow_avx512 && cpu.avx512dq_vl && row.avx512) return row.avx512;
    return cpu.avx2_f16c ? row.avx2 : nullptr;
#else
    (void)t;
    (void)allow_avx512;
    return nullptr;
#endif
}

DequantRowFn dequant_row_fn_wasm(DType t) {
    return dtype_codec(t).simd128;
}

}  // namespace detail

std::string decode_problem(const ModelInfo& m, const TensorInfo& t) {
    if (!dtype_decodable(t.dtype)) return "type " + t.dtype_name() + " has no float decoder";
    if (m.big_endian && !big_endian_order_defined(t.dtype)) {
        return "type " + t.dtype_name() + " has no defined big-endian layout (gguf-py cannot swap it either)";
    }
    return "";
}

bool dtype_decodable(DType t) {
    return detail::dtype_codec(t).scalar != nullptr;
}

DequantRowFn dequant_row_fn_scalar(DType t) {
    return detail::dtype_codec(t).scalar;
}

DequantRowFn dequant_row_fn(DType t) {
    if (const DequantRowFn fast = detail::dequant_row_fn_x86(t)) return fast;
    if (const DequantRowFn fast = detail::dequant_row_fn_wasm(t)) return fast;
    return dequant_row_fn_scalar(t);
}

Status check_decodable(DType t, uint64_t n_elements) {
    if (!dtype_decodable(t)) return make_error(Error::kUnsupported, 0, "dequantize: type has no decoder");
    if (n_elements % dtype_traits(t).block_elems != 0) {
        return make_error(Error::kBadShape, 0, "dequantize: n_elements is not a whole number of blocks");
    }
    // Kernels count elements in int64_t; C64 writes two floats per element.
    if (n_elements > static_cast<uint64_t>(INT64_MAX) / 2) return make_error(Error::kOverflow, 0, "dequantize: n");
    return ok_status();
}

Status dequantize(DType t, const uint8_t* src, uint64_t n_elements, float* dst) {
    WS_TRY(check_decodable(t, n_elements));
    if (n_elements != 0) dequant_row_fn(t)(src, dst, static_cast<int64_t>(n_elements));
    return ok_status();
}

bool big_endian_order_defined(DType t) {
    return detail::dtype_codec(t).big_endian.defined;
}

Status swap_to_little_endian(DType t, uint8_t* blocks, uint64_t n_bytes) {
    const detail::BlockSwap& swap = detail::dtype_codec(t).big_endian;
    if (!swap.defined) {
        return make_error(Error::kUnsupported, 0, "big-endian tensor data: no byte order is defined for this type");
    }
    const uint32_t block_bytes = dtype_traits(t).block_bytes;
    if (n_bytes % block_bytes != 0) {
        return make_error(Error::kBadShape, n_bytes, "big-endian tensor data: not a whole number of blocks");
    }
    for (uint8_t f = 0; f < swap.n_fields; ++f) {
        const uint32_t offset = swap.offset[f], width = swap.width[f];
        for (uint64_t at = offset; at < n_bytes; at += block_bytes) std::reverse(blocks + at, blocks + at + width);
    }
    return ok_status();
}

}  // namespace ws
