// SPDX-License-Identifier: MIT
#include "cli.h"

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace ws::cli {

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
                    fail(kExitUsage, "option " + name + " needs a value");
                    return false;
                }
                value = argv[++i];
            }
            out->options.push_back({name, value});
        } else {
            fail(kExitUsage, "unknown option " + a + " (see weightstream --help)");
            return false;
        }
    }
    return true;
}

int fail(int status, const std::string& message) {
    // Messages quote names and paths from the input: escaped here once more, so none reaches the terminal
    // raw (escaping is idempotent: escaped text holds no control).
    std::fprintf(stderr, "weightstream: error: %s\n", printable(message, SIZE_MAX).c_str());
    return status;
}

void warn(const std::string& message) {
    std::fprintf(stderr, "weightstream: warning: %s\n", printable(message, SIZE_MAX).c_str());
}

std::string describe(const std::string& file, const Status& s) {
    return file + ": " + error_name(s.code) + ": " + s.what + " (byte " + std::to_string(s.offset) + ")";
}

std::string load_error_text(const LoadError& error) {
    if (error.io) return error.file + ": " + error.message;
    // The model plan's errors come with the core's text (the package shows the same) in place of the field.
    if (!error.message.empty()) {
        return error.file + ": " + error_name(error.status.code) + ": " + error.message + " (byte " +
               std::to_string(error.status.offset) + ")";
    }
    return describe(error.file, error.status);
}

int fail_load(const LoadError& error) {
    return fail(error.io ? kExitIo : kExitInvalid, load_error_text(error));
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

bool parse_rows(const std::string& s, uint64_t* start, uint64_t* count) {
    const size_t colon = s.find(':');
    return colon != std::string::npos && parse_u64(s.substr(0, colon), start) && parse_u64(s.substr(colon + 1), count);
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace ws::cli
