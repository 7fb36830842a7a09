// SPDX-License-Identifier: MIT
// The CLI end to end: `info --json` against the reference corpus manifests, exit statuses and the
// one-line error format.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <regex>

#include "support/run_cli.h"

using nlohmann::json;
using ws_test::quote;
using ws_test::run_cli;

namespace {

json info_json(const std::string& path) {
    const ws_test::CliResult r = run_cli("info " + quote(path) + " --json");
    INFO(r.err);
    REQUIRE(r.status == 0);
    return json::parse(r.out);
}

const char* our_type_name(const std::string& manifest_type) {
    static const std::pair<const char*, const char*> kNames[] = {
        {"u8", "uint8"},   {"i8", "int8"},     {"u16", "uint16"},  {"i16", "int16"},  {"u32", "uint32"},
        {"i32", "int32"},  {"f32", "float32"}, {"bool", "bool"},   {"str", "string"}, {"arr", "array"},
        {"u64", "uint64"}, {"i64", "int64"},   {"f64", "float64"},
    };
    for (const auto& [m, ours] : kNames) {
        if (manifest_type == m) return ours;
    }
    return "?";
}

uint64_t bits_of(const json& number, const std::string& type) {
    if (type == "f32") {
        const float f = static_cast<float>(number.get<double>());
        uint32_t b;
        std::memcpy(&b, &f, 4);
        return b;
    }
    const double d = number.get<double>();
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
}

// A manifest value ("value", or one of "values") equals our JSON value.
void check_scalar(const json& ours, const json& expected, const std::string& type, const json* value_bits) {
    if (type == "f32" || type == "f64") {
        if (value_bits) {
            const uint64_t want = std::stoull(value_bits->get<std::string>(), nullptr, 16);
            if (ours.is_string()) {  // NaN/Inf have no JSON number: their names, as strings
                CHECK(expected.is_null());
                const uint64_t exponent = type == "f32" ? 0x7f800000u : 0x7ff0000000000000ull;
                const uint64_t mantissa = type == "f32" ? 0x007fffffu : 0x000fffffffffffffull;
                const uint64_t sign = type == "f32" ? 0x80000000u : 0x8000000000000000ull;
                CHECK((want & exponent) == exponent);
                const std::string name = (want & mantissa) != 0 ? "NaN" : (want & sign) != 0 ? "-Infinity" : "Infinity";
                CHECK(ours == name);
            } else {
                CHECK(bits_of(ours, type) == want);
            }
        } else if (expected.is_null()) {  // an array item that is NaN or infinite
            CHECK(ours.is_string());
        } else {  // array items have no value_bits; f32 printed with 9 digits
            if (type == "f32") {
                CHECK(static_cast<float>(ours.get<double>()) == static_cast<float>(expected.get<double>()));
            } else {
                CHECK(ours.get<double>() == expected.get<double>());
            }
        }
    } else {
        CHECK(ours == expected);
    }
}

void check_gguf_against_manifest(const json& ours, const json& m) {
    CHECK(ours["format"] == "gguf");
    CHECK(ours["version"] == m["gguf_version"]);
    CHECK(ours["file_size"] == m["file_size"]);
    CHECK(ours["alignment"] == m["alignment"]);
    CHECK(ours["data_offset"] == m["data_offset"]);
    REQUIRE(ours["metadata"].size() == m["n_kv"].get<size_t>());
    for (const json& kv : m["kv"]) {
        const json& o = ours["metadata"][kv["index"].get<size_t>()];
        INFO("key " << kv["key"]);
        CHECK(o["key"] == kv["key"]);
        const std::string type = kv["type"];
        CHECK(o["type"] == our_type_name(type));
        if (type == "arr") {
            const std::string item = kv["array_type"];
            CHECK(o["item_type"] == our_type_name(item));
            CHECK(o["length"] == kv["length"]);
            REQUIRE(o["value"].size() == kv["length"].get<size_t>());
            for (size_t i = 0; i < kv["values"].size(); ++i)
                check_scalar(o["value"][i], kv["values"][i], item, nullptr);
        } else {
            check_scalar(o["value"], kv["value"], type, kv.contains("value_bits") ? &kv["value_bits"] : nullptr);
        }
    }
    REQUIRE(ours["tensors"].size() == m["n_tensors"].get<size_t>());
    for (size_t i = 0; i < m["tensors"].size(); ++i) {
        const json& t = m["tensors"][i];
        const json& o = ours["tensors"][i];
        INFO("tensor " << t["name"]);
        CHECK(o["name"] == t["name"]);
        std::string dtype = t["ggml_type"];
        for (char& c : dtype) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        CHECK(o["dtype"] == dtype);
        CHECK(o["ne"] == t["ne"]);
        json shape = t["ne"];
        std::reverse(shape.begin(), shape.end());
        CHECK(o["shape"] == shape);
        CHECK(o["offset"] == t["absolute_offset"]);
        CHECK(o["nbytes"] == t["size_bytes"]);
        CHECK(o["n_elements"] == t["n_elements"]);
    }
}

std::vector<std::pair<std::string, json>> gguf_manifest_files() {
    std::vector<std::pair<std::string, json>> files;
    for (const char* dir : {"ggml", "ggml/vocab"}) {
        const json m = ws_test::read_json(ws_test::data_path(std::string(dir) + "/manifest.json"));
        for (const json& f : m["files"])
            files.push_back({ws_test::data_path(std::string(dir) + "/" + f["file"].get<std::string>()), f});
    }
    // The whole corpus when it is next to the checkout (always in CI).
    const std::string shared_vocab = ws_test::shared_path("ggml/vocab/manifest.json");
    if (ws_test::file_exists(shared_vocab)) {
        const json shared = ws_test::read_json(shared_vocab);
        for (const json& f : shared["files"]) {
            files.push_back({ws_test::shared_path("ggml/vocab/" + f["file"].get<std::string>()), f});
        }
    }
    return files;
}

}  // namespace

