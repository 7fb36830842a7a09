// SPDX-License-Identifier: MIT
// GGUF writer: the header bytes and the data layout of a GGUF v3 file, computed in memory so a caller can
// stream tensor data of any size after them (native convert writes GBs without holding them).
//
// The bytes are what ggml's gguf_write_to_file writes for the same metadata and tensors (little-endian v3,
// key/value pairs and tensor infos in the order given), with two deliberate differences:
//   - the alignment is the `general.alignment` value when the metadata has one (ggml's writer keeps 32 for
//     a context made by gguf_init_empty, writing a file its own reader then rejects);
//   - with zero tensors the header is not padded, like gguf-py's tokenizer-only files (data_offset == file
//     size); ggml's writer pads even then, and its reader skips no padding when there are no tensors.
// Layout rule (ggml's reader rejects anything else): the data section starts at the header end rounded up
// to the alignment; tensor i's offset is the end of tensor i-1 rounded up to the alignment; every tensor,
// the last one included, is followed by zero bytes up to the next multiple of the alignment.
#pragma once

#include <cstdint>
#include <vector>

#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

constexpr uint32_t kGgufVersion = 3;
constexpr uint32_t kGgufDefaultAlignment = 32;
constexpr uint64_t kGgufMaxTensorName = 63;  // bytes; ggml keeps names in char[64] with a terminator

// Where everything goes in a GGUF file.
struct GgufLayout {
    std::vector<uint8_t> header;  // magic .. padding; the data section starts at header.size()
    uint32_t alignment = kGgufDefaultAlignment;
    uint64_t data_offset = 0;              // == header.size()
    std::vector<uint64_t> tensor_offsets;  // absolute byte offset of each tensor's data
    std::vector<uint64_t> tensor_nbytes;   // bytes of each tensor's data
    std::vector<uint64_t> tensor_padding;  // zero bytes to write after each tensor's data (< alignment)
    uint64_t file_size = 0;                // data_offset + sum of (nbytes + padding)
};

// ggml_n_dims: the number of dims with trailing 1s dropped (at least 1), the n_dims ggml's writer stores.
uint32_t gguf_n_dims(const int64_t ne[4]);

// Lays out a GGUF v3 file with these metadata entries and tensors, in the order given.
// Metadata: MetadataEntry::key and ::value (::offset is ignored); arrays of every item type including
// strings and arrays of arrays (the GGUF spec allows nesting; ggml's reader rejects it). A value's array
// length must match its items. `general.alignment`, when present, must be a uint32 power of two.
// Tensors: TensorInfo::name, ::dtype (a ggml type with a block layout; ::type_id is ignored), ::n_dims
// (0..4) and ::ne (dims at and beyond n_dims must be 1); ::nbytes, when not 0, must equal the size the
// type and shape give. ::offset is ignored: it is assigned here.
// Rejected as ggml would reject the file: an empty (kBadKey) or duplicate key (kDuplicateName), a tensor
// name longer than kGgufMaxTensorName bytes (kTooLarge) or used twice (kDuplicateName), a negative dim or
// ne[0] not a multiple of the type's block size (kBadShape), an element count or size beyond 64 bits
// (kOverflow), a type ggml cannot size (kBadType). Status::offset is where the offending item would start
// in the header.
Result<GgufLayout> gguf_layout(const std::vector<MetadataEntry>& metadata, const std::vector<TensorInfo>& tensors);

// A whole GGUF file in memory: gguf_layout() plus each tensor's bytes and padding. data[i] holds tensor
// i's bytes and must have exactly its size (kBadShape otherwise). For tests and small sample files.
Result<std::vector<uint8_t>> gguf_write(const std::vector<MetadataEntry>& metadata,
                                        const std::vector<TensorInfo>& tensors,
                                        const std::vector<std::vector<uint8_t>>& data);

}  // namespace ws
