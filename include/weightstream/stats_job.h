// SPDX-License-Identifier: MIT
// StatsJob: the statistics of tensors (stats.h) as a job (job.h), what `weightstream stats` and the package's
// model.stats() run. Each request is a tensor, or a window of its rows, and a bin count; the requests are worked
// through in order, each in steps of whole runs of kStatsRun floats (about step_bytes of input, the request's last
// step less). Part i of a step decodes and summarises its own runs, a run at a time, and keeps a histogram
// of its own; complete() adds the runs' summaries in order and, at the request's end, the parts' histograms, so
// the numbers are the same bit for bit for any number of parts and equal to one StatsAccumulator over the values.
//
// A request that cannot have statistics is settled when the job is made and gets no steps (its result says
// why); what to do about it is the caller's (the CLI fails on a named tensor, lists others with an error; the
// package rejects). A step that fails ends the job: a window that is not whole blocks (check_decodable()'s
// errors) and bytes outside the file (unreadable()), both reported at the tensor as the CLI always did.
//
// Sources: the model's files, numbered as TensorInfo::file_index.
// Memory: per part, one run of floats (256 KiB) and a histogram grid (128 KiB); the current request's
// accumulator and one summary per run of a step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/job.h"
#include "weightstream/model_info.h"
#include "weightstream/stats.h"

namespace ws {

// Input bytes a step reads by default (rounded down to whole runs, at least one run): the CLI's, whose steps are
// spans of a mapping or one Range request each.
constexpr uint64_t kStatsStepBytes = uint64_t(16) << 20;
// A step is cut into at most this many parts (each keeps a histogram grid for its request).
constexpr uint32_t kStatsMaxParts = 64;

struct StatsRequest {
    size_t tensor = 0;                  // index into ModelInfo::tensors
    bool window = false;                // only rows [first_row, first_row + rows) of it
    uint64_t first_row = 0, rows = 0;   // see row_window.h
    uint32_t bins = kStatsDefaultBins;  // histogram bins, clamped to 1 .. kStatsMaxBins
};

struct StatsResult {
    // Why the request has no statistics, settled when the job is made: kUnsupported "tensor.type" at the
    // tensor's entry when it cannot be decoded (`problem` says why in words), row_window()'s error for a window
    // that is not inside the tensor, kInternal "stats.tensor" for a tensor index out of range. Else ok.
    Status status;
    std::string problem;  // decode_problem()'s words, or ""
    uint64_t nbytes = 0;  // input bytes of the tensor or window (an ok request's)
    bool done = false;    // `stats` holds the request's statistics
    Stats stats;
};

class StatsJob final : public Job {
public:
    // `model` must outlive the job. Requests may repeat a tensor. step_bytes: the input a step reads, about (a
    // driver that copies a step's input holds that much per job).
    StatsJob(const ModelInfo& model, std::vector<StatsRequest> requests, uint64_t step_bytes = kStatsStepBytes);

    const StatsResult& result(size_t request) const { return results_[request]; }
    size_t requests() const { return requests_.size(); }
    // The request the current step works on (valid from next() until the following next()), and, once the step
    // completed, whether it finished that request's statistics: what a driver's progress callback may ask.
    size_t step_request() const { return request_; }
    bool step_finished_request() const { return request_ < results_.size() && results_[request_].done; }

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    // Bytes outside the file fail the job: kTruncated "tensor.data" at the tensor's offset.
    Status unreadable(const ByteRange& range) override;
    uint64_t total_work() const override { return total_work_; }

private:
    // Makes request `from`, or the first after it with ok status, the current one (request_ == requests_.size():
    // none is left).
    void start_request(size_t from);

    const ModelInfo& model_;
    std::vector<StatsRequest> requests_;
    std::vector<StatsResult> results_;
    std::vector<uint64_t> offsets_, elements_of_;  // per ok request: the absolute offset of its first byte, elements
    uint64_t step_bytes_;
    uint64_t total_work_ = 0;
    bool started_ = false, failed_ = false;

    // The current request: its elements, those done in earlier steps, its accumulator and the parts' histograms
    // (part i of every step adds to histograms_[i]; merged at its end, in any grouping, exactly).
    size_t request_ = 0;
    uint64_t elements_ = 0, done_ = 0;
    uint64_t run_elements_ = 0;  // elements per run of kStatsRun floats: whole blocks
    StatsAccumulator acc_;
    std::vector<GridHistogram> histograms_;

    // The current step: its elements from done_ on, its runs' summaries (run() of a part writes its runs' entries
    // only), or the failure it reports instead of running.
    uint64_t step_elements_ = 0;
    std::vector<RunSummary> runs_;
    Status failure_;
};

}  // namespace ws
