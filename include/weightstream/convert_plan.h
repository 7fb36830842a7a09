// SPDX-License-Identifier: MIT
// The plan of a conversion (`weightstream convert`, ConvertJob in convert_job.h): GGUF <-> safetensors (same-format
// conversions too), and a Hugging Face checkpoint -> GGUF as convert_hf_to_gguf.py writes it. Pure: it decides every
// tensor's name, type and action, the metadata and the output's layout; the job moves the bytes.
//
// Per tensor, by what the target format can hold:
//   - a type the target holds is copied byte for byte, unless the dtype option applies to it;
//   - the dtype applies to the float and quantized tensors (not integers, not C64): they are decoded and re-encoded
//     as F32/F16/BF16 (ggml's rounding) or quantized (ggml_quantize_chunk's bytes, row by row, with the imatrix
//     entry of the tensor's name when its size is ne[0] * ne[2]; only tensors whose rows, ne[0], are a multiple of
//     the type's block; the others follow the default);
//   - otherwise a decodable float or quantized type the target lacks becomes F32 (GGUF quants for safetensors;
//     F8/F6/F4 for GGUF), an unsigned integer becomes the next wider signed one for GGUF (BOOL -> I8, U8 -> I16,
//     U16 -> I32, U32 -> I64); U64, C64 and types without a decoder are refused.
// To GGUF, as llama.cpp's tools write it:
//   - with a dtype (and from a Hugging Face checkpoint), the float tensors llama-quantize never quantizes
//     (tensor_allows_quantization(): 1-D tensors, norms, ffn_gate_inp, position embeddings, ...) are F32, as
//     convert_hf_to_gguf.py writes them whatever --outtype is;
//   - a tensor already quantized is kept as it is when the dtype is another quantized type (a warning per type),
//     unless allow_requantize (llama-quantize's rule and words);
//   - general.file_type is kept when every tensor is copied from a GGUF that has it, else it is the llama_ftype of
//     the dtype when some tensor got it (convert_hf_to_gguf.py's --outtype), else llama_model_loader's guess from
//     the most common tensor type (dropped, with a warning, for a type llama.cpp has no file type for);
//     general.quantization_version 2 is added with quantized output.
// A safetensors checkpoint whose config.json names a family hf_names.h knows is converted as convert_hf_to_gguf.py
// converts it (hf_checkpoint.h): GGUF tensor names (tensors the converter drops are dropped, with a warning), q/k
// rows permuted by the head counts for llama, Gemma's norms + 1, a Mixture-of-Experts block's per-expert matrices
// stacked into one 3-D tensor per kind (hf_names.h: in expert order, placed where the converter emits them, at the
// block's last expert tensor), and the metadata replaced by what the converter writes, in its order:
// general.architecture, general.type / name / size_label ... (hf_general_metadata()), the family's hyperparameters
// from config.json with general.file_type among them (hf_hparams()), the tokenizer (hf_vocab()),
// general.quantization_version. The written tokenizer is checked against the source's on a fixed text
// (hf_vocab_check()): a difference is a warning, or with strict_tokenizer a refusal.
// Metadata: GGUF -> safetensors writes every key as a string (arrays as JSON text); safetensors -> GGUF writes
// string keys, with general.alignment read back as the u32 ggml requires. split.* keys are dropped (the output is
// one file). A big-endian GGUF's data is written little-endian.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/dtype.h"
#include "weightstream/hf_checkpoint.h"
#include "weightstream/hf_vocab.h"
#include "weightstream/imatrix.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

enum class ConvertAction : uint8_t {
    kCopy,    // the stored bytes (a big-endian GGUF's swapped, a Q/K tensor's rows permuted)
    kEncode,  // decoded and encoded as another float or quantized type
    kWiden,   // an unsigned integer as the next wider signed one
};
// "copy", "encode", "widen" (convert --json's action).
const char* convert_action_name(ConvertAction a);

struct ConvertOptions {
    Format target = Format::kGguf;
    // Re-encode float and quantized tensors as this: F32, F16, BF16 or a type quantize_supported() (GGUF only);
    // kUnknown keeps the types.
    DType dtype = DType::kUnknown;
    bool allow_requantize = false;     // requantize tensors already quantized to another quantized dtype
    const Imatrix* imatrix = nullptr;  // importance for a quantized dtype, or nullptr
    // config.json of a safetensors checkpoint converted to GGUF, or nullptr: with a family hf_names.h knows, the
    // checkpoint is converted as convert_hf_to_gguf.py converts it.
    const HfConfig* hf = nullptr;
    // What the warnings call config.json (the CLI: its path), and when hf is nullptr because the file was there
    // but unusable, why (hf_config_problem()). A checkpoint converted without a known family (no config.json
    // beside Hugging Face tensor names, an unusable one, an unknown model_type) is a warning: llama.cpp will not
    // load the file.
    std::string config_name = "config.json";
    std::string config_problem;
    // With hf: the tokenizer files beside the checkpoint (hf_vocab.h; config.json's bytes among them), or nullptr
    // for none. Their tokenizer.* keys are written as convert_hf_to_gguf.py writes them (hf_vocab()); without
    // files, or for a tokenizer hf_vocab() does not convert (kUnsupported), the file is written without a
    // tokenizer, with a warning; files that are malformed or contradict config.json are refused (kTokenizer).
    const HfVocabFiles* vocab_files = nullptr;
    // With hf: the checkpoint folder's name (its last path component), for general.name and the other general.*
    // keys the converter derives from it (hf_general.h).
    std::string model_name;
    // With a tokenizer written: the check on the way out (hf_vocab_check()) refuses the conversion when the written
    // tokenizer and the source's disagree (kTokenizer), rather than warning.
    bool strict_tokenizer = false;
};

