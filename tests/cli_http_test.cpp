// SPDX-License-Identifier: MIT
// Models at URLs through the CLI (native/io/http_source.h): every command on a URL prints what it prints for
// the local file; nginx's access log shows what was fetched (the header with at most 64 KiB more, then a
// tensor's bytes only); tests/support/fault_server.py's faults are survived (drops resumed, 503 and 429
// retried, no Range streamed, redirects followed) or reported (a file replaced while read: source_changed,
// exit 3); a token and a header value never appear in any output.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "support/gguf_builder.h"
#include "support/http_servers.h"
#include "support/run_cli.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/safetensors_writer.h"
#include "weightstream/split.h"

using nlohmann::json;
using ws_test::quote;
using ws_test::run_cli;

namespace {

ws::TensorInfo tensor(const std::string& name, ws::DType dtype, int64_t ne0, int64_t ne1) {
    ws::TensorInfo t;
    t.name = name;
    t.dtype = dtype;
    t.n_dims = 2;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    return t;
}

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
    std::vector<uint8_t> bytes(n);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        bytes[i] = static_cast<uint8_t>(x >> 24);
    }
    return bytes;
}

std::vector<uint8_t> floats(size_t n, float start) {
    std::vector<uint8_t> bytes(n * 4);
    for (size_t i = 0; i < n; ++i) {
        const float f = start + 0.25f * static_cast<float>(i % 1000);
        std::memcpy(&bytes[i * 4], &f, 4);
    }
    return bytes;
}

// A GGUF of a small header and two tensors of 256 KiB of F32 and 136 KiB of Q8_0 (the header's 64 KiB
// read-ahead does not reach the second).
std::vector<uint8_t> two_tensor_model() {
    const std::vector<ws::TensorInfo> tensors = {tensor("a.weight", ws::DType::F32, 256, 256),
                                                 tensor("b.weight", ws::DType::Q8_0, 512, 256)};
    auto q8 = pattern(256 * 512 / 32 * 34, 7);
    for (size_t b = 0; b < q8.size(); b += 34) {
        q8[b] = 0x00;  // a finite f16 scale (0x3c00 = 1.0 at every block)
        q8[b + 1] = 0x3c;
    }
    ws::MetadataEntry layers;
    layers.key = "llama.block_count";  // quantize's recipes read it
    layers.value = ws_test::val_u32(1);
    auto bytes = ws::gguf_write({ws::string_entry("general.architecture", "llama"), layers}, tensors,
                                {floats(256 * 256, -3.0f), q8});
    REQUIRE(bytes.ok());
    return bytes.value();
}

// A GGUF whose header is a 100,000-token vocabulary (about 2.5 MB) followed by one tensor.
std::vector<uint8_t> vocab_model() {
    std::vector<std::string> tokens;
    for (int i = 0; i < 100000; ++i) tokens.push_back("tok_" + std::to_string(i * 7919 % 100003) + "_piece");
    std::vector<ws::MetadataEntry> meta = {ws::string_entry("general.architecture", "llama")};
    ws::MetadataEntry vocab;
    vocab.key = "tokenizer.ggml.tokens";
    vocab.value = ws_test::val_array_str(tokens);
    meta.push_back(vocab);
    auto bytes = ws::gguf_write(meta, {tensor("a.weight", ws::DType::F32, 256, 256)}, {floats(256 * 256, 1.0f)});
    REQUIRE(bytes.ok());
    return bytes.value();
}

// A split GGUF of `parts` files named `base`-0000K-of-0000N.gguf in dir, one tensor in each.
void write_split(const std::string& dir, const std::string& base, uint32_t parts) {
    for (uint32_t k = 0; k < parts; ++k) {
        std::vector<ws::MetadataEntry> meta;
        if (k == 0) meta.push_back(ws::string_entry("general.architecture", "llama"));
        ws::MetadataEntry no, count, total;
        no.key = "split.no";
        no.value = ws_test::val_u16(static_cast<uint16_t>(k));
        count.key = "split.count";
        count.value = ws_test::val_u16(static_cast<uint16_t>(parts));
        total.key = "split.tensors.count";
        total.value = ws_test::val_i32(static_cast<int32_t>(parts));
        meta.insert(meta.end(), {no, count, total});
        auto bytes = ws::gguf_write(meta, {tensor("t" + std::to_string(k), ws::DType::F32, 8, k + 1)},
                                    {floats(8 * (k + 1), 100.0f * k)});
        REQUIRE(bytes.ok());
        ws_test::write_file(ws::split_part_path(dir + "/" + base, k + 1, parts), bytes.value());
    }
}

// A sharded safetensors model in dir: the index `index` and each shard (file, its tensors of 8 F32 values).
using Shards = std::vector<std::pair<std::string, std::vector<std::string>>>;
void write_shards(const std::string& dir, const std::string& index, const Shards& shards) {
    json weight_map = json::object();
    uint64_t total_size = 0;
    for (const auto& [file, names] : shards) {
        std::vector<ws::TensorInfo> tensors;
        std::vector<std::vector<uint8_t>> data;
        for (const std::string& name : names) {
            tensors.push_back(tensor(name, ws::DType::F32, 4, 2));
            data.push_back(floats(8, 1.0f));
            weight_map[name] = file;
            total_size += 32;
        }
        auto bytes = ws::safetensors_write({ws::string_entry("format", "pt")}, tensors, data);
        REQUIRE(bytes.ok());
        ws_test::write_file(dir + "/" + file, bytes.value());
    }
    const std::string text = json({{"metadata", {{"total_size", total_size}}}, {"weight_map", weight_map}}).dump();
    ws_test::write_file(dir + "/" + index, std::vector<uint8_t>(text.begin(), text.end()));
}

