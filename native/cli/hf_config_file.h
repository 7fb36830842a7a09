// SPDX-License-Identifier: MIT
// config.json beside a Hugging Face safetensors model, read for `diff` and `convert`: the file I/O only; the
// parsing and its limits are the core's (include/weightstream/hf_checkpoint.h), as for the package.
#pragma once

#include <string>

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

}  // namespace ws::cli
