// SPDX-License-Identifier: MIT
// config.json beside a Hugging Face safetensors model, read for `diff` and `convert`: the file I/O only; the
// parsing and its limits are the core's (include/weightstream/hf_checkpoint.h), as for the package.
#pragma once

#include <string>

#include "io/model.h"
#include "weightstream/convert_plan.h"
#include "weightstream/hf_checkpoint.h"

namespace ws::cli {

enum class ConfigFile {
    kMissing,   // no config.json in the model's folder (or it cannot be opened)
    kUnusable,  // there, but not a regular file, too large, too deep or not a JSON object: *problem says which
    kRead,      // parsed into *out
};

// Reads DIR/config.json, DIR being the folder of `model_path` (a safetensors file or its index). *problem (for
// kUnusable) is a sentence naming the file, for a warning.
ConfigFile read_hf_config(const std::string& model_path, HfConfig* out, std::string* problem);

// A checkpoint given as its folder: the folder's model.safetensors.index.json, else its model.safetensors, in
// *model_path; false when `path` is a folder with neither (*model_path: `path` itself when it is not a folder).
bool checkpoint_model_path(const std::string& path, std::string* model_path);

// The files beside a Hugging Face checkpoint that its conversion to GGUF reads (`convert`, and `quantize`'s one
// pass), read once for both commands.
struct HfCheckpointFiles {
    ConfigFile config_file = ConfigFile::kMissing;
    HfConfig config;
    std::string config_path;     // DIR/config.json
    std::string config_problem;  // kUnusable: why, as a sentence naming the file

    // Reads them beside model_path (a safetensors file or its index).
    void read(const std::string& model_path);
    // Points `options` at them (options->hf, config_name, config_problem): this object must outlive the plan.
    void apply(ConvertOptions* options) const;
};

// Prints why ConvertJob::make() refused (by refusal.about) and returns the exit status.
int fail_conversion(const LoadedModel& model, const std::string& in_path, const Status& status,
                    const ConvertRefusal& refusal);

}  // namespace ws::cli
