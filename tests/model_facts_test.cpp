// SPDX-License-Identifier: MIT
// The derived facts against llama.cpp's own numbers: for each of the 47 llama-quantize reference runs
// (../shared/testdata/recipes), the bits per weight llama-quantize printed ("quant size = ... (B BPW)",
// total bytes * 8 / ml.n_elements) and the file type it wrote; for each input file parsed here, the "model
// size" BPW of its log. Then layer grouping, file type names and hostile values one at a time.
#include "weightstream/model_facts.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <regex>

#include "support/recipe_runs.h"
#include "support/test_util.h"
#include "weightstream/gguf.h"
#include "weightstream/model_json.h"

namespace {

using namespace ws;
using ws_test::tensor;

std::string two_decimals(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

MetadataEntry integer_entry(const std::string& key, ValueType type, uint64_t bits) {
    MetadataEntry e;
    e.key = key;
    e.value.type = type;
    e.value.bits = bits;
    return e;
}

TensorInfo sized(const std::string& name, DType t, std::vector<int64_t> ne, uint64_t nbytes) {
    TensorInfo info = tensor(name, t, ne);
    info.n_elements = 1;
    for (int64_t n : ne) info.n_elements *= static_cast<uint64_t>(n);
    info.nbytes = nbytes;
    return info;
}

// info --json's "facts" (model_json.h), parsed.
nlohmann::json facts_json(const ModelInfo& info) {
    return nlohmann::json::parse(model_json(info, JsonParts(), -1))["facts"];
}

ModelInfo parse_file(const std::string& path) {
    const std::vector<uint8_t> bytes = ws_test::read_file(path);
    ParseOptions options;
    options.file_size = bytes.size();
    GgufParser parser(options);
    REQUIRE(parser.feed(bytes.data(), bytes.size()).ok());
    return parser.take_info();
}

// The "model size  = X MiB (B BPW)" figure of a llama-quantize log.
std::string logged_input_bpw(const std::string& log_path) {
    std::ifstream in(log_path);
    const std::regex line(R"(model size\s+=\s+[0-9.]+ MiB \(([0-9.]+) BPW\))");
    std::smatch m;
    for (std::string s; std::getline(in, s);) {
        if (std::regex_search(s, m, line)) return m[1];
    }
    return "";
}

}  // namespace

TEST_CASE("model facts equal llama-quantize's BPW and file type for every reference run") {
    const auto runs = ws_test::recipe_runs();
    REQUIRE(runs.size() == 47);
    for (const auto& run : runs) {
        const nlohmann::json& rec = run.record;
        INFO(rec["command"].get<std::string>());
        ModelInfo info;
        info.format = Format::kGguf;
        uint64_t elements = 0, bytes = 0;
        for (const auto& t : rec["tensors"]) {
            std::vector<int64_t> ne = t["ne"].get<std::vector<int64_t>>();
            uint64_t n = 1;
            for (int64_t d : ne) n *= static_cast<uint64_t>(d);
            elements += n;
            bytes += t["nbytes"].get<uint64_t>();
            info.tensors.push_back(sized(t["name"], DType::F32, ne, t["nbytes"].get<uint64_t>()));
        }
        for (const auto& kv : rec["metadata"]) {
            if (kv["key"] == "general.file_type") {
                info.metadata.push_back(integer_entry("general.file_type", ValueType::kUint32, kv["value"]));
            }
        }
        const ModelFacts f = model_facts(info);
        CHECK(f.parameter_count == elements);
        CHECK(f.data_bytes == bytes);
        CHECK(two_decimals(f.bits_per_weight) == two_decimals(rec["quant_bpw"].get<double>()));
        REQUIRE(f.has_file_type);
        CHECK(f.file_type_id == rec["general.file_type"].get<int64_t>());
        REQUIRE(f.file_type_name != nullptr);
        CHECK(std::string(f.file_type_name) == rec["ftype"].get<std::string>());
    }
}

TEST_CASE("model facts of the reference inputs equal their logged model size BPW") {
    const std::string dir = ws_test::recipes_dir();
    struct Input {
        const char* file;
        const char* log;  // any run of that input: each prints the input's "model size"
        const char* file_type;
        size_t layers;
        size_t other;
    };
    const Input inputs[] = {
        {"ref-llama-gqa8-f16.gguf", "ref-llama-gqa8-Q4_K_M.log", "F16", 3, 2},
        {"ref-llama-moe-f16.gguf", "ref-llama-moe-Q4_K_M.log", "F16", 2, 3},
        {"ref-llama-bf16-odd.gguf", "ref-llama-bf16-odd-Q4_K_M.log", "BF16", 2, 3},
    };
    for (const Input& in : inputs) {
        INFO(in.file);
        const ModelInfo info = parse_file(dir + "/" + in.file);
        const ModelFacts f = model_facts(info);
        const std::string logged = logged_input_bpw(dir + "/logs/" + in.log);
        REQUIRE(!logged.empty());
        CHECK(two_decimals(f.bits_per_weight) == logged);
        uint64_t elements = 0;
        for (const TensorInfo& t : info.tensors) elements += t.n_elements;
        CHECK(f.parameter_count == elements);
        REQUIRE(f.file_type_name != nullptr);
        CHECK(std::string(f.file_type_name) == in.file_type);
        CHECK(f.layer_count == in.layers);
        const LayerGroups g = layer_groups(info);
        REQUIRE(g.layers.size() == in.layers);
        CHECK(g.other.size() == in.other);
        size_t grouped = g.other.size();
        for (size_t i = 0; i < g.layers.size(); ++i) {
            CHECK(g.layers[i].name == "blk." + std::to_string(i));
            CHECK(g.layers[i].index == i);
            for (size_t t : g.layers[i].tensors) CHECK(info.tensors[t].name.rfind(g.layers[i].name + ".", 0) == 0);
            grouped += g.layers[i].tensors.size();
        }
        CHECK(grouped == info.tensors.size());
        for (size_t t : g.other) CHECK(info.tensors[t].name.rfind("blk.", 0) != 0);
        // The same facts in info --json's "facts".
        const nlohmann::json j = facts_json(info);
        CHECK(j["parameter_count"] == elements);
        CHECK(j["file_type"] == in.file_type);
        CHECK(j["file_type_id"] == f.file_type_id);
        CHECK(j["layers"] == in.layers);
        CHECK(j["bits_per_weight"].get<double>() == f.bits_per_weight);
    }
}

TEST_CASE("tensor_layer reads GGUF and Hugging Face layer prefixes") {
    std::string group = "untouched";
    uint32_t index = 77;
    CHECK(tensor_layer("blk.12.attn_q.weight", &group, &index));
    CHECK(group == "blk.12");
    CHECK(index == 12);
    CHECK(tensor_layer("model.layers.3.self_attn.q_proj.weight", &group, &index));
    CHECK(group == "model.layers.3");
    CHECK(index == 3);
    CHECK(tensor_layer("transformer.h.0.attn.c_attn.weight", &group, &index));
    CHECK(group == "transformer.h.0");
    CHECK(tensor_layer("encoder.layer.11.output.dense.bias", &group, &index));
    CHECK(index == 11);
    CHECK(tensor_layer("v.blk.7.ffn_up.weight", &group, &index));
    CHECK(group == "v.blk.7");
    CHECK(tensor_layer("blk.007.x", &group, &index));
    CHECK(index == 7);
    CHECK(tensor_layer("blk.999999999.x", &group, &index));
    CHECK(index == 999999999u);
    group = "untouched";
    index = 77;
    for (const char* name : {"token_embd.weight", "output_norm.weight", "output.weight", "blk.3", "blk.3.", "blk..x",
                             "blk.x.attn", "blk.-1.attn", "blk.+1.attn", "blk.1e3.attn", "blk.1000000000.attn",
                             "xblk.3.attn", "blkk.3.attn", "", ".", "blk", "blk.", "layers_3.x"}) {
        INFO(name);
        CHECK_FALSE(tensor_layer(name, &group, &index));
    }
    CHECK(group == "untouched");
    CHECK(index == 77);
}

TEST_CASE("layer_groups orders layers by prefix, then by number, and keeps file order inside") {
    ModelInfo info;
    for (const char* name : {"blk.10.b", "token_embd.weight", "v.blk.1.a", "blk.2.a", "blk.10.a", "v.blk.0.a",
                             "output.weight", "blk.2.b"}) {
        info.tensors.push_back(sized(name, DType::F32, {4}, 16));
    }
    const LayerGroups g = layer_groups(info);
    REQUIRE(g.layers.size() == 4);
    CHECK(g.layers[0].name == "blk.2");
    CHECK(g.layers[0].tensors == std::vector<size_t>{3, 7});
    CHECK(g.layers[1].name == "blk.10");
    CHECK(g.layers[1].index == 10);
    CHECK(g.layers[1].tensors == std::vector<size_t>{0, 4});
    CHECK(g.layers[2].name == "v.blk.0");
    CHECK(g.layers[2].tensors == std::vector<size_t>{5});
    CHECK(g.layers[3].name == "v.blk.1");
    CHECK(g.layers[3].tensors == std::vector<size_t>{2});
    CHECK(g.other == std::vector<size_t>{1, 6});
    CHECK(model_facts(info).layer_count == 4);
}

TEST_CASE("file type names follow llama-quantize; odd general.file_type values name nothing") {
    ModelInfo info;
    info.tensors.push_back(sized("w", DType::F32, {8}, 32));
    const auto facts_with = [&](ValueType type, uint64_t bits) {
        info.metadata = {integer_entry("general.file_type", type, bits)};
        return model_facts(info);
    };
    CHECK(std::string(facts_with(ValueType::kUint32, 15).file_type_name) == "Q4_K_M");
    CHECK(std::string(facts_with(ValueType::kUint32, 0).file_type_name) == "F32");
    CHECK(std::string(facts_with(ValueType::kUint32, 38).file_type_name) == "MXFP4_MOE");
    CHECK(std::string(facts_with(ValueType::kInt8, 7).file_type_name) == "Q8_0");
    // llama.h ids llama-quantize does not offer (4: MOSTLY_Q4_1_SOME_F16, 5 and 6 removed) and junk.
    for (uint64_t id : {4ull, 5ull, 6ull, 33ull, 1024ull, 0xffffffffull}) {
        const ModelFacts f = facts_with(ValueType::kUint32, id);
        CHECK(f.has_file_type);
        CHECK(f.file_type_id == static_cast<int64_t>(id));
        CHECK(f.file_type_name == nullptr);
    }
    const ModelFacts negative = facts_with(ValueType::kInt32, static_cast<uint64_t>(int64_t{-1}));
    CHECK(negative.has_file_type);
    CHECK(negative.file_type_id == -1);
    CHECK(negative.file_type_name == nullptr);
    CHECK_FALSE(facts_with(ValueType::kUint64, ~0ull).has_file_type);
    MetadataEntry text = string_entry("general.file_type", "15");
    info.metadata = {text};
    CHECK_FALSE(model_facts(info).has_file_type);
    info.metadata.clear();
    const ModelFacts none = model_facts(info);
    CHECK_FALSE(none.has_file_type);
    CHECK(none.file_type_name == nullptr);
    const nlohmann::json j = facts_json(info);
    CHECK(j["file_type"].is_null());
    CHECK(j["file_type_id"].is_null());
    CHECK(j["bits_per_weight"] == 8.0 * 32 / 8);
}

TEST_CASE("model facts saturate instead of wrapping, and have no BPW without parameters") {
    ModelInfo info;
    const ModelFacts empty = model_facts(info);
    CHECK(empty.parameter_count == 0);
    CHECK(std::isnan(empty.bits_per_weight));
    CHECK(facts_json(info)["bits_per_weight"].is_null());
    CHECK(facts_json(info)["layers"] == 0);
    const uint64_t big = std::numeric_limits<uint64_t>::max() / 2 + 1;
    for (int i = 0; i < 3; ++i) {
        TensorInfo t = tensor("t" + std::to_string(i), DType::F32, {1});
        t.n_elements = big;
        t.nbytes = big;
        info.tensors.push_back(t);
    }
    const ModelFacts f = model_facts(info);
    CHECK(f.parameter_count == std::numeric_limits<uint64_t>::max());
    CHECK(f.data_bytes == std::numeric_limits<uint64_t>::max());
    CHECK(f.bits_per_weight == 8.0);
}
