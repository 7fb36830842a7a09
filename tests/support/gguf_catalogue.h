// SPDX-License-Identifier: MIT
// The corrupt-GGUF catalogue: one named defect per entry, each a small file written by gguf_builder.h
// with exactly one field broken, plus the Status the parser must return for it (code, what, absolute
// offset). The parser tests, the fuzz seed corpus and the CLI tests all use this table.
//
// How to run an entry: parse `bytes` with ParseOptions::file_size = bytes.size() (as the CLI does).
//   - neither flag set: strict and lenient parses both fail with exactly {code, offset, what};
//   - strict_only: the strict parse fails with it; the lenient parse succeeds and reports a Warning
//     with that code and offset whose message starts with "<what>: ";
//   - warning_only: ggml accepts the file as well, so both parses succeed with that Warning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf_builder.h"
#include "weightstream/status.h"

namespace ws_test {

enum class GgufDefect {
    kBadMagic,
    kVersion0,
    kVersion4,
    kNTensorsHuge,
    kNKvHuge,
    kNTensorsImplausible,
    kNKvImplausible,
    kKeyLengthHuge,
    kKeyLengthPastEnd,
    kStringLengthHuge,
    kStringLengthPastEnd,
    kArrayCountHuge,
    kArrayCountPastEnd,
    kArrayItemLengthHuge,
    kBadValueType,
    kBadArrayItemType,
    kArrayTooDeep,
    kEmptyKey,
    kDuplicateKey,
    kAlignmentWrongType,
    kAlignmentZero,
    kAlignmentNotPowerOfTwo,
    kTensorNameTooLong,
    kTensorNameLengthHuge,
    kDuplicateTensorName,
    kNDims5,
    kNegativeDim,
    kElementCountOverflow,
    kByteSizeOverflow,
    kNe0NotBlockMultiple,
    kOffsetMisaligned,
    kOffsetPastEnd,
    kTensorDataTruncated,
    kOverlappingTensors,
    kUnknownTensorType,
    kRemovedTensorType,
    kNonContiguousOffsets,
    kOutOfOrderOffsets,
    kBadBool,
    kBadBoolArrayItem,
    kSplitNoWrongType,
    kSplitCountWrongType,
    kSplitTensorsCountWrongType,
    kTruncatedInKv,
    kTruncatedInTensorInfo,
    kBigEndianNDims5,
    kV1StringPastEnd,
    kV1NTensorsHuge,
    kMissingFinalPadding,
    kCount,
};

struct GgufCorruptCase {
    std::string name;
    std::vector<uint8_t> bytes;
    ws::Error code = ws::Error::kOk;
    const char* what = "";
    uint64_t offset = 0;
    bool strict_only = false;   // an error for strict parsing, a Warning for lenient parsing
    bool warning_only = false;  // a Warning in both modes
};

// The valid file every defect starts from: 5 KVs (string, u32, bool, string array, f32 array) and three
// tensors (F32 [8,2], Q4_0 [32,2], F16 [16]) laid out as ggml writes them.
inline GgufSpec gguf_catalogue_base(uint32_t version = 3, bool big_endian = false) {
    GgufSpec s;
    s.version = version;
    s.big_endian = big_endian;
    s.kvs = {
        {"general.architecture", val_str("test")},
        {"test.count", val_u32(7)},
        {"test.flag", val_bool(true)},
        {"test.tokens", val_array_str({"a", "bc", ""})},
        {"test.scores", val_array<float>(ws::ValueType::kFloat32, {0.5f, -1.0f})},
    };
    s.tensors = {
        {"a.weight", 0, {8, 2}, {}, kAutoOffset},
        {"b.weight", 2, {32, 2}, {}, kAutoOffset},
        {"c.weight", 1, {16}, {}, kAutoOffset},
    };
    return s;
}

inline const char* gguf_defect_name(GgufDefect d) {
    static const char* const kNames[] = {
        "bad_magic",
        "version_0",
        "version_4",
        "n_tensors_huge",
        "n_kv_huge",
        "n_tensors_implausible",
        "n_kv_implausible",
        "key_length_huge",
        "key_length_past_end",
        "string_length_huge",
        "string_length_past_end",
        "array_count_huge",
        "array_count_past_end",
        "array_item_length_huge",
        "bad_value_type",
        "bad_array_item_type",
        "array_too_deep",
        "empty_key",
        "duplicate_key",
        "alignment_wrong_type",
        "alignment_zero",
        "alignment_not_power_of_two",
        "tensor_name_too_long",
        "tensor_name_length_huge",
        "duplicate_tensor_name",
        "n_dims_5",
        "negative_dim",
        "element_count_overflow",
        "byte_size_overflow",
        "ne0_not_block_multiple",
        "offset_misaligned",
        "offset_past_end",
        "tensor_data_truncated",
        "overlapping_tensors",
        "unknown_tensor_type",
        "removed_tensor_type",
        "non_contiguous_offsets",
        "out_of_order_offsets",
        "bad_bool",
        "bad_bool_array_item",
        "split_no_wrong_type",
        "split_count_wrong_type",
        "split_tensors_count_wrong_type",
        "truncated_in_kv",
        "truncated_in_tensor_info",
        "big_endian_n_dims_5",
        "v1_string_past_end",
        "v1_n_tensors_huge",
        "missing_final_padding",
    };
    static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(GgufDefect::kCount), "one name each");
    return kNames[static_cast<size_t>(d)];
}

