// SPDX-License-Identifier: MIT
// CompareJob: comparing two models (compare.h) as a job (job.h), what `weightstream diff` and the package's
// compare() run. The plan pairs the tensors; the report's rows are the selected pairs, in order. A row decided
// without values (only in one model, a problem in the plan, a type with no decoder) is finished as the job
// passes it. Rows with values are compared up to kCompareLanes at a time, each in a lane of its own: a step
// holds the next window of whole outer rows of every lane's pair (the largest pairs start first) (about
// kCompareWindowElements floats a side, at least one row and for a Q/K permutation one head of rows). A step's
// tasks are, per lane, one that decodes and compares its window (PairComparator::add_window(), each lane's windows
// in order) and, when the pair has the requantization test, up to kRequantizeSlices that count it over slices of
// the lane's window before (the costliest test, kept a step behind so that its slices can run beside the window
// that follows); part i of a step runs its share of the tasks, so the numbers do not depend on the number of parts.
// A side that cannot be read or decoded makes its row incomparable, with the reason as its hint; the job itself
// only fails on an internal error. It writes no output bytes.
//
// Sources: A's files (max(1, a.files.size()) of them, by TensorInfo::file_index), then B's.
// Memory: per lane, two windows of each side as floats (the one compared and the one counted), the comparator's
// copies (compare.h), the slices' requantized copies and, for a big-endian side, a window of its bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weightstream/compare.h"
#include "weightstream/job.h"

namespace ws {

constexpr uint64_t kCompareWindowElements = uint64_t(1) << 19;  // floats per side per window
constexpr size_t kCompareLanes = 4;                             // pairs compared at a time
constexpr uint32_t kRequantizeSlices = 8;                       // requantization tasks per lane and step, at most

class CompareJob final : public Job {
public:
    // Pairs a's tensors with b's (pair_models()); every pair is selected. a, b and options' configs must
    // outlive the job. side_a, side_b: what the report calls the models.
    CompareJob(const ModelInfo& a, const ModelInfo& b, const PairingOptions& options, CompareSide side_a,
               CompareSide side_b);

    const ComparePlan& plan() const { return plan_; }
    // The report's rows: these plan pairs (indices into plan().pairs), in this order. Before the first
    // next(); false (and nothing selected) for an index out of range.
    bool select(const std::vector<size_t>& pairs);
    // The report; its rows are final once take_finished() has named them.
    const CompareReport& report() const { return report_; }
    // The rows finished since the last call whose rows before them are all finished too, in row order.
    std::vector<size_t> take_finished();

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    Status unreadable(const ByteRange& range) override;
    uint64_t total_work() const override { return total_work_; }

private:
    // A row being compared: its comparator, windows and buffers. run() touches a lane's fields only from its
    // tasks: the window task writes the window's fields and the comparator, slice i reads the counted window and
    // writes slice_matches[i] and slice_scratch[i].
    struct Lane {
        size_t row = 0;
        std::unique_ptr<PairComparator> cmp;
        uint64_t unit = 1, step_rows = 1, next = 0;  // window unit and size (rows), the next window's first row
        uint64_t window_n = 0;                       // the current step's window (rows from `next`); 0: none
        ByteRange range_a, range_b;                  // ... its bytes on each side
        size_t input = 0;                            // ... and the index of range_a in the step's inputs
        std::vector<float> floats_a, floats_b;
        std::vector<uint8_t> swapped;  // a big-endian side's window, swapped
        // The window compared in the step before, its requantization counted in this step (counted_n 0: none).
        uint64_t counted_first = 0, counted_n = 0;
        std::vector<float> counted_a, counted_b;
        std::vector<uint64_t> slice_matches;
        std::vector<PairComparator::RequantizeScratch> slice_scratch;
        std::string failed;  // not empty: the row became incomparable in this step, and why
    };
    // A step's unit of work: lane `lane`'s window (slice kWindowTask) or a slice of its counted window.
    static constexpr uint32_t kWindowTask = ~uint32_t(0);
    struct Task {
        uint32_t lane, slice;
        uint64_t cost;  // estimated: elements, a requantized one counted as kRequantizeCost
    };
    // A requantized element costs about this many decoded and summed ones (a slice of Q4_K requantization against
    // a window of F16 vs Q4_K: 61 vs 12 ns per element).
    static constexpr uint64_t kRequantizeCost = 5;
    // Starts row_ (decides it when it needs no values); true when it became a lane.
    bool start_row();
    void finish(size_t row);
    void incomparable(size_t row, const std::string& why);
    // The bytes of rows [row0, row0 + n) of t (in source `source`); size 0 when they are not whole blocks.
    static ByteRange range_of(const TensorInfo& t, uint32_t source, uint64_t row0, uint64_t n, uint64_t row_elements);
    // Decodes side A or B of lane's window from `bytes` into its floats.
    Status decode(Lane& lane, bool side_b, const ByteSpan& bytes);
    void run_window(Lane& lane, const ByteSpan* inputs);
    void run_slice(Lane& lane, uint32_t slice);

    const ModelInfo& a_;
    const ModelInfo& b_;
    uint32_t b_sources_ = 1;  // index of B's first source
    ComparePlan plan_;
    std::vector<const PairPlan*> selected_;
    CompareReport report_;
    uint64_t total_work_ = 0;
    std::vector<bool> done_;  // per row
    size_t reported_ = 0;     // rows [0, reported_) were named by take_finished()

    std::vector<size_t> order_;                 // the rows in the order they are started: largest first
    size_t row_ = 0;                            // the next row to start (an index into order_)
    std::vector<std::unique_ptr<Lane>> lanes_;  // the rows being compared, in the order they started
    std::vector<Task> tasks_;                   // the current step's, by lane
    std::vector<uint32_t> by_cost_;             // tasks_'s indices, costliest first
};

}  // namespace ws
