// SPDX-License-Identifier: MIT
// The CLI's manners: per-command help, usage hints, --json of verify/convert/quantize, --filter,
// colour only on a terminal, plurals, --rows as a Python slice, and the core's words for an error.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <set>

#include "support/gguf_builder.h"
#include "support/run_cli.h"
#include "weightstream/status.h"

using nlohmann::json;
using ws::DType;
using ws_test::quote;
using ws_test::run_cli;

namespace {

const std::string kTypes = ws_test::data_path("ggml/ggml-types.gguf");

json json_cli(const std::string& args) {
    const ws_test::CliResult r = run_cli(args);
    INFO(args << "\n" << r.err);
    REQUIRE(r.status == 0);
    return json::parse(r.out);
}

std::vector<std::string> names_of(const json& tensors) {
    std::vector<std::string> names;
    for (const json& t : tensors) names.push_back(t["name"]);
    return names;
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// A small llama-shaped F32 model that quantizes to Q8_0 (rows of 64) with a 1-D norm.
std::string write_llama(const ws_test::TempDir& dir) {
    ws_test::GgufSpec spec;
    spec.kvs.push_back({"general.architecture", ws_test::val_str("llama")});
    spec.kvs.push_back({"llama.block_count", ws_test::val_u32(1)});
    std::vector<float> m(64 * 4), n(64);
    for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i % 17) * 0.25f - 2.0f;
    for (size_t i = 0; i < n.size(); ++i) n[i] = 1.0f + static_cast<float>(i) / 64;
    spec.tensors.push_back({"token_embd.weight", static_cast<uint32_t>(DType::F32), {64, 4}, f32_bytes(m)});
    spec.tensors.push_back({"blk.0.attn_q.weight", static_cast<uint32_t>(DType::F32), {64, 4}, f32_bytes(m)});
    spec.tensors.push_back({"output_norm.weight", static_cast<uint32_t>(DType::F32), {64}, f32_bytes(n)});
    const std::string path = dir.file("llama.gguf");
    ws_test::write_file(path, ws_test::build_gguf(spec).bytes);
    return path;
}

// Runs the command in a pseudo-terminal (script(1)): what a user at a terminal sees on stdout and stderr.
std::string in_pty(const std::string& command) {
    const std::string cmd = "script -qec " + quote(std::string(WS_CLI) + " " + command) + " /dev/null";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    pclose(p);
    return out;
}

}  // namespace

