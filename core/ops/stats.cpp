// SPDX-License-Identifier: MIT
#include "weightstream/stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace ws {
namespace {

// Sums run in kLanes independent accumulators (element i in lane i % kLanes) so consecutive additions do not
// wait for each other; the lanes are added up in a fixed order, so the result is still deterministic.
constexpr size_t kLanes = 4;

uint32_t bits_of(float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

bool finite_bits(uint32_t u) {
    return (u & 0x7f800000u) != 0x7f800000u;
}

// Floats as unsigned integers in the same order (negative ones reversed below the positive ones, -0 just below
// +0), so min/max become integer operations the compiler vectorizes (float min/max reductions it will not).
uint32_t ordered(uint32_t u) {
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}
float unordered(uint32_t k) {
    const uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
    float v;
    std::memcpy(&v, &u, sizeof v);
    return v;
}

double lanes_total(const double* lanes) {
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

// The usual case, a run without NaN or Inf, in branch-free loops the compiler can vectorize. Returns false
// (and leaves *s alone) when the run has a NaN or Inf after all.
bool summarise_finite(const float* x, size_t n, RunSummary* s) {
    uint32_t lo = 0xffffffffu, hi = 0, non_finite = 0, zeros = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t u = bits_of(x[i]);
        const uint32_t k = ordered(u);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
        non_finite += !finite_bits(u);
        zeros += (u & 0x7fffffffu) == 0;
    }
    if (n == 0 || non_finite != 0) return false;
    const size_t whole = n - n % kLanes;  // element i goes to lane i % kLanes
    double sum[kLanes] = {};
    for (size_t i = 0; i < whole; i += kLanes) {
        for (size_t l = 0; l < kLanes; ++l) sum[l] += x[i + l];
    }
    for (size_t l = 0; l < n - whole; ++l) sum[l] += x[whole + l];
    s->finite = n;
    s->min_key = lo;
    s->max_key = hi;
    s->zeros = zeros;
    s->mean = lanes_total(sum) / static_cast<double>(n);
    double m2[kLanes] = {};
    for (size_t i = 0; i < whole; i += kLanes) {
        for (size_t l = 0; l < kLanes; ++l) {
            const double d = static_cast<double>(x[i + l]) - s->mean;
            m2[l] += d * d;
        }
    }
    for (size_t l = 0; l < n - whole; ++l) {
        const double d = static_cast<double>(x[whole + l]) - s->mean;
        m2[l] += d * d;
    }
    s->m2 = lanes_total(m2);
    return true;
}

}  // namespace

RunSummary summarise_run(const float* x, size_t n) {
    RunSummary s;
    if (summarise_finite(x, n, &s)) return s;
    double sum[kLanes] = {};
    for (size_t i = 0; i < n; ++i) {
        const float v = x[i];
        if (!finite_bits(bits_of(v))) {
            ++(std::isnan(v) ? s.nan : v > 0 ? s.pos_inf : s.neg_inf);
            continue;
        }
        ++s.finite;
        sum[i % kLanes] += v;
        s.min_key = std::min(s.min_key, ordered(bits_of(v)));
        s.max_key = std::max(s.max_key, ordered(bits_of(v)));
        s.zeros += v == 0.0f;
    }
    if (s.finite == 0) return s;
    s.mean = lanes_total(sum) / static_cast<double>(s.finite);
    double m2[kLanes] = {};
    for (size_t i = 0; i < n; ++i) {
        if (!finite_bits(bits_of(x[i]))) continue;
        const double d = static_cast<double>(x[i]) - s.mean;
        m2[i % kLanes] += d * d;
    }
    s.m2 = lanes_total(m2);
    return s;
}

void merge_runs(RunSummary* a, const RunSummary& b) {
    if (b.finite > 0) {
        const double na = static_cast<double>(a->finite), nb = static_cast<double>(b.finite);
        const double n = na + nb, delta = b.mean - a->mean;
        a->mean += delta * (nb / n);
        a->m2 += b.m2 + delta * delta * (na * nb / n);
        a->finite += b.finite;
        a->min_key = std::min(a->min_key, b.min_key);
        a->max_key = std::max(a->max_key, b.max_key);
    }
    a->nan += b.nan;
    a->pos_inf += b.pos_inf;
    a->neg_inf += b.neg_inf;
    a->zeros += b.zeros;
}

namespace {

// floor(j / 2^d) for d >= 0: an arithmetic shift, saturated for shifts past the width.
int64_t floor_shift(int64_t j, int d) {
    return j >> std::min(d, 63);
}

// Fine bins [floor(a / 2^e), floor(b / 2^e)] span at most kFineBins: a <= b, finite.
bool fits(double a, double b, int e) {
    const double lo = std::floor(std::ldexp(a, -e)), hi = std::floor(std::ldexp(b, -e));
    return hi - lo + 1 <= static_cast<double>(GridHistogram::kFineBins);
}

// The smallest exponent at least `from` for which [a, b] (a < b) fits.
int smallest_exponent(double a, double b, int from) {
    // 2^e >= (b - a) / kFineBins is necessary: start just below it.
    int e = std::max(from, std::ilogb((b - a) / static_cast<double>(GridHistogram::kFineBins)) - 2);
    while (!fits(a, b, e)) ++e;
    return e;
}

}  // namespace

void GridHistogram::add(const float* x, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const uint32_t u = bits_of(x[i]);
        if (!finite_bits(u)) continue;
        if (has_grid_) {
            // The common case: a fine bin inside the grid.
            const double j = std::floor(static_cast<double>(x[i]) * inverse_);
            if (j >= static_cast<double>(base_) &&
                j < static_cast<double>(base_) + static_cast<double>(counts_.size())) {
                // Inside the array, and the occupied span stays within kFineBins (the exponent stays the
                // smallest for the range: what makes the grid independent of the order).
                const int64_t k = static_cast<int64_t>(j);
                if (k >= hi_ - (kFineBins - 1) && k <= lo_ + (kFineBins - 1)) {
                    ++counts_[static_cast<size_t>(k - base_)];
                    lo_ = std::min(lo_, k);
                    hi_ = std::max(hi_, k);
                    continue;
                }
            }
        }
        add_one(x[i], 1);
    }
}

