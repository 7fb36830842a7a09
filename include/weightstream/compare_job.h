// SPDX-License-Identifier: MIT
// CompareJob: comparing two models (compare.h) as a job (job.h), what `weightstream diff` and the package's
// compare() run. The plan pairs the tensors; the report's rows are the selected pairs, in order. A row decided
// without values (only in one model, a problem in the plan, a type with no decoder) is finished as the job
// passes it; a row with values takes one step per window of whole outer rows of both sides (about
// kCompareWindowElements floats a side, at least one row and for a Q/K permutation one head of rows), decoded
// in parts (whole blocks of both sides per part) and added to the pair's comparator in order, so the numbers
// do not depend on the number of parts. A side that cannot be read or decoded makes the row incomparable, with
// the reason as its hint; the job itself only fails on an internal error. It writes no output bytes.
//
// Sources: A's files (max(1, a.files.size()) of them, by TensorInfo::file_index), then B's.
// Memory: a window of each side as floats, the comparator's copies (compare.h) and, for a big-endian side, a
// window of its bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weightstream/compare.h"
#include "weightstream/job.h"

namespace ws {

constexpr uint64_t kCompareWindowElements = uint64_t(1) << 20;  // floats per side per window

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
    // The rows finished since the last call, in row order.
    std::vector<size_t> take_finished();

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    Status unreadable(const ByteRange& range) override;
    uint64_t total_work() const override { return total_work_; }

private:
    // Rows per window of pair p (whole multiples of `unit`, which keeps both sides on block boundaries).
    uint64_t window_rows(const PairPlan& p, uint64_t unit);
    // Starts row_ (decides it when it needs no values); true when it has windows to run.
    bool start_row();
    void finish_row();
    void incomparable(const std::string& why);
    // The bytes of rows [row0, row0 + n) of t (in source `source`); size 0 when they are not whole blocks.
    static ByteRange range_of(const TensorInfo& t, uint32_t source, uint64_t row0, uint64_t n, uint64_t row_elements);
    Status decode(bool side_b, const ByteSpan& bytes, uint64_t first_row, uint64_t n_rows, uint32_t part);

    const ModelInfo& a_;
    const ModelInfo& b_;
    uint32_t b_sources_ = 1;  // index of B's first source
    ComparePlan plan_;
    std::vector<const PairPlan*> selected_;
    CompareReport report_;
    uint64_t total_work_ = 0;
    std::vector<size_t> finished_;

    bool started_ = false;
    size_t row_ = 0;
    std::unique_ptr<PairComparator> cmp_;
    uint64_t unit_ = 1, step_rows_ = 1, next_ = 0;  // the row's window unit and size, its next window's row
    uint64_t window_first_ = 0, window_n_ = 0;      // the current window
    std::vector<float> floats_a_, floats_b_;
    std::vector<std::vector<uint8_t>> swapped_;  // per part: a big-endian side's bytes, swapped
    std::vector<Status> status_a_, status_b_;    // per part: decoding A's and B's rows
};

}  // namespace ws
