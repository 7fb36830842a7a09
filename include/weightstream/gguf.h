// SPDX-License-Identifier: MIT
// GGUF header parser, push-based.
//
// Layout (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), all integers in the file's byte
// order (little-endian, or big-endian when the version reads byte-swapped):
//   "GGUF" magic, u32 version (1, 2 or 3),
//   n_tensors, n_kv: u64 (u32 in v1),
//   n_kv x { key: string, u32 value type, value }
//       string = length (u64; u32 in v1) + bytes, no terminator
//       array  = u32 item type, count (u64; u32 in v1), items (arrays of arrays allowed, depth capped)
//   n_tensors x { name: string, u32 n_dims (<= 4), n_dims x ne (i64; u32 in v1), u32 type, u64 offset }
//   padding to general.alignment (default 32; only when there are tensors), then the data section;
//   each tensor's offset is relative to the data section.
//
// What the parser rejects: Status {code, offset, what}, offset the absolute position of the named field.
//   magic not "GGUF"                                     kBadMagic           0            header.magic
//   version not 1..3 in either byte order                kUnsupportedVersion 4            header.version
//   n_tensors / n_kv above max_tensor_count / max_kv_count  kTooLarge        the count    header.n_tensors, .n_kv
//   ... more entries than the file could hold (each tensor entry >= 24 bytes, each KV >= 14; v1: 20, 10)
//                                                        kTruncated          the count    header.n_tensors, .n_kv
//   string length above max_string_bytes                 kTooLarge           its length   kv.key kv.value kv.array.item
//   string length past the end of the file               kTruncated          its length   (same)
//   value type / array item type >= 13                   kBadType            the type     kv.type / kv.array.type
//   array deeper than max_array_depth (a KV's value is depth 1)
//                                                        kTooLarge           item type    kv.array.depth
//   array count above max_array_length / past the end    kTooLarge / kTruncated  count    kv.array.length
//   empty key / duplicate key                            kBadKey / kDuplicateName  entry  kv.key
//   general.alignment not u32; split.no, split.count not u16; split.tensors.count not i32
//                                                        kBadKey             the type     the key
//   general.alignment 0 or not a power of two            kBadAlignment       the value    general.alignment
//   tensor name of 64 bytes or more (ggml: GGML_MAX_NAME includes the NUL) / duplicate name
//                                                        kTooLarge / kDuplicateName  entry  tensor.name
//   n_dims > 4                                           kBadShape           n_dims       tensor.n_dims
//   a negative dim                                       kBadShape           that dim     tensor.ne
//   element count (or a partial product) >= INT64_MAX    kOverflow           ne[0]        tensor.ne
//   ne[0] not a multiple of the type's block size        kBadShape           ne[0]        tensor.ne
//   byte size beyond 64 bits                             kOverflow           ne[0]        tensor.nbytes
//   offset not a multiple of the alignment               kBadAlignment       offset field tensor.offset
//   tensor data not inside the file (file_size known)    kTruncated          offset field tensor.data
//   tensor data overlapping another tensor's             kBadOffset          offset field tensor.offset
//                                                        (the later one in offset order)
//   a read past file_size                                kTruncated          the field    the field's name
//   a read past max_header_bytes                         kTooLarge           the field    header.size
// Tensors are checked in header order after the directory is read (data_offset depends on its end).
// Accepted with a Warning (code, offset, message "<what>: ..."), in both modes:
//   a bool stored as a byte other than 0/1 (ggml reads it as true)   kBadType  kv.value / kv.array.item
//   a tensor type id this build does not know, or one ggml removed: dtype kUnknown (or the removed
//   DType), nbytes up to the next tensor in offset order, or to the end of the file when its size is
//   known, else 0                                                    kBadType  tensor.type
//   lenient mode only: tensor data not contiguous in header order    kBadOffset tensor.offset
//   lenient mode only: the file ends inside the padding after the last tensor (ggml reads the whole
//   padded data section, so it rejects such a file; only judged when file_size is known)
//                                                                    kTruncated file_size data.padding
// Strict mode turns the last three into errors through gguf_check_strict_layout().
// Scalars of big-endian files are read swapped; scalar array items are stored little-endian in Value::raw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weightstream/model_info.h"
#include "weightstream/parse_options.h"
#include "weightstream/status.h"

namespace ws {

// Parses a GGUF header fed in chunks of any size. Safe on untrusted input: every count and length is
// checked against the bytes that remain and the caps of ParseOptions before anything is allocated.
// Feeding the whole file in one call and feeding it in any chunking give the same ModelInfo.
class GgufParser {
public:
    explicit GgufParser(const ParseOptions& options = ParseOptions());

    // Appends the next bytes of the file (they continue at offset bytes_fed()). Returns kOk when the
    // header is complete (further feeds are ignored), kNeedMoreData when it wants bytes_needed() more,
    // or an error (sticky: later feeds return it again). Only the bytes of the item being parsed are
    // buffered; a chunk that holds the whole header is parsed in place without copying.
    Status feed(const uint8_t* data, size_t size);

    // When feed() returned kNeedMoreData: a lower bound on the bytes the rest of the header needs (what the
    // current item still lacks plus the smallest size of every item still to come), so a reader over
    // HTTP can fetch the header in a few large ranges without reading past it.
    uint64_t bytes_needed() const;
    // When feed() returned kNeedMoreData: a guess of the bytes the rest of the header takes, at least
    // bytes_needed(). The items still to come in a string array being read count at the mean size of its
    // items read so far, the tensor entries still to come at the mean size of those read; the rest at its
    // smallest size. Without tensors (no data section) and with the file size known, the guess is the rest
    // of the file, up to 4 times the other guess. A reader sizes its requests by it: a vocabulary of 100k
    // strings costs one or two requests, not one per halving of the lower bound.
    uint64_t bytes_expected() const;
    uint64_t bytes_fed() const;

    // After kOk: the parsed header (format, version, metadata, tensors, warnings, data_offset).
    const ModelInfo& info() const;
    ModelInfo take_info();
    ~GgufParser();
    GgufParser(const GgufParser&) = delete;
    GgufParser& operator=(const GgufParser&) = delete;

private:
    struct State;
    State* state_;
};

// Checks that `info` (one parsed GGUF file, not a combined split) lays its tensor data out as ggml
// requires: every type known and sized (else kBadType at the tensor's type field), offsets exactly
// contiguous in header order, each padded to the alignment (else kBadOffset at its offset field), the
// file (info.file_size, when not 0) long enough for the last tensor's padding (else kTruncated at
// file_size, "data.padding"). Used
// by `verify`; the parser itself applies it when ParseOptions::strict is set. kInternal for a ModelInfo
// that is not a GGUF header.
Status gguf_check_strict_layout(const ModelInfo& info);

}  // namespace ws
