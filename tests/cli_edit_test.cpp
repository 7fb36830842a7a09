// SPDX-License-Identifier: MIT
// `weightstream edit` through the real binary: typed values, arrays, the chat template, deletions, read
// back by `info --json` and strict `verify`; the tensor bytes unchanged; --in-place when the header fits
// and a clean refusal when it does not; bad input with its exit status and words.
#include <catch2/catch.hpp>
#include <map>

#include "support/recipe_runs.h"
#include "support/run_cli.h"

using nlohmann::json;
using namespace ws_test;

namespace {

const std::string kModel = recipes_dir() + "/ref-llama-gqa8-f16.gguf";

CliResult ok_cli(const std::string& args) {
    const CliResult r = run_cli(args);
    INFO("weightstream " << args << "\n" << r.err);
    REQUIRE(r.status == 0);
    return r;
}

json json_cli(const std::string& args) {
    return json::parse(ok_cli(args).out);
}

std::map<std::string, json> metadata_of(const json& info) {
    std::map<std::string, json> out;
    for (const json& m : info["metadata"]) out[m["key"].get<std::string>()] = m;
    return out;
}

std::vector<std::string> keys_of(const json& info) {
    std::vector<std::string> out;
    for (const json& m : info["metadata"]) out.push_back(m["key"]);
    return out;
}

std::map<std::string, std::string> raw_hashes(const std::string& path) {
    std::map<std::string, std::string> out;
    const json hashes = json_cli("hash " + quote(path) + " --json");  // alive for the loop
    for (const json& t : hashes["tensors"]) out[t["name"]] = t["raw_sha256"];
    return out;
}

std::string file_hash(const std::string& path) {
    const std::vector<uint8_t> bytes = read_file(path);
    return sha256_hex(bytes.data(), bytes.size());
}

}  // namespace

TEST_CASE("edit sets typed values, arrays and the chat template, deletes keys; tensors unchanged") {
    TempDir dir;
    const std::string tmpl = dir.file("template.jinja");
    const std::string template_text = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}";
    write_file(tmpl, std::vector<uint8_t>(template_text.begin(), template_text.end()));
    const std::string out = dir.file("out.gguf");
    ok_cli("edit " + quote(kModel) + " " + quote(out) +
           " --set general.name=renamed --set llama.context_length=8192 --set new.count=42 --set new.neg=-3"
           " --set new.big=5000000000 --set 'new.ids=[1,2,3]:i16' --set 'new.words=[\"a\",\"b\"]' --set new.f=0.25:f64"
           " --set new.flag=true --set 'new.url=http://x:8080' --set new.text=12:str --delete general.file_type"
           " --set-chat-template " +
           quote(tmpl));
    ok_cli("verify " + quote(out));
    const json before = json_cli("info " + quote(kModel) + " --json");
    const json after = json_cli("info " + quote(out) + " --json");
    const auto m = metadata_of(after);
    CHECK(m.at("general.name")["value"] == "renamed");
    CHECK(m.at("llama.context_length")["type"] == "uint32");  // the existing key's type
    CHECK(m.at("llama.context_length")["value"] == 8192);
    CHECK(m.at("new.count")["type"] == "uint32");
    CHECK(m.at("new.neg")["type"] == "int32");
    CHECK(m.at("new.neg")["value"] == -3);
    CHECK(m.at("new.big")["type"] == "int64");
    CHECK(m.at("new.big")["value"] == 5000000000);
    CHECK(m.at("new.ids")["type"] == "array");
    CHECK(m.at("new.ids")["item_type"] == "int16");
    CHECK(m.at("new.ids")["value"] == json({1, 2, 3}));
    CHECK(m.at("new.words")["item_type"] == "string");
    CHECK(m.at("new.words")["value"] == json({"a", "b"}));
    CHECK(m.at("new.f")["type"] == "float64");
    CHECK(m.at("new.f")["value"] == 0.25);
    CHECK(m.at("new.flag")["type"] == "bool");
    CHECK(m.at("new.flag")["value"] == true);
    CHECK(m.at("new.url")["value"] == "http://x:8080");
    CHECK(m.at("new.text")["type"] == "string");
    CHECK(m.at("new.text")["value"] == "12");
    CHECK(m.at("tokenizer.chat_template")["value"] == template_text);
    CHECK(m.count("general.file_type") == 0);
    // Existing keys keep their places; new ones come last, in the order given.
    std::vector<std::string> expected = keys_of(before);
    expected.erase(std::find(expected.begin(), expected.end(), "general.file_type"));
    for (const char* k : {"new.count", "new.neg", "new.big", "new.ids", "new.words", "new.f", "new.flag", "new.url",
                          "new.text", "tokenizer.chat_template"}) {
        if (std::find(expected.begin(), expected.end(), k) == expected.end()) expected.push_back(k);
    }
    CHECK(keys_of(after) == expected);
    CHECK(raw_hashes(out) == raw_hashes(kModel));
    CHECK(after["tensors"].size() == before["tensors"].size());

    // Typed explicitly, an existing key changes type.
    const std::string wide = dir.file("wide.gguf");
    ok_cli("edit " + quote(out) + " " + quote(wide) + " --set llama.context_length=8192:u64");
    CHECK(metadata_of(json_cli("info " + quote(wide) + " --json")).at("llama.context_length")["type"] == "uint64");
    CHECK(temporary_files(dir.path).empty());
}

