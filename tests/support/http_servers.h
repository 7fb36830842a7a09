// SPDX-License-Identifier: MIT
// HTTP servers for the CLI's URL tests, each started on a free localhost port and stopped (by its process
// id) when the object goes: a real nginx (as tests/js/nginx.mjs starts it) serving a folder, with and without
// Range support, whose access log records every request; and tests/support/fault_server.py, which
// misbehaves on purpose (drops, 503, 429, no Range, a file replaced, redirects) and logs JSON lines.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/run_cli.h"

namespace ws_test {

inline int free_port() {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        close(s);
        throw std::runtime_error("no free port");
    }
    close(s);
    return ntohs(a.sin_port);
}

inline bool port_open(int port) {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    const bool open = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(s);
    return open;
}

inline std::string read_text(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::stringstream ss(text);
    for (std::string line; std::getline(ss, line);) {
        if (!line.empty()) lines.push_back(line);
    }
    return lines;
}

// A child process started with execv, killed and reaped by the destructor.
class Child {
public:
    explicit Child(const std::vector<std::string>& argv) {
        std::vector<char*> args;
        for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        pid_ = fork();
        if (pid_ == 0) {
            execv(args[0], args.data());
            _exit(127);
        }
    }
    ~Child() {
        if (pid_ > 0) {
            kill(pid_, SIGTERM);
            waitpid(pid_, nullptr, 0);
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    bool running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

private:
    pid_t pid_ = -1;
};

inline const char* nginx_path() {
    for (const char* p : {"/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"}) {
        if (access(p, X_OK) == 0) return p;
    }
    return nullptr;
}

// nginx serving `root` at / (with Range) and at /norange/ (`max_ranges 0`: every answer 200, the whole
// file). Its access log has one line per request: "$request $status $body_bytes_sent "$http_range"".
class Nginx {
public:
    explicit Nginx(const std::string& root) {
        for (const char* sub : {"body", "proxy", "fastcgi", "uwsgi", "scgi"}) mkdir(dir_.file(sub).c_str(), 0700);
        port_ = free_port();
        log_ = dir_.file("access.log");
        const std::string config = "daemon off; master_process off; worker_processes 1; pid " + dir_.file("nginx.pid") +
                                   "; error_log " + dir_.file("error.log") +
                                   " warn;\n"
                                   "events { worker_connections 64; }\n"
                                   "http { default_type application/octet-stream;\n"
                                   " log_format ws '$request $status $body_bytes_sent \"$http_range\"';\n"
                                   " access_log " +
                                   log_ + " ws;\n client_body_temp_path " + dir_.file("body") + "; proxy_temp_path " +
                                   dir_.file("proxy") + "; fastcgi_temp_path " + dir_.file("fastcgi") +
                                   "; uwsgi_temp_path " + dir_.file("uwsgi") + "; scgi_temp_path " + dir_.file("scgi") +
                                   ";\n"
                                   " server { listen 127.0.0.1:" +
                                   std::to_string(port_) + "; root " + root + "; location /norange/ { alias " + root +
                                   "/; max_ranges 0; } }\n}\n";
        std::ofstream(dir_.file("nginx.conf")) << config;
        std::ofstream(log_).close();
        child_.reset(
            new Child({nginx_path(), "-p", dir_.path, "-c", dir_.file("nginx.conf"), "-e", dir_.file("error.log")}));
        for (int i = 0; i < 400 && !port_open(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (!port_open(port_)) throw std::runtime_error("nginx did not start: " + read_text(dir_.file("error.log")));
    }

    std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
    void clear_log() const { std::ofstream(log_, std::ios::trunc).close(); }
    // The access log's lines since the last clear_log(). nginx writes a line when its response ends, which
    // may be just after the client has its bytes: read until two reads 50 ms apart agree.
    std::vector<std::string> log() const {
        std::vector<std::string> lines = lines_of(read_text(log_));
        for (int i = 0; i < 20; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            std::vector<std::string> again = lines_of(read_text(log_));
            if (again == lines) break;
            lines = std::move(again);
        }
        return lines;
    }

private:
    TempDir dir_;
    int port_ = 0;
    std::string log_;
    std::unique_ptr<Child> child_;
};

// The body bytes of an access log line ("GET /x HTTP/1.1 206 65536 "bytes=0-65535"").
inline uint64_t logged_bytes(const std::string& line) {
    std::stringstream ss(line);
    std::string method, path, proto, status;
    uint64_t bytes = 0;
    ss >> method >> path >> proto >> status >> bytes;
    return bytes;
}

// tests/support/fault_server.py serving `root` (see its modes there).
class FaultServer {
public:
    explicit FaultServer(const std::string& root) {
        const std::string port_file = dir_.file("port");
        log_ = dir_.file("log.jsonl");
        child_.reset(new Child({"/usr/bin/env", "python3", std::string(WS_TEST_SUPPORT) + "/fault_server.py", "--root",
                                root, "--port-file", port_file, "--log", log_}));
        for (int i = 0; i < 500 && access(port_file.c_str(), R_OK) != 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        port_ = std::stoi(read_text(port_file));
        for (int i = 0; i < 200 && !port_open(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }

    std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
    int port() const { return port_; }
    void clear_log() const { std::ofstream(log_, std::ios::trunc).close(); }
    std::vector<nlohmann::json> log() const {
        std::vector<nlohmann::json> entries;
        for (const std::string& line : lines_of(read_text(log_))) entries.push_back(nlohmann::json::parse(line));
        return entries;
    }

private:
    TempDir dir_;
    int port_ = 0;
    std::string log_;
    std::unique_ptr<Child> child_;
};

}  // namespace ws_test
