// SPDX-License-Identifier: MIT
// Writes the seed corpora for the fuzz targets: the parsers' from the corrupt-file catalogues (one file per
// defect), the decoders' one input per dtype selector and byte order (three blocks of patterned bytes):
//   build/bin/write_seeds fuzz/corpus
// The output is committed; rerun it when a catalogue grows.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "support/gguf_catalogue.h"
#include "support/safetensors_catalogue.h"
#include "weightstream/dtype.h"

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
    // Sharded safetensors indexes: valid ones, and one per rule of parse_safetensors_index.
    const std::vector<std::pair<std::string, std::string>> indexes = {
        {"valid",
         R"({"metadata": {"total_size": 96, "note": "x"}, "weight_map": {"a": "s1.safetensors", "b": "s2.safetensors", "c": "s1.safetensors"}})"},
        {"no_metadata", R"({"weight_map": {"a": "model-00001-of-00002.safetensors"}})"},
        {"escape", R"({"weight_map": {"a": "../etc/passwd"}})"},
        {"hidden", R"({"weight_map": {"a": ".s.safetensors"}})"},
        {"duplicate_tensor", R"({"weight_map": {"a": "s.safetensors", "a": "t.safetensors"}})"},
        {"not_a_string", R"({"weight_map": {"a": 1}})"},
        {"no_weight_map", R"({"metadata": {}})"},
        {"empty_map", R"({"weight_map": {}})"},
        {"nested_metadata", R"({"metadata": {"a": [1, {"b": null}]}, "weight_map": {"x": "y"}})"},
        {"trailing", R"({"weight_map": {"a": "s"}} x)"},
        {"not_an_object", R"(["weight_map"])"},
    };
    for (const auto& [name, text] : indexes) {
        write(dir + "/fuzz_safetensors_index/" + name, std::vector<uint8_t>(text.begin(), text.end()));
    }
    // Model plans (the input layout is fuzz_model_plan.cpp's): options byte, sources, "\n\n", index.
    const std::vector<std::pair<std::string, std::string>> plans = {
        {"split_from_a_part",
         "\x01"
         "1m-00002-of-00003.gguf"},
        {"split_over_cap",
         "\x05"
         "1m-00001-of-00099.gguf"},
        {"split_alone",
         "\x04"
         "1m-00002-of-00003.gguf"},
        {"split_list",
         "\x01"
         "0m-00002-of-00003.gguf\n0m-00001-of-00003.gguf\n0m-00003-of-00003.gguf"},
        {"split_missing",
         "\x01"
         "0m-00001-of-00003.gguf\n0m-00003-of-00003.gguf"},
        {"split_mixed",
         "\x01"
         "0m-00001-of-00002.gguf\n0n-00002-of-00002.gguf"},
        {"index_alone",
         "\x01"
         "1model.safetensors.index.json\n\n"
         R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})"},
        {"index_file",
         "\x01"
         "0model.safetensors.index.json"},
        {"index_and_shards",
         "\x01"
         "0s2.safetensors\n0m.index.json\n0s1.safetensors\n\n"
         R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})"},
        {"index_missing_shard",
         "\x01"
         "0m.index.json\n0s1.safetensors\n\n"
         R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})"},
        {"shards_no_index",
         "\x01"
         "0c.safetensors\n0a.safetensors\n0b.safetensors"},
        {"unnamed",
         "\x01"
         "0a.gguf\nx\n"},
        {"twice",
         "\x01"
         "0a.safetensors\n0a.safetensors"},
        {"two_indexes",
         "\x01"
         "0a.index.json\n0b.index.json\n0c.safetensors"},
        {"folder",
         "\x03"
         "0config.json\n0tokenizer.json\n0model.safetensors.index.json\n0model.safetensors\n\n"
         R"({"weight_map": {"w": "model.safetensors"}})"},
        {"folder_nothing",
         "\x03"
         "0config.json\n0README.md"},
    };
    for (const auto& [name, text] : plans) {
        write(dir + "/fuzz_model_plan/" + name, std::vector<uint8_t>(text.begin(), text.end()));
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
