// SPDX-License-Identifier: MIT
// safetensors writer: the header bytes and the data layout of a safetensors file, computed in memory so a
// caller can stream the tensor data after them.
//
// The header is what the reference crate writes: u64 little-endian N, then N bytes of compact JSON
// `{"__metadata__":{...},"name":{"dtype":"F32","shape":[..],"data_offsets":[begin,end]},...}` padded with
// spaces so that N (and so the data section's start, 8 + N) is a multiple of 8. Tensors are laid out in the
// order given, back to back from offset 0 of the data section; "__metadata__" is written only when there
// are metadata entries.
#pragma once

#include <cstdint>
#include <vector>

#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

// Where everything goes in a safetensors file.
struct SafetensorsLayout {
    std::vector<uint8_t> header;           // the 8-byte length and the padded JSON
    uint64_t data_offset = 0;              // == header.size(), a multiple of 8
    std::vector<uint64_t> tensor_offsets;  // absolute byte offset of each tensor's data
    std::vector<uint64_t> tensor_nbytes;   // bytes of each tensor's data (no padding between tensors)
    uint64_t file_size = 0;                // data_offset + sum of nbytes
};

// Lays out a safetensors file with these `__metadata__` entries and tensors, in the order given.
// Metadata values must be strings (kBadType). Tensors: TensorInfo::name, ::dtype (a safetensors dtype:
// F64 F32 F16 BF16 I64..I8 U64..U8 BOOL C64 F8_* F6_* F4, else kBadType) and the shape (::full_shape when
// set, else ::n_dims and ::ne); ::nbytes, when not 0, must equal the size the dtype and shape give
// (kBadShape); ::offset is assigned here. Names and keys must be valid UTF-8 (kBadJson); a tensor may not
// be called "__metadata__" (kBadKey); duplicates are kDuplicateName; element counts and sizes beyond 64
// bits are kOverflow; a sub-byte dtype whose elements do not fill whole bytes is kBadShape. The JSON is
// capped at kSafetensorsMaxHeader bytes (kTooLarge). Status::offset is the tensor's or entry's index.
Result<SafetensorsLayout> safetensors_layout(const std::vector<MetadataEntry>& metadata,
                                             const std::vector<TensorInfo>& tensors);

// A whole safetensors file in memory: the layout plus each tensor's bytes. data[i] must hold exactly
// tensor i's size (kBadShape otherwise). For tests and small sample files.
Result<std::vector<uint8_t>> safetensors_write(const std::vector<MetadataEntry>& metadata,
                                               const std::vector<TensorInfo>& tensors,
                                               const std::vector<std::vector<uint8_t>>& data);

}  // namespace ws
