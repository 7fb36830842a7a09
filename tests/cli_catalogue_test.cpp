// SPDX-License-Identifier: MIT
// Every defect of the corrupt-file catalogues through the CLI: `verify` (strict) rejects each with exit
// status 1 and a one-line message naming the file, its error code, the field and the byte offset; `info`
// (lenient) rejects the same ones except the layout oddities it shows as warnings.
#include <catch2/catch.hpp>

#include "support/gguf_catalogue.h"
#include "support/run_cli.h"
#include "support/safetensors_catalogue.h"

using ws_test::quote;
using ws_test::run_cli;

namespace {

std::string expected_line(const std::string& path, ws::Error code, const std::string& what, uint64_t offset) {
    return "weightstream: error: " + path + ": " + ws::error_name(code) + ": " + ws::error_description(code) + ": " +
           what + " (byte " + std::to_string(offset) + ")";
}

}  // namespace

TEST_CASE("every GGUF catalogue defect is rejected by verify with its own code") {
    ws_test::TempDir dir;
    const auto catalogue = ws_test::gguf_corrupt_catalogue();
    REQUIRE(catalogue.size() >= 30);
    for (const ws_test::GgufCorruptCase& c : catalogue) {
        const std::string path = dir.file(c.name + ".gguf");
        ws_test::write_file(path, c.bytes);
        INFO(c.name);
        const ws_test::CliResult verify = run_cli("verify " + quote(path));
        const ws_test::CliResult info = run_cli("info " + quote(path) + " --json");
        if (c.warning_only) {  // ggml accepts these too: valid, with a warning
            CHECK(verify.status == 0);
            CHECK(info.status == 0);
            continue;
        }
        CHECK(verify.status == 1);
        CHECK(verify.err.rfind(expected_line(path, c.code, c.what, c.offset), 0) == 0);
        if (c.strict_only) {
            REQUIRE(info.status == 0);
            const nlohmann::json j = nlohmann::json::parse(info.out);
            REQUIRE(j.contains("warnings"));
            bool found = false;
            for (const auto& w : j["warnings"]) found |= w["code"] == ws::error_name(c.code) && w["offset"] == c.offset;
            CHECK(found);
        } else {
            CHECK(info.status == 1);
            CHECK(info.err == expected_line(path, c.code, c.what, c.offset) + "\n");
        }
    }
}

TEST_CASE("every safetensors catalogue defect is rejected with its own code") {
    ws_test::TempDir dir;
    const auto catalogue = ws_test::safetensors_catalogue();
    REQUIRE(catalogue.size() >= 20);
    for (const ws_test::CorruptSafetensors& c : catalogue) {
        if (!c.size_known) continue;  // cases that need a stream of unknown length; a file always has one
        const std::string path = dir.file(c.name + ".safetensors");
        ws_test::write_file(path, c.bytes);
        INFO(c.name);
        for (const char* command : {"verify ", "info "}) {
            const ws_test::CliResult r = run_cli(command + quote(path));
            CHECK(r.status == 1);
            CHECK(r.err == expected_line(path, c.code, c.what, c.offset) + "\n");
        }
    }
}