TEST_CASE("every command's --help, -h and help CMD print its usage and name its options; exit 0") {
    // The options each command takes, as its parser knows them: the help names every one, and the parser
    // accepts every one the help names (no "unknown option").
    const std::map<std::string, std::vector<std::string>> options = {
        {"info", {"--json"}},
        {"tensors", {"--json", "--filter"}},
        {"verify", {"--json", "--threads"}},
        {"dump", {"-o", "--as", "--rows", "--filter", "--threads"}},
        {"stats", {"--filter", "--rows", "--bins", "--json", "--threads"}},
        {"hash",
         {"--filter", "--json", "--threads", "--manifest", "--xxh64", "--xxh3", "--sha1", "--sha256", "--all", "--uuid",
          "--no-layer", "--check"}},
        {"convert", {"--dtype", "--imatrix", "--json", "--threads"}},
        {"quantize",
         {"--type", "--imatrix", "--threads", "--tensor-type", "--pure", "--output-tensor-type",
          "--token-embedding-type", "--leave-output-tensor", "--allow-requantize", "--json"}},
        {"diff", {"--json", "--tensors", "--max-nmse", "--threads"}},
        {"scan", {"--list", "--jobs", "--threads", "--decode", "--shard", "--resume"}},
        {"bench", {"--json", "--threads", "--type", "--hash", "--rounds", "--quantize"}},
    };
    const ws_test::CliResult overview = run_cli("--help");
    CHECK(overview.status == 0);
    for (const auto& [command, opts] : options) {
        INFO(command);
        CHECK(overview.out.find("\n  " + command + " ") != std::string::npos);
        const ws_test::CliResult help = run_cli(command + " --help");
        CHECK(help.status == 0);
        CHECK(help.err.empty());
        CHECK(help.out.rfind("usage: weightstream " + command + " ", 0) == 0);
        for (const std::string& o : opts) {
            INFO(o);
            CHECK(std::regex_search(help.out, std::regex("[ \\[,(]" + o + "[ \\]=,\n]")));
        }
        CHECK(run_cli(command + " -h").out == help.out);
        CHECK(run_cli("help " + command).out == help.out);
        CHECK(run_cli(command + " x.gguf --threads 2 --help").out == help.out);  // anywhere on the line

        // An unknown option: status 2, the command's synopsis and where its help is.
        const ws_test::CliResult bad = run_cli(command + " x --bogus");
        CHECK(bad.status == 2);
        CHECK(bad.out.empty());
        CHECK(bad.err ==
              "weightstream: error: unknown option --bogus\nusage: " + help.out.substr(7, help.out.find("\n\n") - 7) +
                  "\nTry 'weightstream " + command + " --help' for its options.\n");
        // Every option the help names is one the parser takes.
        for (const std::string& o : opts) {
            const ws_test::CliResult r = run_cli(command + " " + o + " /nonexistent/v /nonexistent/x.gguf");
            INFO(o << ": " << r.err);
            CHECK(r.err.find("unknown option") == std::string::npos);
        }
    }
    CHECK(run_cli("help frobnicate").status == 2);
    // A usage error without an unknown option: the synopsis too (multi-line synopses printed as lines).
    const ws_test::CliResult hash = run_cli("hash");
    CHECK(hash.status == 2);
    CHECK(hash.err.rfind("weightstream: error: hash: missing or extra arguments\n"
                         "usage: weightstream hash FILE [--filter PATTERN] [--json] [--threads N]\n"
                         "       weightstream hash --manifest",
                         0) == 0);
    CHECK(hash.err.find("\\n") == std::string::npos);
}

TEST_CASE("verify --json carries the verdict, the counts and the error as scan does") {
    const json info = json_cli("info " + quote(kTypes) + " --json");
    const json v = json_cli("verify " + quote(kTypes) + " --json");
    CHECK(v["source"] == kTypes);
    CHECK(v["verdict"] == "ok");
    CHECK(v["error"].is_null());
    CHECK(v["warnings"] == json::array());
    CHECK(v["tensors"] == info["tensors"].size());
    CHECK(v["decoded"] == info["tensors"].size());
    CHECK(v["metadata_keys"] == info["metadata"].size());
    CHECK(v["scales"] == json::array());

    ws_test::TempDir dir;
    std::vector<uint8_t> bytes = ws_test::read_file(kTypes);
    bytes.resize(1000);
    const std::string cut = dir.file("cut.gguf");
    ws_test::write_file(cut, bytes);
    const ws_test::CliResult r = run_cli("verify " + quote(cut) + " --json");
    CHECK(r.status == 1);
    const json bad = json::parse(r.out);
    CHECK(bad["verdict"] == "truncated");
    CHECK(bad["error"]["file"] == cut);
    CHECK(bad["error"]["offset"].get<uint64_t>() <= 1000);
    CHECK(bad["error"]["what"].is_string());
    // The error line on stderr is the message, as verify prints it without --json.
    CHECK(r.err == "weightstream: error: " + bad["error"]["message"].get<std::string>() + "\n");
    CHECK(r.err == run_cli("verify " + quote(cut)).err);
    // And scan's line for the same file has the same verdict and error.
    const json scan = json::parse(run_cli("scan " + quote(cut)).out);
    CHECK(scan["verdict"] == bad["verdict"]);
    CHECK(scan["error"] == bad["error"]);

    const ws_test::CliResult missing = run_cli("verify " + quote(dir.file("none.gguf")) + " --json");
    CHECK(missing.status == 3);
    const json io = json::parse(missing.out);
    CHECK(io["verdict"] == "io");
    CHECK(io["error"]["offset"].is_null());
    CHECK(io["tensors"].is_null());
}