struct ConvertTensor {
    size_t input = 0;  // index into the input's tensors (a stacked tensor: its expert 0)
    // A stacked *_exps tensor: the input tensors of its experts, expert E at [E] (each of the same type and shape,
    // possibly in different files); empty for any other tensor.
    std::vector<size_t> experts;
    TensorInfo out;        // name, dtype and shape written; offset (absolute, in the output) and nbytes as laid out
    uint64_t padding = 0;  // zero bytes after it (GGUF's alignment)
    ConvertAction action = ConvertAction::kCopy;
    Transform transform = Transform::kNone;  // convert_hf_to_gguf.py's change on the way: kPermuteQ/K, kPlusOne
    uint64_t heads = 0;                      // the permutation's head count
    const float* imatrix = nullptr;          // a quantized out: ne[0] * ne[2] importance values, or nullptr
    bool kept_quantized = false;             // already quantized, kept rather than requantized to the dtype
};

struct ConvertPlan {
    Format target = Format::kGguf;
    bool hf = false;                      // converted as a Hugging Face checkpoint (names, transforms, hparams)
    std::vector<MetadataEntry> metadata;  // the output's metadata
    std::vector<ConvertTensor> tensors;   // in output order
    std::vector<uint8_t> header;          // the output's bytes before the first tensor's
    uint64_t file_size = 0;
    std::vector<std::string> warnings;  // in words, in the order found
};

// Why plan_conversion() refused, beyond its Status.
struct ConvertRefusal {
    enum class About {
        kTensor,     // input tensor `tensor`: Status::offset is in its file
        kConfig,     // config.json lacks what tensor `tensor` needs
        kOutput,     // the output as a whole cannot be written (Status::offset is in the output)
        kTokenizer,  // the tokenizer files (Status::what names the file, offset the entry or id)
    };
    About about = About::kOutput;
    int64_t tensor = -1;  // index into the input's tensors, or -1
    std::string why;      // in words: "cannot convert tensor x: type U64 has no GGUF counterpart"
};

// Plans converting `in` with `options`. Errors, with *refusal (when given) saying more:
//   a dtype that is not F32/F16/BF16 or a type quantize_supported(), or quantized for safetensors
//   (kUnsupported "dtype", kOutput);
//   a tensor the target cannot hold (kUnsupported "tensor.type": more than 4 dims for GGUF, no decoder, no
//   counterpart, a big-endian type without a defined byte order), a GGUF name longer than kGgufMaxTensorName
//   (kTooLarge "tensor.name"), a quantized type that needs an imatrix entry the imatrix lacks (kUnsupported
//   "imatrix") -- kTensor, at the tensor's entry (TensorInfo::info_offset);
//   a Q/K permutation without head counts in config.json (kBadKey "config.num_attention_heads", kConfig);
//   tokenizer files hf_vocab() refuses, or (strict_tokenizer) a written tokenizer that tokenizes the check text
//   differently from the source's (kTokenizer);
//   per-expert tensors without an expert count in config.json (kBadKey "config.num_experts", kConfig), an expert
//   index >= the count or an expert missing (kBadShape "tensor.expert"), an expert whose type or shape differs
//   from expert 0's (kBadType "tensor.type", kBadShape "tensor.ne"), or a stacked tensor of more than 4 dims or
//   bytes beyond 2^64 (kBadShape "tensor.ne") -- kTensor, at the offending expert's entry;
//   a layout error of the writers, or a header the strict reader would reject (their Status, kOutput).
// `in`, options.imatrix and options.hf are read only here but for the importance values, which the plan points
// into. Safe on any ModelInfo.
Result<ConvertPlan> plan_conversion(const ModelInfo& in, const ConvertOptions& options,
                                    ConvertRefusal* refusal = nullptr);

// The GGUF a plan to GGUF writes, as a reader of that file sees it (its header parsed, the tensors at their offsets in
// it): what `quantize` of the written file would plan from, for quantizing without the file (the one-pass
// QuantizeJob::make_converted()). kUnsupported "format" for a plan to safetensors; the parser's errors otherwise
// (none for a plan plan_conversion() made: it checks the header so).
Result<ModelInfo> converted_model(const ConvertPlan& plan);

}  // namespace ws