// The folder every server serves: the fixtures above and copies of committed ones.
struct Served {
    ws_test::TempDir dir;
    Served() {
        ws_test::write_file(dir.file("two.gguf"), two_tensor_model());
        ws_test::write_file(dir.file("vocab.gguf"), vocab_model());
        // The same name as two.gguf's replacement for the fault server's "changing" modes: another size.
        auto v2 = two_tensor_model();
        v2.resize(v2.size() + 32, 0);
        ws_test::write_file(dir.file("two.gguf.v2"), v2);
        ws_test::write_file(dir.file("types.gguf"),
                            ws_test::read_file(std::string(WS_TESTDATA) + "/ggml/ggml-types.gguf"));
        ws_test::write_file(dir.file("jfk.safetensors"),
                            ws_test::read_file(std::string(WS_TESTDATA) + "/safetensors/jfk-codes.safetensors"));
        write_split(dir.path, "split", 3);
        write_shards(dir.path, "model.safetensors.index.json",
                     {{"model-00001-of-00002.safetensors", {"a.weight", "b.weight"}},
                      {"model-00002-of-00002.safetensors", {"c.weight"}}});
        // Names a URL must escape (a space, '#', '%').
        write_shards(dir.path, "my model.safetensors.index.json",
                     {{"shard #1 100%.safetensors", {"a.weight"}}, {"shard #2 100%.safetensors", {"b.weight"}}});
        write_split(dir.path, "my split", 2);
        // A Hugging Face repository's layout: a checkpoint whose config.json and tokenizer are fetched beside its
        // URL, and one whose config.json the server refuses (a folder by that name: 403).
        const std::string repo = dir.file("org/tiny-llama-spm/resolve/main");
        const std::string refused = dir.file("org/refused/resolve/main");
        REQUIRE(system(("mkdir -p " + quote(repo) + " " + quote(refused + "/config.json")).c_str()) == 0);
        for (const char* f : {"config.json", "tokenizer.model", "tokenizer_config.json", "model.safetensors"}) {
            ws_test::write_file(repo + "/" + f,
                                ws_test::read_file(ws_test::shared_path("convert/tiny-llama-spm/") + f));
        }
        ws_test::write_file(refused + "/model.safetensors", ws_test::read_file(repo + "/model.safetensors"));
    }
};

Served& served() {
    static Served s;
    return s;
}

ws_test::Nginx& nginx() {
    static ws_test::Nginx n(served().dir.path);
    return n;
}

ws_test::FaultServer& faults() {
    static ws_test::FaultServer f(served().dir.path);
    return f;
}

// JSON output without its "io" member (io_metrics.h: a remote model's --json has one, a local one's not):
// the text around it is left byte for byte as it was.
std::string without_io(const std::string& text) {
    const size_t start = text.find("\n \"io\": {");
    if (start == std::string::npos) return text;
    const size_t close = text.find('}', start);  // "io" holds numbers and nulls only
    std::string out = text;
    if (close + 1 < out.size() && out[close + 1] == ',') {
        out.erase(start, close + 2 - start);  // the first member
    } else if (start > 0 && out[start - 1] == ',') {
        out.erase(start - 1, close + 1 - (start - 1));  // the last member
    }
    return out;
}

// Runs the command on the URL and on the local file; both must succeed with the same stdout (but for the
// URL's "io"), the URL's folder written as the local one.
void same_as_local(const std::string& command_before, const std::string& base, const std::string& name,
                   const std::string& command_after = "") {
    const std::string local = served().dir.file(name);
    const ws_test::CliResult here = run_cli(command_before + " " + quote(local) + " " + command_after);
    const ws_test::CliResult there = run_cli(command_before + " " + quote(base + "/" + name) + " " + command_after);
    INFO(command_before << " " << name << ": " << there.err);
    REQUIRE(here.status == 0);
    REQUIRE(there.status == 0);
    CHECK(here.out.find("\n \"io\": {") == std::string::npos);
    if (command_after.find("--json") != std::string::npos) {
        CHECK(there.out.find("\n \"io\": {") != std::string::npos);
    }
    std::string out = without_io(there.out);
    for (size_t at; (at = out.find(base + "/")) != std::string::npos;) out.replace(at, base.size(), served().dir.path);
    CHECK(out == here.out);
}

uint64_t total_bytes(const std::vector<std::string>& log) {
    uint64_t n = 0;
    for (const std::string& line : log) n += ws_test::logged_bytes(line);
    return n;
}

// A missing nginx is a setup failure, not a skip.
void require_nginx() {
    if (!ws_test::nginx_path()) FAIL("nginx is not installed: run scripts/setup.sh");
}

}  // namespace

TEST_CASE("every command on a URL prints what it prints for the local file") {
    require_nginx();
    const std::string base = nginx().base();
    for (const std::string name : {"two.gguf", "types.gguf", "jfk.safetensors", "split-00002-of-00003.gguf",
                                   "model.safetensors.index.json", "vocab.gguf"}) {
        same_as_local("info", base, name, "--json");
        same_as_local("info", base, name);
        same_as_local("tensors", base, name, "--json");
        same_as_local("hash", base, name, "--json");
        same_as_local("verify", base, name);
        same_as_local("stats", base, name, "--json");
    }
    same_as_local("stats", base, "two.gguf", "b.weight --json");

    ws_test::TempDir out;
    for (const std::string args : {"b.weight", "b.weight --rows 100:107", "a.weight --as f16", "b.weight --as raw"}) {
        const ws_test::CliResult a = run_cli("dump " + quote(served().dir.file("two.gguf")) + " " + args + " -o " +
                                             quote(out.file("local.npy")));
        const ws_test::CliResult b =
            run_cli("dump " + quote(base + "/two.gguf") + " " + args + " -o " + quote(out.file("url.npy")));
        INFO(args << ": " << b.err);
        REQUIRE(a.status == 0);
        REQUIRE(b.status == 0);
        CHECK(ws_test::read_file(out.file("local.npy")) == ws_test::read_file(out.file("url.npy")));
    }
    for (const std::string args :
         {"convert IN OUT.safetensors", "quantize IN OUT.gguf --type Q4_K_M --allow-requantize"}) {
        auto run = [&](const std::string& in, const std::string& to) {
            std::string cmd = args;
            cmd.replace(cmd.find("IN"), 2, quote(in));
            cmd.replace(cmd.find("OUT"), 3, quote(out.file(to)));
            return run_cli(cmd);
        };
        const std::string ext = args.find("safetensors") != std::string::npos ? ".safetensors" : ".gguf";
        const ws_test::CliResult l = run(served().dir.file("two.gguf"), "l");
        const ws_test::CliResult u = run(base + "/two.gguf", "u");
        INFO(args << ": " << u.err);
        REQUIRE(l.status == 0);
        REQUIRE(u.status == 0);
        CHECK(ws_test::read_file(out.file("l" + ext)) == ws_test::read_file(out.file("u" + ext)));
    }
    const ws_test::CliResult dl = run_cli("diff " + quote(served().dir.file("two.gguf")) + " " +
                                          quote(served().dir.file("two.gguf")) + " --json");
    const ws_test::CliResult du =
        run_cli("diff " + quote(base + "/two.gguf") + " " + quote(base + "/two.gguf") + " --json");
    INFO(du.err);
    REQUIRE(dl.status == 0);
    REQUIRE(du.status == 0);
    json a = json::parse(dl.out), b = json::parse(du.out);
    CHECK_FALSE(a.contains("io"));
    // Both models' requests and both sides of every pair decoded.
    REQUIRE(b.contains("io"));
    CHECK(b["io"]["requests"].get<int>() >= 4);
    const json listed = json::parse(run_cli("tensors " + quote(served().dir.file("two.gguf")) + " --json").out);
    uint64_t tensor_bytes = 0;
    for (const json& t : listed["tensors"]) tensor_bytes += t["nbytes"].get<uint64_t>();
    CHECK(b["io"]["decoded_bytes"].get<uint64_t>() == 2 * tensor_bytes);
    a.erase("a"), a.erase("b"), b.erase("a"), b.erase("b"), b.erase("io");
    CHECK(a == b);
}

