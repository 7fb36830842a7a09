// SPDX-License-Identifier: MIT
// What the subcommands share: exit statuses, the one-line error format, argument parsing, loading.
#pragma once

#include <string>
#include <vector>

#include "io/model.h"
#include "weightstream/regex.h"

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

// The command being run ("dump"; "" before one is chosen): its usage is what usage errors print.
void set_command(const std::string& name);
// Prints "weightstream: error: <message>" ("CMD: missing or extra arguments" when empty), then the running
// command's synopsis and where its help is, to stderr; returns kExitUsage.
int usage_error(const std::string& message = "");

// Splits argv; `valued` lists the options that take a value. Returns false (after printing a usage
// error with the command's synopsis) on an unknown option or a missing value.
bool parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued, Args* out);

// Colour of what the CLI prints: kAuto colours a stream that is a terminal when NO_COLOR is unset or empty
// (no-color.org); --color=always|never (main.cpp) overrides both.
enum class ColourMode { kAuto, kAlways, kNever };
void set_colour_mode(ColourMode mode);
bool colour_enabled(int fd);
// s wrapped in the SGR code `sgr` ("31" red) and a reset when colour_enabled(fd), else s unchanged.
std::string paint(int fd, const char* sgr, const std::string& s);

// Prints "weightstream: error: <message>" to stderr (through printable()) and returns status.
int fail(int status, const std::string& message);
// Prints "weightstream: warning: <message>" to stderr (through printable()).
void warn(const std::string& message);
// A load error in the one-line format (without "weightstream: error: ").
std::string load_error_text(const LoadError& error);
// Prints a load error in the one-line format and returns its exit status (1 invalid, 3 I/O).
int fail_load(const LoadError& error);
// The end of every command: stdout flushed and closed, and the exit status. Every line a command prints goes
// through stdout's buffer, so a write that failed on the way (a full disk, /dev/full, a pipe closed while
// SIGPIPE is ignored) left the stream's error flag set, and the last bytes leave at this flush; a close can fail
// too (NFS). Any of these: a message on stderr ("the output is incomplete") and kExitIo when the command
// otherwise succeeded (its own status when it had already failed).
int finish_stdout(int status);
// A command that reported its own failed write to stdout: finish_stdout says nothing more.
void stdout_failure_reported();
// "FILE: code: what (byte N)" for an invalid-input status (the error line is "weightstream: error: " + this).
std::string describe(const std::string& file, const Status& s);

// Loads the model for a subcommand; on failure prints the error and sets *exit_status.
bool load(const std::string& path, bool strict, LoadedModel* model, int* exit_status);

// A decimal number without sign; false when s is anything else or too large.
bool parse_u64(const std::string& s, uint64_t* out);
// --rows as a Python slice of row numbers: "START:STOP" with either end left out ("-8:", ":4", ":"), negative
// numbers counted from the end; or "I", the single row I. No step. As numpy does, the ends of a slice are
// clamped to the rows there are (an empty slice is empty output), while a single row must exist.
struct RowSlice {
    bool single = false;  // "I"
    bool has_start = false, has_stop = false;
    int64_t start = 0, stop = 0;

    // The rows [*first, *first + *count) of a tensor of `total` rows; false when a single row is outside them.
    bool resolve(uint64_t total, uint64_t* first, uint64_t* count) const;
};
// false when s is not such a slice.
bool parse_rows(const std::string& s, RowSlice* out);

// --filter PATTERN: a glob matched against the whole tensor name ("blk.*.attn_q.weight": * any run of
// characters, dots included; ? one character; [abc], [a-z], [!a] one of a set; \ quotes the next), or, when
// written /.../, a regular expression searched for anywhere in the name (as diff --tensors): the project's
// linear-time engine (weightstream/regex.h), so a long name or a pattern like (.*)*x costs time linear in the
// name, never a backtracking blow-up or a recursion per character.
class TensorFilter {
public:
    // false (with *error) when the pattern is not a valid glob or regex (regex_error() words the latter).
    bool parse(const std::string& pattern, std::string* error);
    bool matches(const std::string& name) const;

private:
    bool is_regex_ = false;
    std::string glob_;
    Regex regex_;
};

// The usage error for a regular expression the engine refuses: "OPTION: bad regular expression 'PATTERN': WHY at
// byte N" (WHY from the engine: a backreference, a look-behind, ... or a pattern beyond its limits).
std::string regex_error(const std::string& option, const std::string& pattern, const Status& status);

// "1 tensor", "2 tensors", "1,024 tensors"; `many` defaults to one + "s".
std::string counted(uint64_t n, const std::string& one, const std::string& many = "");

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
int cmd_split(const std::vector<std::string>& argv);
int cmd_merge(const std::vector<std::string>& argv);
int cmd_tokenize(const std::vector<std::string>& argv);
int cmd_detokenize(const std::vector<std::string>& argv);

}  // namespace ws::cli
