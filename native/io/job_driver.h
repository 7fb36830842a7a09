// SPDX-License-Identifier: MIT
// The native driver of the core's jobs (weightstream/job.h): every command that runs a job runs it here. It
// feeds each step the bytes it asks for — a local file's range read into a buffer (pread: MappedFile::read_at
// says why not the mapping), the range fetched for a file at a URL, a stream's next bytes —, runs the step's
// parts on up to `threads` threads (the job's bytes do not depend on how many), and hands the step's output to
// `write` in order (with several threads, on a thread of its own while the next step runs). While a step runs,
// the inputs of the step after it (JobStep::next_inputs) are read on a thread of their own, those in files at
// URLs always (the network and the work overlap), local ones with several threads (memory: two steps' inputs;
// the page cache is the kernel's, so a model read front to back never becomes resident in the process).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "io/model.h"
#include "weightstream/job.h"

namespace ws {

// A job's source: file `file` of `model` (a job's ByteRange::source indexes a list of these).
struct JobSource {
    const LoadedModel* model = nullptr;
    size_t file = 0;
    // Set: the file is a stream (a pipe, a server that ignores Range), this one, read front to back: the job reads
    // it in offset order (hash). Else a stream's ranges are not_seekable.
    MappedFile* stream = nullptr;
};

// The sources of a job over one model: its files, in TensorInfo::file_index order.
std::vector<JobSource> sources_of(const LoadedModel& model);

struct DriveOptions {
    unsigned threads = 1;
    // The output, in order, with the output file it belongs to (JobStep::output); false stops the run (kOutput:
    // the caller knows why). With threads > 1 it is called on a writer thread of the driver's (one call at a time,
    // all before drive() returns) with a copy of the step's output, while the next step runs.
    std::function<bool(uint32_t output, const uint8_t*, size_t)> write;
    // After each step: the step, done (its work counts toward job.total_work()).
    std::function<void(const JobStep&)> progress;
};

struct DriveResult {
    enum class Kind { kOk, kJob, kSource, kOutput } kind = Kind::kOk;
    Status status;        // kJob: the job's error
    int64_t tensor = -1;  // kJob: the step's tensor (JobStep::tensor), -1 if none
    uint32_t source = 0;  // kJob, kSource: the source of the step's first input (or the one that failed)
    LoadError load;       // kSource: why a source could not be read; kJob after an unreadable range: the read's
                          // error (its file, and where it ends)
    bool ok() const { return kind == Kind::kOk; }
};

// Runs `job` to its end over `sources`.
DriveResult drive(Job& job, const std::vector<JobSource>& sources, const DriveOptions& options);

}  // namespace ws