TEST_CASE("convert --json and quantize --json describe the file they wrote") {
    ws_test::TempDir dir;
    const std::string in = write_llama(dir);

    SECTION("convert to safetensors and to a quantized GGUF") {
        for (const std::string& target : {std::string("out.safetensors"), std::string("q8.gguf")}) {
            INFO(target);
            const std::string out = dir.file(target);
            const std::string dtype = target == "q8.gguf" ? " --dtype q8_0" : "";
            const json j = json_cli("convert " + quote(in) + " " + quote(out) + dtype + " --json");
            const json info = json_cli("info " + quote(out) + " --json");
            CHECK(j["output"] == out);
            CHECK(j["format"] == info["format"]);
            CHECK(j["file_size"] == ws_test::read_file(out).size());
            CHECK(j["metadata_keys"] == info["metadata"].size());
            REQUIRE(j["tensors"].size() == info["tensors"].size());
            uint64_t bytes = 0;
            size_t re_encoded = 0;
            for (size_t i = 0; i < j["tensors"].size(); ++i) {
                const json& w = j["tensors"][i];
                const json& t = info["tensors"][i];
                CHECK(w["name"] == t["name"]);
                CHECK(w["dtype"] == t["dtype"]);
                CHECK(w["shape"] == t["shape"]);
                CHECK(w["bytes"] == t["nbytes"]);
                CHECK(w["source_dtype"] == "F32");
                bytes += w["bytes"].get<uint64_t>();
                re_encoded += w["action"] != "copy";
            }
            CHECK(j["totals"]["tensors"] == 3);
            CHECK(j["totals"]["bytes"] == bytes);
            CHECK(j["totals"]["re_encoded"] == re_encoded);
            if (target == "q8.gguf") {
                CHECK(j["tensors"][0]["dtype"] == "Q8_0");
                CHECK(j["tensors"][0]["action"] == "encode");
            } else {
                CHECK(re_encoded == 0);
            }
            CHECK(j["warnings"].is_array());
        }
    }
    SECTION("quantize Q8_0") {
        const std::string out = dir.file("q.gguf");
        const json j = json_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0 --json");
        const json info = json_cli("info " + quote(out) + " --json");
        const json hash = json_cli("hash " + quote(out) + " --json");
        CHECK(j["output"] == out);
        CHECK(j["ftype"] == "Q8_0");
        CHECK(j["file_size"] == ws_test::read_file(out).size());
        REQUIRE(j["tensors"].size() == info["tensors"].size());
        size_t quantized = 0;
        for (size_t i = 0; i < j["tensors"].size(); ++i) {
            const json& w = j["tensors"][i];
            CHECK(w["name"] == info["tensors"][i]["name"]);
            CHECK(w["name"] == hash["tensors"][i]["name"]);
            CHECK(w["dtype"] == info["tensors"][i]["dtype"]);
            CHECK(w["shape"] == info["tensors"][i]["shape"]);
            CHECK(w["bytes"] == info["tensors"][i]["nbytes"]);
            quantized += w["quantized"].get<bool>();
        }
        // llama-quantize keeps the 1-D norm in F32 and quantizes the matrices.
        const std::vector<std::string> names = names_of(j["tensors"]);
        for (size_t i = 0; i < names.size(); ++i) {
            CHECK(j["tensors"][i]["dtype"] == (names[i] == "output_norm.weight" ? "F32" : "Q8_0"));
        }
        CHECK(j["totals"]["tensors"] == 3);
        CHECK(j["totals"]["quantized"] == quantized);
        CHECK(quantized == 2);
        CHECK(j["totals"]["fallbacks"] == 0);
        CHECK(j["warnings"].is_array());
        const ws_test::CliResult text = run_cli("quantize " + quote(in) + " " + quote(out) + " --type Q8_0");
        CHECK(text.out.rfind(out + ": Q8_0, 3 tensors (2 quantized, 0 fallbacks), ", 0) == 0);
    }
}