TEST_CASE("split parts and shards next to a URL are fetched with its query, as the package fetches them") {
    require_nginx();
    for (const std::string name : {"split-00002-of-00003.gguf", "model.safetensors.index.json"}) {
        INFO(name);
        nginx().clear_log();
        const ws_test::CliResult r = run_cli("info " + quote(nginx().base() + "/" + name + "?download=true#part"));
        INFO(r.err);
        REQUIRE(r.status == 0);
        const std::vector<std::string> log = nginx().log();
        CHECK(log.size() >= 3);  // the file named, then its siblings
        for (const std::string& line : log) CHECK(line.find("?download=true HTTP/") != std::string::npos);
    }
}

TEST_CASE("names a URL escapes: the file's name decoded for the plan, its siblings' encoded, as the package does") {
    require_nginx();
    const struct {
        std::string local, url;
    } cases[] = {{"my model.safetensors.index.json", "my%20model.safetensors.index.json"},
                 {"my split-00002-of-00002.gguf", "my%20split-00002-of-00002.gguf"}};
    for (const auto& c : cases) {
        INFO(c.url);
        nginx().clear_log();
        const ws_test::CliResult here = run_cli("tensors " + quote(served().dir.file(c.local)) + " --json");
        const ws_test::CliResult there = run_cli("tensors " + quote(nginx().base() + "/" + c.url) + " --json");
        INFO(there.err);
        REQUIRE(here.status == 0);
        REQUIRE(there.status == 0);
        CHECK(without_io(there.out) == here.out);
        const std::vector<std::string> log = nginx().log();
        for (const std::string& line : log) CHECK(line.find(" 200 ") == std::string::npos);  // no 404, no whole file
        const std::string sibling = c.url.find("split") != std::string::npos ? "my%20split-00001-of-00002.gguf"
                                                                             : "shard%20%232%20100%25.safetensors";
        CHECK(std::any_of(log.begin(), log.end(),
                          [&](const std::string& l) { return l.find("/" + sibling + " HTTP/") != std::string::npos; }));
    }
}

TEST_CASE("info on a URL fetches the header and at most 64 KiB more and dump adds the tensor's bytes only") {
    require_nginx();
    const std::string url = nginx().base() + "/two.gguf";
    const json local = json::parse(run_cli("info " + quote(served().dir.file("two.gguf")) + " --json").out);
    const uint64_t data_offset = local["data_offset"].get<uint64_t>();
    REQUIRE(data_offset < 4096);

    nginx().clear_log();
    REQUIRE(run_cli("info " + quote(url)).status == 0);
    std::vector<std::string> log = nginx().log();
    REQUIRE(log.size() == 1);
    CHECK(log[0].find("\"bytes=0-65535\"") != std::string::npos);
    CHECK(total_bytes(log) <= data_offset + 65536);

    const json* b = nullptr;
    for (const json& t : local["tensors"]) {
        if (t["name"] == "b.weight") b = &t;
    }
    REQUIRE(b);
    const uint64_t offset = (*b)["offset"].get<uint64_t>(), nbytes = (*b)["nbytes"].get<uint64_t>();
    nginx().clear_log();
    REQUIRE(run_cli("dump " + quote(url) + " b.weight -o /dev/null").status == 0);
    log = nginx().log();
    REQUIRE(log.size() == 2);
    const std::string range = "\"bytes=" + std::to_string(offset) + "-" + std::to_string(offset + nbytes - 1) + "\"";
    CHECK(log[1].find(range) != std::string::npos);
    CHECK(total_bytes(log) <= nbytes + 65536);

    // A row window: only its rows' bytes (rows of 512 Q8_0 values: 544 bytes).
    nginx().clear_log();
    REQUIRE(run_cli("dump " + quote(url) + " b.weight --rows 10:13 -o /dev/null").status == 0);
    log = nginx().log();
    REQUIRE(log.size() == 2);
    CHECK(ws_test::logged_bytes(log[1]) == 3 * 544);
}

TEST_CASE("a vocabulary-heavy header takes few requests and at most its size + 64 KiB + 10 %") {
    require_nginx();
    SECTION("the deepseek vocabulary GGUF (no tensors): at most 3 requests") {
        const std::string file = std::string(WS_SHARED_TESTDATA) + "/ggml/vocab/ggml-vocab-deepseek-llm.gguf";
        REQUIRE(access(file.c_str(), R_OK) == 0);  // the shared corpus, next to the checkout
        ws_test::write_file(served().dir.file("deepseek.gguf"), ws_test::read_file(file));
        const uint64_t size = ws_test::read_file(file).size();
        nginx().clear_log();
        same_as_local("info", nginx().base(), "deepseek.gguf", "--json");
        nginx().clear_log();
        REQUIRE(run_cli("info " + quote(nginx().base() + "/deepseek.gguf") + " --json").status == 0);
        const std::vector<std::string> log = nginx().log();
        CHECK(log.size() <= 3);
        CHECK(total_bytes(log) <= size + 65536 + size / 10);
    }
    SECTION("a 2.5 MB vocabulary followed by a tensor: never past the header's bound") {
        const json local = json::parse(run_cli("info " + quote(served().dir.file("vocab.gguf")) + " --json").out);
        const uint64_t header = local["data_offset"].get<uint64_t>();
        REQUIRE(header > 2000000);
        nginx().clear_log();
        REQUIRE(run_cli("info " + quote(nginx().base() + "/vocab.gguf")).status == 0);
        const std::vector<std::string> log = nginx().log();
        CHECK(total_bytes(log) <= header + 65536 + header / 10);
        CHECK(log.size() <= 12);
    }
}

