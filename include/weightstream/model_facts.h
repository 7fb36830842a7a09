// SPDX-License-Identifier: MIT
// Facts derived from a model's header, as llama.cpp reports them when it loads a model: the parameter count
// and bits per weight (llama_model_loader sums ggml_nelements and ggml_nbytes over every tensor of every
// split; llama_model_n_params and print_info's "BPW" are those sums), the llama-quantize name of
// general.file_type, and the tensors grouped by layer. Computed once here for `info` (text, and --json
// "facts" written by model_json.h) and for the package's Model helpers (parameterCount, bitsPerWeight, fileType,
// layers). Every function is safe on any ModelInfo a parser produced from untrusted bytes: no allocation beyond the
// size of the tensor table, sums saturate instead of wrapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/model_info.h"

namespace ws {

struct ModelFacts {
    uint64_t parameter_count = 0;          // sum of n_elements over all tensors (UINT64_MAX if the sum overflows)
    uint64_t data_bytes = 0;               // sum of nbytes over all tensors (UINT64_MAX if the sum overflows)
    double bits_per_weight = 0;            // data_bytes * 8 / parameter_count; NaN when there are no parameters
    bool has_file_type = false;            // general.file_type is present and an integer
    int64_t file_type_id = 0;              // its value (llama_ftype), when has_file_type
    const char* file_type_name = nullptr;  // llama-quantize's name ("Q4_K_M"); nullptr when absent or unknown
    size_t layer_count = 0;                // groups of layer_groups()
};

ModelFacts model_facts(const ModelInfo& info);

// The sums behind parameter_count, data_bytes and bits_per_weight, over any list of tensors: model_facts() adds
// a model's; a quantize plan adds its output's (quantizePlan()'s bitsPerWeight, before anything is written).
class TensorTotals {
public:
    void add(const TensorInfo& t);
    uint64_t parameter_count() const { return parameter_count_; }
    uint64_t data_bytes() const { return data_bytes_; }
    double bits_per_weight() const;  // data_bytes * 8 / parameter_count; NaN when there are no parameters

private:
    uint64_t parameter_count_ = 0;  // saturating at UINT64_MAX, as data_bytes_
    uint64_t data_bytes_ = 0;
};

// The layer a tensor name belongs to: the first dot-separated component "blk" (GGUF, llama.cpp's
// "blk.%d."), "layers", "layer", "h" or "blocks" (Hugging Face: model.layers.N, transformer.h.N,
// encoder.layer.N, ...) that is followed by a component of 1 to 9 decimal digits and then by more of the
// name. `group` gets the name up to and including the digits ("blk.3", "model.layers.3", "v.blk.3": the
// towers of a multimodal model stay apart), `index` the number. False (outputs untouched) for a name in no
// layer ("token_embd.weight", "output_norm.weight", "blk.x.attn", "blk.3").
bool tensor_layer(const std::string& name, std::string* group, uint32_t* index);

struct LayerGroup {
    std::string name;             // "blk.3", as tensor_layer gives it
    uint32_t index = 0;           // 3
    std::vector<size_t> tensors;  // indices into ModelInfo::tensors, in file order
};

struct LayerGroups {
    // Ordered by the part of the name before the number (in the order such parts first appear among the
    // tensors), then by number: blk.0, blk.1, ..., blk.10, then v.blk.0, ...
    std::vector<LayerGroup> layers;
    std::vector<size_t> other;  // tensors in no layer, in file order
};

LayerGroups layer_groups(const ModelInfo& info);

}  // namespace ws
