// SPDX-License-Identifier: MIT
// llama-quantize's recipes: which type each tensor of a model becomes for a named file type ("Q4_K_M"),
// and the exact layout of the file llama-quantize writes (llama.cpp src/llama-quant.cpp,
// llama_model_quantize_impl and llama_tensor_get_type, at commit 1fd6dfe9). A plan is pure data: the CLI
// and the wasm package execute the same plan and write the same bytes.
//
// The rules, in the order llama-quantize applies them:
//   - Tensor order: llama_model_loader's weights_map, sorted by layer ("blk.%d." as sscanf reads it; -1
//     without the prefix) and then by name. Tensor infos keep the input's ne; only the type changes.
//   - Quantized at all: 2-D and 3-D tensors whose name ends in "weight", except norms, ffn_gate_inp,
//     position/token-type embeddings, small conv/RWKV/multimodal tensors and, with leave_output_tensor,
//     output.weight. Everything else is copied byte for byte.
//   - Type: token_embedding_type / output_tensor_type when given (no fallback); else the file type's
//     default, replaced (unless pure) by the first matching --tensor-type pattern or by the mix
//     (role, layer, expert count, GQA, tied embeddings), then the fallback when ne[0] is not a multiple of
//     the type's block size. A tensor already of its target type is copied.
//   - Metadata: the input's KVs in order, general.quantization_version and general.file_type moved to
//     the end, split.* dropped; with an importance matrix quantize.imatrix.file (the path as given),
//     .dataset, .entries_count and .chunks_count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "weightstream/dtype.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/imatrix.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

// llama_ftype, numbered as in llama.h (the value written to general.file_type).
enum class Ftype : uint32_t {
    kAllF32 = 0,
    kF16 = 1,
    kQ4_0 = 2,
    kQ4_1 = 3,
    kQ8_0 = 7,
    kQ5_0 = 8,
    kQ5_1 = 9,
    kQ2_K = 10,
    kQ3_K_S = 11,
    kQ3_K_M = 12,
    kQ3_K_L = 13,
    kQ4_K_S = 14,
    kQ4_K_M = 15,
    kQ5_K_S = 16,
    kQ5_K_M = 17,
    kQ6_K = 18,
    kIQ2_XXS = 19,
    kIQ2_XS = 20,
    kQ2_K_S = 21,
    kIQ3_XS = 22,
    kIQ3_XXS = 23,
    kIQ1_S = 24,
    kIQ4_NL = 25,
    kIQ3_S = 26,
    kIQ3_M = 27,
    kIQ2_S = 28,
    kIQ2_M = 29,
    kIQ4_XS = 30,
    kIQ1_M = 31,
    kBF16 = 32,
    kTQ1_0 = 36,
    kTQ2_0 = 37,
    kMXFP4_MOE = 38,
};

// llama-quantize's names, case-insensitive, with its aliases (Q3_K = Q3_K_M, Q4_K = Q4_K_M, Q5_K = Q5_K_M)
// or the numeric id. False for anything else.
bool ftype_from_name(const std::string& name, Ftype* out);
const char* ftype_name(Ftype f);  // "Q4_K_M"
// Every file type ftype_from_name knows, once each, in llama-quantize's QUANT_OPTIONS order (the aliases
// Q3_K, Q4_K and Q5_K are left out: they name Q3_K_M, Q4_K_M and Q5_K_M). For lists to choose from.
std::vector<Ftype> ftype_list();
// llama_ftype_get_default_type: the type of an ordinary tensor (Q4_K for Q4_K_M).
DType ftype_default_type(Ftype f);

// A ggml type name as llama-quantize's --tensor-type / --output-tensor-type take it (case-insensitive
// "q8_0", "Q4_K", "f16"). False for names ggml does not know.
bool ggml_type_from_name(const std::string& name, DType* out);

struct TensorTypeOverride {
    std::string pattern;  // lowercased as llama-quantize does; a regular expression searched in names
    DType type = DType::kUnknown;
};

// Reads llama-quantize's --tensor-type argument "NAME=TYPE": NAME (everything before the first '=') is
// lowercased; TYPE is a ggml type name. False when either part is empty or TYPE is unknown.
bool parse_tensor_type_override(const std::string& arg, TensorTypeOverride* out);

// Whether override pattern `index` (into RecipeOptions::overrides) is found in a tensor name. The caller
// supplies it: the CLI compiles each pattern with the linear-time engine (weightstream/regex.h), the package
// uses RegExp.test in JavaScript (the same results on the syntax both read).
using OverrideMatcher = std::function<bool(size_t index, const std::string& name)>;

