// SPDX-License-Identifier: MIT
#include "cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/usage.h"
#include "io/source_error.h"

namespace ws::cli {
namespace {

std::string g_command;                         // set_command()
ColourMode g_colour_mode = ColourMode::kAuto;  // set_colour_mode()

}  // namespace

void set_command(const std::string& name) {
    g_command = name;
}

int usage_error(const std::string& message) {
    fail(kExitUsage, message.empty() ? g_command + ": missing or extra arguments" : message);
    const CommandHelp* help = find_help(g_command);
    if (!help) {
        std::fputs("Try 'weightstream --help'.\n", stderr);
        return kExitUsage;
    }
    // Our own text, printed as it is (fail() would escape its newlines).
    std::fprintf(stderr, "usage: %s\nTry 'weightstream %s --help' for its options.\n", help->synopsis, help->name);
    return kExitUsage;
}

void set_colour_mode(ColourMode mode) {
    g_colour_mode = mode;
}

bool colour_enabled(int fd) {
    if (g_colour_mode != ColourMode::kAuto) return g_colour_mode == ColourMode::kAlways;
    const char* no_colour = std::getenv("NO_COLOR");
    return ::isatty(fd) == 1 && (no_colour == nullptr || no_colour[0] == '\0');
}

std::string paint(int fd, const char* sgr, const std::string& s) {
    return colour_enabled(fd) ? std::string("\x1b[") + sgr + "m" + s + "\x1b[0m" : s;
}

bool Args::has(const std::string& name) const {
    for (const auto& o : options) {
        if (o.first == name) return true;
    }
    return false;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
    for (const auto& o : options) {
        if (o.first == name) return o.second;
    }
    return fallback;
}

bool parse_args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued, Args* out) {
    auto contains = [](const std::vector<std::string>& list, const std::string& s) {
        for (const std::string& x : list) {
            if (x == s) return true;
        }
        return false;
    };
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.size() < 2 || a[0] != '-' || a == "-") {
            out->positional.push_back(a);
            continue;
        }
        std::string name = a, value;
        const size_t eq = a.find('=');
        if (eq != std::string::npos) {
            name = a.substr(0, eq);
            value = a.substr(eq + 1);
        }
        if (contains(flags, name) && eq == std::string::npos) {
            out->options.push_back({name, ""});
        } else if (contains(valued, name)) {
            if (eq == std::string::npos) {
                if (i + 1 >= argv.size()) {
                    usage_error("option " + name + " needs a value");
                    return false;
                }
                value = argv[++i];
            }
            out->options.push_back({name, value});
        } else {
            usage_error("unknown option " + a);
            return false;
        }
    }
    return true;
}

int fail(int status, const std::string& message) {
    // Messages quote names and paths from the input: escaped here once more, so none reaches the terminal
    // raw (escaping is idempotent: escaped text holds no control).
    std::fprintf(stderr, "weightstream: %s: %s\n", paint(STDERR_FILENO, "1;31", "error").c_str(),
                 printable(message, SIZE_MAX).c_str());
    return status;
}

void warn(const std::string& message) {
    std::fprintf(stderr, "weightstream: %s: %s\n", paint(STDERR_FILENO, "1;33", "warning").c_str(),
                 printable(message, SIZE_MAX).c_str());
}

std::string describe(const std::string& file, const Status& s) {
    return file + ": " + error_name(s.code) + ": " + error_description(s.code) + ": " + s.what + " (byte " +
           std::to_string(s.offset) + ")";
}

std::string load_error_text(const LoadError& error) {
    if (error.source_failed()) return source_error_text(error.file, error.status.code, error.message);
    // The model plan's errors come with the core's text (the package shows the same) in place of the field.
    if (!error.message.empty()) {
        return error.file + ": " + error_name(error.status.code) + ": " + error_description(error.status.code) + ": " +
               error.message + " (byte " + std::to_string(error.status.offset) + ")";
    }
    return describe(error.file, error.status);
}

namespace {
bool g_stdout_failure_reported = false;
}  // namespace

void stdout_failure_reported() {
    g_stdout_failure_reported = true;
}

