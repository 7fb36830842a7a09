// SPDX-License-Identifier: MIT
// `split` and `merge` against llama.cpp's llama-gguf-split (../shared/testdata/split: every command it was run
// with and the sha256 of every file it wrote), `convert` / `quantize` --split-max-* against `split` of their
// single-file output, and the refusals: options, parts that do not fit together, outputs that would clobber an
// input, nothing half-written.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <set>
#include <sstream>

#include "support/run_cli.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/split.h"

using nlohmann::json;
using ws_test::quote;
using ws_test::run_cli;

namespace {

std::string sha256_of(const std::string& path) {
    const std::vector<uint8_t> bytes = ws_test::read_file(path);
    return ws_test::sha256_hex(bytes.data(), bytes.size());
}

std::set<std::string> files_in(const std::string& dir) {
    std::set<std::string> names;
    DIR* d = opendir(dir.c_str());
    while (const dirent* e = d ? readdir(d) : nullptr) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") names.insert(n);
    }
    if (d) closedir(d);
    return names;
}

std::vector<std::string> words(const std::string& command) {
    std::istringstream in(command);
    std::vector<std::string> w;
    for (std::string s; in >> s;) w.push_back(s);
    return w;
}

// The first lines of a log of the tool: its plan (n_split and a line per part), as it printed it on stdout.
std::string plan_lines(const std::string& log) {
    std::istringstream in(log);
    std::string out;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("n_split:", 0) == 0 || line.rfind("split 0", 0) == 0) out += line + "\n";
    }
    return out;
}

ws::MetadataEntry entry(const std::string& key, ws::ValueType type, uint64_t bits) {
    ws::MetadataEntry e;
    e.key = key;
    e.value.type = type;
    e.value.bits = bits;
    return e;
}

// Writes prefix-0000K-of-00002.gguf with the split keys given per part (as the tool writes them unless changed).
void write_parts(const std::string& prefix, const std::vector<std::vector<ws::MetadataEntry>>& keys) {
    for (size_t k = 0; k < keys.size(); ++k) {
        const ws::TensorInfo t = ws_test::tensor("t" + std::to_string(k), ws::DType::F32, {8});
        auto bytes = ws::gguf_write(keys[k], {t}, {std::vector<uint8_t>(32, static_cast<uint8_t>(k))});
        REQUIRE(bytes.ok());
        ws_test::write_file(ws::split_part_path(prefix, static_cast<uint32_t>(k + 1), 2), bytes.value());
    }
}

std::vector<ws::MetadataEntry> split_keys(uint64_t no, uint64_t count, uint64_t tensors) {
    return {entry("split.no", ws::ValueType::kUint16, no), entry("split.count", ws::ValueType::kUint16, count),
            entry("split.tensors.count", ws::ValueType::kInt32, tensors)};
}

const std::string kRecipes = ws_test::shared_path("recipes");
const std::string kSplit = ws_test::shared_path("split");

}  // namespace

TEST_CASE("split and merge write llama-gguf-split's files byte for byte") {
    const json manifest = ws_test::read_json(kSplit + "/manifest.json");
    REQUIRE(manifest["runs"].size() == 4);
    ws_test::TempDir dir;
    for (const json& run : manifest["runs"]) {
        const std::string command = run["command"];
        INFO(command);
        // "llama-gguf-split --split [options] ../recipes/IN PREFIX" or "llama-gguf-split --merge FIRST OUT".
        std::vector<std::string> w = words(command);
        REQUIRE(w.size() >= 4);
        const bool merge = w[1] == "--merge";
        std::string args;
        if (merge) {
            args = "merge " + quote(kSplit + "/" + w[2]) + " " + quote(dir.file(w[3]));
        } else {
            std::string options;
            for (size_t i = 2; i + 2 < w.size(); ++i) options += " " + w[i];
            const std::string in = kRecipes + "/" + w[w.size() - 2].substr(std::string("../recipes/").size());
            args = "split " + quote(in) + " " + quote(dir.file(w.back())) + options;
        }
        const std::set<std::string> before = files_in(dir.path);
        const ws_test::CliResult r = run_cli(args);
        REQUIRE(r.status == 0);
        CHECK(r.err.empty());
        std::set<std::string> written;
        for (const json& o : run["outputs"]) {
            const std::string name = o["file"];
            written.insert(name);
            INFO(name);
            CHECK(sha256_of(dir.file(name)) == o["sha256"].get<std::string>());
        }
        // Those files and nothing else (no temporary file left).
        std::set<std::string> after = files_in(dir.path);
        for (const std::string& b : before) after.erase(b);
        CHECK(after == written);
        if (!merge) {
            // The plan printed as the tool prints it.
            const std::vector<uint8_t> log = ws_test::read_file(kSplit + "/" + run["log"].get<std::string>());
            CHECK(r.out.rfind(plan_lines(std::string(log.begin(), log.end())), 0) == 0);
        }
    }
}