TEST_CASE("a server that ignores Range is read in one streamed pass") {
    require_nginx();
    const std::string base = nginx().base() + "/norange";
    for (const std::string name : {"two.gguf", "types.gguf"}) {
        same_as_local("info", base, name, "--json");
        same_as_local("tensors", base, name, "--json");
        same_as_local("hash", base, name, "--json");
    }
    for (const std::string command : {"verify", "hash --manifest"}) {
        INFO(command);
        const ws_test::CliResult r = run_cli(command + " " + quote(base + "/two.gguf"));
        CHECK(r.status == 3);
        CHECK(r.err.find(": not_seekable: the source cannot be read out of order: the server ignores Range requests") !=
              std::string::npos);
        CHECK(r.out.empty());
    }
}

TEST_CASE("hash --manifest and --check on a URL: llama-gguf-hash's lines, each tensor fetched once") {
    require_nginx();
    const std::string base = nginx().base();
    for (const std::string name : {"two.gguf", "types.gguf", "split-00002-of-00003.gguf", "vocab.gguf"}) {
        same_as_local("hash --manifest --all --uuid", base, name);
        same_as_local("hash --manifest --threads 2 --xxh3 --no-layer", base, name);
    }
    const std::string file = served().dir.file("two.gguf");
    const std::string url = base + "/two.gguf";
    nginx().clear_log();
    const ws_test::CliResult made = run_cli("hash --manifest --all --uuid " + quote(url));
    REQUIRE(made.status == 0);
    // The header's request, then one per tensor (a.weight starts inside the first 64 KiB: its rest only).
    const std::vector<std::string> log = nginx().log();
    CHECK(log.size() == 3);
    CHECK(total_bytes(log) <= ws_test::read_file(file).size() + 65536);

    ws_test::TempDir dir;
    ws_test::write_file(dir.file("url.manifest"), std::vector<uint8_t>(made.out.begin(), made.out.end()));
    const ws_test::CliResult checked = run_cli("hash --check " + quote(dir.file("url.manifest")) + " " + quote(url));
    INFO(checked.out << checked.err);
    CHECK(checked.status == 0);
    // sha256, the strongest type, is checked: the two tensors and the model.
    CHECK(checked.out.find("sha256    ") != std::string::npos);
    size_t ok = 0;
    for (size_t at = 0; (at = checked.out.find("  -  Ok\n", at)) != std::string::npos; ++at) ++ok;
    CHECK(ok == 3);
    CHECK(checked.out.find("\nVerification results for " + dir.file("url.manifest") + " - Success\n") !=
          std::string::npos);
    // The local file's manifest names the local path: none of its lines are the URL's.
    const ws_test::CliResult local = run_cli("hash --manifest --all " + quote(file));
    REQUIRE(local.status == 0);
    ws_test::write_file(dir.file("local.manifest"), std::vector<uint8_t>(local.out.begin(), local.out.end()));
    CHECK(run_cli("hash --check " + quote(dir.file("local.manifest")) + " " + quote(url)).status == 3);
}

TEST_CASE("dropped connections and stalls and 503 and 429 are retried and redirects followed") {
    const std::string base = faults().base();
    SECTION("a response cut in half is resumed where it stopped") {
        faults().clear_log();
        same_as_local("hash", base + "/drop", "two.gguf", "--json");
        bool resumed = false;
        for (const json& e : faults().log()) {
            // A resumed request starts inside a tensor, not at a tensor's first byte.
            if (e["range"].is_string() && e["bytes"].get<int64_t>() > 0 && e["status"] == 206) {
                const std::string range = e["range"];
                resumed = resumed || range.find("bytes=0-") == std::string::npos;
            }
        }
        CHECK(resumed);
        CHECK(faults().log().size() >= 4);
    }
    SECTION("503 twice, then the file") {
        faults().clear_log();
        same_as_local("info", base + "/busy", "types.gguf", "--json");
        const std::vector<json> log = faults().log();
        REQUIRE(log.size() >= 3);
        CHECK(log[0]["status"] == 503);
        CHECK(log[1]["status"] == 503);
        CHECK(log[2]["status"] == 206);
        // io counts the retries and every request, the refused ones too (a query: a path not yet seen).
        faults().clear_log();
        const ws_test::CliResult r = run_cli("info " + quote(base + "/busy/types.gguf?io=1") + " --json");
        REQUIRE(r.status == 0);
        const std::vector<json> again = faults().log();
        size_t refused = 0;
        for (const json& e : again) refused += e["status"] == 503;
        const json io = json::parse(r.out)["io"];
        CHECK(refused == 2);
        CHECK(io["retries"] == refused);
        CHECK(io["requests"] == again.size());
    }
    SECTION("429 with Retry-After: 1 waits a second") {
        faults().clear_log();
        same_as_local("info", base + "/limit", "types.gguf", "--json");
        const std::vector<json> log = faults().log();
        REQUIRE(log.size() >= 2);
        CHECK(log[0]["status"] == 429);
        CHECK(log[1]["time"].get<double>() - log[0]["time"].get<double>() >= 0.95);
    }
    SECTION("a response that stalls is given up after --timeout and resumed") {
        faults().clear_log();
        const auto start = std::chrono::steady_clock::now();
        same_as_local("hash", base + "/stall", "two.gguf", "--json --timeout 1");
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        CHECK(seconds < 20);
        const std::vector<json> log = faults().log();
        REQUIRE(log.size() >= 2);
        // The stalled first request was resumed from the middle: a second request not starting at 0.
        CHECK(log[1]["range"].get<std::string>().find("bytes=0-") == std::string::npos);
    }
    SECTION("a redirect") {
        same_as_local("hash", base + "/redirect", "two.gguf", "--json");
    }
    SECTION("no Range from the fault server too") {
        same_as_local("hash", base + "/norange", "two.gguf", "--json");
    }
}

