// SPDX-License-Identifier: MIT
// The verdict of `verify` as a value: what `verify` prints and `scan` reports for each model, from one
// function so the two cannot drift apart.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "io/model.h"
#include "weightstream/verify_job.h"

namespace ws::cli {

struct VerifyOptions {
    bool decode = true;       // false: the checks before decoding only (strict header, tensor types, ranges)
    unsigned threads = 1;     // decode threads
    bool progress = true;     // a progress bar on a terminal
    bool find_zeros = false;  // list the tensors whose every decoded value is zero (needs decode)
};

struct Verdict {
    int status = kExitOk;  // kExitOk, kExitInvalid (the model is invalid) or kExitIo (a file cannot be read)
    // When not ok: the code (a source error's, is_source_error(), for a file that cannot be read: io, http,
    // source_changed, ...), the file it is in, the byte offset and the field (Status::what; not for a source
    // error), and the message: the error line verify prints, without "weightstream: error: " (already passed
    // through printable()).
    Error code = Error::kOk;
    std::string file;
    uint64_t offset = 0;
    std::string what;
    std::string message;
    std::vector<std::string> warnings;  // verify's warning lines, without "weightstream: warning: " (printable)
    bool loaded = false;                // the model's header loaded (*model holds it)
    LoadError load_error;               // when it did not
    size_t decoded = 0;                 // tensors decoded
    std::vector<ScaleFinding> scales;   // with decode (VerifyJob's)
    std::vector<std::string> zeros;     // with find_zeros: names of the all-zero tensors, in tensor order

    bool ok() const { return status == kExitOk; }
};

// Verifies the model opened from `source` (through load_model, strict) as `verify` does: every structural
// check, every tensor's type and byte range, then (options.decode) every tensor decoded, with NaN/Inf block
// scales as warnings. Prints nothing (but the progress bar). *model holds the loaded model afterwards (when
// verdict.loaded). Safe on untrusted files: every problem is a verdict.
Verdict verify_model(const std::string& source, const VerifyOptions& options, LoadedModel* model);

// The verdict's "verdict" as scan's lines and verify --json give it: "ok" or the code's error_name().
std::string verdict_name(const Verdict& v);
// The verdict's "error" as scan's lines and verify --json give it: null when ok, else {file, offset, what,
// message} (offset and what null for a source error).
nlohmann::json verdict_error_json(const Verdict& v);
// (*j)[key] = value, and when value is not UTF-8 (a path's bytes), also (*j)[key + "_hex"] = its bytes in hex:
// JSON prints such a string with U+FFFD, so two paths that differ in those bytes would print the same.
void set_path(nlohmann::json* j, const std::string& key, const std::string& value);

}  // namespace ws::cli
