// SPDX-License-Identifier: MIT
#include "weightstream/quantize_job.h"

#include <algorithm>

#include "ops/copy_piece.h"
#include "ops/row_encoder.h"
#include "weightstream/quantize.h"

namespace ws {

QuantizeJob::QuantizeJob(const ModelInfo& in, QuantPlan plan) : in_(in), plan_(std::move(plan)) {
    for (const PlannedTensor& p : plan_.tensors) total_work_ += in_.tensors[p.input_index].nbytes;
}

Result<std::unique_ptr<QuantizeJob>> QuantizeJob::make(const ModelInfo& in, const RecipeOptions& options) {
    // A big-endian GGUF stores its data byte-swapped; llama-quantize reads little-endian files only.
    if (in.big_endian) return make_error(Error::kUnsupported, 0, "endianness");
    WS_ASSIGN_OR_RETURN(QuantPlan plan, plan_quantization(in, options));
    for (const PlannedTensor& p : plan.tensors) {
        if (!p.quantize) continue;
        const TensorInfo& t = in.tensors[p.input_index];
        if (!quantize_supported(p.out.dtype)) return make_error(Error::kUnsupported, t.info_offset, "dtype");
        uint64_t bytes = 0;
        if (t.ne[0] <= 0 || !dtype_bytes_for(t.dtype, static_cast<uint64_t>(t.ne[0]), &bytes) ||
            !dtype_bytes_for(p.out.dtype, static_cast<uint64_t>(t.ne[0]), &bytes)) {
            return make_error(Error::kBadShape, t.info_offset, "tensor.ne");
        }
    }
    return std::unique_ptr<QuantizeJob>(new QuantizeJob(in, std::move(plan)));
}

void QuantizeJob::start_tensor() {
    fed_ = written_ = 0;
    padded_ = false;
    windows_ = RowWindows();
    if (k_ >= plan_.tensors.size() || !plan_.tensors[k_].quantize) return;
    const PlannedTensor& p = plan_.tensors[k_];
    const TensorInfo& t = in_.tensors[p.input_index];
    dtype_bytes_for(t.dtype, static_cast<uint64_t>(t.ne[0]), &in_row_);  // checked by make()
    dtype_bytes_for(p.out.dtype, static_cast<uint64_t>(t.ne[0]), &out_row_);
    windows_ = RowWindows(static_cast<uint64_t>(t.ne[1]), static_cast<uint64_t>(t.ne[2] * t.ne[3]),
                          static_cast<uint64_t>(t.ne[0]), 1, kQuantizeWindowElements);
}

bool QuantizeJob::next(JobStep* step) {
    *step = JobStep();
    if (failed_) return false;
    if (!started_) {
        started_ = true;
        k_ = 0;
        start_tensor();
        step_ = Step::kHeader;
        part_status_.assign(1, ok_status());
        return true;
    }
    for (; k_ < plan_.tensors.size(); ++k_, start_tensor()) {
        const PlannedTensor& p = plan_.tensors[k_];
        const TensorInfo& t = in_.tensors[p.input_index];
        step->tensor = static_cast<int64_t>(p.input_index);
        if (!p.quantize && fed_ < t.nbytes) {
            // A piece of whole blocks (validate_row_data takes whole blocks).
            step->inputs.push_back(copy_piece(t, fed_, dtype_traits(t.dtype).block_bytes));
            step->work = step->inputs[0].size;
            fed_ += step->work;
            step_ = Step::kCopy;
            part_status_.assign(1, ok_status());
            return true;
        }
        if (p.quantize && windows_.next()) {
            const uint64_t rows = windows_.rows();
            const uint64_t n = rows * in_row_;
            step->inputs.push_back({t.file_index, t.offset + windows_.first_row() * in_row_, n});
            step->work = n;
            step->max_parts = row_parts(rows, 1);
            fed_ += n;
            step_ = Step::kWindow;
            floats_.resize(static_cast<size_t>(rows * static_cast<uint64_t>(t.ne[0])));
            out_.resize(static_cast<size_t>(rows * out_row_));
            part_status_.assign(step->max_parts, ok_status());
            return true;
        }
        if (padded_) continue;
        padded_ = true;  // the tensor's data is all handed out
        if (p.quantize) ++quantized_;
        if (plan_.layout.tensor_padding[k_] > 0) {
            zeros_.assign(static_cast<size_t>(plan_.layout.tensor_padding[k_]), 0);
            step_ = Step::kPadding;
            part_status_.assign(1, ok_status());
            return true;
        }
    }
    step->tensor = -1;
    return false;
}

void QuantizeJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    if (step_ == Step::kHeader || step_ == Step::kPadding) return;
    const PlannedTensor& p = plan_.tensors[k_];
    const TensorInfo& t = in_.tensors[p.input_index];
    Status& status = part_status_[part];
    if (step_ == Step::kCopy) {
        // Copied as stored; llama-quantize's loader still checks the values.
        piece_ = inputs[0];
        if (!validate_row_data(t.dtype, piece_.data, piece_.size)) {
            status = make_error(Error::kBadShape, t.offset, "tensor.data");
        }
        return;
    }
    const uint64_t n_per_row = static_cast<uint64_t>(t.ne[0]);
    uint64_t r0 = 0, r1 = 0;
    part_rows(windows_.rows(), 1, part, parts, &r0, &r1);
    const float* imatrix =
        p.imatrix ? p.imatrix->values.data() + windows_.matrix() % static_cast<uint64_t>(t.ne[2]) * n_per_row : nullptr;
    const RowEncoding e{t.dtype, p.out.dtype, n_per_row, true, false};
    const Status s = encode_rows(e, inputs[0].data + r0 * in_row_, r1 - r0, imatrix, floats_.data() + r0 * n_per_row,
                                 out_.data() + r0 * out_row_);
    if (!s.ok()) status = make_error(s.code, t.offset, s.what);
}

Status QuantizeJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    const Status problem = parts_verdict(part_status_);
    if (!problem.ok()) {
        failed_ = true;
        return problem;
    }
    switch (step_) {
        case Step::kHeader:
            *out = {plan_.layout.header.data(), plan_.layout.header.size()};
            return ok_status();
        case Step::kPadding:
            *out = {zeros_.data(), zeros_.size()};
            return ok_status();
        case Step::kCopy:
            *out = piece_;
            break;
        case Step::kWindow:
            *out = {out_.data(), out_.size()};
            break;
    }
    written_ += out->size;
    const PlannedTensor& p = plan_.tensors[k_];
    const TensorInfo& t = in_.tensors[p.input_index];
    const bool last = p.quantize ? windows_.last() : fed_ == t.nbytes;
    if (last && written_ != p.out.nbytes) {
        failed_ = true;
        return make_error(Error::kInternal, t.offset, "quantize: output size");
    }
    return ok_status();
}

}  // namespace ws