TEST_CASE("filter: --filter selects exactly the matching tensors: a glob of the whole name, or /regex/ anywhere") {
    const std::vector<std::string> all = names_of(json_cli("tensors " + quote(kTypes) + " --json")["tensors"]);
    REQUIRE(all.size() > 10);
    struct Case {
        std::string pattern;
        std::function<bool(const std::string&)> expected;
    };
    const std::vector<Case> cases = {
        {"q4_*", [](const std::string& n) { return n.rfind("q4_", 0) == 0; }},
        {"*.weight", [](const std::string& n) { return n.size() > 7 && n.substr(n.size() - 7) == ".weight"; }},
        {"q?_0.weight", [](const std::string& n) { return std::regex_match(n, std::regex("q._0\\.weight")); }},
        {"[iq]*_[!0-9]*", [](const std::string& n) { return std::regex_match(n, std::regex("[iq].*_[^0-9].*")); }},
        {"q4_0", [](const std::string&) { return false; }},  // a glob matches the whole name
        {"/q4_0/", [](const std::string& n) { return n.find("q4_0") != std::string::npos; }},
        {"/^(f16|bf16)\\./", [](const std::string& n) { return n.rfind("f16.", 0) == 0 || n.rfind("bf16.", 0) == 0; }},
        {"/odd$/", [](const std::string& n) { return n.size() > 3 && n.substr(n.size() - 3) == "odd"; }},
    };
    for (const Case& c : cases) {
        INFO(c.pattern);
        std::vector<std::string> want;
        for (const std::string& n : all) {
            if (c.expected(n)) want.push_back(n);
        }
        if (c.pattern != "q4_0") CHECK(!want.empty());
        const std::string f = " --filter " + quote(c.pattern);
        CHECK(names_of(json_cli("tensors " + quote(kTypes) + f + " --json")["tensors"]) == want);
        CHECK(names_of(json_cli("hash " + quote(kTypes) + f + " --json")["tensors"]) == want);
        CHECK(names_of(json_cli("stats " + quote(kTypes) + f + " --json")["tensors"]) == want);
        const ws_test::CliResult table = run_cli("tensors " + quote(kTypes) + f);
        CHECK(table.status == 0);
        CHECK(std::count(table.out.begin(), table.out.end(), '\n') == static_cast<long>(want.size() + 1));
        if (want.empty()) CHECK(table.err == "weightstream: warning: --filter q4_0 matches no tensor\n");
    }
    // The filtered digests are the unfiltered ones.
    const json full = json_cli("hash " + quote(kTypes) + " --json");
    const json some = json_cli("hash " + quote(kTypes) + " --filter 'q8_*' --json");
    REQUIRE(some["tensors"].size() >= 1);
    for (const json& t : some["tensors"]) {
        bool found = false;
        for (const json& u : full["tensors"]) found |= u == t;
        CHECK(found);
    }
    // dump --filter: the one matching tensor, else a usage error naming the matches.
    CHECK(run_cli("dump " + quote(kTypes) + " --filter 'q4_0.w*'").out ==
          run_cli("dump " + quote(kTypes) + " q4_0.weight").out);
    const ws_test::CliResult two = run_cli("dump " + quote(kTypes) + " --filter 'q4_0*'");
    CHECK(two.status == 2);
    CHECK(two.err ==
          "weightstream: error: --filter q4_0* matches 2 tensors: q4_0.weight, q4_0.odd (dump takes exactly one)\n");
    CHECK(run_cli("dump " + quote(kTypes) + " --filter nothing").status == 2);
    CHECK(run_cli("dump " + quote(kTypes) + " q4_0.weight --filter 'q4_0*'").status == 2);
    // Bad patterns and combinations.
    CHECK(run_cli("tensors " + quote(kTypes) + " --filter 'q4_[0'").status == 2);
    CHECK(run_cli("tensors " + quote(kTypes) + " --filter '/q4_(/'").status == 2);
    CHECK(run_cli("stats " + quote(kTypes) + " q4_0.weight --filter 'q4_*'").status == 2);
    CHECK(run_cli("hash --manifest " + quote(kTypes) + " --filter 'q4_*'").status == 2);
    CHECK(run_cli("info " + quote(kTypes) + " --filter 'q4_*'").status == 2);
}

