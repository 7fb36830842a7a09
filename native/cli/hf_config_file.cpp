// SPDX-License-Identifier: MIT
#include "cli/hf_config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "cli/cli.h"

namespace ws::cli {

ConfigFile read_hf_config(const std::string& model_path, HfConfig* out, std::string* problem) {
    const size_t slash = model_path.rfind('/');
    const std::string path =
        (slash == std::string::npos ? std::string() : model_path.substr(0, slash + 1)) + "config.json";
    // Opened without blocking: a FIFO planted beside the model must not hang the command.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return ConfigFile::kMissing;
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        *problem = path + " is not a regular file; ignored";
        return ConfigFile::kUnusable;
    }
    // One byte past the cap is enough for the core to refuse the file as too large.
    std::string bytes;
    char buf[65536];
    while (bytes.size() <= kHfConfigMaxBytes) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        bytes.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    Result<HfConfig> config = parse_hf_config(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    if (!config.ok()) {
        *problem = hf_config_problem(config.status(), path);
        return ConfigFile::kUnusable;
    }
    *out = std::move(config).value();
    return ConfigFile::kRead;
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
    const size_t slash = model_path.rfind('/');
    config_path = (slash == std::string::npos ? std::string() : model_path.substr(0, slash + 1)) + "config.json";
    config_file = read_hf_config(model_path, &config, &config_problem);
}

void HfCheckpointFiles::apply(ConvertOptions* options) const {
    options->hf = config_file == ConfigFile::kRead ? &config : nullptr;
    options->config_name = config_path;
    options->config_problem = config_problem;
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
        case ConvertRefusal::About::kOutput:
            break;
    }
    return fail(kExitInvalid, in_path + ": " + refusal.why);
}

}  // namespace ws::cli
