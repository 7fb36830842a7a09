// SPDX-License-Identifier: MIT
// `scan` through the CLI: every line's verdict is what `verify` says for that file (verify is run on each
// and its output compared), over the reference corpus, the corrupt-file catalogues and 1,000 generated
// models; the flags; which files of a directory are models; --shard, --resume, a list on stdin; exit
// statuses.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "support/gguf_catalogue.h"
#include "support/run_cli.h"
#include "support/safetensors_builder.h"
#include "support/safetensors_catalogue.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/split.h"

using nlohmann::json;
using ws_test::quote;
using ws_test::run_cli;

namespace {

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

// The JSON lines of a scan's stdout.
std::vector<json> parse_lines(const std::string& out) {
    std::vector<json> lines;
    for (const std::string& l : split_lines(out)) lines.push_back(json::parse(l));
    return lines;
}

std::vector<std::string> sources_of(const std::vector<json>& lines) {
    std::vector<std::string> s;
    for (const json& j : lines) s.push_back(j["source"].get<std::string>());
    return s;
}

// Runs verify on the line's source and checks the line says the same: ok with verify's warnings (when the
// scan decoded, as verify does), or verify's error line, its code, byte offset and exit status.
void check_against_verify(const json& line, bool decoded) {
    const std::string source = line["source"];
    INFO(source);
    const ws_test::CliResult v = run_cli("verify " + quote(source) + " --threads 1");
    if (v.status == 0) {
        CHECK(line["verdict"] == "ok");
        CHECK(line["error"].is_null());
        if (decoded) {
            std::vector<std::string> warnings;
            for (const std::string& l : split_lines(v.err)) {
                REQUIRE(l.rfind("weightstream: warning: ", 0) == 0);
                warnings.push_back(l.substr(std::strlen("weightstream: warning: ")));
            }
            CHECK(line["warnings"] == json(warnings));
        }
        return;
    }
    REQUIRE(line["error"].is_object());
    CHECK(v.err == "weightstream: error: " + line["error"]["message"].get<std::string>() + "\n");
    if (v.status == 3) {
        // A source error: its code (the package's for the same failure), which the error line names too.
        const std::string verdict = line["verdict"];
        CHECK(std::set<std::string>{"io", "network", "http", "source_changed", "not_seekable"}.count(verdict) == 1);
        CHECK(v.err.find(": " + verdict + ": ") != std::string::npos);
        return;
    }
    CHECK(v.status == 1);
    const std::string verdict = line["verdict"];
    const std::string message = line["error"]["message"];
    CHECK(message.find(": " + verdict + ": ") != std::string::npos);
    CHECK(message.find("(byte " + std::to_string(line["error"]["offset"].get<uint64_t>()) + ")") != std::string::npos);
}

ws::MetadataEntry u32_entry(const std::string& key, uint32_t v) {
    ws::MetadataEntry e;
    e.key = key;
    e.value.type = ws::ValueType::kUint32;
    e.value.bits = v;
    return e;
}

void put_f16(std::vector<uint8_t>& bytes, size_t at, uint16_t h) {
    bytes[at] = static_cast<uint8_t>(h);
    bytes[at + 1] = static_cast<uint8_t>(h >> 8);
}

const char kLfsPointer[] =
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4665a5ea423c2713d436b5ee50593a9640e0018c1550b5a0002f74190d6caea8\n"
    "size 4920000000\n";
const char kHtmlPage[] =
    "\n<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body>Not Found</body></html>\n";

void write_text(const std::string& path, const std::string& text) {
    ws_test::write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// What generated model i is (see write_generated).
enum class Kind { kGood, kZeros, kNanScale, kInfScale, kTruncated, kBadMagic, kLfs, kHtml };

Kind kind_of(int i) {
    if (i % 100 == 21) return Kind::kTruncated;
    if (i % 100 == 33) return Kind::kBadMagic;
    if (i % 100 == 55) return Kind::kLfs;
    if (i % 100 == 77) return Kind::kHtml;
    if (i % 50 == 7) return Kind::kZeros;
    if (i % 50 == 13) return Kind::kNanScale;
    if (i % 50 == 19) return Kind::kInfScale;
    return Kind::kGood;
}

std::string generated_name(int i) {
    char name[32];
    std::snprintf(name, sizeof name, "m%04d.gguf", i);
    return name;
}

std::string chat_template(int i) {
    return "{% for m in messages %}" + std::to_string(i) + "{{ m.content }}{% endfor %}";
}

// Model i of the generated directory: written with include/weightstream/gguf_writer.h, two tensors (an F32 [32, 2] and
// a Q8_0/Q4_0/F16 [64, 1 + i % 3]) with metadata, or one of the defects kind_of(i) names.
void write_generated(const std::string& dir, int i) {
    const std::string path = dir + "/" + generated_name(i);
    const Kind kind = kind_of(i);
    if (kind == Kind::kLfs) return write_text(path, kLfsPointer);
    if (kind == Kind::kHtml) return write_text(path, kHtmlPage);
    std::vector<ws::MetadataEntry> meta = {ws::string_entry("general.architecture", "llama"),
                                           ws::string_entry("general.name", "gen-" + std::to_string(i)),
                                           u32_entry("llama.context_length", 64 + i)};
    if (i % 3 == 0) meta.push_back(ws::string_entry("tokenizer.chat_template", chat_template(i)));
    const ws::DType types[] = {ws::DType::Q8_0, ws::DType::Q4_0, ws::DType::F16};
    const ws::DType second = kind == Kind::kNanScale || kind == Kind::kInfScale ? ws::DType::Q8_0 : types[i % 3];
    const int64_t rows = 1 + i % 3;
    const std::vector<ws::TensorInfo> tensors = {ws_test::tensor("a.weight", ws::DType::F32, {32, 2}),
                                                 ws_test::tensor("b.weight", second, {64, rows})};
    std::vector<uint8_t> a(32 * 2 * 4, 0);
    for (size_t k = 0; k < 64 && kind != Kind::kZeros; ++k) {
        const float f = static_cast<float>(i) * 0.25f - static_cast<float>(k);
        std::memcpy(&a[k * 4], &f, 4);
    }
    const ws::DTypeTraits& traits = ws::dtype_traits(second);
    const uint64_t blocks = static_cast<uint64_t>(64 * rows) / traits.block_elems;
    std::vector<uint8_t> b(blocks * traits.block_bytes);
    for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<uint8_t>((k * 13 + i) % 7);
    if (second == ws::DType::F16) {
        for (size_t k = 0; k < b.size(); k += 2) put_f16(b, k, 0x3c00);  // 1.0
    } else {
        for (uint64_t k = 0; k < blocks; ++k) put_f16(b, k * traits.block_bytes, 0x2e66);  // scale 0.1
    }
    if (kind == Kind::kNanScale) put_f16(b, traits.block_bytes, 0x7e00);  // block 1's scale
    if (kind == Kind::kInfScale) put_f16(b, 0, 0xfc00);                   // block 0's scale, -Inf
    auto file = ws::gguf_write(meta, tensors, {a, b});
    REQUIRE(file.ok());
    std::vector<uint8_t> bytes = file.value();
    if (kind == Kind::kTruncated) bytes.resize(bytes.size() - 40);
    if (kind == Kind::kBadMagic) bytes[0] = 'X';
    ws_test::write_file(path, bytes);
}

bool has_flag(const json& line, const std::string& flag) {
    for (const auto& f : line["flags"]) {
        if (f == flag) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("scan of the reference corpus: every line is what verify says") {
    // The folders whose models are single files (convert/, split/ and tests/data/convert_moe/ hold split models
    // and the converter's inputs, which other tests read).
    std::vector<std::string> dirs = {ws_test::data_path("ggml"), ws_test::data_path("safetensors")};
    const bool corpus = ws_test::file_exists(ws_test::shared_path("README.md"));
    if (corpus) {
        for (const char* d : {"ggml", "recipes", "safetensors"}) dirs.push_back(ws_test::shared_path(d));
    }
    std::string args;
    for (const std::string& d : dirs) args += " " + quote(d);
    for (const bool decode : {false, true}) {
        const ws_test::CliResult r = run_cli("scan --jobs 2" + args + (decode ? " --decode" : ""));
        INFO(r.err);
        REQUIRE(r.status == 0);
        const std::vector<json> lines = parse_lines(r.out);
        // tests/data: 2 + 2 vocab GGUF files, 5 safetensors; the corpus: 2 + 12 + 9 GGUF, 5 safetensors.
        CHECK(lines.size() == (corpus ? 9u + 28u : 9u));
        std::vector<std::string> sorted = sources_of(lines);
        std::sort(sorted.begin(), sorted.end());
        CHECK(sources_of(lines) == sorted);  // list order: sorted by bytes
        for (const json& line : lines) {
            check_against_verify(line, decode);
            CHECK(line["verdict"] == "ok");
            CHECK(line["flags"] == json::array());
            CHECK(line["files"] == 1);
        }
    }
}

TEST_CASE("scan values of one model: format, architecture, name, dtypes, sizes") {
    const std::string path = ws_test::data_path("ggml/ggml-types.gguf");
    const ws_test::CliResult r = run_cli("scan " + quote(path));
    REQUIRE(r.status == 0);
    const std::vector<json> lines = parse_lines(r.out);
    REQUIRE(lines.size() == 1);
    const json& j = lines[0];
    const json info = json::parse(run_cli("info " + quote(path) + " --json").out);
    CHECK(j["format"] == "gguf");
    CHECK(j["architecture"] == "llama");
    CHECK(j["name"] == "ggml reference corpus (shared)");
    CHECK(j["tensors"] == info["tensors"].size());
    CHECK(j["file_size"] == ws_test::read_file(path).size());
    uint64_t params = 0, q8_bytes = 0, q8_tensors = 0;
    for (const auto& t : info["tensors"]) {
        params += t["n_elements"].get<uint64_t>();
        if (t["dtype"] == "Q8_0") q8_bytes += t["nbytes"].get<uint64_t>(), ++q8_tensors;
    }
    CHECK(j["parameters"] == params);
    CHECK(j["dtypes"]["Q8_0"] == json({{"tensors", q8_tensors}, {"bytes", q8_bytes}}));
    CHECK(j["dtypes"].size() == 30);
    CHECK(j["split"].is_null());
    CHECK(j["chat_template_sha256"].is_null());
}

TEST_CASE("scan of the corrupt-file catalogues: verify's code, field and offset on every line") {
    ws_test::TempDir dir;
    std::map<std::string, ws_test::GgufCorruptCase> gguf;
    for (ws_test::GgufCorruptCase& c : ws_test::gguf_corrupt_catalogue()) {
        const std::string path = dir.file(c.name + ".gguf");
        ws_test::write_file(path, c.bytes);
        gguf[path] = std::move(c);
    }
    std::map<std::string, ws_test::CorruptSafetensors> st;
    for (ws_test::CorruptSafetensors& c : ws_test::safetensors_catalogue()) {
        if (!c.size_known) continue;
        const std::string path = dir.file(c.name + ".safetensors");
        ws_test::write_file(path, c.bytes);
        st[path] = std::move(c);
    }
    REQUIRE(gguf.size() >= 30);
    REQUIRE(st.size() >= 20);
    for (const bool decode : {false, true}) {
        const ws_test::CliResult r = run_cli("scan --jobs 3 " + quote(dir.path) + (decode ? " --decode" : ""));
        CHECK(r.status == 1);
        const std::vector<json> lines = parse_lines(r.out);
        REQUIRE(lines.size() == gguf.size() + st.size());
        size_t failed = 0;
        for (const json& line : lines) {
            check_against_verify(line, decode);
            const std::string source = line["source"];
            INFO(source);
            failed += line["verdict"] != "ok";
            if (gguf.count(source)) {
                const ws_test::GgufCorruptCase& c = gguf[source];
                if (c.warning_only) {
                    CHECK(line["verdict"] == "ok");
                    continue;
                }
                CHECK(line["verdict"] == ws::error_name(c.code));
                CHECK(line["error"]["what"] == c.what);
                CHECK(line["error"]["offset"] == c.offset);
                CHECK(line["error"]["file"] == source);
                // A type id without a layout: flagged (the strict header parse rejects it, as verify does).
                const bool unknown = c.code == ws::Error::kBadType && std::string(c.what) == "tensor.type";
                CHECK(has_flag(line, "unknown_type") == unknown);
                CHECK(line["flags"].size() == (unknown ? 1u : 0u));
            } else {
                REQUIRE(st.count(source));
                const ws_test::CorruptSafetensors& c = st[source];
                CHECK(line["verdict"] == ws::error_name(c.code));
                CHECK(line["error"]["what"] == c.what);
                CHECK(line["error"]["offset"] == c.offset);
                CHECK(has_flag(line, "unknown_type") == (c.code == ws::Error::kBadType && c.what == "tensor.dtype"));
            }
        }
        // The summary names the count of models and of failures.
        CHECK(r.err.find("scan: " + std::to_string(lines.size()) + " models, " + std::to_string(lines.size() - failed) +
                         " ok, " + std::to_string(failed) + " failed") == 0);
    }
}

TEST_CASE("scan of 1,000 generated models: verdicts as verify, flags, chat template hashes") {
    ws_test::TempDir dir;
    constexpr int kModels = 1000;
    for (int i = 0; i < kModels; ++i) write_generated(dir.path, i);
    const ws_test::CliResult r = run_cli("scan --decode --jobs 4 " + quote(dir.path));
    CHECK(r.status == 1);
    const std::vector<json> lines = parse_lines(r.out);
    REQUIRE(lines.size() == kModels);
    std::map<std::string, size_t> verdicts;
    for (int i = 0; i < kModels; ++i) {
        const json& line = lines[i];
        REQUIRE(line["source"] == dir.file(generated_name(i)));
        INFO(line.dump());
        check_against_verify(line, true);
        ++verdicts[line["verdict"]];
        const Kind kind = kind_of(i);
        CHECK(has_flag(line, "lfs_pointer") == (kind == Kind::kLfs));
        CHECK(has_flag(line, "html") == (kind == Kind::kHtml));
        CHECK(has_flag(line, "zero_tensor") == (kind == Kind::kZeros));
        CHECK(has_flag(line, "nan_scale") == (kind == Kind::kNanScale));
        CHECK(has_flag(line, "inf_scale") == (kind == Kind::kInfScale));
        switch (kind) {
            case Kind::kTruncated:
                CHECK(line["verdict"] == "truncated");
                break;
            case Kind::kBadMagic:
            case Kind::kHtml:
                CHECK(line["verdict"] == "bad_magic");
                break;
            case Kind::kLfs:
                CHECK(line["verdict"] == "bad_magic");
                CHECK(line["lfs"] ==
                      json({{"oid", "sha256:4665a5ea423c2713d436b5ee50593a9640e0018c1550b5a0002f74190d6caea8"},
                            {"size", 4920000000ull}}));
                break;
            default: {
                CHECK(line["verdict"] == "ok");
                CHECK(line["name"] == "gen-" + std::to_string(i));
                CHECK(line["tensors"] == 2);
                CHECK(line["decoded"] == 2);
                CHECK(line["parameters"] == 64 + 64 * (1 + i % 3));
                CHECK(line["dtypes"]["F32"] == json({{"tensors", 1}, {"bytes", 256}}));
                if (kind == Kind::kZeros) CHECK(line["zero_tensors"] == json({"a.weight"}));
                if (kind == Kind::kNanScale || kind == Kind::kInfScale) {
                    REQUIRE(line["bad_scales"].size() == 1);
                    const json& s = line["bad_scales"][0];
                    CHECK(s["tensor"] == "b.weight");
                    CHECK(s["nan_blocks"] == (kind == Kind::kNanScale ? 1 : 0));
                    CHECK(s["inf_blocks"] == (kind == Kind::kInfScale ? 1 : 0));
                }
                if (i % 3 == 0) {
                    const std::string t = chat_template(i);
                    CHECK(line["chat_template_sha256"] ==
                          ws_test::sha256_hex(reinterpret_cast<const uint8_t*>(t.data()), t.size()));
                } else {
                    CHECK(line["chat_template_sha256"].is_null());
                }
            }
        }
    }
    CHECK(verdicts["ok"] == 960);
    CHECK(verdicts["truncated"] == 10);
    CHECK(verdicts["bad_magic"] == 30);
    CHECK(r.err.find("scan: 1,000 models, 960 ok, 40 failed (bad_magic 30, truncated 10); flags: html 10, "
                     "inf_scale 20, lfs_pointer 10, nan_scale 20, zero_tensor 20;") == 0);

    // Without --decode: the same verdicts (none of these fails in the decode pass), no decode flags.
    const ws_test::CliResult quick = run_cli("scan --jobs 2 " + quote(dir.path));
    const std::vector<json> quick_lines = parse_lines(quick.out);
    REQUIRE(quick_lines.size() == kModels);
    for (int i = 0; i < kModels; ++i) {
        CHECK(quick_lines[i]["verdict"] == lines[i]["verdict"]);
        CHECK(quick_lines[i]["error"] == lines[i]["error"]);
        CHECK(!has_flag(quick_lines[i], "nan_scale"));
        CHECK(!quick_lines[i].contains("decoded"));
    }
    // The output does not depend on --jobs.
    CHECK(run_cli("scan --jobs 1 " + quote(dir.path)).out == quick.out);
}

TEST_CASE("scan flags files that are not models: LFS pointer, HTML, XML error, empty") {
    ws_test::TempDir dir;
    write_text(dir.file("lfs.safetensors"), kLfsPointer);
    write_text(dir.file("page.gguf"), kHtmlPage);
    write_text(dir.file("s3.safetensors"),
               "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code></Error>");
    write_text(dir.file("empty.gguf"), "");
    write_text(dir.file("text.gguf"), "just some text, not a model\n");
    const ws_test::CliResult r = run_cli("scan " + quote(dir.path));
    CHECK(r.status == 1);
    const std::vector<json> lines = parse_lines(r.out);
    REQUIRE(lines.size() == 5);
    for (const json& line : lines) check_against_verify(line, false);
    CHECK(lines[0]["flags"] == json({"empty"}));  // empty.gguf
    CHECK(lines[0]["verdict"] == "truncated");
    CHECK(lines[1]["flags"] == json({"lfs_pointer"}));  // lfs.safetensors
    CHECK(lines[1]["lfs"]["size"] == 4920000000ull);
    CHECK(lines[1]["verdict"] != "ok");
    CHECK(lines[2]["flags"] == json({"html"}));  // page.gguf
    CHECK(lines[3]["flags"] == json({"html"}));  // s3.safetensors
    CHECK(lines[4]["flags"] == json::array());   // text.gguf: bad_magic, nothing more to say
    CHECK(lines[4]["verdict"] == "bad_magic");
}

TEST_CASE("scan lists a directory's models: split parts and index shards once, other files not") {
    ws_test::TempDir dir;
    const std::string sub = dir.file("a/b");
    REQUIRE(system(("mkdir -p " + quote(sub) + " " + quote(dir.file("c"))).c_str()) == 0);
    // A split GGUF of three parts: one model, listed by its first part.
    for (uint32_t k = 1; k <= 3; ++k) {
        std::vector<ws::MetadataEntry> meta;
        ws::MetadataEntry no, count, tensors;
        no.key = "split.no", no.value.type = ws::ValueType::kUint16, no.value.bits = k - 1;
        count.key = "split.count", count.value.type = ws::ValueType::kUint16, count.value.bits = 3;
        tensors.key = "split.tensors.count", tensors.value.type = ws::ValueType::kInt32, tensors.value.bits = 3;
        meta = {no, count, tensors};
        auto bytes = ws::gguf_write(meta, {ws_test::tensor("t" + std::to_string(k), ws::DType::F32, {8})},
                                    {std::vector<uint8_t>(32, 0x3f)});
        REQUIRE(bytes.ok());
        ws_test::write_file(ws::split_part_path(sub + "/llm", k, 3), bytes.value());
    }
    // A split missing its first part: listed once by its lowest part present, inconsistent.
    ws_test::write_file(ws::split_part_path(sub + "/half", 2, 2), ws_test::read_file(sub + "/llm-00002-of-00003.gguf"));
    // Sharded safetensors with their index: one model; a shard without index: a model of its own.
    const std::string header_a = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    const std::string header_b = R"({"y":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    ws_test::write_file(dir.file("c/model-00001-of-00002.safetensors"), ws_test::safetensors_file(header_a, 8));
    ws_test::write_file(dir.file("c/model-00002-of-00002.safetensors"), ws_test::safetensors_file(header_b, 8));
    write_text(dir.file("c/model.safetensors.index.json"),
               R"({"metadata":{},"weight_map":{"x":"model-00001-of-00002.safetensors",)"
               R"("y":"model-00002-of-00002.safetensors"}})");
    ws_test::write_file(dir.file("c/other-00001-of-00002.safetensors"), ws_test::safetensors_file(header_a, 8));
    write_text(dir.file("c/config.json"), "{}");
    write_text(dir.file("README.md"), "# models\n");
    ws_test::write_file(dir.file("UPPER.GGUF"), ws_test::read_file(ws_test::data_path("ggml/ggml-types-ext.gguf")));
    // A link to a directory is not followed (no loop); a link to a file is.
    REQUIRE(symlink(dir.path.c_str(), dir.file("a/loop").c_str()) == 0);
    REQUIRE(symlink(dir.file("UPPER.GGUF").c_str(), dir.file("a/link.gguf").c_str()) == 0);

    const ws_test::CliResult r = run_cli("scan " + quote(dir.path));
    CHECK(r.status == 1);  // the half split
    const std::vector<json> lines = parse_lines(r.out);
    CHECK(sources_of(lines) ==
          std::vector<std::string>({dir.file("UPPER.GGUF"), dir.file("a/b/half-00002-of-00002.gguf"),
                                    dir.file("a/b/llm-00001-of-00003.gguf"), dir.file("a/link.gguf"),
                                    dir.file("c/model.safetensors.index.json"),
                                    dir.file("c/other-00001-of-00002.safetensors")}));
    REQUIRE(lines.size() == 6);
    for (const json& line : lines) check_against_verify(line, false);
    CHECK(lines[1]["verdict"] == "io");
    CHECK(lines[1]["split"] == json({{"kind", "gguf_split"}, {"parts", 2}, {"consistent", false}}));
    CHECK(lines[2]["verdict"] == "ok");
    CHECK(lines[2]["split"] == json({{"kind", "gguf_split"}, {"parts", 3}, {"consistent", true}}));
    CHECK(lines[2]["tensors"] == 3);
    CHECK(lines[4]["verdict"] == "ok");
    CHECK(lines[4]["split"] == json({{"kind", "safetensors_shards"}, {"parts", 2}, {"consistent", true}}));
    CHECK(lines[4]["format"] == "safetensors");
    CHECK(lines[5]["split"].is_null());
}

TEST_CASE("scan --shard slices are disjoint, cover the list and follow k mod N") {
    ws_test::TempDir dir;
    for (int i = 0; i < 37; ++i) write_generated(dir.path, i);
    const std::vector<std::string> all = sources_of(parse_lines(run_cli("scan " + quote(dir.path)).out));
    REQUIRE(all.size() == 37);
    for (const int n : {1, 3, 5}) {
        std::set<std::string> seen;
        size_t total = 0;
        for (int s = 0; s < n; ++s) {
            const std::string shard = std::to_string(s) + "/" + std::to_string(n);
            const std::vector<std::string> got =
                sources_of(parse_lines(run_cli("scan --shard " + shard + " " + quote(dir.path)).out));
            std::vector<std::string> expected;
            for (size_t k = 0; k < all.size(); ++k) {
                if (k % static_cast<size_t>(n) == static_cast<size_t>(s)) expected.push_back(all[k]);
            }
            CHECK(got == expected);
            total += got.size();
            seen.insert(got.begin(), got.end());
        }
        CHECK(total == all.size());        // disjoint
        CHECK(seen.size() == all.size());  // and covering
    }
    // The slices do not depend on how the sources are given (order, duplicates, a list file).
    write_text(dir.file("list.txt"), "# models\n\n" + dir.file("m0005.gguf") + "\n" + dir.file("m0001.gguf") + "\r\n" +
                                         dir.file("m0005.gguf") + "\n" + dir.file("m0003.gguf"));
    const std::vector<std::string> from_list =
        sources_of(parse_lines(run_cli("scan --shard 1/2 --list " + quote(dir.file("list.txt"))).out));
    CHECK(from_list == std::vector<std::string>({dir.file("m0003.gguf")}));
    for (const char* bad : {"2/2", "1", "a/3", "0/0", "-1/2"}) {
        INFO(bad);
        CHECK(run_cli("scan --shard " + std::string(bad) + " " + quote(dir.path)).status == 2);
    }
}

TEST_CASE("scan --resume skips the sources OUT reports and appends the rest") {
    ws_test::TempDir dir;
    const std::string models = dir.file("models");
    REQUIRE(system(("mkdir " + quote(models)).c_str()) == 0);
    for (int i = 0; i < 30; ++i) write_generated(models, i);
    const std::string out = dir.file("out.jsonl");
    const std::vector<std::string> all = sources_of(parse_lines(run_cli("scan " + quote(models)).out));
    REQUIRE(all.size() == 30);
    // An earlier run reported the first 10 (one line marked to show it is not redone) and was cut off
    // in the middle of the 11th line.
    const ws_test::CliResult empty = run_cli("scan --list -", " < /dev/null");  // an empty list: nothing to do
    CHECK(empty.status == 0);
    CHECK(empty.out.empty());
    std::string earlier;
    for (int i = 0; i < 10; ++i) {
        json j = {{"source", all[i]}, {"verdict", "ok"}};
        if (i == 4) j["marker"] = true;
        earlier += j.dump() + "\n";
    }
    write_text(out, earlier + "{\"source\": \"" + all[10] + "\", \"verd");
    const ws_test::CliResult r = run_cli("scan --resume " + quote(out) + " " + quote(models));
    CHECK(r.out.empty());  // the lines go to OUT
    CHECK(r.err.find("20 models") != std::string::npos);
    CHECK(r.err.find("10 skipped (already in " + out + ")") != std::string::npos);
    const std::vector<uint8_t> bytes = ws_test::read_file(out);
    const std::vector<json> lines = parse_lines(std::string(bytes.begin(), bytes.end()));
    CHECK(sources_of(lines) == all);
    CHECK(lines[4]["marker"] == true);
    CHECK(lines[10].contains("tensors"));
    // Everything reported: a second resume scans nothing and leaves OUT as it is.
    const ws_test::CliResult again = run_cli("scan --resume " + quote(out) + " " + quote(models));
    CHECK(again.status == 0);
    CHECK(again.err.find("scan: 0 models") == 0);
    CHECK(ws_test::read_file(out) == bytes);
}

TEST_CASE("scan reads its list from stdin, skips comments and blank lines") {
    ws_test::TempDir dir;
    for (int i = 0; i < 12; ++i) write_generated(dir.path, i);
    std::string list = "# a comment\n\n";
    for (int i = 11; i >= 0; --i) list += dir.file(generated_name(i)) + "\n";
    write_text(dir.file("list.txt"), list);
    const ws_test::CliResult from_stdin = run_cli("scan --list -", " < " + quote(dir.file("list.txt")));
    const ws_test::CliResult from_dir = run_cli("scan " + quote(dir.path));
    CHECK(from_stdin.status == 0);
    CHECK(from_stdin.out == from_dir.out);
    CHECK(parse_lines(from_stdin.out).size() == 12);
}

TEST_CASE("scan exit statuses: 0 all ok, 1 a model failed, 2 usage, 3 the list unreadable") {
    ws_test::TempDir dir;
    write_generated(dir.path, 1);
    CHECK(run_cli("scan " + quote(dir.file("m0001.gguf"))).status == 0);
    // A missing model is a verdict ("io"), not a failure of the run.
    const ws_test::CliResult missing =
        run_cli("scan " + quote(dir.file("m0001.gguf")) + " " + quote(dir.file("no.gguf")));
    CHECK(missing.status == 1);
    const std::vector<json> lines = parse_lines(missing.out);
    REQUIRE(lines.size() == 2);
    CHECK(lines[1]["verdict"] == "io");
    CHECK(lines[1]["error"]["message"] ==
          dir.file("no.gguf") + ": io: the file could not be read: No such file or directory");
    CHECK(run_cli("scan").status == 2);
    CHECK(run_cli("scan --jobs 0 " + quote(dir.path)).status == 2);
    CHECK(run_cli("scan --bogus " + quote(dir.path)).status == 2);
    const ws_test::CliResult no_list = run_cli("scan --list " + quote(dir.file("none.txt")));
    CHECK(no_list.status == 3);
    CHECK(no_list.err == "weightstream: error: " + dir.file("none.txt") + ": No such file or directory\n");
    CHECK(no_list.out.empty());
}

// Not a test: writes the 1,000 models of the test above into $WS_SCAN_DIR (an existing directory), for
// timing scan over them (docs/SPEED.md, "Scan"): WS_SCAN_DIR=DIR build/bin/cli_scan_test "[.generate]".
TEST_CASE("write the 1,000 generated models into WS_SCAN_DIR", "[.generate]") {
    const char* dir = std::getenv("WS_SCAN_DIR");
    REQUIRE(dir != nullptr);
    for (int i = 0; i < 1000; ++i) write_generated(dir, i);
}
