// SPDX-License-Identifier: MIT
#include "weightstream/stats_job.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "weightstream/dequant.h"
#include "weightstream/row_window.h"

namespace ws {

StatsJob::StatsJob(const ModelInfo& model, std::vector<StatsRequest> requests, uint64_t step_bytes)
    : model_(model), requests_(std::move(requests)), step_bytes_(step_bytes) {
    results_.resize(requests_.size());
    offsets_.assign(requests_.size(), 0);
    elements_of_.assign(requests_.size(), 0);
    for (size_t i = 0; i < requests_.size(); ++i) {
        const StatsRequest& q = requests_[i];
        StatsResult& r = results_[i];
        if (q.tensor >= model_.tensors.size()) {
            r.status = make_error(Error::kInternal, 0, "stats.tensor");
            continue;
        }
        const TensorInfo& t = model_.tensors[q.tensor];
        r.problem = decode_problem(model_, t);
        if (!r.problem.empty()) {
            r.status = make_error(Error::kUnsupported, t.info_offset, "tensor.type");
            continue;
        }
        offsets_[i] = t.offset;
        elements_of_[i] = t.n_elements;
        if (q.window) {
            Result<RowWindow> w = row_window(t, q.first_row, q.rows);
            if (!w.ok()) {
                r.status = w.status();
                continue;
            }
            offsets_[i] = w.value().offset;
            elements_of_[i] = w.value().n_elements;
        }
        // What the steps read; a tensor that is not whole blocks fails at its first step (check_decodable()).
        const DTypeTraits& traits = dtype_traits(t.dtype);
        r.nbytes = elements_of_[i] / traits.block_elems * traits.block_bytes;
        total_work_ += r.nbytes;
    }
}

void StatsJob::start_request(size_t from) {
    request_ = from;
    while (request_ < requests_.size() && !results_[request_].status.ok()) ++request_;
    if (request_ == requests_.size()) return;
    const TensorInfo& t = model_.tensors[requests_[request_].tensor];
    elements_ = elements_of_[request_];
    done_ = 0;
    acc_ = StatsAccumulator();
    histograms_.clear();
    run_elements_ = kStatsRun / dequant_floats_per_element(t.dtype);
    failure_ = check_decodable(t.dtype, elements_);
    if (failure_.ok() && run_elements_ % dtype_traits(t.dtype).block_elems != 0) {
        failure_ = make_error(Error::kInternal, 0, "stats.run");  // no type's block is that large
    }
    if (!failure_.ok()) failure_ = make_error(failure_.code, t.info_offset, failure_.what);
}

bool StatsJob::next(JobStep* step) {
    *step = JobStep();
    if (failed_) return false;
    if (!started_) {
        started_ = true;
        start_request(0);
    } else if (request_ < requests_.size() && results_[request_].done) {
        start_request(request_ + 1);
    }
    if (request_ == requests_.size()) return false;
    const TensorInfo& t = model_.tensors[requests_[request_].tensor];
    step->tensor = static_cast<int64_t>(requests_[request_].tensor);
    step_elements_ = 0;
    runs_.clear();
    if (!failure_.ok()) return true;  // a step without input whose complete() reports the failure
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint64_t run_bytes = run_elements_ / traits.block_elems * traits.block_bytes;
    const uint64_t step_runs = std::max<uint64_t>(1, step_bytes_ / run_bytes);
    step_elements_ = std::min(step_runs * run_elements_, elements_ - done_);
    runs_.resize(static_cast<size_t>((step_elements_ + run_elements_ - 1) / run_elements_));
    const uint64_t bytes = step_elements_ / traits.block_elems * traits.block_bytes;
    if (bytes > 0) {
        step->inputs.push_back(
            {t.file_index, offsets_[request_] + done_ / traits.block_elems * traits.block_bytes, bytes});
    }
    step->work = bytes;
    step->max_parts = static_cast<uint32_t>(std::min<size_t>(std::max<size_t>(1, runs_.size()), kStatsMaxParts));
    if (histograms_.size() < step->max_parts) histograms_.resize(step->max_parts);
    return true;
}

void StatsJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    const size_t n_runs = runs_.size();
    const size_t first = n_runs * part / parts, last = n_runs * (part + 1) / parts;
    if (first == last) return;
    const TensorInfo& t = model_.tensors[requests_[request_].tensor];
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint32_t per_element = dequant_floats_per_element(t.dtype);
    const bool big_endian = model_.big_endian;
    // Decoded a run at a time: the floats are summarised while they are still in the cache.
    const uint64_t run_floats = std::min(run_elements_, step_elements_) * per_element;
    std::unique_ptr<float[]> floats(new float[static_cast<size_t>(run_floats)]);
    std::unique_ptr<uint8_t[]> swapped(
        big_endian
            ? new uint8_t[static_cast<size_t>(run_floats / per_element / traits.block_elems * traits.block_bytes)]
            : nullptr);
    const DequantRowFn decode = dequant_row_fn(t.dtype);  // checked decodable when the request started
    GridHistogram& histogram = histograms_[part];
    for (size_t r = first; r < last; ++r) {
        const uint64_t e0 = r * run_elements_, n = std::min(run_elements_, step_elements_ - e0);
        const uint64_t nbytes = n / traits.block_elems * traits.block_bytes;
        const uint8_t* from = inputs[0].data + e0 / traits.block_elems * traits.block_bytes;
        if (big_endian) {
            std::memcpy(swapped.get(), from, static_cast<size_t>(nbytes));
            // Cannot fail: the type has a big-endian layout (decode_problem()) and these are whole blocks.
            (void)swap_to_little_endian(t.dtype, swapped.get(), nbytes);
            from = swapped.get();
        }
        decode(from, floats.get(), static_cast<int64_t>(n));
        const size_t m = static_cast<size_t>(n * per_element);
        runs_[r] = summarise_run(floats.get(), m);
        histogram.add(floats.get(), m);
    }
}

Status StatsJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    if (!failure_.ok()) {
        failed_ = true;
        return failure_;
    }
    acc_.add_runs(runs_.data(), runs_.size());
    done_ += step_elements_;
    if (done_ == elements_) {
        for (const GridHistogram& h : histograms_) acc_.add_histogram(h);
        StatsResult& r = results_[request_];
        r.stats = acc_.finish(requests_[request_].bins);
        r.done = true;
        histograms_.clear();
    }
    return ok_status();
}

Status StatsJob::unreadable(const ByteRange&) {
    failed_ = true;
    return make_error(Error::kTruncated, model_.tensors[requests_[request_].tensor].offset, "tensor.data");
}

}  // namespace ws
