// SPDX-License-Identifier: MIT
#include "weightstream/edit_job.h"

#include "ops/copy_piece.h"

namespace ws {

EditJob::EditJob(const ModelInfo& in, EditPlan plan) : in_(in), plan_(std::move(plan)) {
    for (const TensorInfo& t : in_.tensors) total_work_ += t.nbytes;
}

Result<std::unique_ptr<EditJob>> EditJob::make(const ModelInfo& in, const MetadataEdits& edits,
                                               std::string* failed_key) {
    WS_ASSIGN_OR_RETURN(EditPlan plan, plan_gguf_edit(in, edits, failed_key));
    return std::unique_ptr<EditJob>(new EditJob(in, std::move(plan)));
}

Result<std::unique_ptr<EditJob>> EditJob::make(const ModelInfo& in, EditPlan plan) {
    const size_t n = in.tensors.size();
    const GgufLayout& l = plan.layout;
    if (l.tensor_offsets.size() != n || l.tensor_nbytes.size() != n || l.tensor_padding.size() != n) {
        return make_error(Error::kInternal, 0, "plan");
    }
    for (size_t i = 0; i < n; ++i) {
        if (l.tensor_nbytes[i] != in.tensors[i].nbytes) return make_error(Error::kInternal, 0, "plan");
    }
    return std::unique_ptr<EditJob>(new EditJob(in, std::move(plan)));
}

bool EditJob::next(JobStep* step) {
    *step = JobStep();
    if (failed_) return false;
    if (!started_) {
        started_ = true;
        step_ = Step::kHeader;
        return true;
    }
    for (; k_ < in_.tensors.size(); ++k_, fed_ = 0, padded_ = false) {
        const TensorInfo& t = in_.tensors[k_];
        step->tensor = static_cast<int64_t>(k_);
        if (fed_ < t.nbytes) {
            step->inputs.push_back(copy_piece(t, fed_));
            step->work = step->inputs[0].size;
            fed_ += step->work;
            step_ = Step::kCopy;
            return true;
        }
        if (padded_) continue;
        padded_ = true;  // the tensor's data is all handed out
        if (plan_.layout.tensor_padding[k_] > 0) {
            zeros_.assign(static_cast<size_t>(plan_.layout.tensor_padding[k_]), 0);
            step_ = Step::kPadding;
            return true;
        }
    }
    step->tensor = -1;
    return false;
}

void EditJob::run(const ByteSpan* inputs, uint32_t, uint32_t) {
    if (step_ == Step::kCopy) piece_ = inputs[0];
}

Status EditJob::complete(ByteSpan* out) {
    switch (step_) {
        case Step::kHeader:
            *out = {plan_.layout.header.data(), plan_.layout.header.size()};
            break;
        case Step::kCopy:
            *out = piece_;
            break;
        case Step::kPadding:
            *out = {zeros_.data(), zeros_.size()};
            break;
    }
    return ok_status();
}

Status EditJob::unreadable(const ByteRange&) {
    failed_ = true;
    return make_error(Error::kTruncated, in_.tensors[k_].offset, "tensor.data");
}

}  // namespace ws