void GridHistogram::add_one(double v, uint64_t count) {
    if (!has_grid_) {
        if (single_count_ == 0 || v == single_) {
            single_ = v;
            single_count_ += count;
            return;
        }
        // Two different values: the grid starts at the smallest exponent that holds both.
        const double a = std::min(v, single_), b = std::max(v, single_);
        exponent_ = smallest_exponent(a, b, INT32_MIN / 2);
        inverse_ = std::ldexp(1.0, -exponent_);
        has_grid_ = true;
        const int64_t j = static_cast<int64_t>(std::floor(single_ * inverse_));
        base_ = lo_ = hi_ = j;
        counts_.assign(static_cast<size_t>(2 * kFineBins), 0);
        place(j, single_count_);
    }
    // Grow the exponent until the new value's bin fits with the occupied ones.
    const double lo_value = std::ldexp(static_cast<double>(lo_), exponent_);
    const double hi_value = std::ldexp(static_cast<double>(hi_ + 1), exponent_);  // exclusive
    const double a = std::min(v, lo_value), b = std::max(v, std::nextafter(hi_value, -INFINITY));
    coarsen_to(smallest_exponent(a, b, exponent_));
    place(static_cast<int64_t>(std::floor(v * inverse_)), count);
}

void GridHistogram::coarsen_to(int exponent) {
    if (exponent == exponent_) return;
    const int d = exponent - exponent_;
    std::vector<uint64_t> old(counts_.size(), 0);
    old.swap(counts_);
    const int64_t old_base = base_;
    exponent_ = exponent;
    inverse_ = std::ldexp(1.0, -exponent_);
    lo_ = floor_shift(lo_, d);
    hi_ = floor_shift(hi_, d);
    base_ = lo_;
    for (size_t k = 0; k < old.size(); ++k) {
        if (old[k]) counts_[static_cast<size_t>(floor_shift(old_base + static_cast<int64_t>(k), d) - base_)] += old[k];
    }
}

void GridHistogram::place(int64_t j, uint64_t count) {
    const int64_t size = static_cast<int64_t>(counts_.size());
    if (j < base_ || j >= base_ + size) {
        // Re-centre the occupied bins (at most kFineBins of them) in the array, leaving room on both sides.
        const int64_t lo = std::min(lo_, j), hi = std::max(hi_, j);
        const int64_t new_base = lo - (size - (hi - lo + 1)) / 2;
        std::vector<uint64_t> moved(counts_.size(), 0);
        for (int64_t k = lo_; k <= hi_; ++k)
            moved[static_cast<size_t>(k - new_base)] = counts_[static_cast<size_t>(k - base_)];
        counts_.swap(moved);
        base_ = new_base;
    }
    counts_[static_cast<size_t>(j - base_)] += count;
    lo_ = std::min(lo_, j);
    hi_ = std::max(hi_, j);
}

