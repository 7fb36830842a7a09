// SPDX-License-Identifier: MIT
#include "cli/hf_config_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "cli/cli.h"
#include "io/http_source.h"

namespace ws::cli {
namespace {

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// File `name` beside the model: in its folder, or for a URL the sibling URL (its query kept, as for shards).
std::string side_path(const std::string& model_path, const char* name) {
    return is_url(model_path) ? url_sibling(model_path, name) : dir_of(model_path) + name;
}

// Reads up to `cap` bytes more from fd into *bytes.
void read_capped(int fd, uint64_t cap, std::string* bytes) {
    char buf[65536];
    while (bytes->size() <= cap) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        bytes->append(buf, static_cast<size_t>(n));
    }
}

// A file beside a model at a URL: one Range request for its first cap + 1 bytes. A 404 is a file the repository
// does not have (kMissing), as in the package; any other failure the retries do not mend is kFailed (*problem:
// the URL and why): going on without the file would write another output than the one asked for.
ConfigFile read_side_url(const std::string& url, uint64_t cap, std::string* bytes, std::string* problem) {
    HttpFile file(url);
    std::vector<uint8_t> data;
    HttpError error;
    switch (file.read(0, cap + 1, &data, &error)) {
        case HttpFile::Outcome::kOk:
        case HttpFile::Outcome::kNotModified:
            bytes->assign(data.begin(), data.end());
            return ConfigFile::kRead;
        case HttpFile::Outcome::kNoRange: {  // a server that ignores Range: the body, up to the cap
            std::string why;
            const int fd = file.open_stream(&why);
            if (fd < 0) {
                *problem = file.shown_url() + ": " + why;
                return ConfigFile::kFailed;
            }
            bytes->clear();
            read_capped(fd, cap, bytes);
            ::close(fd);
            return ConfigFile::kRead;
        }
        case HttpFile::Outcome::kFailed:
            break;
    }
    if (error.code == Error::kHttp && error.message.rfind("HTTP 404", 0) == 0) return ConfigFile::kMissing;
    *problem = file.shown_url() + ": " + error.message;
    return ConfigFile::kFailed;
}

// Reads at most `cap` + 1 bytes of `path` into *bytes (one byte past the cap is enough for the core to refuse the
// file as too large). Opened without blocking: a FIFO planted beside the model must not hang the command.
ConfigFile read_side_file(const std::string& path, uint64_t cap, std::string* bytes, std::string* problem) {
    if (is_url(path)) return read_side_url(path, cap, bytes, problem);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return ConfigFile::kMissing;
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        *problem = path + " is not a regular file; ignored";
        return ConfigFile::kUnusable;
    }
    bytes->clear();
    read_capped(fd, cap, bytes);
    ::close(fd);
    return ConfigFile::kRead;
}

}  // namespace

ConfigFile read_hf_config(const std::string& model_path, HfConfig* out, std::string* problem, std::string* bytes) {
    const std::string path = side_path(model_path, "config.json");
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
    for (size_t k = 0; k < out->bytes.size(); ++k) {
        std::string problem;
        const ConfigFile read = read_side_file(side_path(model_path, kHfVocabFileNames[k]), kHfTokenizerFileMaxBytes,
                                               &out->bytes[k], &problem);
        if (read == ConfigFile::kFailed) {
            out->failed = problem;
            return;
        }
        if (read == ConfigFile::kUnusable) problems->push_back(problem);
        if (read != ConfigFile::kRead) continue;
        out->any = true;
        *hf_vocab_file_slot(&out->files, kHfVocabFileNames[k]) = out->bytes[k];
    }
    out->files.config = out->config;
}

std::string model_folder_name(const std::string& model_path) {
    if (is_url(model_path)) {
        // The package's rule (modelFolderName): a Hugging Face URL's repository (.../ORG/REPO/resolve/REV/FILE),
        // else the URL's folder.
        const size_t scheme = model_path.find("://");
        const size_t path_at = model_path.find('/', scheme + 3);
        if (path_at == std::string::npos) return std::string();
        const std::string path = model_path.substr(path_at, model_path.find_first_of("?#", path_at) - path_at);
        std::vector<std::string> parts;
        for (size_t at = 0; at < path.size();) {
            const size_t next = std::min(path.find('/', at), path.size());
            if (next > at) parts.push_back(path.substr(at, next - at));
            at = next + 1;
        }
        size_t pick = parts.size();  // none
        for (size_t k = parts.size(); k-- > 0;) {
            if (parts[k] == "resolve") {
                if (k >= 2) pick = k - 1;
                break;
            }
        }
        if (pick == parts.size() && parts.size() >= 2) pick = parts.size() - 2;
        return pick < parts.size() ? url_name("http://host/" + parts[pick]) : std::string();  // percent-decoded
    }
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
    config_path = side_path(model_path, "config.json");
    config_file = read_hf_config(model_path, &config, &config_problem, &vocab.config);
    if (config_file == ConfigFile::kFailed) failed = config_problem;
    if (config_file == ConfigFile::kRead) read_hf_vocab_files(model_path, &vocab, &vocab_problems);
    if (!vocab.failed.empty()) failed = vocab.failed;
    model_name = model_folder_name(model_path);
}

void HfCheckpointFiles::apply(ConvertOptions* options) const {
    options->hf = config_file == ConfigFile::kRead ? &config : nullptr;
    if (!config_path.empty()) options->config_name = config_path;  // read(): the name the warnings give
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
