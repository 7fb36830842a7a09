// SPDX-License-Identifier: MIT
// What a command's I/O cost, the package's model.metrics (wasm/js/metrics.js) for the CLI: one set of
// counters per process (a command's models, diff's two, with their split parts and shards count together),
// filled by http_source.cpp (every request), model.cpp (header bytes served from the header cache) and the
// commands that decode (stats, hash, diff). `--json` output prints them as "io" (io_json()); `--trace FILE`
// writes every request and every decoded tensor as a Chrome trace-event span (write_trace()). Thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ws {

struct IoOptions {
    bool io = false;         // --io: print "io" in --json output for a local model too
    std::string trace_path;  // --trace FILE; empty: no trace
};
IoOptions& io_options();

// Microseconds on a steady clock since the process started (the trace's time base).
uint64_t io_now_us();

// One HTTP request: [from, to) asked for (ranged false: the whole file), the final status, the body bytes
// received, when it started, how long it took and how long to its first byte (microseconds).
struct RequestRecord {
    std::string file;  // the URL's file name (no host, query or user:password: nothing secret)
    bool ranged = true;
    uint64_t from = 0, to = 0;
    long status = 0;
    uint64_t bytes = 0;
    uint64_t start_us = 0, dur_us = 0, first_byte_us = 0;
    bool conditional = false;  // a header-cache revalidation (If-None-Match / If-Modified-Since)
};
void record_request(const RequestRecord& r);
void record_retry();
void record_bytes_from_cache(uint64_t bytes);
// One tensor's stored bytes decoded (and summarised or hashed) by a command, from start_us for dur_us.
void record_decode(const std::string& tensor, const std::string& dtype, uint64_t bytes, uint64_t start_us,
                   uint64_t dur_us);

// True when any request was made (the model is remote).
bool io_used_network();
// {"requests", "bytes_fetched", "bytes_from_cache", "retries", "time_to_first_byte_ms" (null without a
// request), "io_ms", "decoded_bytes", "decode_ms", "decode_gbps" (null without decode time)}.
nlohmann::json io_json();
// Whether a command's --json output gets "io": the model was read over HTTP, or --io was given.
bool io_in_json();
// Writes the trace to io_options().trace_path (atomically, via OutputFile); false with *error set.
// Whether --trace may write `path`: a new file, or one holding a trace (its first byte '{'); anything else is
// never replaced (a model given there by mistake). False with *why.
bool trace_path_usable(const std::string& path, std::string* why);
bool write_trace(std::string* error);

}  // namespace ws
