// SPDX-License-Identifier: MIT
#include "weightstream/split_job.h"

#include <algorithm>

namespace ws {

SplitJob::SplitJob(Job& inner, SplitPlan plan, uint64_t data_offset, std::vector<uint64_t> ends)
    : inner_(inner), plan_(std::move(plan)), data_offset_(data_offset), end_(std::move(ends)) {}

Result<std::unique_ptr<SplitJob>> SplitJob::make(Job& inner, const GgufLayout& inner_layout, SplitPlan plan) {
    const Status bad = make_error(Error::kInternal, 0, "split.plan");
    const size_t n = inner_layout.tensor_offsets.size();
    if (plan.parts.empty() || plan.tensors != n || inner_layout.tensor_nbytes.size() != n ||
        inner_layout.tensor_padding.size() != n) {
        return bad;
    }
    // Part k is the run of the inner stream from its first tensor to the end of its last one's padding.
    std::vector<uint64_t> ends;
    uint64_t at = inner_layout.data_offset;
    size_t next = 0;
    for (const SplitPart& part : plan.parts) {
        if (part.first != next || part.count > n - next || part.layout.tensor_nbytes.size() != part.count ||
            part.layout.tensor_padding.size() != part.count) {
            return bad;
        }
        for (size_t j = 0; j < part.count; ++j, ++next) {
            if (inner_layout.tensor_offsets[next] != at ||
                inner_layout.tensor_nbytes[next] != part.layout.tensor_nbytes[j] ||
                inner_layout.tensor_padding[next] != part.layout.tensor_padding[j]) {
                return bad;
            }
            at += inner_layout.tensor_nbytes[next] + inner_layout.tensor_padding[next];
        }
        ends.push_back(at);
    }
    if (next != n || at != inner_layout.file_size) return bad;
    return std::unique_ptr<SplitJob>(new SplitJob(inner, std::move(plan), inner_layout.data_offset, std::move(ends)));
}

bool SplitJob::next(JobStep* step) {
    *step = JobStep();
    if (failed_) return false;
    for (;;) {
        if (pos_ >= data_offset_) {
            // A part is over when its bytes are: the next one starts with its header (an empty part is over at once).
            while (header_done_ && pos_ >= end_[part_] && part_ + 1 < plan_.parts.size()) {
                ++part_;
                header_done_ = false;
            }
            if (!header_done_) {
                header_done_ = true;
                step_ = Step::kHeader;
                step->output = static_cast<uint32_t>(part_);
                return true;
            }
        }
        if (!rest_.empty()) {
            step_ = Step::kRest;
            step->output = static_cast<uint32_t>(part_);
            return true;
        }
        if (inner_done_) return false;
        if (inner_.next(step)) {
            step_ = Step::kInner;
            step->output = static_cast<uint32_t>(part_);
            return true;
        }
        inner_done_ = true;
        *step = JobStep();
        if (pos_ != end_.back()) {
            // The inner job ended short of its layout: a step that reports it (next() cannot).
            step_ = Step::kShort;
            return true;
        }
    }
}

void SplitJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    if (step_ == Step::kInner) inner_.run(inputs, part, parts);
}

Status SplitJob::route(ByteSpan bytes, ByteSpan* out) {
    *out = ByteSpan();
    uint64_t taken = 0;
    if (pos_ < data_offset_) {
        taken = std::min<uint64_t>(bytes.size, data_offset_ - pos_);  // the inner header: not written
    } else {
        if (pos_ >= end_[part_] && bytes.size > 0) {
            failed_ = true;  // past the last part's end
            return make_error(Error::kInternal, pos_, "split.stream");
        }
        taken = std::min<uint64_t>(bytes.size, end_[part_] - pos_);
        *out = {bytes.data, taken};
    }
    pos_ += taken;
    if (taken < bytes.size) rest_.assign(bytes.data + taken, bytes.data + bytes.size);
    return ok_status();
}

Status SplitJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    switch (step_) {
        case Step::kShort:
            failed_ = true;
            return make_error(Error::kInternal, pos_, "split.stream");
        case Step::kHeader: {
            const std::vector<uint8_t>& h = plan_.parts[part_].layout.header;
            *out = {h.data(), h.size()};
            return ok_status();
        }
        case Step::kInner: {
            ByteSpan inner_out;
            const Status s = inner_.complete(&inner_out);
            if (!s.ok()) {
                failed_ = true;
                return s;
            }
            return route(inner_out, out);
        }
        case Step::kRest:
            held_.swap(rest_);
            rest_.clear();
            return route({held_.data(), held_.size()}, out);
    }
    return ok_status();
}

Status SplitJob::unreadable(const ByteRange& range) {
    const Status s = inner_.unreadable(range);
    if (!s.ok()) failed_ = true;
    return s;
}

}  // namespace ws
