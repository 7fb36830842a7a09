// SPDX-License-Identifier: MIT
// The files beside a Hugging Face safetensors model, read for `diff` and `convert`: config.json and the tokenizer
// files (hf_vocab.h). The file I/O only; the parsing and its limits are the core's (hf_checkpoint.h, hf_vocab.h),
// as for the package.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "io/model.h"
#include "weightstream/convert_plan.h"
#include "weightstream/hf_checkpoint.h"
#include "weightstream/hf_vocab.h"

namespace ws::cli {

enum class ConfigFile {
    kMissing,   // no such file in the model's folder (or it cannot be opened)
    kUnusable,  // there, but not a regular file, too large, too deep or not a JSON object: *problem says which
    kRead,      // parsed into *out
    kFailed,    // beside a URL: the server answered other than with the file or a 404 (*problem: the URL and why)
};

// Reads DIR/config.json, DIR being the folder of `model_path` (a safetensors file or its index; for a URL, the
// sibling URL, as the package fetches it: a 404 is kMissing). *problem (for kUnusable, kFailed) is a sentence naming
// the file. *bytes (when given) receives the file's bytes.
ConfigFile read_hf_config(const std::string& model_path, HfConfig* out, std::string* problem,
                          std::string* bytes = nullptr);

// The tokenizer files (kHfVocabFileNames) beside `model_path`, each read as config.json is: opened without
// blocking, regular files only (anything else is skipped, with a sentence in *problems), at most
// kHfTokenizerFileMaxBytes + 1 bytes (the core refuses a larger one). `files` views `bytes`.
struct HfVocabFileSet {
    std::array<std::string, sizeof kHfVocabFileNames / sizeof kHfVocabFileNames[0]> bytes;
    std::string config;  // config.json's bytes
    HfVocabFiles files;
    bool any = false;    // some tokenizer file was read
    std::string failed;  // beside a URL: a file the server failed to give (the URL and why), or ""
};
void read_hf_vocab_files(const std::string& model_path, HfVocabFileSet* out, std::vector<std::string>* problems);

// The name of the folder holding `model_path` (its last component, after resolving "." and links; for a URL the
// package's rule: a Hugging Face URL's repository, else the URL's folder), for general.name; "" when it cannot be
// resolved.
std::string model_folder_name(const std::string& model_path);

// A checkpoint given as its folder: the folder's model.safetensors.index.json, else its model.safetensors, in
// *model_path; false when `path` is a folder with neither (*model_path: `path` itself when it is not a folder).
bool checkpoint_model_path(const std::string& path, std::string* model_path);

// The files beside a Hugging Face checkpoint that its conversion to GGUF reads (`convert`, and `quantize`'s one
// pass), read once for both commands.
struct HfCheckpointFiles {
    ConfigFile config_file = ConfigFile::kMissing;
    HfConfig config;
    std::string config_path;                  // DIR/config.json
    std::string config_problem;               // kUnusable: why, as a sentence naming the file
    HfVocabFileSet vocab;                     // the tokenizer files, read when config.json was
    std::vector<std::string> vocab_problems;  // tokenizer files skipped, as sentences for warnings
    std::string model_name;                   // the folder's name (a Hugging Face URL's repository), for general.name
    std::string failed;                       // beside a URL: a file the server failed to give, or "" (an error)

    // Reads them beside model_path (a safetensors file or its index).
    void read(const std::string& model_path);
    // Points `options` at them (options->hf, config_name, config_problem, vocab_files, model_name): this object
    // must outlive the plan.
    void apply(ConvertOptions* options) const;
};

// Prints why ConvertJob::make() refused (by refusal.about) and returns the exit status.
int fail_conversion(const LoadedModel& model, const std::string& in_path, const Status& status,
                    const ConvertRefusal& refusal);

}  // namespace ws::cli