TEST_CASE("a server that trickles is given up after --timeout; one that caps its answers is read to the end") {
    const std::string base = faults().base();
    // 2 bytes a second passes a 1 byte/s floor forever: the body, or the status line and headers. Each attempt
    // ends after --timeout without 16 KiB, and a trickle gives no retries back: exit 3 after the 4 retries
    // (about 5 x 2 s + 3.75 s of backoff; killed at 120 s if it never ends).
    SECTION("trickling") {
        for (const std::string mode : {"trickle", "trickle-head"}) {
            faults().clear_log();
            const auto start = std::chrono::steady_clock::now();
            const std::string url = base + "/" + mode + "/two.gguf";
            const ws_test::CliResult r = run_cli("info " + quote(url) + " --timeout 2", "", 120);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            INFO(mode << ": " << r.err);
            CHECK(r.status == 3);
            // Each attempt resumes where the last one stopped (a few bytes in, for the trickled body).
            CHECK(r.err.find(url + ": network: the URL could not be fetched: no progress for 2 s (fewer than 16384 "
                                   "bytes arrived; --timeout) (at byte ") != std::string::npos);
            CHECK(r.err.find(", after 4 retries)\n") != std::string::npos);
            CHECK(seconds < 100);
            CHECK(faults().log().size() == 5);
        }
    }
    // Each range answered with at most 4 KiB (a valid 206, the true total in Content-Range): asked again from
    // where each answer ended, as the package does.
    SECTION("capped") {
        same_as_local("info", base + "/cap", "two.gguf", "--json");
        same_as_local("hash", base + "/cap", "two.gguf", "--json");
        same_as_local("info", base + "/cap", "jfk.safetensors", "--json");
    }
}

TEST_CASE("a redirect loop or to another scheme, an encoded body and a malformed URL: said, not retried") {
    const std::string base = faults().base();
    const std::string port = base.substr(base.rfind(':') + 1);
    const std::pair<std::string, std::string> cases[] = {
        {base + "/loop/two.gguf", "http: the server answered with an error: more than 10 redirects (a redirect loop?)"},
        {base + "/tofile/two.gguf",
         "http: the server answered with an error: a redirect to a file: URL, which is not followed (http and https "
         "only)"},
        {base + "/gzip/two.gguf",
         "http: the server answered with an error: the server sent the body encoded (Content-Encoding: gzip), not "
         "the file's bytes"},
        {"http://[127.0.0.1:" + port + "/plain/two.gguf",
         "network: the URL could not be fetched: the URL is malformed: "},
    };
    for (const auto& [url, words] : cases) {
        faults().clear_log();
        const auto start = std::chrono::steady_clock::now();
        const ws_test::CliResult r = run_cli("info " + quote(url), "", 120);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        INFO(url << ": " << r.err);
        CHECK(r.status == 3);
        CHECK(r.err.find("weightstream: error: " + url + ": " + words) == 0);
        CHECK(r.err.find("retries") == std::string::npos);
        CHECK(seconds < 5);  // the 4 retries' backoff alone is 3.75 s
    }
    // One request each (the loop's 11 hops are one request to curl): nothing was asked twice.
    faults().clear_log();
    CHECK(run_cli("info " + quote(base + "/gzip/two.gguf")).status == 3);
    CHECK(faults().log().size() == 1);
}

TEST_CASE("a file replaced on the server while it is read is source_changed with exit 3") {
    const std::string base = faults().base();
    ws_test::TempDir dir;
    const std::string manifest = dir.file("m");
    const std::string line = "sha256    00  two.gguf\n";
    ws_test::write_file(manifest, std::vector<uint8_t>(line.begin(), line.end()));
    // The server replaces the file after the first request of a path (query included): a query per command.
    const std::vector<std::string> commands = {"hash", "hash --manifest --all", "hash --check " + quote(manifest)};
    for (size_t c = 0; c < commands.size(); ++c) {
        for (const std::string mode : {"changing", "changing-tag"}) {
            faults().clear_log();
            const std::string url = base + "/" + mode + "/two.gguf?run=" + std::to_string(c);
            const ws_test::CliResult r = run_cli(commands[c] + " " + quote(url));
            INFO(commands[c] << ", " << mode << ": " << r.err);
            CHECK(r.status == 3);
            // Once: a fetch ahead that failed says nothing; the fetch in order says why.
            const size_t at = r.err.find(url + ": source_changed: the file changed");
            CHECK(at != std::string::npos);
            CHECK(r.err.find("error", r.err.find('\n', at)) == std::string::npos);
            CHECK(r.out.empty());
            const std::vector<json> log = faults().log();
            REQUIRE(log.size() >= 2);
            CHECK(log[1]["if_range"].is_string());  // the pin went with the second request
        }
    }
}

TEST_CASE("verify --json and scan name a source's failure by its code, as the error line and the package do") {
    const std::string base = faults().base();
    for (const std::string mode : {"changing", "changing-tag"}) {
        // The header read pins the file; the tensors' reads then find another version.
        const std::string url = base + "/" + mode + "/two.gguf?verdict=1";
        const ws_test::CliResult v = run_cli("verify " + quote(url) + " --json");
        INFO(mode << ": " << v.err);
        CHECK(v.status == 3);
        const json j = json::parse(v.out);
        CHECK(j["verdict"] == "source_changed");
        CHECK(j["error"]["file"] == url);
        CHECK(j["error"]["offset"].is_null());
        CHECK(j["error"]["what"].is_null());
        const std::string message = j["error"]["message"];
        CHECK(message.rfind(url + ": source_changed: the file changed while it was read: ", 0) == 0);
        CHECK(v.err == "weightstream: error: " + message + "\n");
        const ws_test::CliResult scan = run_cli("scan --decode " + quote(base + "/" + mode + "/two.gguf?verdict=2"));
        CHECK(scan.status == 1);
        CHECK(json::parse(scan.out)["verdict"] == "source_changed");
    }
    const ws_test::CliResult missing = run_cli("verify " + quote(base + "/plain/missing.gguf") + " --json");
    CHECK(missing.status == 3);
    CHECK(json::parse(missing.out)["verdict"] == "http");
}