struct RecipeOptions {
    Ftype ftype = Ftype::kQ8_0;
    bool pure = false;                             // --pure
    bool leave_output_tensor = false;              // --leave-output-tensor
    bool allow_requantize = false;                 // --allow-requantize
    DType output_tensor_type = DType::kUnknown;    // --output-tensor-type (kUnknown: not given)
    DType token_embedding_type = DType::kUnknown;  // --token-embedding-type
    std::vector<TensorTypeOverride> overrides;     // --tensor-type, first match wins
    OverrideMatcher matcher;                       // required when overrides is not empty
    const Imatrix* imatrix = nullptr;              // nullptr, or one with entries (llama ignores an empty one)
    std::string imatrix_path;                      // stored verbatim (cut to 127 bytes) in quantize.imatrix.file
};

struct PlannedTensor {
    size_t input_index = 0;  // into the input ModelInfo::tensors
    TensorInfo out;          // name, dtype, n_dims, ne; offset (absolute, in the output) and nbytes
    DType in_type = DType::kUnknown;
    bool quantize = false;                  // false: the input bytes are copied
    DType wanted = DType::kUnknown;         // the type chosen before the ncols fallback
    bool fallback = false;                  // ne[0] was not a multiple of `wanted`'s block size
    bool requantize = false;                // quantize from an already quantized input type
    const ImatrixEntry* imatrix = nullptr;  // importance for this tensor (n_mat rows for experts), or nullptr
};

struct QuantPlan {
    std::vector<MetadataEntry> metadata;
    std::vector<PlannedTensor> tensors;  // in output order
    GgufLayout layout;                   // header bytes and where each tensor goes
    int n_fallback = 0;                  // what llama-quantize reports as "N of M tensor(s) required fallback"
    std::vector<std::string> warnings;   // requantizing, imatrix entries not found, ...
};

// llama-quantize's tensor_allows_quantization: whether a tensor may be quantized at all. False for 1-D
// tensors, names not ending in "weight", norms ("_norm.weight"), ffn_gate_inp, position and token-type
// embeddings, the small conv/RWKV/multimodal tensors, and output.weight with leave_output_tensor.
// convert_hf_to_gguf.py keeps the same tensors in F32 whatever --outtype is.
bool tensor_allows_quantization(const TensorInfo& t, bool leave_output_tensor);
// Its rules by name only, without the dims check (ggml_n_dims() >= 2, which does not count trailing dims of 1).
bool tensor_name_allows_quantization(const std::string& name, bool leave_output_tensor);

// llama_model_loader's guess of a file type from its tensors: the type that most tensors have (counted
// per tensor; the first type to reach the highest count wins a tie), or kUnknown for no tensors.
DType majority_tensor_type(const std::vector<TensorInfo>& tensors);
// The llama_ftype the loader's guess gives a file whose majority type is t ("mostly" t: Q4_K -> Q4_K_M,
// Q3_K -> Q3_K_M, Q5_K -> Q5_K_M). False for types the loader has no file type for (it then guesses
// ALL_F32 with a warning).
bool ftype_of_majority_type(DType t, Ftype* out);

// Plans quantizing the model `in` (one GGUF, or a safetensors checkpoint with GGUF tensor names and
// general.architecture/<arch>.* hyperparameters in its metadata) as llama-quantize would.
// Errors (Status::offset is the input offset of the tensor entry or KV where known):
//   no general.architecture or <arch>.block_count, expert_count without expert_used_count (kBadKey);
//   an MoE tensor whose layer cannot be read from its name (kBadShape "tensor.layer");
//   a type with no ncols fallback, or a fallback that still does not fit (kBadShape "tensor.ne");
//   a target that needs an imatrix when none is given, or an entry missing for one that needs it
//   (kUnsupported "imatrix.required"); an imatrix entry whose size is not ne[0] * ne[2], outside
//   token_embd (kBadShape "imatrix.size"); a quantized input without allow_requantize, or an input type
//   that cannot be decoded (kUnsupported "tensor.type"); a tensor of more than 3 dims to quantize
//   (kBadShape "tensor.n_dims"); any gguf_layout error.
Result<QuantPlan> plan_quantization(const ModelInfo& in, const RecipeOptions& options);

// ggml_validate_row_data: false when F32/F16/BF16/F64 data holds a NaN or an infinity, or when a block's
// scale (d, and dmin / m where the type has one; IQ1_M's packed scale; MXFP4's exponent 0xff) is NaN or
// infinite. llama-quantize checks every input tensor so, and every quantized result. nbytes must be a
// whole number of blocks (false otherwise). Other types (integers) are always valid.
bool validate_row_data(DType t, const uint8_t* data, uint64_t nbytes);

}  // namespace ws
