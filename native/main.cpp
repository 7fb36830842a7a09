// SPDX-License-Identifier: MIT
// weightstream: the command-line tool (ARCHITECTURE.md, "CLI").
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"

namespace {

constexpr const char* kUsage =
    "usage: weightstream COMMAND FILE [options]\n"
    "\n"
    "  info FILE [--json]        summary, metadata and tensor table\n"
    "  tensors FILE [--json]     tensor table only\n"
    "  verify FILE               every structural check (strict, as ggml) and every tensor\n"
    "  bench [FILE] [--json] [--threads N]\n"
    "                            decode GB/s per type vs a float32 store loop; with FILE, parse + decode it\n"
    "\n"
    "FILE is a .gguf, a .safetensors, any part of a split GGUF (name-00001-of-00003.gguf) or a\n"
    "sharded safetensors index (*.safetensors.index.json). Exit status: 0 ok, 1 invalid input,\n"
    "2 usage error, 3 I/O error.\n";

struct Command {
    const char* name;
    int (*run)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"info", ws::cli::cmd_info},
    {"tensors", ws::cli::cmd_tensors},
    {"verify", ws::cli::cmd_verify},
    {"bench", ws::cli::cmd_bench},
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fputs(kUsage, stderr);
        return ws::cli::kExitUsage;
    }
    const std::string command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
        std::fputs(kUsage, stdout);
        return ws::cli::kExitOk;
    }
    const std::vector<std::string> rest(argv + 2, argv + argc);
    for (const Command& c : kCommands) {
        if (command == c.name) return c.run(rest);
    }
    return ws::cli::fail(ws::cli::kExitUsage, "unknown command '" + command + "' (see weightstream --help)");
}
