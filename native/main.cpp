// SPDX-License-Identifier: MIT
// weightstream: the command-line tool (ARCHITECTURE.md, "CLI").
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "usage.h"

namespace {

struct Command {
    const char* name;
    int (*run)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"info", ws::cli::cmd_info},       {"tensors", ws::cli::cmd_tensors}, {"verify", ws::cli::cmd_verify},
    {"dump", ws::cli::cmd_dump},       {"stats", ws::cli::cmd_stats},     {"hash", ws::cli::cmd_hash},
    {"convert", ws::cli::cmd_convert}, {"bench", ws::cli::cmd_bench},     {"quantize", ws::cli::cmd_quantize},
    {"diff", ws::cli::cmd_diff},       {"scan", ws::cli::cmd_scan},
};

// Takes --color[=WHEN] out of args (it may stand before or after the command); false on a bad WHEN.
bool take_colour_option(std::vector<std::string>* args) {
    for (size_t i = 0; i < args->size();) {
        const std::string& a = (*args)[i];
        if (a != "--color" && a.rfind("--color=", 0) != 0) {
            ++i;
            continue;
        }
        const std::string when = a == "--color" ? "always" : a.substr(8);
        if (when == "auto") {
            ws::cli::set_colour_mode(ws::cli::ColourMode::kAuto);
        } else if (when == "always") {
            ws::cli::set_colour_mode(ws::cli::ColourMode::kAlways);
        } else if (when == "never") {
            ws::cli::set_colour_mode(ws::cli::ColourMode::kNever);
        } else {
            ws::cli::fail(ws::cli::kExitUsage, "--color takes auto, always or never, not '" + when + "'");
            return false;
        }
        args->erase(args->begin() + static_cast<std::ptrdiff_t>(i));
    }
    return true;
}

bool wants_help(const std::vector<std::string>& args) {
    for (const std::string& a : args) {
        if (a == "--help" || a == "-h") return true;
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!take_colour_option(&args)) return ws::cli::kExitUsage;
    if (args.empty()) {
        std::fputs(ws::cli::overview_text().c_str(), stderr);
        return ws::cli::kExitUsage;
    }
    const std::string command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "--help" || command == "-h" || command == "help") {
        if (command == "help" && !rest.empty()) {
            const ws::cli::CommandHelp* help = ws::cli::find_help(rest[0]);
            if (!help) {
                return ws::cli::fail(ws::cli::kExitUsage,
                                     "unknown command '" + rest[0] + "' (see weightstream --help)");
            }
            std::fputs(ws::cli::command_help_text(*help).c_str(), stdout);
            return ws::cli::kExitOk;
        }
        std::fputs(ws::cli::overview_text().c_str(), stdout);
        return ws::cli::kExitOk;
    }
    for (const Command& c : kCommands) {
        if (command != c.name) continue;
        if (wants_help(rest)) {
            std::fputs(ws::cli::command_help_text(*ws::cli::find_help(command)).c_str(), stdout);
            return ws::cli::kExitOk;
        }
        ws::cli::set_command(command);
        return c.run(rest);
    }
    return ws::cli::fail(ws::cli::kExitUsage, "unknown command '" + command + "' (see weightstream --help)");
}
