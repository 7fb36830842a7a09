// SPDX-License-Identifier: MIT
// The CLI's help: one entry per command, each command's text in one place (usage.cpp). `weightstream --help`
// prints the overview (every synopsis and summary), `weightstream CMD --help` (-h, `weightstream help CMD`) that
// command's whole text, and a usage error its synopsis.
#pragma once

#include <string>

namespace ws::cli {

struct CommandHelp {
    const char* name;      // "dump"
    const char* synopsis;  // "weightstream dump FILE TENSOR [...]", a line per form (no trailing newline)
    const char* summary;   // one line for the overview
    const char* details;   // the options and outputs, lines of text ending in a newline
};

// The entry of a command, or nullptr.
const CommandHelp* find_help(const std::string& name);
// What `weightstream --help` prints.
std::string overview_text();
// What `weightstream CMD --help` prints.
std::string command_help_text(const CommandHelp& help);

}  // namespace ws::cli
