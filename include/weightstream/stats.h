// SPDX-License-Identifier: MIT
// Statistics of decoded float32 values, streamed: min, max, mean and population std of the finite values,
// counts of NaN, +Inf, -Inf and zeros (+0 and -0, among the finite values), and a histogram of the finite
// values over [min, max]. What `weightstream stats` prints and the package's `model.stats()` returns, from
// this one module in both builds, so both give the same numbers bit for bit.
//
// One pass over the values, merged exactly, so that a tensor is decoded (and, in a browser, fetched) once
// and the result does not depend on how the values arrive or on the thread count:
// - mean and std: the values are summarised in runs of kStatsRun floats at fixed positions (element
//   i * kStatsRun onwards), two passes in double within a run (the mean, then the squared deviations from
//   it), and the runs are merged in order (Chan et al.'s pairwise update). Any chunking gives the same runs.
// - min, max and the counts are exact whatever the order.
// - the histogram: the finite values are counted on a grid of fine bins [j * 2^e, (j + 1) * 2^e), e the
//   smallest exponent for which [min, max] spans at most kFineBins of them. When the range grows, e grows and
//   neighbouring fine bins merge (exactly: floor(j / 2)); the final grid depends on min and max only, so the
//   counts are the same in any order and any grouping. The `bins` bins over [min, max] are made of whole fine
//   bins: bin k starts at the fine bin holding min + k * (max - min) / bins, so its lower edge is that value
//   rounded down to the grid (less than (max - min) / kFineBins * 2 below it). Stats::edges gives every
//   edge, and a value v is in bin k exactly when edges[k] <= v < edges[k + 1] (the last bin holds max too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ws {

// Floats per summarised run: StatsJob's steps and parts are whole runs of them; of no concern to other callers.
constexpr size_t kStatsRun = size_t(1) << 16;
// The histogram's default bin count (the CLI's), and the most a caller may ask for.
constexpr uint32_t kStatsDefaultBins = 32;
constexpr uint32_t kStatsMaxBins = 4096;

// The summary of some values: merged in run order it gives mean and std; the rest is order-free.
struct RunSummary {
    uint64_t finite = 0;
    double mean = 0;
    double m2 = 0;                   // sum of squared deviations from the mean
    uint32_t min_key = 0xffffffffu;  // the finite minimum and maximum as order-preserving keys
    uint32_t max_key = 0;
    uint64_t nan = 0, pos_inf = 0, neg_inf = 0, zeros = 0;
};

// Summarises n <= kStatsRun floats (one run). Pure; any float values.
RunSummary summarise_run(const float* x, size_t n);
// Adds b (the run after a's last) to a.
void merge_runs(RunSummary* a, const RunSummary& b);

// Counts of finite values on the power-of-two grid described above. Memory: kFineBins * 2 counts.
class GridHistogram {
public:
    static constexpr int64_t kFineBins = 8192;

    void add(const float* x, size_t n);
    void merge(const GridHistogram& other);

    // The bins over [lo, hi] (the finite minimum and maximum of what was added) and their edges.
    void finish(double lo, double hi, uint32_t bins, std::vector<uint64_t>* counts, std::vector<double>* edges) const;

private:
    void add_one(double v, uint64_t count);
    void place(int64_t j, uint64_t count);  // grows the grid to hold fine bin j (at the current exponent)
    void coarsen_to(int exponent);

    // Until two different values arrive there is no grid: the histogram is single_count_ times single_.
    bool has_grid_ = false;
    double single_ = 0;
    uint64_t single_count_ = 0;
    int exponent_ = 0;
    double inverse_ = 1;       // 2^-exponent
    int64_t base_ = 0;         // fine bin of counts_[0]
    int64_t lo_ = 0, hi_ = 0;  // the lowest and highest occupied fine bins
    std::vector<uint64_t> counts_;
};

struct Stats {
    uint64_t count = 0;   // floats seen (2 per element for complex tensors)
    uint64_t finite = 0;  // min, max, mean and std are NaN when this is 0
    double min = 0, max = 0, mean = 0, std = 0;
    uint64_t nan = 0, pos_inf = 0, neg_inf = 0, zeros = 0;
    std::vector<uint64_t> histogram;  // `bins` counts over [min, max], see above; all 0 when finite == 0
    std::vector<double> edges;        // bins + 1 edges: edges[0] = min, edges[bins] = max; empty when finite == 0
};

// Statistics of a stream of floats given in order, in pieces of any length. Memory: one run of floats
// (256 KiB) and the histogram's grid (128 KiB), whatever the stream's length.
class StatsAccumulator {
public:
    StatsAccumulator();

    // Adds the next n floats.
    void add(const float* x, size_t n);

    // For callers that summarise runs themselves (on several threads): adds the summaries of consecutive
    // runs, in order, and a histogram of the same values (merged in any grouping). Only valid while add()
    // holds no partial run, that is when every add() so far was a whole number of runs.
    bool at_run_boundary() const { return pending_.empty(); }
    void add_runs(const RunSummary* runs, size_t n);
    void add_histogram(const GridHistogram& h) { histogram_.merge(h); }

    // The statistics of everything added, with `bins` histogram bins (1 .. kStatsMaxBins; clamped).
    Stats finish(uint32_t bins = kStatsDefaultBins) const;

private:
    RunSummary total_;
    GridHistogram histogram_;
    std::vector<float> pending_;  // the floats of the current partial run
    uint64_t count_ = 0;
};

}  // namespace ws
