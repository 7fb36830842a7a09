// SPDX-License-Identifier: MIT
// Importance matrices as llama-quantize reads them (llama.cpp tools/quantize/quantize.cpp, load_imatrix and
// load_legacy_imatrix), in both of llama-imatrix's formats:
//
//   GGUF (tools/imatrix, save_imatrix): KVs general.type = "imatrix", imatrix.datasets (array of strings),
//   imatrix.chunk_count and imatrix.chunk_size (u32); per weight W two F32 tensors, W.in_sum2 ne
//   [n_per_row, n_mat] (raw sums of squared activations, one row per expert) and W.counts ne [1, n_mat]
//   (rows accumulated per expert). Importance = in_sum2 / count row by row; 1.0 for a whole row whose
//   count is not > 0 (an expert never routed). Other tensors are ignored.
//
//   legacy .dat (little-endian): i32 n_entries (>= 1), then n_entries x { i32 name length, name bytes
//   (read as a C string: cut at the first NUL), i32 ncall, i32 nval (>= 1), nval x f32 }, then optionally
//   { i32 chunk count, i32 dataset length, dataset bytes }. Importance = value / ncall when ncall > 0,
//   the value otherwise. A repeated name replaces the earlier entry (llama reads into a map).
//
// Entries are listed by name (std::string order), each name once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/status.h"

namespace ws {

struct ImatrixEntry {
    std::string name;            // the weight's name ("blk.0.attn_q.weight")
    std::vector<float> values;   // importance per column, n_mat rows of n_per_row (expert e at e * n_per_row)
    int64_t n_per_row = 0;       // GGUF: in_sum2 ne[0]; legacy: nval (no expert split is recorded)
    int64_t n_mat = 1;           // GGUF: experts (rows of in_sum2); legacy: 1
    uint64_t values_offset = 0;  // byte offset in the file of the stored values (in_sum2's data; legacy: the f32s)
};

// More legacy entries than any model has tensors (llama-imatrix writes one per weight matrix): a file that claims
// more is kTooLarge, so the entries' per-entry overhead stays bounded whatever the file.
constexpr int32_t kMaxImatrixEntries = 1 << 16;

struct Imatrix {
    bool legacy = false;
    std::vector<std::string> datasets;  // GGUF imatrix.datasets; legacy: the one trailing name, if any
    int64_t chunk_count = 0;            // imatrix.chunk_count, or the legacy trailer's count (0 without)
    uint32_t chunk_size = 0;            // GGUF only
    std::vector<ImatrixEntry> entries;  // sorted by name

    // The entry for this weight, or nullptr.
    const ImatrixEntry* find(const std::string& name) const;
};

// Parses an importance matrix file held in memory: GGUF when it starts with "GGUF", legacy otherwise.
// Safe on untrusted input: every length is checked against the bytes before anything is allocated, and
// the values vector of an entry is never larger than the floats the file holds for it.
// Errors (Status::offset is the absolute position of the field):
//   GGUF: any GgufParser error; no tensors (kBadShape "imatrix.n_tensors"); a missing or mistyped
//   imatrix.datasets / imatrix.chunk_count / imatrix.chunk_size (kBadKey); an in_sum2 without counts or
//   the reverse (kBadShape "imatrix.counts" / "imatrix.in_sum2"); a sums or counts tensor not F32
//   (kBadType); counts whose element count is not in_sum2's row count (kBadShape "imatrix.counts").
//   legacy: n_entries < 1, a negative name length, nval < 1 (kBadShape), n_entries > kMaxImatrixEntries
//   (kTooLarge), any field past the end (kTruncated).
//   both: a non-finite importance value (kBadShape "imatrix.value", at the stored value's offset), which
//   llama-quantize refuses too.
// Memory: the values (4 bytes per stored float) and a small constant per entry.
Result<Imatrix> parse_imatrix(const uint8_t* data, size_t size);

}  // namespace ws