void GridHistogram::merge(const GridHistogram& other) {
    if (!other.has_grid_) {
        if (other.single_count_) add_one(other.single_, other.single_count_);
        return;
    }
    if (!has_grid_) {
        const double single = single_;
        const uint64_t count = single_count_;
        *this = other;
        if (count) add_one(single, count);
        return;
    }
    // Both on grids: the coarser exponent, grown until both ranges fit together.
    const double a = std::min(std::ldexp(static_cast<double>(lo_), exponent_),
                              std::ldexp(static_cast<double>(other.lo_), other.exponent_));
    const double b =
        std::max(std::nextafter(std::ldexp(static_cast<double>(hi_ + 1), exponent_), -INFINITY),
                 std::nextafter(std::ldexp(static_cast<double>(other.hi_ + 1), other.exponent_), -INFINITY));
    coarsen_to(smallest_exponent(a, b, std::max(exponent_, other.exponent_)));
    const int d = exponent_ - other.exponent_;
    for (int64_t k = other.lo_; k <= other.hi_; ++k) {
        const uint64_t c = other.counts_[static_cast<size_t>(k - other.base_)];
        if (c) place(floor_shift(k, d), c);
    }
}

void GridHistogram::finish(double lo, double hi, uint32_t bins, std::vector<uint64_t>* counts,
                           std::vector<double>* edges) const {
    counts->assign(bins, 0);
    edges->assign(bins + 1, lo);
    (*edges)[bins] = hi;
    if (!has_grid_) {
        (*counts)[0] = single_count_;
        for (uint32_t k = 1; k < bins; ++k) (*edges)[k] = lo;  // a constant: every bin but the first is empty
        return;
    }
    // starts[k]: the fine bin where bin k starts.
    std::vector<int64_t> starts(bins);
    const double step = (hi - lo) / bins;
    starts[0] = lo_;
    for (uint32_t k = 1; k < bins; ++k) {
        const int64_t j = static_cast<int64_t>(std::floor((lo + step * k) * inverse_));
        starts[k] = std::min(std::max(j, starts[k - 1]), hi_ + 1);
        (*edges)[k] = std::max(lo, std::ldexp(static_cast<double>(starts[k]), exponent_));
    }
    uint32_t bin = 0;
    for (int64_t j = lo_; j <= hi_; ++j) {
        while (bin + 1 < bins && starts[bin + 1] <= j) ++bin;
        (*counts)[bin] += counts_[static_cast<size_t>(j - base_)];
    }
}

StatsAccumulator::StatsAccumulator() {
    pending_.reserve(kStatsRun);
}

void StatsAccumulator::add(const float* x, size_t n) {
    count_ += n;
    histogram_.add(x, n);
    if (!pending_.empty()) {
        const size_t take = std::min(n, kStatsRun - pending_.size());
        pending_.insert(pending_.end(), x, x + take);
        x += take;
        n -= take;
        if (pending_.size() < kStatsRun) return;
        merge_runs(&total_, summarise_run(pending_.data(), kStatsRun));
        pending_.clear();
    }
    for (; n >= kStatsRun; x += kStatsRun, n -= kStatsRun) merge_runs(&total_, summarise_run(x, kStatsRun));
    pending_.assign(x, x + n);
}

void StatsAccumulator::add_runs(const RunSummary* runs, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        merge_runs(&total_, runs[i]);
        count_ += runs[i].finite + runs[i].nan + runs[i].pos_inf + runs[i].neg_inf;
    }
}

Stats StatsAccumulator::finish(uint32_t bins) const {
    RunSummary s = total_;
    if (!pending_.empty()) merge_runs(&s, summarise_run(pending_.data(), pending_.size()));
    bins = std::min(std::max(bins, 1u), kStatsMaxBins);
    Stats out;
    out.count = count_;
    out.finite = s.finite;
    out.nan = s.nan;
    out.pos_inf = s.pos_inf;
    out.neg_inf = s.neg_inf;
    out.zeros = s.zeros;
    out.histogram.assign(bins, 0);
    if (s.finite == 0) {
        out.min = out.max = out.mean = out.std = std::numeric_limits<double>::quiet_NaN();
        return out;
    }
    out.min = unordered(s.min_key);
    out.max = unordered(s.max_key);
    out.mean = s.mean;
    out.std = std::sqrt(s.m2 / static_cast<double>(s.finite));
    histogram_.finish(out.min, out.max, bins, &out.histogram, &out.edges);
    return out;
}

}  // namespace ws
