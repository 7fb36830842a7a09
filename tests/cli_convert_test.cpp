// SPDX-License-Identifier: MIT
// `weightstream convert` as llama.cpp users expect it, through the real binary: the tensors llama-quantize
// never quantizes stay F32, quantized tensors are not requantized without --allow-requantize,
// general.file_type is the llama_ftype of the result, and a Hugging Face checkpoint gets GGUF names, the
// converter's transforms (checked against the fixture's independent conversion and against `diff`) and
// config.json's hyperparameters, with warnings for what llama.cpp still needs.
#include <catch2/catch.hpp>
#include <map>

#include "support/compare_fixtures.h"
#include "support/recipe_runs.h"
#include "support/run_cli.h"

using nlohmann::json;
using namespace ws_test;

namespace {

CliResult ok_cli(const std::string& args) {
    const CliResult r = run_cli(args);
    INFO("weightstream " << args << "\n" << r.err);
    REQUIRE(r.status == 0);
    return r;
}

json json_cli(const std::string& args) {
    return json::parse(ok_cli(args).out);
}

std::map<std::string, json> by_name(const json& answer) {
    std::map<std::string, json> out;
    for (const json& t : answer["tensors"]) out[t["name"].get<std::string>()] = t;
    return out;
}

std::map<std::string, json> metadata_of(const json& info) {
    std::map<std::string, json> out;
    for (const json& m : info["metadata"]) out[m["key"].get<std::string>()] = m;
    return out;
}

// A checkpoint directory: model.safetensors and a config.json with the hyperparameters of the family.
struct Checkpoint {
    TempDir dir;
    Family family;
    std::vector<HfTensor> hf;
    std::string st;

    explicit Checkpoint(const std::string& name, bool with_config = true) {
        family.name = name;
        hf = make_checkpoint(family);
        REQUIRE(system(("mkdir -p " + quote(dir.file("hf"))).c_str()) == 0);
        st = dir.file("hf/model.safetensors");
        write_file(st, write_safetensors(hf));
        if (!with_config) return;
        const json config = {{"architectures", {"X"}},
                             {"model_type", name},
                             {"hidden_size", family.n_embd},
                             {"intermediate_size", family.n_ff},
                             {"num_hidden_layers", family.n_layer},
                             {"num_attention_heads", family.n_head},
                             {"num_key_value_heads", family.n_head_kv},
                             {"max_position_embeddings", 2048},
                             {"rms_norm_eps", 1e-5},
                             {"rope_theta", 500000.0},
                             {"vocab_size", family.n_vocab}};
        const std::string text = config.dump();
        write_file(dir.file("hf/config.json"), std::vector<uint8_t>(text.begin(), text.end()));
    }
};

}  // namespace