TEST_CASE("edit --in-place rewrites the header when it fits, and refuses when it does not") {
    TempDir dir;
    const std::string copy = dir.file("model.gguf");
    write_file(copy, read_file(kModel));
    const std::string expected = dir.file("expected.gguf");
    // general.name "ref-llama-gqa8" -> a name of the same length: the header stays the same size.
    ok_cli("edit " + quote(kModel) + " " + quote(expected) + " --set general.name=REF-LLAMA-GQA8");
    ok_cli("edit " + quote(copy) + " --in-place --set general.name=REF-LLAMA-GQA8");
    CHECK(file_hash(copy) == file_hash(expected));
    ok_cli("verify " + quote(copy));

    const std::string hash = file_hash(copy);
    const CliResult r = run_cli("edit " + quote(copy) + " --in-place --set general.name=" + std::string(400, 'x'));
    CHECK(r.status == 2);
    CHECK(r.err.find("the new header does not end within the old header's padding") != std::string::npos);
    CHECK(file_hash(copy) == hash);
}

TEST_CASE("edit refuses bad input with a clear error and exit status") {
    TempDir dir;
    const std::string out = dir.file("out.gguf");
    const std::pair<std::string, std::string> usage[] = {
        {"--set llama.block_count=abc", "--set 'llama.block_count': the value is not of its type"},
        {"--set x=300:u8", "--set 'x': the number is out of range for its type"},
        {"--set x=1e39:f32", "--set 'x': the number is out of range for its type"},
        {"--set x=18446744073709551616", "--set 'x': the number is out of range for its type"},
        {"--set x=1:u128", "--set 'x': unknown TYPE 'u128'"},
        {"--set x=1:string", "--set 'x': unknown TYPE 'string'"},
        {"--set 'x=[1,\"a\"]'", "--set 'x': the value is not of its type"},
        {"--set 'x=[[1]]'", "--set 'x': the value is not of its type"},
        {"--set 'x=[1,'", "--set 'x': the value is not valid JSON"},
        {"--set novalue", "--set takes KEY=VALUE[:TYPE]"},
        {"--delete no.such.key", "--delete 'no.such.key': no such key"},
        {"--set general.alignment=64", "general.alignment cannot be edited"},
        {"--delete general.alignment", "general.alignment cannot be edited"},
        {"", "nothing to change"},
    };
    for (const auto& [args, words] : usage) {
        INFO(args);
        const CliResult r = run_cli("edit " + quote(kModel) + " " + quote(out) + " " + args);
        CHECK(r.status == 2);
        CHECK(r.err.find(words) != std::string::npos);
        CHECK_FALSE(file_exists(out));
    }
    // OUT exists: kept unless --force; OUT is IN.
    write_file(out, {1, 2, 3});
    CliResult r = run_cli("edit " + quote(kModel) + " " + quote(out) + " --set a=1");
    CHECK(r.status == 2);
    CHECK(r.err.find("exists (--force replaces it)") != std::string::npos);
    CHECK(read_file(out) == std::vector<uint8_t>{1, 2, 3});
    ok_cli("edit " + quote(kModel) + " " + quote(out) + " --set a=1 --force");
    r = run_cli("edit " + quote(out) + " " + quote(out) + " --set a=2");
    CHECK(r.status == 2);
    CHECK(r.err.find("OUT is IN: use --in-place") != std::string::npos);
    // Not a GGUF to edit (exit 1); a file that is not there, a template that is not there (exit 3).
    const std::string st = data_path("safetensors/sample_overall.safetensors");
    r = run_cli("edit " + quote(st) + " " + quote(dir.file("x.gguf")) + " --set a=1");
    CHECK(r.status == 1);
    CHECK(r.err.find("edit changes GGUF metadata only; this is safetensors") != std::string::npos);
    CHECK(run_cli("edit " + quote(dir.file("none.gguf")) + " " + quote(dir.file("y.gguf")) + " --set a=1").status == 3);
    CHECK(run_cli("edit " + quote(kModel) + " " + quote(dir.file("y.gguf")) + " --set-chat-template " +
                  quote(dir.file("none.jinja")))
              .status == 3);
    CHECK(temporary_files(dir.path).empty());
}
