// SPDX-License-Identifier: MIT
// Job: one operation (quantize, compare, convert, ...) as a push-driven state machine, the one seam between
// the core, which decides, and a driver, which moves bytes and threads: the native driver over mappings and
// Range requests (native/io/job_driver.h), the JavaScript pump over the package's sources (wasm/js/pump.js).
//
// A driver runs a job step by step:
//
//   JobStep step;
//   while (job.next(&step)) {                    // the next step: the byte ranges it reads, in order
//       fetch step.inputs -> spans               // exactly those bytes (a mapping, a Range request, a Blob)
//       for part in 0..k-1: job.run(spans, part, k)   // 1 <= k <= step.max_parts, the parts on any threads
//       ByteSpan out; job.complete(&out)         // ends the step: its verdict; `out` goes to the output
//   }
//   report = job's own accessor (quantize_report(), compare_report(), ...)
//
// Contracts:
//   - The output file is the concatenation of every step's `out`, in step order. A job without an output file
//     (compare) gives empty spans.
//   - run() of the parts of one step may run concurrently (each part a disjoint range of the step's rows); the
//     results, and so the output bytes, are the same for every k. Nothing else of a job runs concurrently.
//   - complete() gives the step's verdict (a run() records its part's problems for it, so that the error
//     reported is the same for every k). A failed complete() ends the job: the driver calls nothing more but
//     the accessors.
//   - `out` may point into the step's inputs (a piece copied through): the driver keeps them until it has
//     consumed `out`.
//   - No I/O, no threads, no exceptions inside; memory is bounded by a step (a window of rows), never by a
//     model. Every byte fed is untrusted and checked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/byte_range.h"
#include "weightstream/status.h"

namespace ws {

struct JobStep {
    std::vector<ByteRange> inputs;  // what run() reads, in this order
    uint32_t max_parts = 1;         // run() may be split into at most this many parts
    uint64_t work = 0;              // input bytes this step accounts for (progress), summed over steps = total
    int64_t tensor = -1;            // the input tensor it works on (for messages and progress), or -1
    // The inputs of the step after this one, when the job can tell (empty: it cannot, or there is none): a driver
    // may fetch them while this step runs. Only a guess: the next step's own inputs are what it reads.
    std::vector<ByteRange> next_inputs;
    uint32_t output = 0;  // the output file this step's `out` belongs to (0 for a job writing one file)
};

class Job {
public:
    virtual ~Job() = default;

    // Prepares the next step in *step; false when there is none (the job is finished) or it failed.
    virtual bool next(JobStep* step) = 0;
    // Runs part `part` of `parts` of the current step over `inputs` (one span per step.inputs entry, each of
    // exactly its size). Thread-safe against the other parts of the same step only.
    virtual void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) = 0;
    // Ends the current step after all its parts ran: its verdict, and *out its output, valid until the next
    // call.
    virtual Status complete(ByteSpan* out) = 0;
    // The driver could not read `range`, an input of the current step: it lies outside its file (a truncated
    // file). The job takes it in (compare: the pair becomes incomparable; ok, and the step is over without
    // run() or complete()) or fails with the error to report (the default: kTruncated "tensor.data" at the
    // range's offset).
    virtual Status unreadable(const ByteRange& range);

    // The input bytes the whole job reads (the sum of the steps' work).
    virtual uint64_t total_work() const = 0;
};

// ---- cutting a tensor into steps and a step into parts ----------------------------------------------------------
// A job that works through a tensor's rows steps through RowWindows and runs each window in part_rows() parts.

// A tensor whose bytes pass unchanged is copied in steps of this many bytes (the step's output is its input).
constexpr uint64_t kCopyPieceBytes = uint64_t(16) << 20;
// A step over a window of rows is cut into at most this many parts.
constexpr uint32_t kMaxRowParts = 256;

// The windows of whole rows over a tensor of `matrices` matrices of rows_per_matrix rows of row_elements elements:
// whole granules of rows (a head of a Q/K permutation; rows_per_matrix must be a multiple of `granule`), about
// max_elements elements each but at least one granule, never across two matrices (a matrix's rows share one row of
// importance).
class RowWindows {
public:
    RowWindows() = default;
    RowWindows(uint64_t rows_per_matrix, uint64_t matrices, uint64_t row_elements, uint64_t granule,
               uint64_t max_elements);

    // Moves to the next window; false after the last one.
    bool next();
    // The current window: its matrix, its first row (counted from the tensor's first) and its rows.
    uint64_t matrix() const { return matrix_; }
    uint64_t first_row() const { return matrix_ * rows_per_matrix_ + row_; }
    uint64_t rows() const { return rows_; }
    // Whether the current window is the tensor's last.
    bool last() const { return matrix_ + 1 >= matrices_ && row_ + rows_ >= rows_per_matrix_; }
    uint64_t granule() const { return granule_; }

private:
    uint64_t rows_per_matrix_ = 0, matrices_ = 0, granule_ = 1, window_ = 1;
    uint64_t matrix_ = 0, row_ = 0, rows_ = 0;  // the current window (rows_ 0: none yet)
};

// How many parts a window of n_rows rows is worth: whole granules per part, at least a few rows' worth of work
// each, at most kMaxRowParts.
uint32_t row_parts(uint64_t n_rows, uint64_t granule);
// The rows [*r0, *r1) of a window of n_rows rows that part `part` of `parts` covers: cut at whole granules, the
// parts in order and together the whole window.
void part_rows(uint64_t n_rows, uint64_t granule, uint32_t part, uint32_t parts, uint64_t* r0, uint64_t* r1);

}  // namespace ws
