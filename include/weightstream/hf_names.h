// SPDX-License-Identifier: MIT
// Hugging Face checkpoint names -> the GGUF names llama.cpp's convert_hf_to_gguf.py gives them, with the
// transform the converter applies to the data on the way, for the llama/mistral, qwen2/qwen3,
// gemma/gemma2/gemma3 and phi3 families. The facts (which module becomes which blk.N.* tensor, which ones are
// permuted or shifted) come from llama.cpp's convert_hf_to_gguf.py and gguf-py/gguf/tensor_mapping.py; the
// table is our own and covers the tensors of the text model only (vision towers are not converted).
// config.json, the metadata and the transforms' values are hf_checkpoint.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "weightstream/status.h"

namespace ws {

// What the converter does to a tensor's values on the way to GGUF (the source side of a comparison), or what
// a comparison pair covers of a larger tensor.
enum class Transform : uint8_t {
    kNone,
    kPermuteQ,   // llama q_proj: rows permuted within each of head_count heads (rotary pairs interleaved)
    kPermuteK,   // llama k_proj: the same with head_count_kv heads
    kPlusOne,    // gemma norm weights: stored + 1 (the HF module computes x * (1 + w))
    kSplitQ,     // phi3 fused qkv_proj against a separate attn_q: the first rows
    kSplitK,     // ... against attn_k: the rows after q
    kSplitV,     // ... against attn_v: the last rows
    kSplitGate,  // phi3 fused gate_up_proj against a separate ffn_gate: the first half of the rows
    kSplitUp,    // ... against ffn_up: the second half
    kVocabTrim,  // gemma3 embed_tokens: the converter drops rows past the tokenizer's vocabulary
};

// "permute_q", "plus_one", ...; nullptr for kNone (JSON null).
const char* transform_name(Transform t);
// The transform transform_name() names `name`; false (out untouched) for any other text.
bool transform_from_name(const std::string& name, Transform* out);

// The GGUF architecture whose conversion rules apply to `arch` (a GGUF general.architecture or a
// config.json model_type): "llama" for llama and mistral, "qwen2", "qwen3", "gemma", "gemma2", "gemma3"
// (also for gemma3_text), "phi3"; "" when the table does not know it.
std::string hf_family(const std::string& arch);

// The GGUF name of the HF tensor `hf_name` in family `family` (from hf_family), and the transform the
// converter applies to it (kNone, kPermuteQ, kPermuteK or kPlusOne; the split and trim transforms are decided
// by the pairing, which sees both sides). Returns false for names the converter drops or does not know
// (rotary_emb.inv_freq, vision towers, an unknown family).
bool hf_to_gguf_name(const std::string& family, const std::string& hf_name, std::string* gguf_name,
                     Transform* transform);

}  // namespace ws
