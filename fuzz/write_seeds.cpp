// SPDX-License-Identifier: MIT
// Writes the seed corpora for the fuzz targets from the corrupt-file catalogues (one file per defect):
//   build/bin/write_seeds fuzz/corpus
// The output is committed; rerun it when a catalogue grows.
#include <cstdio>
#include <string>

#include "support/gguf_catalogue.h"
#include "support/safetensors_catalogue.h"

namespace {

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
        std::perror(path.c_str());
        std::exit(3);
    }
}

std::string file_name(std::string name) {
    for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return name;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: write_seeds CORPUS_DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    for (const auto& c : ws_test::gguf_corrupt_catalogue()) write(dir + "/fuzz_gguf/" + file_name(c.name), c.bytes);
    for (const auto& c : ws_test::safetensors_catalogue()) {
        write(dir + "/fuzz_safetensors/" + file_name(c.name), c.bytes);
    }
    return 0;
}