TEST_CASE("split --dry-run prints the tool's plan and writes nothing") {
    ws_test::TempDir dir;
    const ws_test::CliResult r = run_cli("split " + quote(kRecipes + "/ref-llama-gqa8-IQ1_S.gguf") + " " +
                                         quote(dir.file("gqa8-1m")) + " --split-max-size 1M --dry-run");
    REQUIRE(r.status == 0);
    const std::vector<uint8_t> log = ws_test::read_file(kSplit + "/s1m.log");
    CHECK(r.out == plan_lines(std::string(log.begin(), log.end())));
    CHECK(files_in(dir.path).empty());
}

TEST_CASE("quantize and convert with --split-max-* write what split makes of their single file") {
    ws_test::TempDir dir;
    const std::string f16 = quote(kRecipes + "/ref-llama-moe-f16.gguf");
    const std::string spm = quote(ws_test::shared_path("convert/tiny-llama-spm/model.safetensors"));
    struct Case {
        std::string make;    // the command writing OUT, without OUT
        std::string limits;  // the split options
    };
    const std::vector<Case> cases = {
        {"quantize " + f16 + " --type Q4_K_M", "--split-max-tensors 5"},
        {"quantize " + f16 + " --type Q4_K_M", "--split-max-size 1M --no-tensor-first-split"},
        {"convert " + spm + " --dtype q8_0", "--split-max-tensors 3"},
        {"convert " + spm + " --dtype f32", "--split-max-size 1M"},
    };
    int n = 0;
    for (const Case& c : cases) {
        INFO(c.make << " " << c.limits);
        const std::string id = std::to_string(n++);
        const std::string single = dir.file("single" + id + ".gguf");
        REQUIRE(run_cli(c.make + " " + quote(single)).status == 0);
        const ws_test::CliResult split =
            run_cli("split " + quote(single) + " " + quote(dir.file("ref" + id)) + " " + c.limits);
        REQUIRE(split.status == 0);
        const ws_test::CliResult direct =
            run_cli(c.make + " " + quote(dir.file("direct" + id + ".gguf")) + " " + c.limits);
        REQUIRE(direct.status == 0);
        size_t parts = 0;
        for (const std::string& name : files_in(dir.path)) {
            if (name.rfind("ref" + id + "-", 0) != 0) continue;
            ++parts;
            const std::string direct_name = "direct" + id + name.substr(3 + id.size());
            INFO(name);
            REQUIRE(ws_test::file_exists(dir.file(direct_name)));
            CHECK(ws_test::read_file(dir.file(direct_name)) == ws_test::read_file(dir.file(name)));
        }
        CHECK(parts >= 2);
        CHECK_FALSE(ws_test::file_exists(dir.file("direct" + id + ".gguf")));  // the parts instead of OUT
    }
    const ws_test::CliResult st =
        run_cli("convert " + spm + " " + quote(dir.file("x.safetensors")) + " --split-max-tensors 3");
    CHECK(st.status == 2);
    CHECK(st.err.find("only a GGUF output is split") != std::string::npos);
}

TEST_CASE("split refuses bad limits with the tool's words, before reading anything") {
    ws_test::TempDir dir;
    const std::string in = quote(kRecipes + "/ref-llama-moe-IQ1_S.gguf") + " " + quote(dir.file("p"));
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--split-max-tensors 8 --split-max-size 1M",
         "either --split-max-tensors or --split-max-size can be specified, but not both"},
        {"--split-max-tensors 0", "--split-max-tensors takes a whole number from 1 to 2147483647, not '0'"},
        {"--split-max-tensors -2", "--split-max-tensors takes a whole number from 1 to 2147483647, not '-2'"},
        {"--split-max-tensors x", "not 'x'"},
        {"--split-max-size 0M", "size must be a positive value"},
        {"--split-max-size -1G", "size must be a positive value"},
        {"--split-max-size 100K", "supported units are M (megabytes) or G (gigabytes), but got: K"},
        {"--split-max-size 1.5G", "a whole number of M or G is expected"},
        {"--split-max-size 4294967296M", "is larger than 2147483647M"},
    };
    for (const auto& [options, words] : cases) {
        INFO(options);
        const ws_test::CliResult r = run_cli("split " + in + " " + options);
        CHECK(r.status == 2);
        CHECK(r.err.find(words) != std::string::npos);
    }
    // A limit below the first tensor: the tool's empty part.
    const ws_test::CliResult small = run_cli("split " + quote(kRecipes + "/ref-llama-gqa8-f16.gguf") + " " +
                                             quote(dir.file("p")) + " --split-max-size 1M");
    CHECK(small.status == 2);
    CHECK(small.err.find("a part would have no tensors") != std::string::npos);
    CHECK(files_in(dir.path).empty());
}

