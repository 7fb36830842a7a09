// SPDX-License-Identifier: MIT
#include "weightstream/quantize_job.h"

#include <algorithm>

#include "weightstream/dequant.h"
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
    matrix_ = row_ = 0;
    if (k_ >= plan_.tensors.size() || !plan_.tensors[k_].quantize) return;
    const PlannedTensor& p = plan_.tensors[k_];
    const TensorInfo& t = in_.tensors[p.input_index];
    dtype_bytes_for(t.dtype, static_cast<uint64_t>(t.ne[0]), &in_row_);  // checked by make()
    dtype_bytes_for(p.out.dtype, static_cast<uint64_t>(t.ne[0]), &out_row_);
    window_ = std::max<int64_t>(1, std::min<int64_t>(t.ne[1], static_cast<int64_t>(kQuantizeWindowElements) / t.ne[0]));
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
            const uint64_t block = std::max<uint32_t>(1, dtype_traits(t.dtype).block_bytes);
            const uint64_t n = std::min(std::max(block, kCopyPieceBytes / block * block), t.nbytes - fed_);
            step->inputs.push_back({t.file_index, t.offset + fed_, n});
            step->work = n;
            fed_ += n;
            step_ = Step::kCopy;
            part_status_.assign(1, ok_status());
            return true;
        }
        const int64_t rows_per_matrix = t.ne[1], n_matrices = t.ne[2] * t.ne[3];
        if (p.quantize && rows_per_matrix > 0 && matrix_ < n_matrices) {
            const int64_t rows = std::min(window_, rows_per_matrix - row_);
            const uint64_t first = static_cast<uint64_t>(matrix_ * rows_per_matrix + row_) * in_row_;
            const uint64_t n = static_cast<uint64_t>(rows) * in_row_;
            step->inputs.push_back({t.file_index, t.offset + first, n});
            step->work = n;
            // Whole rows per part; a part gets at least a few rows' worth of work.
            step->max_parts = static_cast<uint32_t>(std::min<int64_t>(std::max<int64_t>(1, rows / 4), 256));
            fed_ += n;
            step_ = Step::kWindow;
            rows_ = rows;
            step_matrix_ = matrix_;
            floats_.resize(static_cast<size_t>(rows * t.ne[0]));
            out_.resize(static_cast<size_t>(static_cast<uint64_t>(rows) * out_row_));
            part_status_.assign(step->max_parts, ok_status());
            if ((row_ += rows) == rows_per_matrix) {
                row_ = 0;
                ++matrix_;
            }
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
    const int64_t n_per_row = t.ne[0];
    const int64_t r0 = rows_ * part / parts, r1 = rows_ * (part + 1) / parts;
    const uint8_t* src = inputs[0].data + static_cast<uint64_t>(r0) * in_row_;
    const uint64_t src_bytes = static_cast<uint64_t>(r1 - r0) * in_row_;
    if (!validate_row_data(t.dtype, src, src_bytes)) {
        status = make_error(Error::kBadShape, t.offset, "tensor.data");
        return;
    }
    float* floats = floats_.data() + r0 * n_per_row;
    Status s = dequantize(t.dtype, src, static_cast<uint64_t>((r1 - r0) * n_per_row), floats);
    if (!s.ok()) {
        status = make_error(s.code, t.offset, s.what);
        return;
    }
    const float* imatrix = p.imatrix ? p.imatrix->values.data() + (step_matrix_ % t.ne[2]) * n_per_row : nullptr;
    uint8_t* out = out_.data() + static_cast<uint64_t>(r0) * out_row_;
    s = quantize_rows(p.out.dtype, floats, r1 - r0, n_per_row, imatrix, out);
    if (!s.ok()) {
        status = make_error(s.code, t.offset, s.what);
        return;
    }
    if (!validate_row_data(p.out.dtype, out, static_cast<uint64_t>(r1 - r0) * out_row_)) {
        status = make_error(Error::kBadShape, t.offset, "quantized.data");
    }
}

Status QuantizeJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    // The problem one run over the whole step would report: bad input anywhere before a bad output (the input
    // is checked before anything is quantized), else the first part's.
    const Status* problem = nullptr;
    for (const Status& s : part_status_) {
        if (s.ok()) continue;
        if (!problem) problem = &s;
        if (std::string(s.what) == "tensor.data") {
            problem = &s;
            break;
        }
    }
    if (problem) {
        failed_ = true;
        return *problem;
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
    const bool last = p.quantize ? matrix_ >= t.ne[2] * t.ne[3] : fed_ == t.nbytes;
    if (last && written_ != p.out.nbytes) {
        failed_ = true;
        return make_error(Error::kInternal, t.offset, "quantize: output size");
    }
    return ok_status();
}

}  // namespace ws
