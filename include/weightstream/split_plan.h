// SPDX-License-Identifier: MIT
// Writing llama.cpp's split GGUF: what `llama-gguf-split --split` and `--merge` (llama.cpp examples/gguf-split)
// write, planned from a model's metadata and tensor table. Reading a split (its names, checking and merging its
// parts into one ModelInfo) is split.h; the job that writes the parts is split_job.h.
//
// What the tool writes, and so what these plans give (byte for byte with its files for a model whose alignment is
// the default 32):
//   - split: the tensors in their order, cut into parts; part 1 holds every metadata entry of the model, in its
//     order, then split.no (u16, 0-based), split.tensors.count (i32, the model's tensor count) and split.count
//     (u16); the other parts hold those three keys only (a key of these names already in the model moves to the
//     end, as the tool's gguf_set_val does). Every part is a GGUF v3 file: n_dims as ggml counts them (trailing
//     1s dropped), each tensor padded with zeros to 32 bytes.
//   - cut by tensor count (--split-max-tensors N): a new part at every tensor index that is a positive multiple of
//     N; by size (--split-max-size): a new part before the tensor that would bring the part's tensor bytes, each
//     counted with its padding to 32, beyond the limit (a tensor larger than the limit stands alone). A part left
//     without tensors is an error, except the first with --no-tensor-first-split, which then holds the metadata
//     only.
//   - merge: the first part's metadata with split.count moved to the end and set to 0 (split.no and
//     split.tensors.count stay: the tool keeps them), then every part's tensors in order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/gguf_edit.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

// A split GGUF has at most this many parts: split.count is a u16.
constexpr uint64_t kMaxSplitParts = 65535;

struct SplitOptions {
    enum class Mode { kTensors, kSize };
    Mode mode = Mode::kTensors;
    uint64_t max_tensors = 128;  // kTensors: tensors per part (the tool's default); > 0
    uint64_t max_bytes = 0;      // kSize: tensor bytes per part, padding included; > 0
    bool no_tensor_first_split = false;
};

// --split-max-size's N(M|G) as the tool reads it: a positive whole number and the unit M (1000 * 1000 bytes) or G
// (1000^3), "1M", "4G". Safe on any text. False with *why in words for anything else: another unit or none (the
// tool's words), 0 or a negative number (the tool's words), no number, a fraction or other characters before the
// unit (the tool's sscanf would silently read "1.5G" as 1G), a number beyond the tool's int.
bool parse_split_size(const std::string& text, uint64_t* bytes, std::string* why);

struct SplitPart {
    size_t first = 0;  // its tensors: [first, first + count) of the model's
    size_t count = 0;
    std::vector<MetadataEntry> metadata;  // in order
    GgufLayout layout;                    // the part's header and where its tensors go
    // What the tool prints for it: the header size plus its tensors' bytes without padding.
    uint64_t reported_bytes = 0;
};

struct SplitPlan {
    std::vector<SplitPart> parts;
    uint64_t tensors = 0;  // the model's tensor count (split.tensors.count)
};

// Plans splitting a model of `metadata` and `tensors` (in order; TensorInfo::name, dtype, n_dims, ne, nbytes).
// Safe on untrusted input. Errors: options out of range (kInternal "split.options"); a first part, or any other,
// left without tensors (kBadSplit "split.empty_part": the limit is too small); more than kMaxSplitParts parts or
// more tensors than split.tensors.count holds (kTooLarge "split.count"); a general.alignment other than 32
// (kUnsupported "general.alignment": the tool pads every part to 32 whatever the key says, writing a first part
// its own reader rejects); gguf_layout()'s errors for a part.
Result<SplitPlan> plan_gguf_split(const std::vector<MetadataEntry>& metadata, const std::vector<TensorInfo>& tensors,
                                  const SplitOptions& options);

// The tool's plan lines for `plan`: "n_split: N" and per part "split 0000K: n_tensors = T, total_size = SM" (S:
// reported_bytes / 1000 / 1000, rounded down), each ending in '\n'.
std::string split_plan_text(const SplitPlan& plan);

// Plans rewriting the model `in` (one file or a split's parts, little-endian GGUF) as one GGUF with `metadata`:
// in's tensors in order, re-laid out as gguf_layout() lays them (n_dims as ggml counts them). For EditJob::make(in,
// plan). Errors: not a little-endian GGUF (kUnsupported "format"); gguf_layout()'s.
Result<EditPlan> plan_gguf_rewrite(const ModelInfo& in, std::vector<MetadataEntry> metadata);

// Plans `llama-gguf-split --merge` of the split model `in` (its parts merged by combine_gguf_split()): the first
// part's metadata with split.count moved to the end as u16 0, then every tensor. Errors: a model without
// split.count (kBadSplit "split.count": not a split GGUF); plan_gguf_rewrite()'s.
Result<EditPlan> plan_gguf_merge(const ModelInfo& in);

}  // namespace ws