TEST_CASE("split never writes over its input and leaves nothing when a part cannot be written") {
    ws_test::TempDir dir;
    const std::string in = dir.file("in.gguf");
    ws_test::write_file(in, ws_test::read_file(kRecipes + "/ref-llama-moe-IQ1_S.gguf"));
    const std::vector<uint8_t> original = ws_test::read_file(in);

    // Part 1's name is a hard link to the input.
    REQUIRE(::link(in.c_str(), dir.file("p-00001-of-00003.gguf").c_str()) == 0);
    ws_test::CliResult r = run_cli("split " + quote(in) + " " + quote(dir.file("p")) + " --split-max-tensors 8");
    CHECK(r.status == 3);
    CHECK(r.err.find("it is the input file") != std::string::npos);
    CHECK(ws_test::read_file(in) == original);
    CHECK(files_in(dir.path) == std::set<std::string>{"in.gguf", "p-00001-of-00003.gguf"});

    // Part 3 cannot be written (a directory has its name): parts 1 and 2, complete by then, are not left either.
    REQUIRE(::mkdir(dir.file("q-00003-of-00003.gguf").c_str(), 0755) == 0);
    r = run_cli("split " + quote(in) + " " + quote(dir.file("q")) + " --split-max-tensors 8");
    CHECK(r.status == 3);
    CHECK(r.err.find("q-00003-of-00003.gguf: is a directory") != std::string::npos);
    CHECK(files_in(dir.path) == std::set<std::string>{"in.gguf", "p-00001-of-00003.gguf", "q-00003-of-00003.gguf"});
}

TEST_CASE("merge names the part that does not fit, and never clobbers") {
    ws_test::TempDir dir;
    const std::string out = dir.file("out.gguf");
    const auto architecture = ws::string_entry("general.architecture", "llama");
    auto first = [&](std::vector<ws::MetadataEntry> keys) {
        keys.insert(keys.begin(), architecture);
        return keys;
    };
    struct Case {
        std::string name;
        std::vector<std::vector<ws::MetadataEntry>> keys;
        std::string words;  // in the error
    };
    const std::vector<Case> cases = {
        {"no", {first(split_keys(0, 2, 2)), split_keys(0, 2, 2)}, "no-00002-of-00002.gguf: bad_split"},
        {"count", {first(split_keys(0, 2, 2)), split_keys(1, 3, 2)}, "count-00002-of-00002.gguf: bad_split"},
        {"tensors", {first(split_keys(0, 2, 5)), split_keys(1, 2, 5)}, "tensors-00001-of-00002.gguf: bad_split"},
        {"type",
         {first({ws::string_entry("split.no", "0"), entry("split.count", ws::ValueType::kUint16, 2),
                 entry("split.tensors.count", ws::ValueType::kInt32, 2)}),
          split_keys(1, 2, 2)},
         "type-00001-of-00002.gguf: bad_key"},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        write_parts(dir.file(c.name), c.keys);
        const ws_test::CliResult r =
            run_cli("merge " + quote(dir.file(c.name + "-00001-of-00002.gguf")) + " " + quote(out));
        INFO(r.err);
        CHECK(r.status == 1);
        CHECK(r.err.find(c.words) != std::string::npos);
        CHECK_FALSE(ws_test::file_exists(out));
    }

    // A good pair merges; a missing part is named.
    write_parts(dir.file("good"), {first(split_keys(0, 2, 2)), split_keys(1, 2, 2)});
    REQUIRE(run_cli("merge " + quote(dir.file("good-00001-of-00002.gguf")) + " " + quote(out)).status == 0);
    const std::vector<uint8_t> merged = ws_test::read_file(out);
    ::unlink(dir.file("good-00002-of-00002.gguf").c_str());
    ws_test::CliResult r =
        run_cli("merge " + quote(dir.file("good-00001-of-00002.gguf")) + " " + quote(dir.file("m2")));
    CHECK(r.status == 3);
    CHECK(r.err.find("good-00002-of-00002.gguf") != std::string::npos);

    // OUT exists: refused as the tool refuses it, unless --force; one of the parts: refused whatever.
    r = run_cli("merge " + quote(kSplit + "/moe-t8-00001-of-00003.gguf") + " " + quote(out));
    CHECK(r.status == 2);
    CHECK(r.err.find("exists (--force replaces it)") != std::string::npos);
    CHECK(ws_test::read_file(out) == merged);
    const std::string part = dir.file("moe-t8-00002-of-00003.gguf");
    for (int k = 1; k <= 3; ++k) {
        const std::string name = "moe-t8-0000" + std::to_string(k) + "-of-00003.gguf";
        ws_test::write_file(dir.file(name), ws_test::read_file(kSplit + "/" + name));
    }
    const std::vector<uint8_t> part_bytes = ws_test::read_file(part);
    r = run_cli("merge " + quote(dir.file("moe-t8-00001-of-00003.gguf")) + " " + quote(part) + " --force");
    CHECK(r.status == 2);
    CHECK(r.err.find("one of the parts merged") != std::string::npos);
    CHECK(ws_test::read_file(part) == part_bytes);
    r = run_cli("merge " + quote(dir.file("moe-t8-00001-of-00003.gguf")) + " " + quote(out) + " --force");
    CHECK(r.status == 0);
    CHECK(sha256_of(out) == "349d8db6fceb80257f0a01a179dc5db3def60a65bf13569debfb28e64228a93f");

    // A file that is not a split.
    r = run_cli("merge " + quote(kRecipes + "/ref-llama-moe-IQ1_S.gguf") + " " + quote(dir.file("m3")));
    CHECK(r.status == 1);
    CHECK(r.err.find("not a split GGUF") != std::string::npos);
}
