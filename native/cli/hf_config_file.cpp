// SPDX-License-Identifier: MIT
#include "cli/hf_config_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "cli/cli.h"

namespace ws::cli {
namespace {

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Reads at most `cap` + 1 bytes of `path` into *bytes (one byte past the cap is enough for the core to refuse the
// file as too large). Opened without blocking: a FIFO planted beside the model must not hang the command.
ConfigFile read_side_file(const std::string& path, uint64_t cap, std::string* bytes, std::string* problem) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return ConfigFile::kMissing;
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        *problem = path + " is not a regular file; ignored";
        return ConfigFile::kUnusable;
    }
    bytes->clear();
    char buf[65536];
    while (bytes->size() <= cap) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        bytes->append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return ConfigFile::kRead;
}

}  // namespace

ConfigFile read_hf_config(const std::string& model_path, HfConfig* out, std::string* problem, std::string* bytes) {
    const std::string path = dir_of(model_path) + "config.json";
    std::string own;
    std::string& data = bytes ? *bytes : own;
    const ConfigFile read = read_side_file(path, kHfConfigMaxBytes, &data, problem);
    if (read != ConfigFile::kRead) return read;
    Result<HfConfig> config = parse_hf_config(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    if (!config.ok()) {
        *problem = hf_config_problem(config.status(), path);
        return ConfigFile::kUnusable;
    }
    *out = std::move(config).value();
    return ConfigFile::kRead;
}

void read_hf_vocab_files(const std::string& model_path, HfVocabFileSet* out, std::vector<std::string>* problems) {
    const std::string dir = dir_of(model_path);
    for (size_t k = 0; k < out->bytes.size(); ++k) {
        std::string problem;
        const ConfigFile read =
            read_side_file(dir + kHfVocabFileNames[k], kHfTokenizerFileMaxBytes, &out->bytes[k], &problem);
        if (read == ConfigFile::kUnusable) problems->push_back(problem);
        if (read != ConfigFile::kRead) continue;
        out->any = true;
        *hf_vocab_file_slot(&out->files, kHfVocabFileNames[k]) = out->bytes[k];
    }
    out->files.config = out->config;
}

std::string model_folder_name(const std::string& model_path) {
    const std::string dir = dir_of(model_path);
    char resolved[PATH_MAX];
    if (!::realpath(dir.empty() ? "." : dir.c_str(), resolved)) return std::string();
    const std::string full = resolved;
    return full.substr(full.rfind('/') + 1);
}

bool checkpoint_model_path(const std::string& path, std::string* model_path) {
    *model_path = path;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return true;
    const std::string dir = ends_with(path, "/") ? path : path + "/";
    for (const char* name : {"model.safetensors.index.json", "model.safetensors"}) {
        if (::stat((dir + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
            *model_path = dir + name;
            return true;
        }
    }
    return false;
}

void HfCheckpointFiles::read(const std::string& model_path) {
    config_path = dir_of(model_path) + "config.json";
    config_file = read_hf_config(model_path, &config, &config_problem, &vocab.config);
    if (config_file == ConfigFile::kRead) read_hf_vocab_files(model_path, &vocab, &vocab_problems);
    model_name = model_folder_name(model_path);
}

void HfCheckpointFiles::apply(ConvertOptions* options) const {
    options->hf = config_file == ConfigFile::kRead ? &config : nullptr;
    options->config_name = config_path;
    options->config_problem = config_problem;
    options->vocab_files = vocab.any ? &vocab.files : nullptr;
    options->model_name = model_name;
}

int fail_conversion(const LoadedModel& model, const std::string& in_path, const Status& status,
                    const ConvertRefusal& refusal) {
    switch (refusal.about) {
        case ConvertRefusal::About::kTensor: {
            const TensorInfo& t = model.info.tensors[static_cast<size_t>(refusal.tensor)];
            return fail(kExitInvalid, describe(model.paths[t.file_index], status) + ": " + refusal.why);
        }
        case ConvertRefusal::About::kConfig:
            return fail(kExitInvalid, refusal.why);
        case ConvertRefusal::About::kTokenizer:  // what: the tokenizer file's name
            return fail(kExitInvalid, dir_of(in_path) + status.what + ": " + refusal.why);
        case ConvertRefusal::About::kOutput:
            break;
    }
    return fail(kExitInvalid, in_path + ": " + refusal.why);
}

}  // namespace ws::cli
