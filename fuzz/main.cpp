// SPDX-License-Identifier: MIT
// Replays files and directories of inputs through a fuzz target without libFuzzer, so every build (and
// CI, under the sanitizers) runs the seed corpus and every past finding. Each input is copied into an
// exact-size allocation so AddressSanitizer sees any over-read.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

size_t run_path(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
        std::fprintf(stderr, "replay: cannot stat %s\n", path.c_str());
        std::exit(1);
    }
    if (S_ISDIR(st.st_mode)) {
        size_t n = 0;
        DIR* dir = opendir(path.c_str());
        while (dirent* e = dir ? readdir(dir) : nullptr) {
            const std::string name = e->d_name;
            if (name != "." && name != "..") n += run_path(path + "/" + name);
        }
        if (dir) closedir(dir);
        return n;
    }
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::unique_ptr<uint8_t[]> exact(new uint8_t[bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), exact.get());
    LLVMFuzzerTestOneInput(exact.get(), bytes.size());
    // Every prefix of small inputs too: truncation is the most common real-world defect.
    if (bytes.size() <= 4096) {
        for (size_t len = 0; len < bytes.size(); ++len) {
            std::unique_ptr<uint8_t[]> prefix(new uint8_t[len]);
            std::copy(bytes.begin(), bytes.begin() + static_cast<long>(len), prefix.get());
            LLVMFuzzerTestOneInput(prefix.get(), len);
        }
    }
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    size_t n = 0;
    for (int i = 1; i < argc; ++i) n += run_path(argv[i]);
    std::printf("replayed %zu inputs\n", n);
    return 0;
}
