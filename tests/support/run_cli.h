// SPDX-License-Identifier: MIT
// Runs the built CLI (WS_CLI, the weightstream binary of this build tree) and captures what it prints.
#pragma once

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "test_util.h"

namespace ws_test {

struct CliResult {
    int status = -1;  // exit status
    std::string out;
    std::string err;
};

// Runs `weightstream <args>` through the shell (args are already shell-quoted by the caller).
// kill_after_s > 0: killed (SIGKILL, status 137) if still running then, for a test of something that may hang.
inline CliResult run_cli(const std::string& args, const std::string& stdin_redirect = "", int kill_after_s = 0) {
    char err_path[] = "/tmp/ws_cli_err_XXXXXX";
    const int fd = mkstemp(err_path);
    close(fd);
    const std::string limit = kill_after_s > 0 ? "timeout -s KILL " + std::to_string(kill_after_s) + " " : "";
    const std::string cmd = limit + WS_CLI + " " + args + " 2>" + err_path + stdin_redirect;
    CliResult r;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int raw = pclose(p);
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    const std::vector<uint8_t> err = read_file(err_path);
    r.err.assign(err.begin(), err.end());
    unlink(err_path);
    return r;
}

inline std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// A fresh temporary directory, removed by the destructor.
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/ws_test_XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempDir() { (void)!system(("rm -rf " + quote(path)).c_str()); }
    std::string file(const std::string& name) const { return path + "/" + name; }
};

// Entries of `dir` that are an output's temporary file (OutputFile names them OUT.tmp-RANDOM).
inline std::vector<std::string> temporary_files(const std::string& dir) {
    std::vector<std::string> found;
    if (DIR* d = opendir(dir.c_str())) {
        while (const dirent* e = readdir(d)) {
            if (std::string(e->d_name).find(".tmp") != std::string::npos) found.push_back(e->d_name);
        }
        closedir(d);
    }
    return found;
}

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
}

}  // namespace ws_test
