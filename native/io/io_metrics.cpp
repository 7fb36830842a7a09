// SPDX-License-Identifier: MIT
#include "io/io_metrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include "io/output_file.h"
#include "weightstream/model_json.h"

namespace ws {
namespace {

// One span of the trace: a request (cat "http") or a decoded tensor (cat "decode").
struct Span {
    std::string name, cat;
    uint64_t ts = 0, dur = 0;
    uint64_t tid = 0;
    nlohmann::json args;
};

struct Metrics {
    std::mutex mutex;
    uint64_t requests = 0, bytes_fetched = 0, bytes_from_cache = 0, retries = 0;
    bool first_byte_known = false;
    uint64_t first_byte_us = 0;  // the first request's time to its first byte
    uint64_t io_us = 0, decoded_bytes = 0, decode_us = 0;
    std::vector<Span> spans;  // kept only with --trace
};

Metrics& metrics() {
    static Metrics m;
    return m;
}

const std::chrono::steady_clock::time_point kStart = std::chrono::steady_clock::now();

// A small number per thread for the trace's "tid" (0 for the first thread that records).
uint64_t thread_number() {
    static std::atomic<uint64_t> next{0};
    thread_local const uint64_t mine = next++;
    return mine;
}

double ms(uint64_t us) {
    return static_cast<double>(us) / 1000.0;
}

}  // namespace

IoOptions& io_options() {
    static IoOptions options;
    return options;
}

uint64_t io_now_us() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - kStart).count());
}

void record_request(const RequestRecord& r) {
    Metrics& m = metrics();
    std::lock_guard<std::mutex> lock(m.mutex);
    ++m.requests;
    m.bytes_fetched += r.bytes;
    m.io_us += r.dur_us;
    if (!m.first_byte_known) {
        m.first_byte_known = true;
        m.first_byte_us = r.first_byte_us;
    }
    if (io_options().trace_path.empty()) return;
    Span s;
    const std::string range =
        r.ranged ? "bytes=" + std::to_string(r.from) + "-" + std::to_string(r.to == 0 ? 0 : r.to - 1) : "";
    s.name = "GET " + r.file + (r.ranged ? " " + range : "");
    s.cat = "http";
    s.ts = r.start_us;
    s.dur = r.dur_us;
    s.tid = thread_number();
    s.args = {{"file", r.file},
              {"range", r.ranged ? nlohmann::json(range) : nlohmann::json(nullptr)},
              {"status", r.status},
              {"bytes", r.bytes},
              {"time_to_first_byte_us", r.first_byte_us},
              {"conditional", r.conditional}};
    m.spans.push_back(std::move(s));
}

void record_retry() {
    Metrics& m = metrics();
    std::lock_guard<std::mutex> lock(m.mutex);
    ++m.retries;
}

void record_bytes_from_cache(uint64_t bytes) {
    Metrics& m = metrics();
    std::lock_guard<std::mutex> lock(m.mutex);
    m.bytes_from_cache += bytes;
}

void record_decode(const std::string& tensor, const std::string& dtype, uint64_t bytes, uint64_t start_us,
                   uint64_t dur_us) {
    Metrics& m = metrics();
    std::lock_guard<std::mutex> lock(m.mutex);
    m.decoded_bytes += bytes;
    m.decode_us += dur_us;
    if (io_options().trace_path.empty()) return;
    Span s;
    s.name = tensor;
    s.cat = "decode";
    s.ts = start_us;
    s.dur = dur_us;
    s.tid = thread_number();
    s.args = {{"dtype", dtype}, {"bytes", bytes}};
    m.spans.push_back(std::move(s));
}

bool io_used_network() {
    Metrics& m = metrics();
    std::lock_guard<std::mutex> lock(m.mutex);
    return m.requests > 0;
}

bool io_in_json() {
    return io_options().io || io_used_network();
}

nlohmann::json io_json() {
    Metrics& m = metrics();
    std::lock_guard<std::mutex> lock(m.mutex);
    return {
        {"requests", m.requests},
        {"bytes_fetched", m.bytes_fetched},
        {"bytes_from_cache", m.bytes_from_cache},
        {"retries", m.retries},
        {"time_to_first_byte_ms", m.first_byte_known ? nlohmann::json(ms(m.first_byte_us)) : nlohmann::json(nullptr)},
        {"io_ms", ms(m.io_us)},
        {"decoded_bytes", m.decoded_bytes},
        {"decode_ms", ms(m.decode_us)},
        {"decode_gbps", m.decode_us > 0 ? nlohmann::json(static_cast<double>(m.decoded_bytes) / m.decode_us / 1e3)
                                        : nlohmann::json(nullptr)}};
}

bool trace_path_usable(const std::string& path, std::string* why) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return true;  // a new file (or one OutputFile will explain)
    struct stat st;
    char first = '{';
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    const bool other = regular && st.st_size > 0 && (::read(fd, &first, 1) != 1 || first != '{');
    ::close(fd);
    if (other) *why = "--trace " + path + ": the file exists and is not a trace; not replaced (remove it first)";
    return !other;
}

bool write_trace(std::string* error) {
    if (!trace_path_usable(io_options().trace_path, error)) return false;
    nlohmann::json events = nlohmann::json::array();
    {
        Metrics& m = metrics();
        std::lock_guard<std::mutex> lock(m.mutex);
        for (const Span& s : m.spans) {
            events.push_back({{"name", s.name},
                              {"cat", s.cat},
                              {"ph", "X"},
                              {"ts", s.ts},
                              {"dur", s.dur},
                              {"pid", 1},
                              {"tid", s.tid},
                              {"args", s.args}});
        }
    }
    const std::string text = json_dump(nlohmann::json{{"traceEvents", std::move(events)}}) + "\n";
    OutputFile out;
    if (!out.open(io_options().trace_path, {}) || !out.write(text.data(), text.size()) || !out.commit()) {
        *error = out.error();
        return false;
    }
    return true;
}

}  // namespace ws