int finish_stdout(int status) {
    errno = 0;
    const bool flushed = std::fflush(stdout) == 0;
    int error = errno;
    const bool failed_before = std::ferror(stdout) != 0;
    // fclose, not close: the stream must not be flushed again at exit (its buffer is gone with it).
    if (std::fclose(stdout) != 0 && error == 0) error = errno;
    if ((flushed && !failed_before && error == 0) || g_stdout_failure_reported) return status;
    const std::string why = error != 0 ? std::strerror(error) : "a write failed";
    fail(kExitIo, "cannot write standard output: " + why + " (the output is incomplete)");
    return status == kExitOk ? kExitIo : status;
}

int fail_load(const LoadError& error) {
    return fail(error.source_failed() ? kExitIo : kExitInvalid, load_error_text(error));
}

bool load(const std::string& path, bool strict, LoadedModel* model, int* exit_status) {
    ParseOptions options;
    options.strict = strict;
    LoadError error;
    if (load_model(path, options, model, &error)) return true;
    *exit_status = fail_load(error);
    return false;
}

std::string with_commas(uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string human_bytes(uint64_t n) {
    static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(n);
    int unit = 0;
    while (v >= 1024 && unit < 5) {
        v /= 1024;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[unit]);
    return buf;
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 when the bytes there are not one
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short). *cp gets its code point.
size_t utf8_sequence(const std::string& s, size_t i, uint32_t* cp) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (s.size() - i < n) return 0;
    for (size_t k = 1; k < n; ++k) {
        const unsigned char d = static_cast<unsigned char>(s[i + k]);
        if ((d & 0xc0) != 0x80) return 0;
        v = v << 6 | (d & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return n;
}

// Code points a terminal acts on instead of showing: C0 and DEL, C1 (U+0080..U+009F: U+009B is CSI,
// which some terminals take as ESC [), and the bidirectional controls that reorder what follows them
// (a name can make the rest of the line read backwards, "Trojan Source"), with the line and paragraph
// separators.
bool is_terminal_control(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string printable(const std::string& s, size_t max_bytes) {
    std::string out;
    size_t i = 0;
    while (i < s.size() && out.size() < max_bytes) {
        uint32_t cp = 0;
        const size_t n = utf8_sequence(s, i, &cp);
        char buf[16];
        if (n == 0) {
            // Not UTF-8: the raw byte (0x9b alone is CSI to a terminal in an 8-bit mode).
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i]));
            out += buf;
            ++i;
            continue;
        }
        if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (is_terminal_control(cp)) {
            std::snprintf(buf, sizeof buf, cp < 0x80 ? "\\x%02x" : "\\u%04x", static_cast<unsigned>(cp));
            out += buf;
        } else {
            out.append(s, i, n);  // whole sequences only, so a cut never splits one
        }
        i += n;
    }
    if (i < s.size()) out += "... (" + with_commas(s.size()) + " bytes)";
    return out;
}

bool parse_u64(const std::string& s, uint64_t* out) {
    if (s.empty() || s[0] < '0' || s[0] > '9') return false;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (*end != '\0' || errno != 0) return false;
    *out = v;
    return true;
}