TEST_CASE("a bearer token goes to the URL's host only and neither it nor a --header value is ever printed") {
    const std::string base = faults().base();
    setenv("HF_TOKEN", "hf_secret_token_1234", 1);
    faults().clear_log();
    const ws_test::CliResult ok =
        run_cli("info " + quote(base + "/offhost/types.gguf") + " --header 'X-Test: hidden-header-value' --json");
    const ws_test::CliResult missing =
        run_cli("hash " + quote(base + "/plain/missing.gguf") + " --header 'X-Test: hidden-header-value'");
    const ws_test::CliResult bad_header =
        run_cli("info " + quote(base + "/plain/types.gguf") + " --header 'hf_secret'");
    // A password in the URL is not shown either.
    std::string with_password = base;
    with_password.insert(std::strlen("http://"), "user:hf_secret_password@");
    const ws_test::CliResult userinfo = run_cli("info " + quote(with_password + "/plain/missing.gguf"));
    const ws_test::CliResult bench = run_cli("bench " + quote(with_password + "/plain/types.gguf"));
    unsetenv("HF_TOKEN");
    INFO(ok.err);
    REQUIRE(ok.status == 0);
    CHECK(missing.status == 3);
    CHECK(missing.err.find("/plain/missing.gguf: http: the server answered with an error: HTTP 404") !=
          std::string::npos);
    CHECK(bad_header.status == 2);
    CHECK(userinfo.status == 3);
    CHECK(userinfo.err == "weightstream: error: " + base +
                              "/plain/missing.gguf: http: the server answered with an error: HTTP 404 Not Found\n");
    CHECK(bench.status == 2);
    for (const ws_test::CliResult* r : {&ok, &missing, &bad_header, &userinfo, &bench}) {
        CHECK(r->out.find("hf_secret") == std::string::npos);
        CHECK(r->err.find("hf_secret") == std::string::npos);
        CHECK(r->out.find("hidden-header-value") == std::string::npos);
        CHECK(r->err.find("hidden-header-value") == std::string::npos);
    }
    const std::vector<json> log = faults().log();
    REQUIRE(log.size() >= 2);
    // The first host got the token and the header; the redirect's host ("localhost") the header only.
    CHECK(log[0]["host"].get<std::string>().find("127.0.0.1") == 0);
    CHECK(log[0]["authorization"] == "Bearer hf_secret_token_1234");
    CHECK(log[0]["x_test"] == "hidden-header-value");
    CHECK(log[1]["host"].get<std::string>().find("localhost") == 0);
    CHECK(log[1]["authorization"].is_null());
    CHECK(log[1]["x_test"] == "hidden-header-value");
}

namespace {

// The header cache on, in a fresh XDG_CACHE_HOME, for the life of the object (tests/main.cpp turns it off).
struct CacheOn {
    ws_test::TempDir home;
    CacheOn() {
        setenv("WEIGHTSTREAM_CACHE", "1", 1);
        setenv("XDG_CACHE_HOME", home.path.c_str(), 1);
    }
    ~CacheOn() {
        setenv("WEIGHTSTREAM_CACHE", "0", 1);
        unsetenv("XDG_CACHE_HOME");
    }
    std::vector<std::string> entries() const {
        std::vector<std::string> found;
        const std::string dir = home.path + "/weightstream/headers";
        if (DIR* d = opendir(dir.c_str())) {
            while (const dirent* e = readdir(d)) {
                if (e->d_name[0] != '.') found.push_back(dir + "/" + e->d_name);
            }
            closedir(d);
        }
        return found;
    }
};

// A run's "io" object (and that it has one).
json io_of(const ws_test::CliResult& r) {
    const json j = json::parse(r.out);
    REQUIRE(j.contains("io"));
    return j["io"];
}

}  // namespace

TEST_CASE("a second info of a URL costs one conditional request and no body byte, with the same output") {
    require_nginx();
    CacheOn cache;
    for (const std::string name : {"vocab.gguf", "two.gguf", "jfk.safetensors", "split-00002-of-00003.gguf"}) {
        const std::string url = nginx().base() + "/" + name;
        nginx().clear_log();
        const ws_test::CliResult cold = run_cli("info " + quote(url) + " --json");
        const std::vector<std::string> cold_log = nginx().log();
        INFO(name << ": " << cold.err);
        REQUIRE(cold.status == 0);
        const json cold_io = io_of(cold);
        CHECK(cold_io["requests"] == cold_log.size());
        CHECK(cold_io["bytes_fetched"] == total_bytes(cold_log));
        CHECK(cold_io["bytes_from_cache"] == 0);

        nginx().clear_log();
        const ws_test::CliResult warm = run_cli("info " + quote(url) + " --json");
        const std::vector<std::string> warm_log = nginx().log();
        REQUIRE(warm.status == 0);
        CHECK(without_io(warm.out) == without_io(cold.out));
        const size_t parts = name.find("split") != std::string::npos ? 3 : 1;
        REQUIRE(warm_log.size() == parts);  // one revalidation per file
        for (const std::string& line : warm_log) {
            CHECK(line.find(" 304 0 ") != std::string::npos);
            CHECK(line.find("\"bytes=0-0\"") != std::string::npos);
        }
        const json warm_io = io_of(warm);
        CHECK(warm_io["requests"] == parts);
        CHECK(warm_io["bytes_fetched"] == 0);
        // The cache served exactly what the network did.
        CHECK(warm_io["bytes_from_cache"] == cold_io["bytes_fetched"]);
        // The text output too.
        const ws_test::CliResult text = run_cli("info " + quote(url));
        const ws_test::CliResult text_cold = run_cli("info " + quote(url) + " --no-cache");
        CHECK(text.out == text_cold.out);
    }
    // One entry per file, named by a hash: no URL in a file name.
    CHECK(cache.entries().size() == 6);
    for (const std::string& e : cache.entries()) CHECK(e.find("gguf") == std::string::npos);
}

namespace {

// The sha256 (hex) of `bytes`, by sha256sum.
std::string sha256_of(const std::vector<uint8_t>& bytes) {
    ws_test::TempDir dir;
    ws_test::write_file(dir.file("in"), bytes);
    FILE* p = popen(("sha256sum " + quote(dir.file("in"))).c_str(), "r");
    char hex[65] = {};
    const size_t n = std::fread(hex, 1, 64, p);
    pclose(p);
    REQUIRE(n == 64);
    return hex;
}

// `entry` (a header cache entry: the magic line, the ETag, Last-Modified, size and length lines, the checksum
// line, the header bytes) with `from` replaced by `to` (as long) in its header bytes and the checksum
// recomputed: what anyone who can write the entry can forge.
std::vector<uint8_t> forged(std::vector<uint8_t> entry, const std::string& from, const std::string& to) {
    std::vector<size_t> line_ends;
    for (size_t i = 0; i < entry.size() && line_ends.size() < 6; ++i) {
        if (entry[i] == '\n') line_ends.push_back(i);
    }
    REQUIRE(line_ends.size() == 6);
    const size_t fields = line_ends[0] + 1, checksum = line_ends[4] + 1, bytes = line_ends[5] + 1;
    const auto at =
        std::search(entry.begin() + static_cast<std::ptrdiff_t>(bytes), entry.end(), from.begin(), from.end());
    REQUIRE(at != entry.end());
    std::copy(to.begin(), to.end(), at);
    std::vector<uint8_t> hashed(entry.begin() + static_cast<std::ptrdiff_t>(fields),
                                entry.begin() + static_cast<std::ptrdiff_t>(checksum));
    hashed.insert(hashed.end(), entry.begin() + static_cast<std::ptrdiff_t>(bytes), entry.end());
    const std::string sum = sha256_of(hashed);
    std::copy(sum.begin(), sum.end(), entry.begin() + static_cast<std::ptrdiff_t>(checksum));
    return entry;
}

}  // namespace

