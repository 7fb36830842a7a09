// SPDX-License-Identifier: MIT
#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cli/cli.h"

namespace ws::cli {
namespace {

constexpr auto kFirstDrawAfter = std::chrono::milliseconds(300);
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);

int terminal_width() {
    struct winsize w;
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40) return w.ws_col;
    return 80;
}

}  // namespace

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
    finish();
}

void Progress::add(uint64_t bytes) {
    done_ += bytes;
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < kFirstDrawAfter || (drawn_ && now - last_draw_ < kRedrawEvery)) return;
    last_draw_ = now;
    draw();
}

void Progress::draw() {
    const double fraction = total_ ? std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_)) : 1.0;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const uint64_t rate = seconds > 0 ? static_cast<uint64_t>(static_cast<double>(done_) / seconds) : 0;
    const std::string numbers = human_bytes(done_) + " / " + human_bytes(total_) + "  " + human_bytes(rate) + "/s";
    char percent[8];
    std::snprintf(percent, sizeof percent, "%3d%%", static_cast<int>(fraction * 100));
    // label [=====>     ] 42%  1.2 GiB / 2.8 GiB  850.0 MiB/s, fitted to the terminal.
    const int fixed = static_cast<int>(label_.size() + numbers.size()) + 12;
    const int bar = std::max(10, std::min(50, terminal_width() - 1 - fixed));
    const int filled = static_cast<int>(fraction * bar);
    std::string line = "\r" + label_ + " [";
    for (int i = 0; i < bar; ++i) line += i < filled ? '=' : (i == filled ? '>' : ' ');
    line += "] " + std::string(percent) + "  " + numbers + "\x1b[K";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    drawn_ = true;
}

void Progress::finish() {
    if (!drawn_) return;
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
}

}  // namespace ws::cli
