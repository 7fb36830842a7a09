// SPDX-License-Identifier: MIT
// Writes the seed corpora for the fuzz targets: the parsers' from the corrupt-file catalogues (one file per
// defect), the decoders' one input per dtype selector and byte order (three blocks of patterned bytes):
//   build/bin/write_seeds fuzz/corpus
// The output is committed; rerun it when a catalogue grows.
#include <cstdio>
#include <string>

#include "dtype.h"
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
    // Decoder seeds: selector, byte order, [fuzz_block_stream: 8 chunking seed bytes], then the blocks.
    for (unsigned selector = 0; selector < 58; ++selector) {
        for (unsigned big_endian = 0; big_endian < 2; ++big_endian) {
            std::vector<uint8_t> blocks(3 * 292 + 5);  // three Q8_K blocks; more blocks of the smaller types
            for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<uint8_t>(i * 131 + selector * 7);
            const std::string name = std::to_string(selector) + (big_endian ? "_be" : "_le");
            std::vector<uint8_t> d = {static_cast<uint8_t>(selector), static_cast<uint8_t>(big_endian)};
            d.insert(d.end(), blocks.begin(), blocks.end());
            write(dir + "/fuzz_dequant/" + name, d);
            std::vector<uint8_t> b = {static_cast<uint8_t>(selector), static_cast<uint8_t>(big_endian)};
            for (unsigned i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(selector * 29 + i * 83));
            b.insert(b.end(), blocks.begin(), blocks.end());
            write(dir + "/fuzz_block_stream/" + name, b);
        }
    }
    return 0;
}
