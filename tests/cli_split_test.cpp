// SPDX-License-Identifier: MIT
// Models in several files through the CLI: llama.cpp's split GGUF and Hugging Face's sharded safetensors,
// written with the project's own writers.
#include <catch2/catch.hpp>

#include "support/run_cli.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/model_plan.h"
#include "weightstream/safetensors_writer.h"
#include "weightstream/split.h"

using nlohmann::json;
using ws_test::quote;
using ws_test::run_cli;

namespace {

ws::MetadataEntry entry(const std::string& key, ws::ValueType type, uint64_t bits) {
    ws::MetadataEntry e;
    e.key = key;
    e.value.type = type;
    e.value.bits = bits;
    return e;
}

ws::TensorInfo f32_tensor(const std::string& name, int64_t ne0, int64_t ne1) {
    ws::TensorInfo t;
    t.name = name;
    t.dtype = ws::DType::F32;
    t.n_dims = 2;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    return t;
}

std::vector<uint8_t> ramp(size_t n_floats, float start) {
    std::vector<uint8_t> bytes(n_floats * 4);
    for (size_t i = 0; i < n_floats; ++i) {
        const float f = start + static_cast<float>(i);
        std::memcpy(&bytes[i * 4], &f, 4);
    }
    return bytes;
}

// Writes prefix-0000K-of-00003.gguf: part K holds tensor "t{K}" ([8, K+1] F32); the first part carries
// the model's metadata, every part the split keys (as llama.cpp's gguf-split writes them).
void write_split(const std::string& prefix, uint32_t declared_count, uint16_t tensors_count) {
    for (uint32_t k = 0; k < 3; ++k) {
        std::vector<ws::MetadataEntry> meta;
        if (k == 0) meta.push_back(ws::string_entry("general.architecture", "llama"));
        meta.push_back(entry("split.no", ws::ValueType::kUint16, k));
        meta.push_back(entry("split.count", ws::ValueType::kUint16, declared_count));
        meta.push_back(entry("split.tensors.count", ws::ValueType::kInt32, tensors_count));
        const ws::TensorInfo t = f32_tensor("t" + std::to_string(k), 8, k + 1);
        auto bytes = ws::gguf_write(meta, {t}, {ramp(8 * (k + 1), 100.0f * k)});
        REQUIRE(bytes.ok());
        ws_test::write_file(ws::split_part_path(prefix, k + 1, 3), bytes.value());
    }
}

}  // namespace

TEST_CASE("any part of a split GGUF opens as one model") {
    ws_test::TempDir dir;
    const std::string prefix = dir.file("model");
    write_split(prefix, 3, 3);
    const json first = json::parse(run_cli("info " + quote(prefix + "-00001-of-00003.gguf") + " --json").out);
    for (const char* part : {"-00002-of-00003.gguf", "-00003-of-00003.gguf"}) {
        const ws_test::CliResult r = run_cli("info " + quote(prefix + part) + " --json");
        REQUIRE(r.status == 0);
        CHECK(json::parse(r.out) == first);
    }
    CHECK(first["files"] ==
          json({"model-00001-of-00003.gguf", "model-00002-of-00003.gguf", "model-00003-of-00003.gguf"}));
    REQUIRE(first["tensors"].size() == 3);
    uint64_t total = 0;
    for (int k = 0; k < 3; ++k) {
        const json& t = first["tensors"][k];
        CHECK(t["name"] == "t" + std::to_string(k));
        CHECK(t["file"] == first["files"][k]);
        CHECK(t["shape"] == json({k + 1, 8}));
        // Each part is a whole GGUF: its tensor's offset is inside that part.
        const auto part = ws_test::read_file(ws::split_part_path(prefix, k + 1, 3));
        CHECK(t["offset"].get<uint64_t>() + t["nbytes"].get<uint64_t>() <= part.size());
        total += part.size();
    }
    CHECK(first["file_size"] == total);
    CHECK(first["metadata"][0]["key"] == "general.architecture");
    const ws_test::CliResult verify = run_cli("verify " + quote(prefix + "-00002-of-00003.gguf"));
    CHECK(verify.status == 0);
}

