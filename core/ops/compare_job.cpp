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
            return false;
        }
        const PairPlan& p = plan_.pairs[i];
        selected_.push_back(&p);
        report_.tensors.push_back(plan_row(a_, b_, p));
        if (p.a >= 0 && p.b >= 0 && p.problem.empty()) {
            total_work_ += a_.tensors[static_cast<size_t>(p.a)].nbytes + b_.tensors[static_cast<size_t>(p.b)].nbytes;
        }
    }
    return true;
}

std::vector<size_t> CompareJob::take_finished() {
    std::vector<size_t> rows;
    rows.swap(finished_);
    return rows;
}

uint64_t CompareJob::window_rows(const PairPlan& p, uint64_t unit) {
    uint64_t m = std::max<uint64_t>(unit, 1);
    for (DType t : {a_.tensors[static_cast<size_t>(p.a)].dtype, b_.tensors[static_cast<size_t>(p.b)].dtype}) {
        const uint64_t blk = dtype_traits(t).block_elems;
        const uint64_t q = blk / gcd(blk, std::max<uint64_t>(p.row_elements, 1));
        m = m / gcd(m, q) * q;
    }
    unit_ = m;
    const uint64_t target = std::max<uint64_t>(1, kCompareWindowElements / std::max<uint64_t>(p.row_elements, 1));
    return std::max<uint64_t>(m, target / m * m);
}

void CompareJob::incomparable(const std::string& why) {
    report_.tensors[row_].verdict = Verdict::kIncomparable;
    report_.tensors[row_].hint = why;
    finish_row();
}

void CompareJob::finish_row() {
    cmp_.reset();
    finished_.push_back(row_);
    ++row_;
}

bool CompareJob::start_row() {
    const PairPlan& p = *selected_[row_];
    if (p.a < 0 || p.b < 0 || !p.problem.empty()) {
        finish_row();  // plan_row() decided it
        return false;
    }
    const TensorInfo& ta = a_.tensors[static_cast<size_t>(p.a)];
    const TensorInfo& tb = b_.tensors[static_cast<size_t>(p.b)];
    std::string problem = decode_problem(a_, ta);
    if (!problem.empty()) {
        incomparable("A: " + problem);
        return false;
    }
    problem = decode_problem(b_, tb);
    if (!problem.empty()) {
        incomparable("B: " + problem);
        return false;
    }
    if (dequant_floats_per_element(ta.dtype) != 1 || dequant_floats_per_element(tb.dtype) != 1) {
        incomparable("complex values are not compared");
        return false;
    }
    cmp_.reset(new PairComparator(p, ta.dtype, tb.dtype));
    step_rows_ = window_rows(p, cmp_->window_rows());
    next_ = 0;
    if (p.rows == 0) {
        report_.tensors[row_] = cmp_->finish(std::move(report_.tensors[row_]));
        finish_row();
        return false;
    }
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
    if (!started_) {
        started_ = true;
        row_ = 0;
    }
    while (row_ < selected_.size()) {
        if (!cmp_ && !start_row()) continue;
        const PairPlan& p = *selected_[row_];
        const TensorInfo& ta = a_.tensors[static_cast<size_t>(p.a)];
        const TensorInfo& tb = b_.tensors[static_cast<size_t>(p.b)];
        window_first_ = next_;
        window_n_ = std::min(step_rows_, p.rows - next_);
        next_ += window_n_;
        step->inputs.push_back(range_of(ta, ta.file_index, p.a_row0 + window_first_, window_n_, p.row_elements));
        step->inputs.push_back(
            range_of(tb, b_sources_ + tb.file_index, p.b_row0 + window_first_, window_n_, p.row_elements));
        // The pair's bytes spread over its windows, so that the steps' work adds up to total_work().
        const uint64_t bytes = ta.nbytes + tb.nbytes;
        step->work = bytes / p.rows * window_n_ + (next_ == p.rows ? bytes % p.rows : 0);
        step->tensor = p.a;
        step->max_parts = static_cast<uint32_t>(std::min<uint64_t>((window_n_ + unit_ - 1) / unit_, kMaxRowParts));
        const size_t window = static_cast<size_t>(window_n_ * p.row_elements);
        floats_a_.resize(window);
        floats_b_.resize(window);
        swapped_.resize(step->max_parts);
        status_a_.assign(step->max_parts, ok_status());
        status_b_.assign(step->max_parts, ok_status());
        return true;
    }
    return false;
}

Status CompareJob::decode(bool side_b, const ByteSpan& bytes, uint64_t first_row, uint64_t n_rows, uint32_t part) {
    const PairPlan& p = *selected_[row_];
    const ModelInfo& m = side_b ? b_ : a_;
    const TensorInfo& t = m.tensors[static_cast<size_t>(side_b ? p.b : p.a)];
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint64_t row0 = (side_b ? p.b_row0 : p.a_row0) + window_first_;
    const uint64_t first = row0 * p.row_elements, n = window_n_ * p.row_elements;
    if (first % traits.block_elems != 0 || n % traits.block_elems != 0) {
        return make_error(Error::kBadShape, t.info_offset, "diff.window");
    }
    // This part's rows [first_row, first_row + n_rows) of the window: whole blocks (the parts are cut at
    // multiples of the unit, which keeps both sides on block boundaries).
    const uint64_t skip = first_row * p.row_elements / traits.block_elems * traits.block_bytes;
    const uint64_t count = n_rows * p.row_elements;
    const uint64_t nbytes = count / traits.block_elems * traits.block_bytes;
    if (bytes.size != n / traits.block_elems * traits.block_bytes) {
        return make_error(Error::kTruncated, t.offset, "compare: window bytes");
    }
    const uint8_t* from = bytes.data + skip;
    if (m.big_endian) {
        std::vector<uint8_t>& scratch = swapped_[part];
        scratch.assign(from, from + nbytes);
        WS_TRY(swap_to_little_endian(t.dtype, scratch.data(), nbytes));
        from = scratch.data();
    }
    float* out = (side_b ? floats_b_ : floats_a_).data() + first_row * p.row_elements;
    return dequantize(t.dtype, from, count, out);
}

void CompareJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    uint64_t r0 = 0, r1 = 0;
    part_rows(window_n_, unit_, part, parts, &r0, &r1);
    if (r1 <= r0) return;
    status_a_[part] = decode(false, inputs[0], r0, r1 - r0, part);
    status_b_[part] = decode(true, inputs[1], r0, r1 - r0, part);
}

Status CompareJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    // A's problem before B's, the first part's first: what one run over the window would report.
    for (const std::vector<Status>* side : {&status_a_, &status_b_}) {
        for (const Status& s : *side) {
            if (s.ok()) continue;
            incomparable(std::string(side == &status_a_ ? "A" : "B") + ": cannot decode the tensor (" +
                         error_name(s.code) + ")");
            return ok_status();
        }
    }
    const PairPlan& p = *selected_[row_];
    const Status s = cmp_->add_window(window_first_, window_n_, floats_a_.data(), floats_b_.data());
    if (!s.ok()) {
        incomparable(std::string("internal error: ") + s.what);
        return ok_status();
    }
    if (next_ >= p.rows) {
        report_.tensors[row_] = cmp_->finish(std::move(report_.tensors[row_]));
        finish_row();
        std::vector<float>().swap(floats_a_);
        std::vector<float>().swap(floats_b_);
    }
    return ok_status();
}

Status CompareJob::unreadable(const ByteRange& range) {
    incomparable(std::string(range.source < b_sources_ ? "A" : "B") +
                 ": the tensor's data lies outside its file (truncated?)");
    return ok_status();
}

}  // namespace ws
