// SPDX-License-Identifier: MIT
#include "cli/hf_config_file.h"

#include <cstdio>

namespace ws::cli {

ConfigFile read_hf_config(const std::string& model_path, HfConfig* out, std::string* problem) {
    const size_t slash = model_path.rfind('/');
    const std::string path =
        (slash == std::string::npos ? std::string() : model_path.substr(0, slash + 1)) + "config.json";
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return ConfigFile::kMissing;
    // One byte past the cap is enough for the core to refuse the file as too large.
    std::string bytes;
    char buf[65536];
    size_t n;
    while (bytes.size() <= kHfConfigMaxBytes && (n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
    std::fclose(f);
    Result<HfConfig> config = parse_hf_config(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    if (!config.ok()) {
        *problem = hf_config_problem(config.status(), path);
        return ConfigFile::kUnusable;
    }
    *out = std::move(config).value();
    return ConfigFile::kRead;
}

}  // namespace ws::cli