TEST_CASE("colour only on a terminal, and never with NO_COLOR or --color=never") {
    const std::string bad = "info /nonexistent/x.gguf";
    // Not a terminal (stderr is a file here): no escape byte.
    CHECK(run_cli(bad).err.find('\x1b') == std::string::npos);
    CHECK(run_cli(bad + " --color=always").err.rfind("weightstream: \x1b[1;31merror\x1b[0m: ", 0) == 0);
    CHECK(run_cli("--color=always " + bad).err.rfind("weightstream: \x1b[1;31merror\x1b[0m: ", 0) == 0);
    CHECK(run_cli(bad + " --color=sometimes").status == 2);
    // A terminal: coloured prefixes, unless NO_COLOR is set (to anything but the empty string) or --color=never.
    const std::string tty = in_pty(bad);
    CHECK(tty.find("weightstream: \x1b[1;31merror\x1b[0m: /nonexistent/x.gguf") != std::string::npos);
    CHECK(in_pty(bad + " --color=never").find('\x1b') == std::string::npos);
    const std::string cmd = "NO_COLOR=1 script -qec " + quote(std::string(WS_CLI) + " " + bad) + " /dev/null";
    std::string no_colour;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) no_colour.append(buf, n);
    pclose(p);
    CHECK(no_colour.find("weightstream: error: /nonexistent/x.gguf") != std::string::npos);
    CHECK(no_colour.find('\x1b') == std::string::npos);
    // A warning on a terminal.
    CHECK(in_pty("tensors " + quote(kTypes) + " --filter none").find("weightstream: \x1b[1;33mwarning\x1b[0m: ") !=
          std::string::npos);
}

TEST_CASE("counts are singular for one and plural otherwise") {
    ws_test::TempDir dir;
    ws_test::GgufSpec spec;
    spec.kvs.push_back({"general.name", ws_test::val_str("one")});
    spec.tensors.push_back({"t", static_cast<uint32_t>(DType::F32), {4}, f32_bytes({1, 2, 3, 4})});
    const std::string one = dir.file("one.gguf");
    ws_test::write_file(one, ws_test::build_gguf(spec).bytes);

    CHECK(run_cli("verify " + quote(one)).out == one + ": ok: 1 tensor decoded, 1 metadata key\n");
    const ws_test::CliResult info = run_cli("info " + quote(one));
    CHECK(info.out.find("\nmetadata (1 key):\n") != std::string::npos);
    CHECK(info.out.find("  F32               1 tensor ") != std::string::npos);
    const std::string out = dir.file("one.safetensors");
    const ws_test::CliResult c = run_cli("convert " + quote(one) + " " + quote(out));
    CHECK(c.out.rfind(out + ": 1 tensor (0 re-encoded), 1 metadata key, ", 0) == 0);
    CHECK(run_cli("dump " + quote(one) + " t --rows 1").err ==
          "weightstream: error: --rows 1 is outside tensor t (1 row of 4 elements)\n");

    const std::string path = dir.file("two.gguf");
    spec.kvs.push_back({"general.architecture", ws_test::val_str("x")});
    spec.tensors.push_back({"u", static_cast<uint32_t>(DType::F32), {4}, f32_bytes({1, 2, 3, 4})});
    ws_test::write_file(path, ws_test::build_gguf(spec).bytes);
    CHECK(run_cli("verify " + quote(path)).out == path + ": ok: 2 tensors decoded, 2 metadata keys\n");
    CHECK(run_cli("info " + quote(path)).out.find("  F32               2 tensors ") != std::string::npos);
}

