// SPDX-License-Identifier: MIT
#include "weightstream/compare_job.h"

#include <algorithm>

#include "weightstream/dequant.h"

namespace ws {
namespace {

uint64_t gcd(uint64_t x, uint64_t y) {
    while (y) {
        const uint64_t r = x % y;
        x = y;
        y = r;
    }
    return x;
}

}  // namespace

CompareJob::CompareJob(const ModelInfo& a, const ModelInfo& b, const PairingOptions& options, CompareSide side_a,
                       CompareSide side_b)
    : a_(a), b_(b), plan_(pair_models(a, b, options)) {
    b_sources_ = static_cast<uint32_t>(std::max<size_t>(1, a.files.size()));
    report_.a = std::move(side_a);
    report_.b = std::move(side_b);
    report_.mapping = plan_.mapping;
    report_.metadata = diff_metadata(a, b);
    std::vector<size_t> all(plan_.pairs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    select(all);
}

bool CompareJob::select(const std::vector<size_t>& pairs) {
    selected_.clear();
    report_.tensors.clear();
    total_work_ = 0;
    for (size_t i : pairs) {
        if (i >= plan_.pairs.size()) {
            selected_.clear();
            report_.tensors.clear();
            total_work_ = 0;
            done_.clear();
            order_.clear();
            return false;
        }
        const PairPlan& p = plan_.pairs[i];
        selected_.push_back(&p);
        report_.tensors.push_back(plan_row(a_, b_, p));
        if (p.a >= 0 && p.b >= 0 && p.problem.empty()) {
            total_work_ += a_.tensors[static_cast<size_t>(p.a)].nbytes + b_.tensors[static_cast<size_t>(p.b)].nbytes;
        }
    }
    done_.assign(selected_.size(), false);
    // Largest pairs first, so that the last lanes running are not a big pair alone while the others idle.
    order_.resize(selected_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    auto bytes = [&](size_t row) {
        const PairPlan& p = *selected_[row];
        if (p.a < 0 || p.b < 0 || !p.problem.empty()) return uint64_t(0);
        return a_.tensors[static_cast<size_t>(p.a)].nbytes + b_.tensors[static_cast<size_t>(p.b)].nbytes;
    };
    std::stable_sort(order_.begin(), order_.end(), [&](size_t x, size_t y) { return bytes(x) > bytes(y); });
    return true;
}

std::vector<size_t> CompareJob::take_finished() {
    std::vector<size_t> rows;
    for (; reported_ < done_.size() && done_[reported_]; ++reported_) rows.push_back(reported_);
    return rows;
}

void CompareJob::finish(size_t row) {
    done_[row] = true;
}

void CompareJob::incomparable(size_t row, const std::string& why) {
    report_.tensors[row].verdict = Verdict::kIncomparable;
    report_.tensors[row].hint = why;
    finish(row);
}

bool CompareJob::start_row() {
    const size_t row = order_[row_++];
    const PairPlan& p = *selected_[row];
    if (p.a < 0 || p.b < 0 || !p.problem.empty()) {
        finish(row);  // plan_row() decided it
        return false;
    }
    const TensorInfo& ta = a_.tensors[static_cast<size_t>(p.a)];
    const TensorInfo& tb = b_.tensors[static_cast<size_t>(p.b)];
    std::string problem = decode_problem(a_, ta);
    if (!problem.empty()) {
        incomparable(row, "A: " + problem);
        return false;
    }
    problem = decode_problem(b_, tb);
    if (!problem.empty()) {
        incomparable(row, "B: " + problem);
        return false;
    }
    if (dequant_floats_per_element(ta.dtype) != 1 || dequant_floats_per_element(tb.dtype) != 1) {
        incomparable(row, "complex values are not compared");
        return false;
    }
    std::unique_ptr<Lane> lane(new Lane);
    lane->row = row;
    lane->cmp.reset(new PairComparator(p, ta.dtype, tb.dtype));
    // Rows per window: about kCompareWindowElements elements, a multiple of the comparator's unit and of what
    // keeps both sides' windows on block boundaries.
    uint64_t m = std::max<uint64_t>(lane->cmp->window_rows(), 1);
    for (DType t : {ta.dtype, tb.dtype}) {
        const uint64_t blk = dtype_traits(t).block_elems;
        const uint64_t q = blk / gcd(blk, std::max<uint64_t>(p.row_elements, 1));
        m = m / gcd(m, q) * q;
    }
    lane->unit = m;
    const uint64_t target = std::max<uint64_t>(1, kCompareWindowElements / std::max<uint64_t>(p.row_elements, 1));
    lane->step_rows = std::max<uint64_t>(m, target / m * m);
    if (p.rows == 0) {
        report_.tensors[row] = lane->cmp->finish(std::move(report_.tensors[row]));
        finish(row);
        return false;
    }
    lanes_.push_back(std::move(lane));
    return true;
}

ByteRange CompareJob::range_of(const TensorInfo& t, uint32_t source, uint64_t row0, uint64_t n, uint64_t row_elements) {
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint64_t first = row0 * row_elements, count = n * row_elements;
    const bool aligned = first % traits.block_elems == 0 && count % traits.block_elems == 0;
    return {source, t.offset + (aligned ? first / traits.block_elems * traits.block_bytes : 0),
            aligned ? count / traits.block_elems * traits.block_bytes : 0};
}

bool CompareJob::next(JobStep* step) {
    *step = JobStep();
    while (lanes_.size() < kCompareLanes && row_ < selected_.size()) start_row();
    if (lanes_.empty()) return false;
    // Every lane's next window and the slices of the window it compared last; a lane moves on in complete(), so
    // a step cut short by unreadable() is handed out again for the other lanes.
    tasks_.clear();
    for (size_t l = 0; l < lanes_.size(); ++l) {
        Lane& lane = *lanes_[l];
        const PairPlan& p = *selected_[lane.row];
        lane.failed.clear();
        lane.window_n = std::min(lane.step_rows, p.rows - lane.next);
        if (lane.window_n > 0) {
            const TensorInfo& ta = a_.tensors[static_cast<size_t>(p.a)];
            const TensorInfo& tb = b_.tensors[static_cast<size_t>(p.b)];
            lane.range_a = range_of(ta, ta.file_index, p.a_row0 + lane.next, lane.window_n, p.row_elements);
            lane.range_b =
                range_of(tb, b_sources_ + tb.file_index, p.b_row0 + lane.next, lane.window_n, p.row_elements);
            lane.input = step->inputs.size();
            step->inputs.push_back(lane.range_a);
            step->inputs.push_back(lane.range_b);
            // The pair's bytes spread over its windows, so that the steps' work adds up to total_work().
            const uint64_t bytes = ta.nbytes + tb.nbytes;
            step->work += bytes / p.rows * lane.window_n + (lane.next + lane.window_n == p.rows ? bytes % p.rows : 0);
            const size_t window = static_cast<size_t>(lane.window_n * p.row_elements);
            lane.floats_a.resize(window);
            lane.floats_b.resize(window);
            tasks_.push_back({static_cast<uint32_t>(l), kWindowTask, window});
        }
        if (lane.counted_n > 0) {
            const uint32_t slices = static_cast<uint32_t>(
                std::min<uint64_t>(kRequantizeSlices, (lane.counted_n + lane.unit - 1) / lane.unit));
            lane.slice_matches.assign(slices, 0);
            lane.slice_scratch.resize(slices);
            for (uint32_t i = 0; i < slices; ++i) {
                uint64_t r0 = 0, r1 = 0;
                part_rows(lane.counted_n, lane.unit, i, slices, &r0, &r1);
                tasks_.push_back({static_cast<uint32_t>(l), i, (r1 - r0) * p.row_elements * kRequantizeCost});
            }
        }
    }
    by_cost_.resize(tasks_.size());
    for (uint32_t t = 0; t < by_cost_.size(); ++t) by_cost_[t] = t;
    std::stable_sort(by_cost_.begin(), by_cost_.end(),
                     [&](uint32_t x, uint32_t y) { return tasks_[x].cost > tasks_[y].cost; });
    step->tensor = selected_[lanes_.front()->row]->a;
    step->max_parts = static_cast<uint32_t>(tasks_.size());
    return true;
}

Status CompareJob::decode(Lane& lane, bool side_b, const ByteSpan& bytes) {
    const PairPlan& p = *selected_[lane.row];
    const ModelInfo& m = side_b ? b_ : a_;
    const TensorInfo& t = m.tensors[static_cast<size_t>(side_b ? p.b : p.a)];
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint64_t row0 = (side_b ? p.b_row0 : p.a_row0) + lane.next;
    const uint64_t first = row0 * p.row_elements, n = lane.window_n * p.row_elements;
    if (first % traits.block_elems != 0 || n % traits.block_elems != 0) {
        return make_error(Error::kBadShape, t.info_offset, "diff.window");
    }
    const uint64_t nbytes = n / traits.block_elems * traits.block_bytes;
    if (bytes.size != nbytes) return make_error(Error::kTruncated, t.offset, "compare: window bytes");
    const uint8_t* from = bytes.data;
    if (m.big_endian) {
        lane.swapped.assign(from, from + nbytes);
        WS_TRY(swap_to_little_endian(t.dtype, lane.swapped.data(), nbytes));
        from = lane.swapped.data();
    }
    return dequantize(t.dtype, from, n, (side_b ? lane.floats_b : lane.floats_a).data());
}

void CompareJob::run_window(Lane& lane, const ByteSpan* inputs) {
    Status s = decode(lane, false, inputs[0]);
    if (!s.ok()) {
        lane.failed = std::string("A: cannot decode the tensor (") + error_name(s.code) + ")";
        return;
    }
    s = decode(lane, true, inputs[1]);
    if (!s.ok()) {
        lane.failed = std::string("B: cannot decode the tensor (") + error_name(s.code) + ")";
        return;
    }
    s = lane.cmp->add_window(lane.next, lane.window_n, lane.floats_a.data(), lane.floats_b.data());
    if (!s.ok()) lane.failed = std::string("internal error: ") + s.what;
}

void CompareJob::run_slice(Lane& lane, uint32_t slice) {
    const uint64_t row_elements = selected_[lane.row]->row_elements;
    uint64_t r0 = 0, r1 = 0;
    part_rows(lane.counted_n, lane.unit, slice, static_cast<uint32_t>(lane.slice_matches.size()), &r0, &r1);
    if (r1 == r0) return;
    lane.slice_matches[slice] =
        lane.cmp->count_requantized(lane.counted_first + r0, r1 - r0, lane.counted_a.data() + r0 * row_elements,
                                    lane.counted_b.data() + r0 * row_elements, &lane.slice_scratch[slice]);
}

void CompareJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    // The parts get tasks of about equal estimated cost -- costliest first, each to the part with the least so far
    // -- because a step lasts as long as its slowest part: cut by count, windows and slices of unequal cost left a
    // second thread idle ~8% of the time at the steps' ends. Every part computes the same deal; the results do
    // not depend on it.
    std::vector<uint64_t> load(parts, 0);
    for (uint32_t t : by_cost_) {
        const uint32_t to = static_cast<uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
        load[to] += std::max<uint64_t>(tasks_[t].cost, 1);
        if (to != part) continue;
        Lane& lane = *lanes_[tasks_[t].lane];
        if (tasks_[t].slice == kWindowTask) {
            run_window(lane, inputs + lane.input);
        } else {
            run_slice(lane, tasks_[t].slice);
        }
    }
}

Status CompareJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    std::vector<std::unique_ptr<Lane>> going;
    for (std::unique_ptr<Lane>& lane : lanes_) {
        const PairPlan& p = *selected_[lane->row];
        if (!lane->failed.empty()) {
            incomparable(lane->row, lane->failed);
            continue;
        }
        if (lane->counted_n > 0) {
            uint64_t matches = 0;
            for (uint64_t m : lane->slice_matches) matches += m;
            lane->cmp->add_requantized(matches);
            lane->counted_n = 0;
        }
        if (lane->window_n > 0) {
            if (lane->cmp->requantize_test()) {
                lane->floats_a.swap(lane->counted_a);
                lane->floats_b.swap(lane->counted_b);
                lane->counted_first = lane->next;
                lane->counted_n = lane->window_n;
            }
            lane->next += lane->window_n;
        }
        if (lane->next >= p.rows && lane->counted_n == 0) {
            report_.tensors[lane->row] = lane->cmp->finish(std::move(report_.tensors[lane->row]));
            finish(lane->row);
            continue;
        }
        going.push_back(std::move(lane));
    }
    lanes_.swap(going);
    return ok_status();
}

Status CompareJob::unreadable(const ByteRange& range) {
    auto same = [&](const ByteRange& r) {
        return r.source == range.source && r.offset == range.offset && r.size == range.size;
    };
    for (size_t l = 0; l < lanes_.size(); ++l) {
        if (lanes_[l]->window_n == 0) continue;  // only counting: no range read
        const bool is_a = same(lanes_[l]->range_a);
        if (!is_a && !same(lanes_[l]->range_b)) continue;
        incomparable(lanes_[l]->row,
                     std::string(is_a ? "A" : "B") + ": the tensor's data lies outside its file (truncated?)");
        lanes_.erase(lanes_.begin() + static_cast<std::ptrdiff_t>(l));
        return ok_status();
    }
    return make_error(Error::kInternal, range.offset, "compare: unreadable range");
}

}  // namespace ws
