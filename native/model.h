// SPDX-License-Identifier: MIT
// Opens a model from the command line's path: one GGUF or safetensors file, any part of a split GGUF
// (all parts are opened), or a sharded safetensors `*.index.json` (all shards are opened).
#pragma once

#include <string>
#include <vector>

#include "mapped_file.h"
#include "model_info.h"
#include "parse_options.h"
#include "status.h"

namespace ws {

struct LoadError {
    bool io = false;      // the file could not be read (exit 3) rather than being invalid (exit 1)
    std::string file;     // which file
    Status status;        // for invalid files: code, offset, field
    std::string message;  // for I/O errors: the system's words; for a model plan's errors: its text
    // For invalid files: their first bytes (up to kLoadErrorHead), so a caller can tell what is there instead
    // of a model (scan flags a Git LFS pointer or an HTML page).
    std::string head;
};

constexpr size_t kLoadErrorHead = 512;

struct LoadedModel {
    ModelInfo info;
    std::vector<MappedFile> files;  // indexed by TensorInfo::file_index
    std::vector<std::string> paths;

    // The tensor's bytes, or nullptr when its range does not lie inside its file.
    const uint8_t* tensor_data(const TensorInfo& t) const;
};

bool load_model(const std::string& path, const ParseOptions& options, LoadedModel* model, LoadError* error);

}  // namespace ws