TEST_CASE("a FIFO or link at a header cache entry is ignored; a cache others may write is not used") {
    require_nginx();
    CacheOn cache;
    ws_test::write_file(served().dir.file("planted.gguf"), two_tensor_model());
    const std::string url = nginx().base() + "/planted.gguf";
    const ws_test::CliResult cold = run_cli("info " + quote(url) + " --json");
    REQUIRE(cold.status == 0);
    REQUIRE(cache.entries().size() == 1);
    const std::string entry = cache.entries()[0];
    const std::vector<uint8_t> good = ws_test::read_file(entry);

    SECTION("a FIFO, or a link to one, does not hang the command (killed at 60 s if it does)") {
        const std::string fifo = cache.home.file("fifo");
        REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
        for (const std::string how : {"fifo", "link"}) {
            REQUIRE(unlink(entry.c_str()) == 0);
            REQUIRE((how == "fifo" ? mkfifo(entry.c_str(), 0600) : symlink(fifo.c_str(), entry.c_str())) == 0);
            const ws_test::CliResult r = run_cli("info " + quote(url) + " --json", "", 60);
            INFO(how << ": " << r.err);
            REQUIRE(r.status == 0);
            CHECK(r.err.empty());
            CHECK(without_io(r.out) == without_io(cold.out));
            CHECK(ws_test::read_file(entry) == good);  // stored again, as a file
        }
    }
    SECTION("a forged entry is used only from a directory and file no one else may write") {
        // The same user's own cache, written by them: no way to tell a forgery (the control).
        const std::vector<uint8_t> forgery = forged(good, "llama", "LLAMA");
        ws_test::write_file(entry, forgery);
        REQUIRE(chmod(entry.c_str(), 0600) == 0);
        const ws_test::CliResult own = run_cli("info " + quote(url) + " --json");
        REQUIRE(own.status == 0);
        CHECK(own.out.find("\"LLAMA\"") != std::string::npos);
        // Writable by others, the entry or the directory: not used.
        const std::string dir = entry.substr(0, entry.rfind('/'));
        for (const std::string how : {"entry 0666", "directory 0777", "directory 0770"}) {
            ws_test::write_file(entry, forgery);
            REQUIRE(chmod(entry.c_str(), how == "entry 0666" ? 0666 : 0600) == 0);
            REQUIRE(chmod(dir.c_str(), how == "directory 0777" ? 0777 : how == "directory 0770" ? 0770 : 0700) == 0);
            const ws_test::CliResult r = run_cli("info " + quote(url) + " --json");
            INFO(how << ": " << r.err);
            REQUIRE(r.status == 0);
            CHECK(r.out.find("LLAMA") == std::string::npos);
            CHECK(without_io(r.out) == without_io(cold.out));
            CHECK(io_of(r)["bytes_from_cache"] == 0);
        }
        REQUIRE(chmod(dir.c_str(), 0700) == 0);
    }
}

TEST_CASE("the header cache refetches a replaced file and ignores --no-cache runs and corrupt entries") {
    require_nginx();
    CacheOn cache;
    const std::string path = served().dir.file("cached.gguf");
    ws_test::write_file(path, two_tensor_model());
    const std::string url = nginx().base() + "/cached.gguf";
    nginx().clear_log();
    const ws_test::CliResult cold = run_cli("info " + quote(url) + " --json");
    const std::vector<std::string> cold_log = nginx().log();
    REQUIRE(cold.status == 0);
    REQUIRE(cache.entries().size() == 1);

    SECTION("--no-cache and WEIGHTSTREAM_CACHE=0 send the full reads") {
        for (const std::string how : {"--no-cache", "env"}) {
            if (how == "env") setenv("WEIGHTSTREAM_CACHE", "0", 1);
            nginx().clear_log();
            const ws_test::CliResult r = run_cli("info " + quote(url) + " --json" + (how == "env" ? "" : " " + how));
            setenv("WEIGHTSTREAM_CACHE", "1", 1);
            INFO(how);
            REQUIRE(r.status == 0);
            CHECK(nginx().log() == cold_log);
            CHECK(io_of(r)["bytes_from_cache"] == 0);
        }
    }
    SECTION("a corrupt, truncated or empty entry is ignored and replaced") {
        const std::string entry = cache.entries()[0];
        const std::vector<uint8_t> good = ws_test::read_file(entry);
        for (int how = 0; how < 3; ++how) {
            std::vector<uint8_t> bad = good;
            if (how == 0) bad[bad.size() - 10] ^= 0x40;  // a header byte: the checksum fails
            if (how == 1) bad.resize(bad.size() / 2);
            if (how == 2) bad.clear();
            ws_test::write_file(entry, bad);
            nginx().clear_log();
            const ws_test::CliResult r = run_cli("info " + quote(url) + " --json");
            INFO(how << ": " << r.err);
            REQUIRE(r.status == 0);
            CHECK(r.err.empty());
            CHECK(without_io(r.out) == without_io(cold.out));
            CHECK(nginx().log() == cold_log);
            CHECK(ws_test::read_file(entry) == good);  // stored again
        }
    }
    SECTION("a replaced file (another ETag) is fetched again, not served from the cache") {
        auto v2 = two_tensor_model();
        v2.resize(v2.size() + 32, 0);
        ws_test::write_file(path + ".new", v2);
        REQUIRE(std::rename((path + ".new").c_str(), path.c_str()) == 0);
        nginx().clear_log();
        const ws_test::CliResult r = run_cli("info " + quote(url) + " --json");
        const std::vector<std::string> log = nginx().log();
        INFO(r.err);
        REQUIRE(r.status == 0);
        REQUIRE(log.size() == cold_log.size() + 1);
        CHECK(log[0].find(" 206 1 \"bytes=0-0\"") != std::string::npos);  // the conditional: changed
        const json j = json::parse(r.out);
        CHECK(j["file_size"] == v2.size());
        CHECK(j["io"]["bytes_from_cache"] == 0);
        const ws_test::CliResult local = run_cli("info " + quote(path) + " --json");
        std::string out = without_io(r.out);
        CHECK(out == local.out);
    }
    std::remove(path.c_str());
}