TEST_CASE("info --json reproduces the ggml corpus manifests") {
    for (const auto& [path, m] : gguf_manifest_files()) {
        INFO(path);
        check_gguf_against_manifest(info_json(path), m);
    }
}

TEST_CASE("info --json reproduces the safetensors manifest") {
    const json manifest = ws_test::read_json(ws_test::data_path("safetensors/manifest.json"));
    for (const json& f : manifest["files"]) {
        const std::string path = ws_test::data_path("safetensors/" + f["file"].get<std::string>());
        INFO(path);
        const json ours = info_json(path);
        CHECK(ours["format"] == "safetensors");
        CHECK(ours["version"].is_null());
        CHECK(ours["alignment"] == 1);
        CHECK(ours["file_size"] == f["file_size"]);
        CHECK(ours["data_offset"] == f["data_start"]);
        // __metadata__ entries, as strings, in header order.
        const json& meta = f["metadata"];
        CHECK(ours["metadata"].size() == (meta.is_object() ? meta.size() : 0));
        if (meta.is_object()) {
            for (const json& e : ours["metadata"]) {
                CHECK(e["type"] == "string");
                CHECK(meta[e["key"].get<std::string>()] == e["value"]);
            }
        }
        // Tensors in data order.
        std::vector<json> expected(f["tensors"].begin(), f["tensors"].end());
        std::sort(expected.begin(), expected.end(),
                  [](const json& a, const json& b) { return a["data_offsets"][0] < b["data_offsets"][0]; });
        REQUIRE(ours["tensors"].size() == expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
            const json& o = ours["tensors"][i];
            INFO("tensor " << expected[i]["name"]);
            CHECK(o["name"] == expected[i]["name"]);
            CHECK(o["dtype"] == expected[i]["dtype"]);
            CHECK(o["shape"] == expected[i]["shape"]);
            CHECK_FALSE(o.contains("ne"));
            CHECK(o["offset"] == expected[i]["absolute_offsets"][0]);
            CHECK(o["nbytes"] == expected[i]["n_bytes"]);
            CHECK(o["n_elements"] == expected[i]["n_elements"]);
        }
    }
}

TEST_CASE("verify accepts every corpus file") {
    std::vector<std::string> paths;
    for (const auto& entry : gguf_manifest_files()) paths.push_back(entry.first);
    const json manifest = ws_test::read_json(ws_test::data_path("safetensors/manifest.json"));
    for (const json& f : manifest["files"]) {
        paths.push_back(ws_test::data_path("safetensors/" + f["file"].get<std::string>()));
    }
    for (const std::string& path : paths) {
        const ws_test::CliResult r = run_cli("verify " + quote(path));
        INFO(path << "\n" << r.err);
        CHECK(r.status == 0);
        CHECK(r.out.find(": ok: ") != std::string::npos);
    }
}