// Overwrites a field of `width` bytes in the given byte order.
inline void put_field(std::vector<uint8_t>& bytes, uint64_t at, uint64_t v, unsigned width, bool big_endian = false) {
    for (unsigned i = 0; i < width; ++i) {
        const unsigned shift = big_endian ? (width - 1 - i) * 8 : i * 8;
        bytes[at + i] = static_cast<uint8_t>(v >> shift);
    }
}

inline GgufCorruptCase make_gguf_defect(GgufDefect d) {
    using ws::Error;
    GgufSpec spec = gguf_catalogue_base();
    GgufCorruptCase c;
    c.name = gguf_defect_name(d);
    // Defects made by changing the description: the builder then lays the file out around them.
    switch (d) {
        case GgufDefect::kArrayTooDeep: {
            // Depth 5: four arrays of arrays around an array of u8; the parser's cap is 4 levels.
            ws::Value v = val_array<uint8_t>(ws::ValueType::kUint8, {1});
            for (int i = 0; i < 4; ++i) v = val_array_arr({v});
            spec.kvs.push_back({"test.deep", v});
            break;
        }
        case GgufDefect::kEmptyKey:
            spec.kvs[1].first = "";
            break;
        case GgufDefect::kDuplicateKey:
            spec.kvs[2].first = spec.kvs[1].first;
            break;
        case GgufDefect::kAlignmentWrongType:
            spec.kvs.push_back({"general.alignment", val_u64(32)});
            break;
        case GgufDefect::kAlignmentZero:
            spec.kvs.push_back({"general.alignment", val_u32(0)});
            break;
        case GgufDefect::kAlignmentNotPowerOfTwo:
            spec.kvs.push_back({"general.alignment", val_u32(48)});
            spec.alignment = 32;
            break;
        case GgufDefect::kTensorNameTooLong:
            spec.tensors[1].name = std::string(64, 'x');
            break;
        case GgufDefect::kDuplicateTensorName:
            spec.tensors[2].name = spec.tensors[0].name;
            break;
        case GgufDefect::kNonContiguousOffsets:
            spec.tensors[2].offset = 160;
            break;  // ggml expects 128
        case GgufDefect::kOutOfOrderOffsets:
            // c at 0, b at 32, a at 96: aligned and disjoint, but not in header order.
            spec.tensors[0].offset = 96;
            spec.tensors[1].offset = 32;
            spec.tensors[2].offset = 0;
            break;
        case GgufDefect::kBadBoolArrayItem:
            spec.kvs.push_back({"test.bools", val_array<uint8_t>(ws::ValueType::kBool, {1, 0, 1})});
            break;
        case GgufDefect::kSplitNoWrongType:
            spec.kvs.push_back({"split.no", val_u32(0)});
            break;
        case GgufDefect::kSplitCountWrongType:
            spec.kvs.push_back({"split.count", val_i32(1)});
            break;
        case GgufDefect::kSplitTensorsCountWrongType:
            spec.kvs.push_back({"split.tensors.count", val_u32(3)});
            break;
        case GgufDefect::kBigEndianNDims5:
            spec = gguf_catalogue_base(3, true);
            break;
        case GgufDefect::kV1StringPastEnd:
        case GgufDefect::kV1NTensorsHuge:
            spec = gguf_catalogue_base(1, false);
            break;
        case GgufDefect::kMissingFinalPadding:
            spec.tensors[2].ne = {8};  // 16 bytes of F16, padded to 32 by the builder
            break;
        default:
            break;
    }
    BuiltGguf built = build_gguf(spec);
    std::vector<uint8_t>& b = built.bytes;
    const GgufLayout& L = built.layout;
    const unsigned lw = spec.version == 1 ? 4 : 8;  // width of lengths and counts
    const auto expect = [&c](Error code, const char* what, uint64_t offset) {
        c.code = code;
        c.what = what;
        c.offset = offset;
    };
    const uint64_t kHuge = uint64_t(1) << 40;  // above every default cap
    const uint64_t kLong = 100000;             // under the caps, far past the end of these small files
    // Then the byte-level mutations and what each must produce.
    switch (d) {
        case GgufDefect::kBadMagic:
            b[3] = 'X';
            expect(Error::kBadMagic, "header.magic", 0);
            break;
        case GgufDefect::kVersion0:
            put_field(b, 4, 0, 4);
            expect(Error::kUnsupportedVersion, "header.version", 4);
            break;
        case GgufDefect::kVersion4:
            put_field(b, 4, 4, 4);
            expect(Error::kUnsupportedVersion, "header.version", 4);
            break;
        case GgufDefect::kNTensorsHuge:
            put_field(b, L.n_tensors_field, kHuge, 8);
            expect(Error::kTooLarge, "header.n_tensors", L.n_tensors_field);
            break;
        case GgufDefect::kNKvHuge:
            put_field(b, L.n_kv_field, kHuge, 8);
            expect(Error::kTooLarge, "header.n_kv", L.n_kv_field);
            break;
        case GgufDefect::kNTensorsImplausible:
            put_field(b, L.n_tensors_field, kLong, 8);
            expect(Error::kTruncated, "header.n_tensors", L.n_tensors_field);
            break;
        case GgufDefect::kNKvImplausible:
            put_field(b, L.n_kv_field, kLong, 8);
            expect(Error::kTruncated, "header.n_kv", L.n_kv_field);
            break;
        case GgufDefect::kKeyLengthHuge:
            put_field(b, L.kvs[1].entry, kHuge, 8);
            expect(Error::kTooLarge, "kv.key", L.kvs[1].entry);
            break;
        case GgufDefect::kKeyLengthPastEnd:
            put_field(b, L.kvs[1].entry, kLong, 8);
            expect(Error::kTruncated, "kv.key", L.kvs[1].entry);
            break;
        case GgufDefect::kStringLengthHuge:
            put_field(b, L.kvs[0].value, kHuge, 8);
            expect(Error::kTooLarge, "kv.value", L.kvs[0].value);
            break;
        case GgufDefect::kStringLengthPastEnd:
            put_field(b, L.kvs[0].value, kLong, 8);
            expect(Error::kTruncated, "kv.value", L.kvs[0].value);
            break;
        case GgufDefect::kArrayCountHuge:
            put_field(b, L.kvs[3].value + 4, kHuge, 8);
            expect(Error::kTooLarge, "kv.array.length", L.kvs[3].value + 4);
            break;
        case GgufDefect::kArrayCountPastEnd:
            put_field(b, L.kvs[3].value + 4, kLong, 8);
            expect(Error::kTruncated, "kv.array.length", L.kvs[3].value + 4);
            break;
        case GgufDefect::kArrayItemLengthHuge:
            put_field(b, L.kvs[3].value + 12, kHuge, 8);  // the first string item's length
            expect(Error::kTooLarge, "kv.array.item", L.kvs[3].value + 12);
            break;
        case GgufDefect::kBadValueType:
            put_field(b, L.kvs[1].type, 13, 4);
            expect(Error::kBadType, "kv.type", L.kvs[1].type);
            break;
        case GgufDefect::kBadArrayItemType:
            put_field(b, L.kvs[4].value, 99, 4);
            expect(Error::kBadType, "kv.array.type", L.kvs[4].value);
            break;
        case GgufDefect::kArrayTooDeep:
            // Array headers (u32 type + u64 count) of depths 1..4 follow each other; the fourth declares
            // items that are arrays again.
            expect(Error::kTooLarge, "kv.array.depth", L.kvs[5].value + 3 * 12);
            break;
        case GgufDefect::kEmptyKey:
            expect(Error::kBadKey, "kv.key", L.kvs[1].entry);
            break;
        case GgufDefect::kDuplicateKey:
            expect(Error::kDuplicateName, "kv.key", L.kvs[2].entry);
            break;
        case GgufDefect::kAlignmentWrongType:
            expect(Error::kBadKey, "general.alignment", L.kvs[5].type);
            break;
        case GgufDefect::kAlignmentZero:
        case GgufDefect::kAlignmentNotPowerOfTwo:
            expect(Error::kBadAlignment, "general.alignment", L.kvs[5].value);
            break;
        case GgufDefect::kTensorNameTooLong:
            expect(Error::kTooLarge, "tensor.name", L.tensors[1].entry);
            break;
        case GgufDefect::kTensorNameLengthHuge:
            put_field(b, L.tensors[1].entry, kHuge, 8);
            expect(Error::kTooLarge, "tensor.name", L.tensors[1].entry);
            break;
        case GgufDefect::kDuplicateTensorName:
            expect(Error::kDuplicateName, "tensor.name", L.tensors[2].entry);
            break;
        case GgufDefect::kNDims5:
            put_field(b, L.tensors[0].n_dims, 5, 4);
            expect(Error::kBadShape, "tensor.n_dims", L.tensors[0].n_dims);
            break;
        case GgufDefect::kNegativeDim:
            put_field(b, L.tensors[0].ne + 8, static_cast<uint64_t>(int64_t(-2)), 8);
            expect(Error::kBadShape, "tensor.ne", L.tensors[0].ne + 8);
            break;
        case GgufDefect::kElementCountOverflow:
            put_field(b, L.tensors[0].ne, uint64_t(1) << 32, 8);
            put_field(b, L.tensors[0].ne + 8, uint64_t(1) << 32, 8);
            expect(Error::kOverflow, "tensor.ne", L.tensors[0].ne);
            break;
        case GgufDefect::kByteSizeOverflow:
            // 2^62 F32 elements are countable (< INT64_MAX) but take 2^64 bytes.
            put_field(b, L.tensors[0].ne, uint64_t(1) << 62, 8);
            put_field(b, L.tensors[0].ne + 8, 1, 8);
            expect(Error::kOverflow, "tensor.nbytes", L.tensors[0].ne);
            break;
        case GgufDefect::kNe0NotBlockMultiple:
            put_field(b, L.tensors[1].ne, 48, 8);  // Q4_0 blocks hold 32
            expect(Error::kBadShape, "tensor.ne", L.tensors[1].ne);
            break;
        case GgufDefect::kOffsetMisaligned:
            put_field(b, L.tensors[2].offset, L.tensors[2].data - L.data_offset + 16, 8);
            expect(Error::kBadAlignment, "tensor.offset", L.tensors[2].offset);
            break;
        case GgufDefect::kOffsetPastEnd:
            put_field(b, L.tensors[2].offset, uint64_t(1) << 20, 8);
            expect(Error::kTruncated, "tensor.data", L.tensors[2].offset);
            break;
        case GgufDefect::kTensorDataTruncated:
            b.resize(L.tensors[2].data + 10);
            expect(Error::kTruncated, "tensor.data", L.tensors[2].offset);
            break;
        case GgufDefect::kOverlappingTensors:
            put_field(b, L.tensors[1].offset, 32, 8);  // inside a.weight's 64 bytes
            expect(Error::kBadOffset, "tensor.offset", L.tensors[1].offset);
            break;
        case GgufDefect::kUnknownTensorType:
            put_field(b, L.tensors[2].type, 77, 4);
            expect(Error::kBadType, "tensor.type", L.tensors[2].type);
            c.strict_only = true;
            break;
        case GgufDefect::kRemovedTensorType:
            put_field(b, L.tensors[1].type, 4, 4);  // Q4_2
            expect(Error::kBadType, "tensor.type", L.tensors[1].type);
            c.strict_only = true;
            break;
        case GgufDefect::kNonContiguousOffsets:
            expect(Error::kBadOffset, "tensor.offset", L.tensors[2].offset);
            c.strict_only = true;
            break;
        case GgufDefect::kOutOfOrderOffsets:
            expect(Error::kBadOffset, "tensor.offset", L.tensors[0].offset);
            c.strict_only = true;
            break;
        case GgufDefect::kBadBool:
            b[L.kvs[2].value] = 2;
            expect(Error::kBadType, "kv.value", L.kvs[2].value);
            c.warning_only = true;
            break;
        case GgufDefect::kBadBoolArrayItem:
            b[L.kvs[5].value + 12 + 2] = 7;
            expect(Error::kBadType, "kv.array.item", L.kvs[5].value + 12 + 2);
            c.warning_only = true;
            break;
        case GgufDefect::kSplitNoWrongType:
            expect(Error::kBadKey, "split.no", L.kvs[5].type);
            break;
        case GgufDefect::kSplitCountWrongType:
            expect(Error::kBadKey, "split.count", L.kvs[5].type);
            break;
        case GgufDefect::kSplitTensorsCountWrongType:
            expect(Error::kBadKey, "split.tensors.count", L.kvs[5].type);
            break;
        case GgufDefect::kTruncatedInKv:
            // Cut inside the last key (earlier cuts already fail the n_kv / n_tensors plausibility checks).
            b.resize(L.kvs[4].entry + 8 + 4);
            expect(Error::kTruncated, "kv.key", L.kvs[4].entry);
            break;
        case GgufDefect::kTruncatedInTensorInfo:
            b.resize(L.tensors[1].ne + 3);
            expect(Error::kTruncated, "tensor.ne", L.tensors[1].ne);
            break;
        case GgufDefect::kBigEndianNDims5:
            put_field(b, L.tensors[0].n_dims, 5, 4, true);
            expect(Error::kBadShape, "tensor.n_dims", L.tensors[0].n_dims);
            break;
        case GgufDefect::kV1StringPastEnd:
            put_field(b, L.kvs[0].value, kLong, lw);
            expect(Error::kTruncated, "kv.value", L.kvs[0].value);
            break;
        case GgufDefect::kV1NTensorsHuge:
            put_field(b, L.n_tensors_field, 0xffffffffu, lw);
            expect(Error::kTooLarge, "header.n_tensors", L.n_tensors_field);
            break;
        case GgufDefect::kMissingFinalPadding:
            // The file ends right after the last tensor's 16 bytes: ggml's read of the padded data fails.
            b.resize(L.tensors[2].data + L.tensors[2].nbytes);
            expect(Error::kTruncated, "data.padding", b.size());
            c.strict_only = true;
            break;
        case GgufDefect::kCount:
            break;
    }
    c.bytes = std::move(b);
    return c;
}

inline std::vector<GgufCorruptCase> gguf_corrupt_catalogue() {
    std::vector<GgufCorruptCase> all;
    for (int i = 0; i < static_cast<int>(GgufDefect::kCount); ++i)
        all.push_back(make_gguf_defect(static_cast<GgufDefect>(i)));
    return all;
}

}  // namespace ws_test