TEST_CASE("rows: --rows is a Python slice: each slice equals numpy's cut of the whole dump") {
    // q4_0.weight: 8 rows of 512 elements.
    const std::string whole = run_cli("dump " + quote(kTypes) + " q4_0.weight").out;
    const size_t row = 512 * 4;
    REQUIRE(whole.size() == 8 * row);
    struct Case {
        const char* slice;
        size_t first, count;  // numpy's a[slice] of 8 rows
    };
    for (const Case& c : {Case{"0:16", 0, 8}, Case{"-8:", 0, 8}, Case{":4", 0, 4}, Case{"5", 5, 1}, Case{"-1", 7, 1},
                          Case{"-8", 0, 1}, Case{"2:5", 2, 3}, Case{"-3:-1", 5, 2}, Case{":", 0, 8}, Case{"5:2", 5, 0},
                          Case{"100:", 8, 0}, Case{"-100:2", 0, 2}, Case{"3:3", 3, 0}, Case{":-9", 0, 0}}) {
        INFO(c.slice);
        const ws_test::CliResult r = run_cli("dump " + quote(kTypes) + " q4_0.weight --rows=" + c.slice);
        CHECK(r.status == 0);
        CHECK(r.out == whole.substr(c.first * row, c.count * row));
        const json s = json_cli("stats " + quote(kTypes) + " q4_0.weight --json --rows=" + c.slice);
        CHECK(s["tensors"][0]["rows"] == json::array({c.first, c.count}));
    }
    ws_test::TempDir dir;
    const std::string npy = dir.file("empty.npy");
    REQUIRE(run_cli("dump " + quote(kTypes) + " q4_0.weight --rows 5:2 -o " + quote(npy)).status == 0);
    const std::vector<uint8_t> bytes = ws_test::read_file(npy);
    const std::string header(bytes.begin(), bytes.end());
    CHECK(header.find("'shape': (0, 512)") != std::string::npos);

    for (const char* bad : {"8", "-9", "a:1", "1:2:3", "1:x", "", "--", "1.5"}) {
        INFO(bad);
        const ws_test::CliResult r = run_cli("dump " + quote(kTypes) + " q4_0.weight --rows=" + quote(bad));
        CHECK(r.status == 2);
    }
    CHECK(run_cli("dump " + quote(kTypes) + " q4_0.weight --rows 8").err ==
          "weightstream: error: --rows 8 is outside tensor q4_0.weight (8 rows of 512 elements)\n");
    CHECK(run_cli("dump " + quote(kTypes) + " q4_0.weight --rows 0:1:2").err ==
          "weightstream: error: --rows takes a Python slice of rows (0:16, -8:, :4, 5), not '0:1:2'\n");
}

TEST_CASE("an error's words are the core's: code, description, field, byte") {
    ws_test::TempDir dir;
    const std::string text = dir.file("text.gguf");
    ws_test::write_file(text, std::vector<uint8_t>(64, 'x'));
    const ws_test::CliResult r = run_cli("info " + quote(text));
    CHECK(r.status == 1);
    CHECK(r.err ==
          "weightstream: error: " + text + ": bad_magic: not a GGUF or safetensors file: header.magic (byte 0)\n");
    CHECK(std::string(ws::error_description(ws::Error::kBadMagic)) == "not a GGUF or safetensors file");
    // Every code has its own description (a shared one would say less than the code).
    std::set<std::string> seen;
    for (int code = 0; code < static_cast<int>(ws::Error::kEnd); ++code) {
        const std::string d = ws::error_description(static_cast<ws::Error>(code));
        INFO(ws::error_name(static_cast<ws::Error>(code)));
        CHECK(!d.empty());
        CHECK(seen.insert(d).second);
    }
}

TEST_CASE("start-up: a command maps only the libraries it uses (libcurl for URLs, libcrypto for SHA digests)") {
    // The dynamic loader names every library it maps (LD_DEBUG=libs, on stderr).
    const auto loaded = [](const std::string& args) {
        REQUIRE(setenv("LD_DEBUG", "libs", 1) == 0);
        const ws_test::CliResult r = run_cli(args);
        unsetenv("LD_DEBUG");
        INFO(args << "\n" << r.err);
        REQUIRE(r.status == 0);
        REQUIRE(r.err.find("libc.so.6") != std::string::npos);  // the loader did report
        std::set<std::string> libs;
        for (const char* lib : {"libcrypto.so", "libcurl.so", "libxxhash.so"}) {
            if (r.err.find(lib) != std::string::npos) libs.insert(lib);
        }
        return libs;
    };
    CHECK(loaded("--version").empty());
    CHECK(loaded("info " + quote(kTypes) + " --json").empty());
    CHECK(loaded("hash --manifest --xxh64 --xxh3 " + quote(kTypes)).empty());
    CHECK(loaded("hash --manifest --sha256 " + quote(kTypes)) == std::set<std::string>{"libcrypto.so"});
    CHECK(loaded("hash " + quote(kTypes) + " --json") == std::set<std::string>{"libcrypto.so"});
}
