// SPDX-License-Identifier: MIT
// Hugging Face checkpoint names -> the GGUF names llama.cpp's convert_hf_to_gguf.py gives them, with the
// transform the converter applies to the data on the way, for the llama/mistral/mixtral, qwen2/qwen3,
// qwen2-moe/qwen3-moe, gemma/gemma2/gemma3 and phi3 families: one row of one table per family (hf_names.cpp). The
// facts (which module becomes which blk.N.* tensor, which ones are permuted, shifted or stacked) come from
// llama.cpp's convert_hf_to_gguf.py and gguf-py/gguf/tensor_mapping.py; the table is our own and covers the
// tensors of the text model only (vision towers are not converted).
//
// Mixture-of-Experts blocks: the converter stacks the per-expert matrices of a block
// (model.layers.N.block_sparse_moe.experts.E.w1.weight for mixtral, model.layers.N.mlp.experts.E.gate_proj.weight
// for qwen2-moe/qwen3-moe) along a new outermost dimension, in expert order (torch.stack), into one 3-D tensor per
// kind (blk.N.ffn_gate_exps.weight, ffn_down_exps, ffn_up_exps); the router is ffn_gate_inp and qwen2-moe's shared
// expert ffn_{gate,up,down}_shexp with its gate ffn_gate_inp_shexp. It emits a block's stacked tensors when the
// block's last expert tensor arrives, in its kind order (mixtral: w1 w2 w3, that is gate down up; qwen: down gate
// up).
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
    kExpert,     // one expert's matrix against the stacked *_exps tensor: that expert's slice
};

// "permute_q", "plus_one", ...; nullptr for kNone (JSON null).
const char* transform_name(Transform t);
// The transform transform_name() names `name`; false (out untouched) for any other text.
bool transform_from_name(const std::string& name, Transform* out);

// The GGUF architecture whose conversion rules apply to `arch` (a GGUF general.architecture or a
// config.json model_type): "llama" for llama, mistral and mixtral, "qwen2", "qwen3", "qwen2moe" (also for
// qwen2_moe), "qwen3moe" (qwen3_moe), "gemma", "gemma2", "gemma3" (also for gemma3_text), "phi3"; "" when the
// table does not know it.
std::string hf_family(const std::string& arch);
// Every config.json model_type the table knows, in its order, ", "-separated (for the messages that name them).
std::string hf_known_model_types();

// What the converter's model class writes beyond TextModel's hyperparameters, per family (hf_hparams()).
struct HfFamilyKeys {
    bool llama = false;        // LlamaModel: vocab_size and rope.dimension_count after the common keys
    bool rope_base = true;     // rope.freq_base (GemmaModel's own list has none)
    bool moe_lengths = false;  // Qwen2MoeModel: expert_feed_forward_length, expert_shared_feed_forward_length
};
// The keys row of `family` (from hf_family); all false for a family the table does not know.
HfFamilyKeys hf_family_keys(const std::string& family);

// Where a per-expert tensor goes in the stacked tensor hf_to_gguf_name() names.
struct HfExpert {
    uint64_t index = 0;  // E: the outermost index in the stacked tensor
    uint32_t order = 0;  // the kind's place in the block's emission order (0, 1, 2)
    uint32_t kinds = 0;  // how many kinds the family stacks per block (3)
};

// The GGUF name of the HF tensor `hf_name` in family `family` (from hf_family), and the transform the
// converter applies to it (kNone, kPermuteQ, kPermuteK or kPlusOne; the split, trim and expert transforms are
// decided by the pairing, which sees both sides). A per-expert tensor of a family with experts gets the stacked
// tensor's name and, in *expert, its place; with expert nullptr such names are not mapped (false). E is decimal
// digits without a leading zero, at most 9 of them; its range (below expert_count) is the caller's to check.
// Returns false for names the converter drops or does not know (rotary_emb.inv_freq, vision towers, an unknown
// family).
bool hf_to_gguf_name(const std::string& family, const std::string& hf_name, std::string* gguf_name,
                     Transform* transform, HfExpert* expert = nullptr);

}  // namespace ws