TEST_CASE("convert a Hugging Face llama checkpoint: GGUF names, permuted Q/K, config.json hyperparameters") {
    Checkpoint c("llama");
    const std::string out = c.dir.file("model.gguf");
    const CliResult r = ok_cli("convert " + quote(c.st) + " " + quote(out));
    // What llama.cpp would still need is said, not hidden.
    CHECK(r.err.find("warning: no tokenizer written (tokenizer.ggml.*): llama.cpp cannot load the file") !=
          std::string::npos);
    ok_cli("verify " + quote(out));

    const json info = json_cli("info " + quote(out) + " --json");
    const auto meta = metadata_of(info);
    CHECK(meta.at("general.architecture")["value"] == "llama");
    const std::pair<const char*, int64_t> u32s[] = {
        {"llama.block_count", 2},          {"llama.context_length", 2048},
        {"llama.embedding_length", 64},    {"llama.feed_forward_length", 128},
        {"llama.attention.head_count", 4}, {"llama.attention.head_count_kv", 2},
        {"llama.vocab_size", 96},          {"llama.rope.dimension_count", 64 / 4},
        {"general.file_type", 32},         {"general.quantization_version", 2},
    };
    for (const auto& [key, value] : u32s) {
        INFO(key);
        CHECK(meta.at(key)["type"] == "uint32");
        CHECK(meta.at(key)["value"] == value);
    }
    CHECK(meta.at("llama.rope.freq_base")["type"] == "float32");
    CHECK(meta.at("llama.rope.freq_base")["value"] == 500000.0);
    CHECK(meta.at("llama.attention.layer_norm_rms_epsilon")["value"].get<double>() == double(1e-5f));
    CHECK(meta.count("format") == 0);

    // Every tensor, by its GGUF name, holds the fixture's independent conversion (BF16 matrices, F32 vectors;
    // q/k permuted) byte for byte.
    const auto hashes = by_name(json_cli("hash " + quote(out) + " --json"));
    const std::vector<GgufTensor> expected = convert(c.family, c.hf, Mistake::kNone, ws::DType::BF16);
    REQUIRE(hashes.size() == expected.size());
    for (const GgufTensor& t : expected) {
        INFO(t.name);
        REQUIRE(hashes.count(t.name) == 1);
        CHECK(hashes.at(t.name)["dtype"] == (t.dtype == ws::DType::BF16 ? "BF16" : "F32"));
        const std::vector<uint8_t> bytes = encode(t.dtype, t.values);
        CHECK(hashes.at(t.name)["raw_sha256"] == sha256_hex(bytes.data(), bytes.size()));
    }

    // diff pairs the checkpoint with the output by llama.cpp's rules and finds every pair identical.
    const json d = json_cli("diff " + quote(c.st) + " " + quote(out) + " --json");
    CHECK(d["mapping"] == "hf-to-gguf:llama");
    CHECK(d["summary"]["identical"] == c.hf.size());
    CHECK(d["summary"]["different"] == 0);
    CHECK(d["summary"]["incomparable"] == 0);
}

TEST_CASE("convert a gemma3 checkpoint: norms + 1 in F32, no lm_head, diff identical") {
    Checkpoint c("gemma3");
    const std::string out = c.dir.file("model.gguf");
    ok_cli("convert " + quote(c.st) + " " + quote(out));
    const auto hashes = by_name(json_cli("hash " + quote(out) + " --json"));
    for (const GgufTensor& t : convert(c.family, c.hf, Mistake::kNone, ws::DType::BF16)) {
        INFO(t.name);
        const std::vector<uint8_t> bytes = encode(t.dtype, t.values);
        CHECK(hashes.at(t.name)["raw_sha256"] == sha256_hex(bytes.data(), bytes.size()));
    }
    const json d = json_cli("diff " + quote(c.st) + " " + quote(out) + " --json");
    CHECK(d["summary"]["identical"] == c.hf.size());
    CHECK(d["summary"]["different"] == 0);
    CHECK(metadata_of(json_cli("info " + quote(out) + " --json")).at("general.architecture")["value"] == "gemma3");
}

TEST_CASE("convert a checkpoint --dtype q8_0: matrices Q8_0, vectors and norms F32, file type 7") {
    Checkpoint c("llama");
    const std::string out = c.dir.file("q8.gguf");
    ok_cli("convert " + quote(c.st) + " " + quote(out) + " --dtype q8_0");
    ok_cli("verify " + quote(out));
    const json info = json_cli("info " + quote(out) + " --json");
    for (const json& t : info["tensors"]) {
        INFO(t["name"]);
        CHECK(t["dtype"] == (t["shape"].size() == 1 ? "F32" : "Q8_0"));
    }
    CHECK(metadata_of(info).at("general.file_type")["value"] == 7);
}

