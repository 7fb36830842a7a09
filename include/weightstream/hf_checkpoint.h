// SPDX-License-Identifier: MIT
// A Hugging Face checkpoint as llama.cpp's convert_hf_to_gguf.py reads it: config.json, the GGUF metadata the
// converter writes from it, and the converter's changes to tensor values (the names are hf_names.h). One
// implementation for every user: `convert` writes with it, `diff` / compare() compare with it, and the page shows a
// Hugging Face tensor as its GGUF counterpart holds it through the package's read({transform}).
//
// What the converter does to values (LlamaModel / Gemma*Model.modify_tensors, on the tensor as loaded: BF16 and
// other types are widened to float32 first, F16 stays F16 -- ModelBase.prepare_tensors):
//   kPermuteQ, kPermuteK  rows reordered within each head for ggml's rotary layout (permute()): with hd rows per
//                         head, output row 2j + i of a head is input row i * hd/2 + j;
//   kPlusOne              Gemma's norm weights + 1, added in the tensor's precision: rounded to F16 for an F16
//                         tensor (torch adds half + half in half), exact float32 otherwise.
// The split and vocab-trim transforms only select rows of the source (the caller's row window), so they leave the
// values as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weightstream/dtype.h"
#include "weightstream/hf_names.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

// config.json larger than this is not parsed (kTooLarge): the largest real ones are a few KB.
constexpr uint64_t kHfConfigMaxBytes = uint64_t(16) << 20;
// Arrays and objects nested deeper than this are refused (kTooLarge) before nlohmann builds anything: real
// configs nest three or four levels.
constexpr uint32_t kHfConfigMaxDepth = 32;

// What the converter reads from config.json.
struct HfConfig {
    std::string model_type;       // "llama", "gemma3", ... ("" when absent or not a string)
    std::string architecture;     // architectures[0] ("LlamaForCausalLM"), "" when absent
    std::string text_model_type;  // text_config.model_type for multimodal checkpoints (gemma3), else ""
    std::string family;           // hf_family(model_type), else hf_family(text_model_type); "" when neither
    int64_t n_head = 0;           // num_attention_heads (or n_head, n_heads) when an integer, else 0
    int64_t n_head_kv = 0;        // num_key_value_heads (or n_head_kv) when an integer, else 0 (then n_head applies)
    int64_t n_expert = 0;         // num_local_experts (or num_experts) when an integer, else 0: the experts stacked
    // The hyperparameters: config.json's object with text_config's entries moved to the top (they win), as the
    // converter's TextModel merges them.
    nlohmann::json hparams = nlohmann::json::object();
};

// Parses config.json's bytes. Safe on untrusted input: kTooLarge for more than kHfConfigMaxBytes bytes or nesting
// deeper than kHfConfigMaxDepth, kBadJson when the bytes are not a JSON object; fields of the wrong type count as
// absent. Never throws.
Result<HfConfig> parse_hf_config(const uint8_t* data, size_t size);
// Why parse_hf_config() refused a file called `name`, as a sentence for a warning (the file is then ignored).
std::string hf_config_problem(const Status& refused, const std::string& name);

// The GGUF metadata convert_hf_to_gguf.py writes from config.json for config.family (which must not be empty):
// general.architecture, then the family's hyperparameters (TextModel.set_gguf_parameters, then LlamaModel's
// vocab_size and rope.dimension_count, Qwen2MoeModel's expert_feed_forward_length and
// expert_shared_feed_forward_length, GemmaModel's and Phi3MiniModel's own lists: hf_family_keys()), typed as gguf-py
// types them, with general.file_type where the converter writes it among them (value 0: the plan sets it). A
// hyperparameter llama.cpp requires that config.json lacks is left out with a line in *warnings; so is one its GGUF
// type cannot hold (a head_dim of 2^32 or -1 for a uint32, 1e39 for a float32), never written wrapped or as Inf.
std::vector<MetadataEntry> hf_hparams(const HfConfig& config, std::vector<std::string>* warnings);

// The rows of one head for the Q/K permutation of a tensor of `rows` outer rows by `heads` heads; kBadShape
// (what "tensor.ne") unless heads > 0 divides rows into heads of an even number of rows.
Result<uint64_t> hf_head_rows(uint64_t rows, uint64_t heads);

// convert_hf_to_gguf.py's permute() over whole heads of rows of any type (the rows move whole, so stored F16 or
// quantized rows are reordered as exactly as decoded floats): n_rows rows of row_bytes bytes from src to dst (not
// overlapping). n_rows must be a multiple of head_rows and head_rows even (hf_head_rows()); kInternal otherwise.
Status hf_permute_rows(const uint8_t* src, uint64_t n_rows, uint64_t head_rows, uint64_t row_bytes, uint8_t* dst);

// A window of whole outer rows of a tensor, for hf_convert_rows().
struct HfRows {
    uint64_t rows = 0;          // outer rows of the whole tensor (the source side of a fused pair: its part's rows)
    uint64_t first_row = 0;     // the window's first row
    uint64_t n_rows = 0;        // rows in the window
    uint64_t row_elements = 0;  // elements per row
};

// The values convert_hf_to_gguf.py writes for a window of a Hugging Face tensor stored as `source` (its dtype,
// which decides the +1's rounding), given the window's values decoded to float: `transform` applied, with `heads`
// the head count for kPermuteQ/kPermuteK (ignored otherwise). src and dst hold n_rows * row_elements floats and
// may be the same array except for the permutation. For the permutation the window must be whole heads:
// first_row and n_rows multiples of the head's rows (kBadShape "rows"), and the head count must fit the tensor
// (hf_head_rows()). Safe on any numbers: nothing is allocated.
Status hf_convert_rows(Transform transform, DType source, uint64_t heads, const HfRows& window, const float* src,
                       float* dst);

// convert_hf_to_gguf.py's --outtype auto: F16 when the first tensor it loads is F16, else BF16 (for F32 and BF16
// checkpoints alike). It loads the part files in order and each one's tensors in name order (safetensors' keys()),
// so the first is the first file's (TensorInfo::file_index 0 of a sharded model: the first shard) first name.
// kUnknown for a checkpoint without tensors.
DType hf_auto_dtype(const ModelInfo& checkpoint);

}  // namespace ws