TEST_CASE("a split GGUF whose parts disagree is rejected") {
    ws_test::TempDir dir;
    SECTION("split.count differs from the file names") {
        write_split(dir.file("a"), 4, 3);
        const ws_test::CliResult r = run_cli("info " + quote(dir.file("a-00001-of-00003.gguf")));
        CHECK(r.status == 1);
        CHECK(r.err.find(dir.file("a-00001-of-00003.gguf") +
                         ": bad_split: the parts do not form one model: split.count") != std::string::npos);
    }
    SECTION("split.tensors.count differs from the tensors found") {
        write_split(dir.file("b"), 3, 5);
        const ws_test::CliResult r = run_cli("info " + quote(dir.file("b-00003-of-00003.gguf")));
        CHECK(r.status == 1);
        CHECK(r.err.find("bad_split: the parts do not form one model: split.tensors.count") != std::string::npos);
    }
    SECTION("parts saved under each other's names: the error names the part it is in") {
        write_split(dir.file("d"), 3, 3);
        const std::string two = dir.file("d-00002-of-00003.gguf"), three = dir.file("d-00003-of-00003.gguf");
        REQUIRE(std::rename(two.c_str(), dir.file("tmp").c_str()) == 0);
        REQUIRE(std::rename(three.c_str(), two.c_str()) == 0);
        REQUIRE(std::rename(dir.file("tmp").c_str(), three.c_str()) == 0);
        const ws_test::CliResult r = run_cli("info " + quote(dir.file("d-00001-of-00003.gguf")));
        CHECK(r.status == 1);
        // Part 2 now holds split.no = 2, the first key of that file (after the 24-byte fixed header).
        CHECK(r.err ==
              "weightstream: error: " + two + ": bad_split: the parts do not form one model: split.no (byte 24)\n");
    }
    SECTION("a missing part is an I/O error naming it") {
        write_split(dir.file("c"), 3, 3);
        std::remove(dir.file("c-00002-of-00003.gguf").c_str());
        const ws_test::CliResult r = run_cli("info " + quote(dir.file("c-00001-of-00003.gguf")));
        CHECK(r.status == 3);
        CHECK(r.err.find("c-00002-of-00003.gguf: io: the file could not be read: No such file or directory") !=
              std::string::npos);
    }
}