namespace {

// A decimal number with an optional '-' that fits int64_t.
bool parse_i64(const std::string& s, int64_t* out) {
    const bool negative = !s.empty() && s[0] == '-';
    uint64_t magnitude = 0;
    if (!parse_u64(negative ? s.substr(1) : s, &magnitude)) return false;
    if (magnitude > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return true;
}

// Python's rule for one end of a slice: negative from the end, then clamped to [0, total].
uint64_t slice_end(int64_t v, uint64_t total) {
    if (v < 0) {
        const uint64_t back = static_cast<uint64_t>(-(v + 1)) + 1;  // -v without overflow at INT64_MIN
        return back >= total ? 0 : total - back;
    }
    return std::min<uint64_t>(static_cast<uint64_t>(v), total);
}

}  // namespace

bool parse_rows(const std::string& s, RowSlice* out) {
    RowSlice r;
    const size_t colon = s.find(':');
    if (colon == std::string::npos) {
        r.single = true;
        if (!parse_i64(s, &r.start)) return false;
        *out = r;
        return true;
    }
    const std::string a = s.substr(0, colon), b = s.substr(colon + 1);
    if (b.find(':') != std::string::npos) return false;  // no step
    r.has_start = !a.empty();
    r.has_stop = !b.empty();
    if ((r.has_start && !parse_i64(a, &r.start)) || (r.has_stop && !parse_i64(b, &r.stop))) return false;
    *out = r;
    return true;
}

bool RowSlice::resolve(uint64_t total, uint64_t* first, uint64_t* count) const {
    if (single) {
        if (start < 0 ? static_cast<uint64_t>(-(start + 1)) >= total : static_cast<uint64_t>(start) >= total) {
            return false;
        }
        *first = start < 0 ? total - (static_cast<uint64_t>(-(start + 1)) + 1) : static_cast<uint64_t>(start);
        *count = 1;
        return true;
    }
    const uint64_t a = has_start ? slice_end(start, total) : 0;
    const uint64_t b = has_stop ? slice_end(stop, total) : total;
    *first = a;
    *count = b > a ? b - a : 0;
    return true;
}

bool TensorFilter::parse(const std::string& pattern, std::string* error) {
    is_regex_ = pattern.size() >= 2 && pattern.front() == '/' && pattern.back() == '/';
    if (!is_regex_) {
        // A class must close and a backslash must quote something, so a typo is an error, not a silent miss.
        for (size_t i = 0; i < pattern.size(); ++i) {
            if (pattern[i] == '\\' && ++i == pattern.size()) {
                *error = "--filter: '" + pattern + "' ends in a lone backslash";
                return false;
            }
            if (pattern[i] != '[') continue;
            size_t j = i + 1;
            if (j < pattern.size() && pattern[j] == '!') ++j;
            if (j < pattern.size() && pattern[j] == ']') ++j;  // a leading ] is a member
            while (j < pattern.size() && pattern[j] != ']') ++j;
            if (j == pattern.size()) {
                *error = "--filter: '" + pattern + "' has a [ without its ]";
                return false;
            }
            i = j;
        }
        glob_ = pattern;
        return true;
    }
    Result<Regex> r = Regex::compile(pattern.substr(1, pattern.size() - 2));
    if (!r.ok()) {
        Status s = r.status();
        s.offset += 1;  // in the argument as typed, after its leading /
        *error = regex_error("--filter", pattern, s);
        return false;
    }
    regex_ = std::move(r).value();
    return true;
}

std::string regex_error(const std::string& option, const std::string& pattern, const Status& status) {
    std::string why = status.what;
    if (why.rfind("regex: ", 0) == 0) why.erase(0, 7);
    return option + ": bad regular expression '" + printable(pattern, 200) + "': " + why + " at byte " +
           std::to_string(status.offset) + " (the syntax: docs/ARCHITECTURE.md, \"Name patterns\")";
}

namespace {

// Whether the glob p matches all of s: iterative, backtracking only to the last '*' (linear in practice,
// never exponential).
bool glob_match(const std::string& p, const std::string& s) {
    size_t pi = 0, si = 0, star = std::string::npos, star_s = 0;
    auto one = [&](size_t at, char c, size_t* next) {  // the item of p at `at` against c; *next: after it
        if (p[at] == '?') {
            *next = at + 1;
            return true;
        }
        if (p[at] == '\\') {
            *next = at + 2;
            return p[at + 1] == c;
        }
        if (p[at] != '[') {
            *next = at + 1;
            return p[at] == c;
        }
        size_t j = at + 1;
        const bool negated = p[j] == '!';
        if (negated) ++j;
        bool found = false;
        for (bool first = true; first || p[j] != ']'; first = false) {
            if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
                found |= p[j] <= c && c <= p[j + 2];
                j += 3;
            } else {
                found |= p[j] == c;
                ++j;
            }
        }
        *next = j + 1;
        return found != negated;
    };
    while (si < s.size()) {
        size_t next = 0;
        if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            star_s = si;
        } else if (pi < p.size() && one(pi, s[si], &next)) {
            pi = next;
            ++si;
        } else if (star != std::string::npos) {
            pi = star + 1;
            si = ++star_s;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

}  // namespace

bool TensorFilter::matches(const std::string& name) const {
    if (!is_regex_) return glob_match(glob_, name);
    return regex_.search(name);
}

std::string counted(uint64_t n, const std::string& one, const std::string& many) {
    return with_commas(n) + " " + (n == 1 ? one : many.empty() ? one + "s" : many);
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace ws::cli
