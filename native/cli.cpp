// SPDX-License-Identifier: MIT
#include "cli.h"

#include <cerrno>
#include <cinttypes>
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
    std::fprintf(stderr, "weightstream: error: %s\n", message.c_str());
    return status;
}

std::string describe(const std::string& file, const Status& s) {
    return file + ": " + error_name(s.code) + ": " + s.what + " (byte " + std::to_string(s.offset) + ")";
}

int fail_load(const LoadError& error) {
    if (error.io) return fail(kExitIo, error.file + ": " + error.message);
    // The model plan's errors come with the core's text (the package shows the same) in place of the field.
    if (!error.message.empty()) {
        return fail(kExitInvalid, error.file + ": " + error_name(error.status.code) + ": " + error.message + " (byte " +
                                      std::to_string(error.status.offset) + ")");
    }
    return fail(kExitInvalid, describe(error.file, error.status));
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

std::string printable(const std::string& s, size_t max_bytes) {
    std::string out;
    size_t i = 0;
    for (; i < s.size() && out.size() < max_bytes; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (i < s.size()) {
        // Do not cut a UTF-8 sequence in half.
        while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80) out.pop_back();
        if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xc0) out.pop_back();
        out += "... (" + with_commas(s.size()) + " bytes)";
    }
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