TEST_CASE("tensors --json lists the same table as info --json") {
    const std::string path = ws_test::data_path("ggml/ggml-types.gguf");
    const ws_test::CliResult r = run_cli("tensors " + quote(path) + " --json");
    REQUIRE(r.status == 0);
    const json tensors = json::parse(r.out);
    CHECK(tensors["tensors"] == info_json(path)["tensors"]);
    CHECK_FALSE(tensors.contains("metadata"));
}

TEST_CASE("human info shows the summary and shortens long arrays") {
    const ws_test::CliResult r = run_cli("info " + quote(ws_test::data_path("ggml/vocab/ggml-vocab-llama-spm.gguf")));
    REQUIRE(r.status == 0);
    CHECK(r.out.find("format:       GGUF v3, little-endian") != std::string::npos);
    CHECK(r.out.find("architecture: llama") != std::string::npos);
    CHECK(r.out.find("tokenizer.ggml.tokens") != std::string::npos);
    CHECK(r.out.find("array[string] x32,000") != std::string::npos);
    CHECK(r.out.find("31,992 more]") != std::string::npos);
    CHECK(r.out.size() < 20000);  // 32,000 tokens are not all printed
}

TEST_CASE("exit statuses and the one-line error format") {
    ws_test::TempDir dir;
    SECTION("missing file: I/O error, status 3, named as an invalid file is: FILE: CODE: DESCRIPTION: DETAIL") {
        const ws_test::CliResult r = run_cli("info " + quote(dir.file("nope.gguf")));
        CHECK(r.status == 3);
        CHECK(r.err == "weightstream: error: " + dir.file("nope.gguf") +
                           ": io: the file could not be read: No such file or directory\n");
    }
    SECTION("usage errors: status 2") {
        CHECK(run_cli("").status == 2);
        CHECK(run_cli("frobnicate x").status == 2);
        CHECK(run_cli("info").status == 2);
        const ws_test::CliResult r = run_cli("info x --bogus");
        CHECK(r.status == 2);
        CHECK(r.err.rfind("weightstream: error: unknown option --bogus", 0) == 0);
        CHECK(run_cli("--help").status == 0);
    }
    SECTION("invalid files: status 1, naming the file, the problem and the byte") {
        std::vector<uint8_t> bytes = ws_test::read_file(ws_test::data_path("ggml/ggml-types.gguf"));
        bytes.resize(1000);
        ws_test::write_file(dir.file("cut.gguf"), bytes);
        ws_test::CliResult r = run_cli("info " + quote(dir.file("cut.gguf")));
        CHECK(r.status == 1);
        CHECK(std::regex_match(r.err,
                               std::regex("weightstream: error: .*/cut\\.gguf: truncated: .* \\(byte [0-9]+\\)\n")));

        ws_test::write_file(dir.file("text.gguf"), {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
        r = run_cli("verify " + quote(dir.file("text.gguf")));
        CHECK(r.status == 1);
        CHECK(r.err == "weightstream: error: " + dir.file("text.gguf") +
                           ": bad_magic: not a GGUF or safetensors file: header.magic (byte 0)\n");
        // Without a telling extension the bytes alone decide: neither format.
        ws_test::write_file(dir.file("text.bin"), {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
        r = run_cli("info " + quote(dir.file("text.bin")));
        CHECK(r.status == 1);
        CHECK(r.err == "weightstream: error: " + dir.file("text.bin") +
                           ": bad_magic: not a GGUF or safetensors file: magic (byte 0)\n");
    }
}

TEST_CASE("a pipe is read without mmap") {
    const std::string path = ws_test::data_path("safetensors/sample_overall.safetensors");
    const ws_test::CliResult piped = run_cli("info /dev/stdin --json", " < " + quote(path));
    const ws_test::CliResult direct = run_cli("info " + quote(path) + " --json");
    REQUIRE(piped.status == 0);
    json a = json::parse(piped.out), b = json::parse(direct.out);
    CHECK(a == b);

    ws_test::TempDir dir;
    const std::string fifo = dir.file("fifo");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    REQUIRE(system(("cat " + quote(path) + " > " + quote(fifo) + " &").c_str()) == 0);
    const ws_test::CliResult from_fifo = run_cli("info " + quote(fifo) + " --json");
    REQUIRE(from_fifo.status == 0);
    json c = json::parse(from_fifo.out);
    CHECK(c["tensors"] == b["tensors"]);
}
