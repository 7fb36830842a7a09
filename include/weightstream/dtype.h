// SPDX-License-Identifier: MIT
// The element types of both formats in one table. GGUF tensors use ggml type ids (the enum values below
// 64 are those wire numbers, including ids ggml has since removed); safetensors dtypes that ggml lacks get
// values from 64 up. F32, F16, BF16, F64 and I8..I64 are shared by both formats.
#pragma once

#include <cstdint>
#include <string>

namespace ws {

enum class DType : uint32_t {
    // ggml type ids (ggml.h `enum ggml_type`)
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q4_2 = 4,  // removed from ggml
    Q4_3 = 5,  // removed from ggml
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    Q4_0_4_4 = 31,  // removed from ggml
    Q4_0_4_8 = 32,  // removed from ggml
    Q4_0_8_8 = 33,  // removed from ggml
    TQ1_0 = 34,
    TQ2_0 = 35,
    IQ4_NL_4_4 = 36,  // removed from ggml
    IQ4_NL_4_8 = 37,  // removed from ggml
    IQ4_NL_8_8 = 38,  // removed from ggml
    MXFP4 = 39,
    NVFP4 = 40,
    Q1_0 = 41,
    Q2_0 = 42,
    kGgmlCount = 43,  // ids at or above this are unknown to this build

    // safetensors dtypes without a ggml counterpart
    BOOL = 64,
    U8,
    U16,
    U32,
    U64,
    C64,          // complex64: interleaved float32 real/imaginary pairs
    F8_E4M3,      // float8 e4m3fn: no infinities, 0x7f/0xff NaN
    F8_E5M2,      // float8 e5m2: IEEE-like
    F8_E8M0,      // float8 e8m0fnu: an exponent only, 0xff NaN
    F8_E4M3FNUZ,  // float8 e4m3fnuz: bias 8, 0x80 the only NaN
    F8_E5M2FNUZ,  // float8 e5m2fnuz: bias 16, 0x80 the only NaN
    F6_E2M3,      // float6 e2m3fn (OCP MX): 4 values in 3 bytes
    F6_E3M2,      // float6 e3m2fn (OCP MX): 4 values in 3 bytes
    F4,           // float4 e2m1fn (OCP MX): 2 values per byte, first in the low nibble
    kEnd,

    kUnknown = 0xffffffffu,  // a GGUF type id this build does not know (the id itself is in TensorInfo)
};

enum class DTypeKind : uint8_t {
    kUnknown,    // an id this build does not know: bytes cannot be sized from the shape
    kRemoved,    // a ggml id that ggml removed (Q4_2, Q4_0_4_4, ...): known name, no layout
    kFloat,      // plain IEEE or IEEE-like floats (F32, F16, BF16, F64, F8/F6/F4, C64)
    kInteger,    // I8..I64, U8..U64, BOOL
    kQuantized,  // ggml block formats
};

struct DTypeTraits {
    const char* name;  // upper case as ARCHITECTURE.md spells it ("Q4_K", "F8_E4M3")
    DTypeKind kind;
    uint32_t block_elems;  // elements per block (1 for scalar types; 2 for F4, 4 for F6)
    uint32_t block_bytes;  // bytes per block
    // Whether a float32 decoder exists is the kernel table's to say: dtype_decodable() (dequant.h).
};

// The traits of t; for unknown ids the kind is kUnknown and the sizes are 0. Never fails.
const DTypeTraits& dtype_traits(DType t);

// "Q4_K". Unknown and removed types have no listed name: use ggml_type_name() with the file's id.
const char* dtype_name(DType t);

// The name a GGUF tensor of type id `id` is listed with: "Q4_K", or "UNKNOWN(77)" for an id this build
// does not know or that ggml removed (its historical name is in dtype_traits().name).
std::string ggml_type_name(uint32_t id);

// The DType of a GGUF tensor type id: DType::kUnknown for ids >= kGgmlCount.
inline DType dtype_from_ggml_id(uint32_t id) {
    return id < static_cast<uint32_t>(DType::kGgmlCount) ? static_cast<DType>(id) : DType::kUnknown;
}

// The dtype a safetensors header names ("F32", "F8_E4M3", ...), or false if the name is unknown.
bool dtype_from_safetensors_name(const char* name, size_t len, DType* out);

// Bytes for n elements of t: false if t has no layout, n is not a whole number of blocks, or on overflow.
bool dtype_bytes_for(DType t, uint64_t n_elements, uint64_t* bytes);

}  // namespace ws
