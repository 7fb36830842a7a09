// SPDX-License-Identifier: MIT
#include "cli/hf_config_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace ws::cli