TEST_CASE("io: --json's io counts what nginx's log shows and --trace has a span per request and per tensor") {
    require_nginx();
    const std::string url = nginx().base() + "/two.gguf";
    const json local = json::parse(run_cli("info " + quote(served().dir.file("two.gguf")) + " --json").out);
    uint64_t tensor_bytes = 0;
    for (const json& t : local["tensors"]) tensor_bytes += t["nbytes"].get<uint64_t>();
    ws_test::TempDir out;
    for (const std::string command : {"info", "tensors", "stats", "hash"}) {
        nginx().clear_log();
        const std::string trace = out.file(command + ".json");
        const ws_test::CliResult r = run_cli(command + " " + quote(url) + " --json --trace " + quote(trace));
        const std::vector<std::string> log = nginx().log();
        INFO(command << ": " << r.err);
        REQUIRE(r.status == 0);
        const json io = io_of(r);
        CHECK(io["requests"] == log.size());
        CHECK(io["bytes_fetched"] == total_bytes(log));
        CHECK(io["retries"] == 0);
        CHECK(io["time_to_first_byte_ms"].is_number());
        CHECK(io["io_ms"].get<double>() > 0);
        const bool decodes = command == "stats" || command == "hash";
        CHECK(io["decoded_bytes"] == (decodes ? tensor_bytes : 0));
        CHECK(io["decode_gbps"].is_null() == !decodes);

        const std::vector<uint8_t> bytes = ws_test::read_file(trace);
        const json events = json::parse(bytes.begin(), bytes.end())["traceEvents"];
        std::vector<json> http, decode;
        for (const json& e : events) {
            CHECK(e["ph"] == "X");
            CHECK(e["ts"].is_number_unsigned());
            CHECK(e["dur"].is_number_unsigned());
            CHECK(e["pid"] == 1);
            CHECK(e["tid"].is_number_unsigned());
            (e["cat"] == "http" ? http : decode).push_back(e);
        }
        REQUIRE(http.size() == log.size());
        for (size_t i = 0; i < log.size(); ++i) {
            // "GET /two.gguf HTTP/1.1 206 65536 "bytes=0-65535""
            CHECK(log[i].find("\"" + http[i]["args"]["range"].get<std::string>() + "\"") != std::string::npos);
            CHECK(http[i]["args"]["status"] == 206);
            CHECK(http[i]["args"]["bytes"] == ws_test::logged_bytes(log[i]));
            CHECK(http[i]["args"]["file"] == "two.gguf");
        }
        CHECK(decode.size() == (decodes ? 2 : 0));
        for (size_t i = 0; i < decode.size(); ++i) {
            CHECK(decode[i]["name"] == local["tensors"][i]["name"]);
            CHECK(decode[i]["args"]["bytes"] == local["tensors"][i]["nbytes"]);
        }
    }
}

TEST_CASE("a local model's --json has io only with --io, and then no request") {
    const std::string path = served().dir.file("two.gguf");
    const ws_test::CliResult plain = run_cli("stats " + quote(path) + " --json");
    const ws_test::CliResult with = run_cli("stats " + quote(path) + " --json --io");
    REQUIRE(plain.status == 0);
    REQUIRE(with.status == 0);
    CHECK(!json::parse(plain.out).contains("io"));
    const json io = io_of(with);
    CHECK(io["requests"] == 0);
    CHECK(io["bytes_fetched"] == 0);
    CHECK(io["time_to_first_byte_ms"].is_null());
    CHECK(io["io_ms"] == 0);
    CHECK(io["decoded_bytes"] == 256 * 256 * 4 + 256 * 512 / 32 * 34);
    CHECK(without_io(with.out) == plain.out);
    const ws_test::CliResult info = run_cli("info " + quote(path) + " --json --io");
    REQUIRE(info.status == 0);
    CHECK(io_of(info)["decoded_bytes"] == 0);
    CHECK(without_io(info.out) == run_cli("info " + quote(path) + " --json").out);
}

TEST_CASE("convert and quantize of a checkpoint's URL fetch config.json and the tokenizer beside it, as the package") {
    // general.name comes from the repository in the URL (.../ORG/REPO/resolve/REV/FILE): the converter's own file.
    const std::string repo = nginx().base() + "/org/tiny-llama-spm/resolve/main";
    ws_test::TempDir out;
    const ws_test::CliResult r =
        run_cli("convert " + quote(repo + "/model.safetensors") + " " + quote(out.file("a.gguf")) + " --dtype f16");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(ws_test::read_file(out.file("a.gguf")) ==
          ws_test::read_file(ws_test::shared_path("convert/ref/tiny-llama-spm-f16.gguf")));
    // The one pass too: the bytes of quantize of the converter's F16 file.
    REQUIRE(run_cli("quantize " + quote(repo + "/model.safetensors") + " " + quote(out.file("q.gguf")) + " --type Q8_0")
                .status == 0);
    REQUIRE(run_cli("quantize " + quote(ws_test::shared_path("convert/ref/tiny-llama-spm-f16.gguf")) + " " +
                    quote(out.file("r.gguf")) + " --type Q8_0")
                .status == 0);
    CHECK(ws_test::read_file(out.file("q.gguf")) == ws_test::read_file(out.file("r.gguf")));
    // A server error for config.json (not a 404) is an error, not a conversion without it; nothing is written.
    const std::string refused = nginx().base() + "/org/refused/resolve/main/model.safetensors";
    const ws_test::CliResult e = run_cli("convert " + quote(refused) + " " + quote(out.file("b.gguf")));
    CHECK(e.status == 3);
    CHECK(e.err.find("/org/refused/resolve/main/config.json: HTTP 403") != std::string::npos);
    CHECK(!ws_test::file_exists(out.file("b.gguf")));
    CHECK(run_cli("diff " + quote(refused) + " " + quote(refused)).status == 3);
}
