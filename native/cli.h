// SPDX-License-Identifier: MIT
// What the subcommands share: exit statuses, the one-line error format, argument parsing, loading.
#pragma once

#include <string>
#include <vector>

#include "model.h"

namespace ws::cli {

// Exit statuses (ARCHITECTURE.md).
constexpr int kExitOk = 0;
constexpr int kExitInvalid = 1;  // the input file is invalid or unsupported
constexpr int kExitUsage = 2;
constexpr int kExitIo = 3;  // missing file, no permission, disk full

// Parsed command line of one subcommand: positional arguments and --options (with or without value).
struct Args {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::string>> options;  // {"--json", ""}, {"--as", "f16"}

    bool has(const std::string& name) const;
    std::string get(const std::string& name, const std::string& fallback = "") const;
};

// Splits argv; `valued` lists the options that take a value. Returns false (after printing a usage
// error) on an unknown option or a missing value.
bool parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued, Args* out);

// Prints "weightstream: error: <message>" to stderr (through printable()) and returns status.
int fail(int status, const std::string& message);
// Prints "weightstream: warning: <message>" to stderr (through printable()).
void warn(const std::string& message);
// A load error in the one-line format (without "weightstream: error: ").
std::string load_error_text(const LoadError& error);
// Prints a load error in the one-line format and returns its exit status (1 invalid, 3 I/O).
int fail_load(const LoadError& error);
// "FILE: code: what (byte N)" for an invalid-input status (the error line is "weightstream: error: " + this).
std::string describe(const std::string& file, const Status& s);

// Loads the model for a subcommand; on failure prints the error and sets *exit_status.
bool load(const std::string& path, bool strict, LoadedModel* model, int* exit_status);

// A decimal number without sign; false when s is anything else or too large.
bool parse_u64(const std::string& s, uint64_t* out);
// "START:COUNT" (row numbers) -> start, count.
bool parse_rows(const std::string& s, uint64_t* start, uint64_t* count);

bool ends_with(const std::string& s, const std::string& suffix);

// Human-friendly numbers: 1234567 -> "1,234,567"; bytes -> "1.2 MiB".
std::string with_commas(uint64_t n);
std::string human_bytes(uint64_t n);
// A file string made safe for a terminal: C0/DEL as \xNN (\n, \t), C1 and bidirectional controls as \uNNNN,
// bytes that are not UTF-8 as \xNN; cut to about max_bytes (never inside a character) with a note.
std::string printable(const std::string& s, size_t max_bytes);

int cmd_info(const std::vector<std::string>& argv);
int cmd_tensors(const std::vector<std::string>& argv);
int cmd_verify(const std::vector<std::string>& argv);
int cmd_dump(const std::vector<std::string>& argv);
int cmd_stats(const std::vector<std::string>& argv);
int cmd_hash(const std::vector<std::string>& argv);
int cmd_convert(const std::vector<std::string>& argv);
int cmd_bench(const std::vector<std::string>& argv);
int cmd_quantize(const std::vector<std::string>& argv);
int cmd_diff(const std::vector<std::string>& argv);
int cmd_scan(const std::vector<std::string>& argv);
int cmd_edit(const std::vector<std::string>& argv);

}  // namespace ws::cli
