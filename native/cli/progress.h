// SPDX-License-Identifier: MIT
// A one-line progress bar on stderr for long operations (convert, dump, stats, hash, verify). It draws only
// when stderr is a terminal, so pipes, logs and tests see nothing, and only once an operation has run for
// a moment, so quick commands do not flicker.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace ws::cli {

class Progress {
public:
    // `total` is in bytes (of input processed); `label` names the operation ("convert"). enabled = false
    // never draws (scan verifies several models at once and draws its own line).
    Progress(std::string label, uint64_t total, bool enabled = true);
    ~Progress();  // clears the bar
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // Adds `bytes` to the work done and redraws at most ten times a second. Call from one thread.
    void add(uint64_t bytes);
    // Replaces the label (quantize shows "quantize [3/29]", the tensor it is on).
    void set_label(std::string label) { label_ = std::move(label); }
    // Clears the bar (before printing a result or an error).
    void finish();

private:
    void draw();

    std::string label_;
    uint64_t total_;
    uint64_t done_ = 0;
    bool enabled_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace ws::cli
