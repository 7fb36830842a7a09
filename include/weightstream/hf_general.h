// SPDX-License-Identifier: MIT
// The general.* keys convert_hf_to_gguf.py writes after general.architecture (ModelBase.prepare_metadata and
// gguf-py's Metadata): general.type "model", then what gguf-py's heuristics derive from config.json's
// _name_or_path (when it names a model: at most one '/') and from the checkpoint folder's name -- general.name
// ("tiny-llama-spm" -> "Tiny Llama Spm"), version, organization, finetune, basename, size_label -- and, when no
// name gives a size, size_label from the parameter count of the tensors written ("330K", "8.0B", "8x7.2B" with
// experts). Pure. Not followed: the model card (README.md's YAML front matter) and --metadata overrides.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/hf_checkpoint.h"
#include "weightstream/model_info.h"

namespace ws {

// gguf-py's size label of a parameter count: model_weight_count_rounded_notation() ("330K", "1.2M", "70B"),
// "NxS" with experts (expert_count N, S the shared + one expert's count).
std::string hf_size_label(uint64_t total, uint64_t shared, uint64_t expert, uint64_t expert_count);

// The general.* entries, in the converter's order, for a checkpoint in folder `folder_name` (its last path
// component, "" when unknown) with `config`, whose written tensors are `tensors` (GGUF names and shapes: expert
// tensors are the ones named "*_exps.*").
std::vector<MetadataEntry> hf_general_metadata(const std::string& folder_name, const HfConfig& config,
                                               const std::vector<TensorInfo>& tensors);

}  // namespace ws
