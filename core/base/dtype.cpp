// SPDX-License-Identifier: MIT
#include "weightstream/dtype.h"

#include <cstring>

namespace ws {
namespace {

constexpr DTypeKind F = DTypeKind::kFloat;
constexpr DTypeKind I = DTypeKind::kInteger;
constexpr DTypeKind Q = DTypeKind::kQuantized;
constexpr DTypeKind R = DTypeKind::kRemoved;

// clang-format off
// Indexed by ggml type id. Block sizes and bytes as ggml_get_type_traits() reports them.
constexpr DTypeTraits kGgml[] = {
    {"F32", F, 1, 4},         // 0
    {"F16", F, 1, 2},         // 1
    {"Q4_0", Q, 32, 18},      // 2
    {"Q4_1", Q, 32, 20},      // 3
    {"Q4_2", R, 0, 0},        // 4
    {"Q4_3", R, 0, 0},        // 5
    {"Q5_0", Q, 32, 22},      // 6
    {"Q5_1", Q, 32, 24},      // 7
    {"Q8_0", Q, 32, 34},      // 8
    {"Q8_1", Q, 32, 36},      // 9: ggml's activation format
    {"Q2_K", Q, 256, 84},     // 10
    {"Q3_K", Q, 256, 110},    // 11
    {"Q4_K", Q, 256, 144},    // 12
    {"Q5_K", Q, 256, 176},    // 13
    {"Q6_K", Q, 256, 210},    // 14
    {"Q8_K", Q, 256, 292},    // 15: ggml's internal activation format, no to_float
    {"IQ2_XXS", Q, 256, 66},  // 16
    {"IQ2_XS", Q, 256, 74},   // 17
    {"IQ3_XXS", Q, 256, 98},  // 18
    {"IQ1_S", Q, 256, 50},    // 19
    {"IQ4_NL", Q, 32, 18},    // 20
    {"IQ3_S", Q, 256, 110},   // 21
    {"IQ2_S", Q, 256, 82},    // 22
    {"IQ4_XS", Q, 256, 136},  // 23
    {"I8", I, 1, 1},          // 24
    {"I16", I, 1, 2},         // 25
    {"I32", I, 1, 4},         // 26
    {"I64", I, 1, 8},         // 27
    {"F64", F, 1, 8},         // 28
    {"IQ1_M", Q, 256, 56},    // 29
    {"BF16", F, 1, 2},        // 30
    {"Q4_0_4_4", R, 0, 0},    // 31
    {"Q4_0_4_8", R, 0, 0},    // 32
    {"Q4_0_8_8", R, 0, 0},    // 33
    {"TQ1_0", Q, 256, 54},    // 34
    {"TQ2_0", Q, 256, 66},    // 35
    {"IQ4_NL_4_4", R, 0, 0},  // 36
    {"IQ4_NL_4_8", R, 0, 0},  // 37
    {"IQ4_NL_8_8", R, 0, 0},  // 38
    {"MXFP4", Q, 32, 17},     // 39
    {"NVFP4", Q, 64, 36},     // 40
    {"Q1_0", Q, 128, 18},     // 41
    {"Q2_0", Q, 64, 18},      // 42
};
static_assert(sizeof(kGgml) / sizeof(kGgml[0]) == static_cast<size_t>(DType::kGgmlCount), "one entry per ggml id");

// Indexed by DType value - 64, in enum order.
constexpr DTypeTraits kSafetensorsOnly[] = {
    {"BOOL", I, 1, 1},
    {"U8", I, 1, 1},
    {"U16", I, 1, 2},
    {"U32", I, 1, 4},
    {"U64", I, 1, 8},
    {"C64", F, 1, 8},
    {"F8_E4M3", F, 1, 1},
    {"F8_E5M2", F, 1, 1},
    {"F8_E8M0", F, 1, 1},
    {"F8_E4M3FNUZ", F, 1, 1},
    {"F8_E5M2FNUZ", F, 1, 1},
    {"F6_E2M3", F, 4, 3},
    {"F6_E3M2", F, 4, 3},
    {"F4", F, 2, 1},
};
static_assert(sizeof(kSafetensorsOnly) / sizeof(kSafetensorsOnly[0]) ==
                  static_cast<size_t>(DType::kEnd) - static_cast<size_t>(DType::BOOL),
              "one entry per safetensors-only dtype");

constexpr DTypeTraits kUnknownTraits = {"UNKNOWN", DTypeKind::kUnknown, 0, 0};

// Every dtype a safetensors header may name. The shared ones map to the ggml ids.
struct NamedDType {
    const char* name;
    DType dtype;
};
constexpr NamedDType kSafetensorsNames[] = {
    {"BOOL", DType::BOOL},         {"U8", DType::U8},
    {"I8", DType::I8},             {"I16", DType::I16},
    {"U16", DType::U16},           {"F16", DType::F16},
    {"BF16", DType::BF16},         {"I32", DType::I32},
    {"U32", DType::U32},           {"F32", DType::F32},
    {"F64", DType::F64},           {"I64", DType::I64},
    {"U64", DType::U64},           {"C64", DType::C64},
    {"F8_E4M3", DType::F8_E4M3},   {"F8_E5M2", DType::F8_E5M2},
    {"F8_E8M0", DType::F8_E8M0},   {"F8_E4M3FNUZ", DType::F8_E4M3FNUZ},
    {"F8_E5M2FNUZ", DType::F8_E5M2FNUZ}, {"F6_E2M3", DType::F6_E2M3},
    {"F6_E3M2", DType::F6_E3M2},   {"F4", DType::F4},
};

// clang-format on

}  // namespace

const DTypeTraits& dtype_traits(DType t) {
    const uint32_t v = static_cast<uint32_t>(t);
    if (v < static_cast<uint32_t>(DType::kGgmlCount)) return kGgml[v];
    if (v >= static_cast<uint32_t>(DType::BOOL) && v < static_cast<uint32_t>(DType::kEnd)) {
        return kSafetensorsOnly[v - static_cast<uint32_t>(DType::BOOL)];
    }
    return kUnknownTraits;
}

const char* dtype_name(DType t) {
    return dtype_traits(t).name;
}

std::string ggml_type_name(uint32_t id) {
    const DTypeTraits& traits = dtype_traits(dtype_from_ggml_id(id));
    if (traits.kind == DTypeKind::kUnknown || traits.kind == DTypeKind::kRemoved) {
        return "UNKNOWN(" + std::to_string(id) + ")";
    }
    return traits.name;
}

bool dtype_from_safetensors_name(const char* name, size_t len, DType* out) {
    for (const NamedDType& entry : kSafetensorsNames) {
        if (std::strlen(entry.name) == len && std::memcmp(entry.name, name, len) == 0) {
            *out = entry.dtype;
            return true;
        }
    }
    return false;
}

bool dtype_bytes_for(DType t, uint64_t n_elements, uint64_t* bytes) {
    const DTypeTraits& traits = dtype_traits(t);
    if (traits.block_elems == 0 || n_elements % traits.block_elems != 0) return false;
    const uint64_t blocks = n_elements / traits.block_elems;
    if (blocks > UINT64_MAX / traits.block_bytes) return false;
    *bytes = blocks * traits.block_bytes;
    return true;
}

}  // namespace ws