TEST_CASE("convert without config.json, or of an unknown family, says llama.cpp will not load it") {
    {
        Checkpoint c("llama", false);
        const CliResult r = ok_cli("convert " + quote(c.st) + " " + quote(c.dir.file("x.gguf")));
        CHECK(r.err.find("warning: no " + c.dir.file("hf/config.json") + ": Hugging Face tensor names kept") !=
              std::string::npos);
        CHECK(r.err.find("llama.cpp will not load the file") != std::string::npos);
        // The names are kept as they are.
        CHECK(by_name(json_cli("info " + quote(c.dir.file("x.gguf")) + " --json")).count("model.norm.weight") == 1);
    }
    {
        Checkpoint c("mamba");
        const CliResult r = ok_cli("convert " + quote(c.st) + " " + quote(c.dir.file("x.gguf")));
        CHECK(r.err.find("model_type 'mamba' is not a family this converter knows") != std::string::npos);
    }
}

TEST_CASE("convert --dtype keeps 1-D tensors and norms F32 and writes the llama_ftype of the result") {
    TempDir tmp;
    const std::string in = recipes_dir() + "/ref-llama-gqa8-f16.gguf";
    const std::pair<const char*, int> cases[] = {{"q8_0", 7}, {"q4_0", 2}, {"f16", 1}, {"bf16", 32}, {"f32", 0}};
    for (const auto& [dtype, ftype] : cases) {
        INFO("--dtype " << dtype);
        const std::string out = tmp.file(std::string(dtype) + ".gguf");
        ok_cli("convert " + quote(in) + " " + quote(out) + " --dtype " + dtype);
        const json info = json_cli("info " + quote(out) + " --json");
        CHECK(metadata_of(info).at("general.file_type")["value"] == ftype);
        for (const json& t : info["tensors"]) {
            const std::string name = t["name"];
            if (t["shape"].size() == 1) {
                INFO(name);
                CHECK(t["dtype"] == "F32");
            }
        }
    }
}

TEST_CASE("convert does not requantize without --allow-requantize") {
    TempDir tmp;
    const std::string in = recipes_dir() + "/ref-llama-gqa8-f16.gguf";
    const std::string q8 = tmp.file("q8.gguf");
    ok_cli("convert " + quote(in) + " " + quote(q8) + " --dtype q8_0");
    const auto q8_hashes = by_name(json_cli("hash " + quote(q8) + " --json"));

    const std::string kept = tmp.file("kept.gguf");
    CliResult r = ok_cli("convert " + quote(q8) + " " + quote(kept) + " --dtype q4_0");
    CHECK(r.err.find("warning: tensors already of type Q8_0 kept as they are, not Q4_0 (--allow-requantize") !=
          std::string::npos);
    const auto kept_hashes = by_name(json_cli("hash " + quote(kept) + " --json"));
    REQUIRE(kept_hashes.size() == q8_hashes.size());
    for (const auto& [name, h] : q8_hashes) {
        INFO(name);
        CHECK(kept_hashes.at(name)["dtype"] == h["dtype"]);
        CHECK(kept_hashes.at(name)["raw_sha256"] == h["raw_sha256"]);
    }
    // Nothing became Q4_0: the file type is the majority's, Q8_0.
    CHECK(metadata_of(json_cli("info " + quote(kept) + " --json")).at("general.file_type")["value"] == 7);

    const std::string requantized = tmp.file("q4.gguf");
    r = ok_cli("convert " + quote(q8) + " " + quote(requantized) + " --dtype q4_0 --allow-requantize");
    CHECK(r.err.find("warning: requantizing from Q8_0: quality is lower") != std::string::npos);
    const json info = json_cli("info " + quote(requantized) + " --json");
    CHECK(metadata_of(info).at("general.file_type")["value"] == 2);
    int q4 = 0;
    for (const json& t : info["tensors"]) q4 += t["dtype"] == "Q4_0";
    CHECK(q4 == 22);
}

TEST_CASE("convert without re-encoding keeps general.file_type as it is") {
    TempDir tmp;
    const std::string in = recipes_dir() + "/ref-llama-gqa8-f16.gguf";
    const std::string out = tmp.file("copy.gguf");
    ok_cli("convert " + quote(in) + " " + quote(out));
    CHECK(metadata_of(json_cli("info " + quote(out) + " --json")).at("general.file_type") ==
          metadata_of(json_cli("info " + quote(in) + " --json")).at("general.file_type"));
}
