// SPDX-License-Identifier: MIT
// Shared helpers for the Catch2 tests: fixture paths and file loading.
#pragma once

#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weightstream/model_info.h"

namespace ws_test {

// Committed fixtures (tests/data) and the full reference corpus (../shared/testdata, present in CI).
inline std::string data_path(const std::string& rel) {
    return std::string(WS_TESTDATA) + "/" + rel;
}
inline std::string shared_path(const std::string& rel) {
    return std::string(WS_SHARED_TESTDATA) + "/" + rel;
}
inline bool file_exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

// One read of the whole file (a byte-by-byte istreambuf_iterator copy was most of some tests' time).
inline std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw std::runtime_error("cannot open fixture " + path);
    std::vector<uint8_t> bytes(static_cast<size_t>(in.tellg()));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
        throw std::runtime_error("cannot read fixture " + path);
    }
    return bytes;
}

inline nlohmann::json read_json(const std::string& path) {
    const std::vector<uint8_t> bytes = read_file(path);
    return nlohmann::json::parse(bytes.begin(), bytes.end());
}

// A tensor description for the writers: name, type and dims in ggml order (innermost first, up to 4).
inline ws::TensorInfo tensor(const std::string& name, ws::DType t, std::vector<int64_t> ne) {
    ws::TensorInfo info;
    info.name = name;
    info.dtype = t;
    info.n_dims = static_cast<uint32_t>(ne.size());
    for (size_t i = 0; i < ne.size(); ++i) info.ne[i] = ne[i];
    return info;
}

// How a run's cost grows with its text: the CPU seconds `run` takes on `unit` repeated to 1 MiB over those on
// 64 KiB. Linear work gives ~16 (up to ~30 when the small run's memory stays in the cache and the large run's does
// not), quadratic ~256: a 16x step keeps the two apart, where a 4x step's 4-8x (linear) and 16x (quadratic) came
// within a busy machine's noise. CPU time of this thread, the fastest of a few runs: the machine is shared, and a
// wall clock counts the time other processes hold the cores.
inline double time_growth(const std::function<void(const std::string&)>& run, const std::string& unit) {
    auto text_of = [&](size_t n) {
        std::string text;
        while (text.size() < n) text += unit;
        return text;
    };
    auto cpu_seconds = [] {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    };
    auto seconds = [&](const std::string& text) {
        const double t0 = cpu_seconds();
        run(text);
        return cpu_seconds() - t0;
    };
    // glibc gives blocks over its mmap threshold fresh pages each time, and moves the threshold up to the size of
    // what was freed (up to 32 MiB): a small run after a 1 MiB one found its memory faulted in already, the
    // 1 MiB run never did, and the page faults alone doubled the ratio. Keep every block in the heap meanwhile.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    const std::string small_text = text_of(size_t(64) << 10), large_text = text_of(size_t(1) << 20);
    double small = 1e30, large = 1e30;
    for (int i = 0; i < 3; ++i) {
        small = std::min(small, seconds(small_text));
        large = std::min(large, seconds(large_text));
    }
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
    mallopt(M_TRIM_THRESHOLD, 128 << 10);
    return large / std::max(small, 1e-6);
}

// Hex sha256 of bytes (OpenSSL).
std::string sha256_hex(const uint8_t* data, size_t size);

}  // namespace ws_test