TEST_CASE("a sharded safetensors index opens as one model") {
    ws_test::TempDir dir;
    const std::vector<std::pair<std::string, std::vector<std::string>>> shards = {
        {"model-00001-of-00002.safetensors", {"a.weight", "b.weight"}},
        {"model-00002-of-00002.safetensors", {"c.weight"}},
    };
    json weight_map = json::object();
    for (const auto& [file, names] : shards) {
        std::vector<ws::TensorInfo> tensors;
        std::vector<std::vector<uint8_t>> data;
        for (const std::string& name : names) {
            tensors.push_back(f32_tensor(name, 4, 2));
            data.push_back(ramp(8, 1.0f));
            weight_map[name] = file;
        }
        auto bytes = ws::safetensors_write({ws::string_entry("format", "pt")}, tensors, data);
        REQUIRE(bytes.ok());
        ws_test::write_file(dir.file(file), bytes.value());
    }
    const std::string index = dir.file("model.safetensors.index.json");
    const std::string text = json({{"metadata", {{"total_size", 96}}}, {"weight_map", weight_map}}).dump();
    ws_test::write_file(index, std::vector<uint8_t>(text.begin(), text.end()));

    const ws_test::CliResult r = run_cli("info " + quote(index) + " --json");
    INFO(r.err);
    REQUIRE(r.status == 0);
    const json info = json::parse(r.out);
    CHECK(info["format"] == "safetensors");
    CHECK(info["files"] == json({shards[0].first, shards[1].first}));
    REQUIRE(info["tensors"].size() == 3);
    CHECK(info["tensors"][0]["name"] == "a.weight");
    CHECK(info["tensors"][2]["name"] == "c.weight");
    CHECK(info["tensors"][2]["file"] == shards[1].first);
    CHECK(run_cli("verify " + quote(index)).status == 0);

    SECTION("a weight map naming the wrong shard is rejected") {
        weight_map["c.weight"] = shards[0].first;
        const std::string bad = json({{"weight_map", weight_map}}).dump();
        ws_test::write_file(index, std::vector<uint8_t>(bad.begin(), bad.end()));
        const ws_test::CliResult wrong = run_cli("info " + quote(index));
        CHECK(wrong.status == 1);
        // Which tensor, listed where (before: "weight_map (byte 0)" alone).
        CHECK(wrong.err == "weightstream: error: " + index +
                               ": bad_split: the parts do not form one model: the index's weight_map puts tensor "
                               "'c.weight' in model-00001-of-00002.safetensors, which does not hold it (byte 0)\n");
    }
    SECTION("a tensor listed in another shard, or not listed, is named with the shards") {
        json moved = weight_map;
        moved["a.weight"] = shards[1].first;
        json unlisted = weight_map;
        unlisted.erase("b.weight");
        const std::pair<json, std::string> cases[] = {
            {moved,
             "the index's weight_map puts tensor 'a.weight' in model-00002-of-00002.safetensors, but "
             "model-00001-of-00002.safetensors holds it"},
            {unlisted,
             "model-00001-of-00002.safetensors holds tensor 'b.weight', which the index's weight_map does "
             "not list"},
        };
        for (const auto& [map, words] : cases) {
            const std::string bad = json({{"weight_map", map}}).dump();
            ws_test::write_file(index, std::vector<uint8_t>(bad.begin(), bad.end()));
            const ws_test::CliResult bad_info = run_cli("info " + quote(index));
            INFO(bad_info.err);
            CHECK(bad_info.status == 1);
            CHECK(bad_info.err.find("weightstream: error: " + dir.file(shards[0].first) +
                                    ": bad_split: the parts do not form one model: " + words + " (byte ") == 0);
        }
    }
    SECTION("an index that points outside its folder is rejected") {
        const std::string evil = json({{"weight_map", {{"a.weight", "../etc/passwd"}}}}).dump();
        ws_test::write_file(index, std::vector<uint8_t>(evil.begin(), evil.end()));
        const ws_test::CliResult escaped = run_cli("info " + quote(index));
        CHECK(escaped.status == 1);
        CHECK(escaped.err.find("weight_map") != std::string::npos);
    }
}

TEST_CASE("the model plan's caps hold natively too") {
    ws_test::TempDir dir;
    SECTION("a split of more parts than the cap is refused before any part is opened") {
        write_split(dir.file("m"), 3, 3);
        const std::string big = dir.file("m-00001-of-99999.gguf");
        REQUIRE(std::rename(dir.file("m-00001-of-00003.gguf").c_str(), big.c_str()) == 0);
        const ws_test::CliResult r = run_cli("info " + quote(big));
        CHECK(r.status == 1);
        CHECK(r.err == "weightstream: error: " + big +
                           ": too_large: a size in the file is beyond the limits: a split of 99999 parts, more than "
                           "the 1024 allowed (byte 0)\n");
    }
    SECTION("an index over 100,000,000 bytes is refused unread") {
        const std::string index = dir.file("model.safetensors.index.json");
        FILE* f = std::fopen(index.c_str(), "wb");
        REQUIRE(f);
        // A sparse file: the size is all that is looked at.
        REQUIRE(std::fseek(f, static_cast<long>(ws::kMaxIndexBytes), SEEK_SET) == 0);
        REQUIRE(std::fputc('}', f) == '}');
        REQUIRE(std::fclose(f) == 0);
        const ws_test::CliResult r = run_cli("info " + quote(index));
        CHECK(r.status == 1);
        CHECK(r.err ==
              "weightstream: error: " + index +
                  ": too_large: a size in the file is beyond the limits: larger than 100000000 bytes (byte 0)\n");
    }
}
