// SPDX-License-Identifier: MIT
// weightstream: the command-line tool (ARCHITECTURE.md, "CLI").
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/usage.h"
#include "io/header_cache.h"
#include "io/http_source.h"
#include "io/io_metrics.h"

namespace {

struct Command {
    const char* name;
    int (*run)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"info", ws::cli::cmd_info},         {"tensors", ws::cli::cmd_tensors},
    {"verify", ws::cli::cmd_verify},     {"dump", ws::cli::cmd_dump},
    {"stats", ws::cli::cmd_stats},       {"hash", ws::cli::cmd_hash},
    {"convert", ws::cli::cmd_convert},   {"bench", ws::cli::cmd_bench},
    {"quantize", ws::cli::cmd_quantize}, {"diff", ws::cli::cmd_diff},
    {"scan", ws::cli::cmd_scan},         {"edit", ws::cli::cmd_edit},
    {"tokenize", ws::cli::cmd_tokenize}, {"detokenize", ws::cli::cmd_detokenize},
    {"split", ws::cli::cmd_split},       {"merge", ws::cli::cmd_merge},
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

// Takes the URL and I/O options (--header, --timeout, --no-cache, --io, --trace; anywhere among the command's
// arguments) out of args into http_options() and io_options(), for every command at once, and HF_TOKEN from
// the environment. False after a usage error.
bool take_http_options(std::vector<std::string>* args) {
    ws::HttpOptions& http = ws::http_options();
    ws::IoOptions& io = ws::io_options();
    for (size_t i = 0; i < args->size();) {
        const std::string a = (*args)[i];
        if (a == "--io" || a == "--no-cache") {
            if (a == "--io") io.io = true;
            if (a == "--no-cache") ws::set_header_cache_disabled(true);
            args->erase(args->begin() + static_cast<std::ptrdiff_t>(i));
            continue;
        }
        if (a != "--header" && a != "--timeout" && a != "--trace") {
            ++i;
            continue;
        }
        if (i + 1 >= args->size()) {
            ws::cli::fail(ws::cli::kExitUsage, a + " needs a value");
            return false;
        }
        const std::string v = (*args)[i + 1];
        args->erase(args->begin() + static_cast<std::ptrdiff_t>(i), args->begin() + static_cast<std::ptrdiff_t>(i + 2));
        if (a == "--trace") {
            if (v.empty()) {
                ws::cli::fail(ws::cli::kExitUsage, "--trace needs a file name");
                return false;
            }
            std::string why;
            if (!ws::trace_path_usable(v, &why)) {
                ws::cli::fail(ws::cli::kExitUsage, why);
                return false;
            }
            io.trace_path = v;
        } else if (a == "--header") {
            if (v.find(':') == std::string::npos || v.find_first_of("\r\n") != std::string::npos) {
                ws::cli::fail(ws::cli::kExitUsage, "--header needs 'Name: value' (its value is not shown)");
                return false;
            }
            http.headers.push_back(v);
        } else {
            uint64_t seconds = 0;
            if (!ws::cli::parse_u64(v, &seconds) || seconds < 1 || seconds > 86400) {
                ws::cli::fail(ws::cli::kExitUsage, "--timeout needs seconds from 1 to 86400, not '" + v + "'");
                return false;
            }
            http.connect_timeout_ms = static_cast<long>(seconds * 1000);
        }
    }
    if (const char* token = std::getenv("HF_TOKEN")) http.bearer_token = token;
    return true;
}

bool wants_help(const std::vector<std::string>& args) {
    for (const std::string& a : args) {
        if (a == "--help" || a == "-h") return true;
    }
    return false;
}

int run(int argc, char** argv) {
    // Before anything else: a version query loads and builds nothing (docs/SPEED.md, "Start-up").
    if (argc == 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-V") == 0)) {
        std::fputs("weightstream " WS_VERSION "\n", stdout);
        return ws::cli::kExitOk;
    }
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!take_colour_option(&args)) return ws::cli::kExitUsage;
    if (args.empty()) {
        std::fputs(ws::cli::overview_text().c_str(), stderr);
        return ws::cli::kExitUsage;
    }
    const std::string command = args[0];
    std::vector<std::string> rest(args.begin() + 1, args.end());
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
        if (!take_http_options(&rest)) return ws::cli::kExitUsage;
        const int status = c.run(rest);
        // The trace of a failed command too: it shows where the time went before the failure.
        std::string why;
        if (!ws::io_options().trace_path.empty() && !ws::write_trace(&why)) {
            return ws::cli::fail(ws::cli::kExitIo, why);
        }
        return status;
    }
    return ws::cli::fail(ws::cli::kExitUsage, "unknown command '" + command + "' (see weightstream --help)");
}

}  // namespace

int main(int argc, char** argv) {
    // Every exit passes through here: stdout's last bytes written and checked (ws::cli::finish_stdout).
    return ws::cli::finish_stdout(run(argc, argv));
}
