// SPDX-License-Identifier: MIT
#include "weightstream/convert_job.h"

#include <algorithm>
#include <cstring>

#include "ops/copy_piece.h"
#include "ops/look_ahead.h"
#include "ops/row_encoder.h"
#include "weightstream/dequant.h"
#include "weightstream/gguf_writer.h"

namespace ws {
namespace {

// BOOL/U8/U16/U32 elements -> the little-endian signed type twice as wide (BOOL: I8 0/1).
void widen(DType from, const uint8_t* src, uint64_t n, uint8_t* dst) {
    const uint32_t in_size = dtype_traits(from).block_bytes;
    const uint32_t out_size = from == DType::BOOL ? 1 : 2 * in_size;
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t v = 0;
        for (uint32_t b = 0; b < in_size; ++b) v |= static_cast<uint64_t>(src[i * in_size + b]) << (8 * b);
        if (from == DType::BOOL) v = v != 0;
        for (uint32_t b = 0; b < out_size; ++b) dst[i * out_size + b] = static_cast<uint8_t>(v >> (8 * b));
    }
}

bool permuted(Transform t) {
    return t == Transform::kPermuteQ || t == Transform::kPermuteK;
}

}  // namespace

// A window whose rows are written as stored (a stacked tensor's expert copied): its output is its input.
bool ConvertJob::passes_through(const Rows& r) {
    return !r.encode && !r.swap && r.head_rows == 0;
}

ConvertJob::ConvertJob(const ModelInfo& in, ConvertPlan plan, std::vector<Rows> rows)
    : in_(in), plan_(std::move(plan)), rows_(std::move(rows)) {
    for (const ConvertTensor& p : plan_.tensors) {
        if (p.experts.empty()) total_work_ += in_.tensors[p.input].nbytes;
        for (size_t e : p.experts) total_work_ += in_.tensors[e].nbytes;
    }
}

Result<std::unique_ptr<ConvertJob>> ConvertJob::make(const ModelInfo& in, const ConvertOptions& options,
                                                     ConvertRefusal* refusal) {
    WS_ASSIGN_OR_RETURN(ConvertPlan plan, plan_conversion(in, options, refusal));
    std::vector<Rows> all;
    for (const ConvertTensor& p : plan.tensors) {
        const TensorInfo& t = in.tensors[p.input];
        const DTypeTraits& traits = dtype_traits(t.dtype);
        Rows r;
        r.swap = in.big_endian;
        r.encode = p.action == ConvertAction::kEncode || p.transform == Transform::kPlusOne;
        const bool quantized = r.encode && dtype_traits(p.out.dtype).kind == DTypeKind::kQuantized;
        const bool stacked = !p.experts.empty();
        r.data = p.action == ConvertAction::kWiden                        ? Step::kWiden
                 : stacked || r.encode || r.swap || permuted(p.transform) ? Step::kWindow
                                                                          : Step::kCopy;
        bool sound = true;
        if (stacked) {
            // A window is rows of one expert (RowWindows never crosses matrices): matrix E is expert E's tensor.
            sound = p.action != ConvertAction::kWiden && t.ne[0] > 0 && t.n_elements > 0 && t.n_elements % t.ne[0] == 0;
            r.row_elements = static_cast<uint64_t>(std::max<int64_t>(1, t.ne[0]));
            r.rows_per_matrix = t.n_elements / r.row_elements;
            r.matrices = p.experts.size();
        } else if (r.data == Step::kWindow && permuted(p.transform)) {
            // Rows are the outermost dimension's, as convert_hf_to_gguf.py's permute() reshapes them.
            const uint64_t outer = static_cast<uint64_t>(t.ne[gguf_n_dims(t.ne) - 1]);
            const Result<uint64_t> head_rows = hf_head_rows(outer, p.heads);
            sound = head_rows.ok() && t.nbytes % outer == 0;
            if (sound) {
                r.head_rows = r.granule = head_rows.value();
                r.row_elements = t.n_elements / outer;
                r.rows_per_matrix = outer;
                r.matrices = 1;
                // A quantized row is ne[0] elements, and importance is per matrix of them.
                sound = !quantized || (gguf_n_dims(t.ne) == 2 && r.row_elements == static_cast<uint64_t>(t.ne[0]));
            }
        } else if (r.data == Step::kWindow && quantized) {
            sound = t.ne[0] > 0;
            r.row_elements = static_cast<uint64_t>(std::max<int64_t>(1, t.ne[0]));
            r.rows_per_matrix = static_cast<uint64_t>(t.ne[1]);
            r.matrices = static_cast<uint64_t>(t.ne[2] * t.ne[3]);
        } else if (r.data != Step::kWiden && traits.block_elems > 0) {
            // Elements are independent: rows of one block (a type that is windowed has a block layout).
            r.row_elements = traits.block_elems;
            r.rows_per_matrix = t.n_elements / traits.block_elems;
            r.matrices = 1;
        }
        if (sound && r.data != Step::kWiden) {
            if (r.encode) {
                sound = dtype_bytes_for(t.dtype, r.row_elements, &r.in_row) &&
                        dtype_bytes_for(p.out.dtype, r.row_elements, &r.out_row);
            } else if (stacked) {
                sound = dtype_bytes_for(t.dtype, r.row_elements, &r.in_row) && r.in_row * r.rows_per_matrix == t.nbytes;
                r.out_row = r.in_row;
            } else {
                r.in_row = r.out_row = r.head_rows ? t.nbytes / r.rows_per_matrix : traits.block_bytes;
            }
        }
        if (!sound) {
            if (refusal) {
                *refusal = {ConvertRefusal::About::kTensor, static_cast<int64_t>(p.input),
                            "tensor " + t.name +
                                (permuted(p.transform) ? std::string(": cannot apply ") + transform_name(p.transform) +
                                                             " (" + std::to_string(t.ne[gguf_n_dims(t.ne) - 1]) +
                                                             " rows, " + std::to_string(p.heads) + " heads)"
                                                       : std::string())};
            }
            return make_error(Error::kBadShape, t.info_offset, "tensor.ne");
        }
        all.push_back(r);
    }
    return std::unique_ptr<ConvertJob>(new ConvertJob(in, std::move(plan), std::move(all)));
}

void ConvertJob::start_tensor() {
    at_.fed = at_.written = 0;
    at_.padded = false;
    at_.windows = RowWindows();
    if (at_.k >= plan_.tensors.size() || rows_[at_.k].data != Step::kWindow) return;
    const Rows& r = rows_[at_.k];
    at_.windows = RowWindows(r.rows_per_matrix, r.matrices, r.row_elements, r.granule, kConvertWindowElements);
}

Status ConvertJob::tensor_error(const Status& s) const {
    return make_error(s.code, in_.tensors[plan_.tensors[at_.k].input].info_offset, s.what);
}

bool ConvertJob::advance(JobStep* step) {
    *step = JobStep();
    if (!at_.started) {
        at_.started = true;
        at_.k = 0;
        start_tensor();
        at_.step = Step::kHeader;
        return true;
    }
    for (; at_.k < plan_.tensors.size(); ++at_.k, start_tensor()) {
        const ConvertTensor& p = plan_.tensors[at_.k];
        const TensorInfo& t = in_.tensors[p.input];
        const Rows& r = rows_[at_.k];
        step->tensor = static_cast<int64_t>(p.input);
        if (r.data == Step::kCopy && at_.fed < t.nbytes) {
            step->inputs.push_back(copy_piece(t, at_.fed));
            step->work = step->inputs[0].size;
            at_.fed += step->work;
            at_.step = Step::kCopy;
            return true;
        }
        if (r.data == Step::kWiden && at_.fed < t.nbytes) {
            const uint32_t in_size = dtype_traits(t.dtype).block_bytes;
            const uint64_t first = at_.fed / in_size;
            at_.step_elements = std::min(kConvertWindowElements, t.n_elements - first);
            const uint64_t n = at_.step_elements * in_size;
            step->inputs.push_back({t.file_index, t.offset + at_.fed, n});
            step->work = n;
            at_.fed += n;
            at_.step = Step::kWiden;
            return true;
        }
        if (at_.windows.next()) {
            const uint64_t rows = at_.windows.rows();
            const uint64_t n = rows * r.in_row;
            step->inputs.push_back(input_rows(at_.k, at_.windows.first_row(), rows));
            // A stacked tensor's window is rows of one expert: the step works on that expert's tensor.
            if (!p.experts.empty()) step->tensor = static_cast<int64_t>(p.experts[size_t(at_.windows.matrix())]);
            step->work = n;
            // Rows passed through unchanged are the step's output as they are (one part: nothing to run).
            step->max_parts = passes_through(r) ? 1 : row_parts(rows, r.granule);
            at_.fed += n;
            at_.step = Step::kWindow;
            return true;
        }
        if (at_.padded) continue;
        at_.padded = true;  // the tensor's data is all handed out
        if (p.padding > 0) {
            at_.step = Step::kPadding;
            return true;
        }
    }
    step->tensor = -1;
    return false;
}

bool ConvertJob::next(JobStep* step) {
    if (failed_ || !advance(step)) {
        *step = JobStep();
        return false;
    }
    part_status_.assign(step->max_parts, ok_status());
    if (at_.step == Step::kWiden) {
        out_.set_size(
            static_cast<size_t>(at_.step_elements * dtype_traits(plan_.tensors[at_.k].out.dtype).block_bytes));
    } else if (at_.step == Step::kWindow) {
        const Rows& r = rows_[at_.k];
        const uint64_t rows = at_.windows.rows();
        if (r.swap || r.head_rows) staged_.set_size(static_cast<size_t>(rows * r.in_row));
        if (r.encode) {
            floats_.set_size(static_cast<size_t>(rows * r.row_elements));
            out_.set_size(static_cast<size_t>(rows * r.out_row));
        }
    } else if (at_.step == Step::kPadding) {
        zeros_.assign(static_cast<size_t>(plan_.tensors[at_.k].padding), 0);
    }
    // For the driver to read while this step runs.
    step->next_inputs = next_reading_inputs(&at_, [this](JobStep* s) { return advance(s); });
    return true;
}

void ConvertJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    if (at_.step == Step::kHeader || at_.step == Step::kPadding) return;
    const ConvertTensor& p = plan_.tensors[at_.k];
    const TensorInfo& t = in_.tensors[p.input];
    Status& status = part_status_[part];
    if (at_.step == Step::kCopy) {
        piece_ = inputs[0];
        return;
    }
    if (at_.step == Step::kWiden) {
        widen(t.dtype, inputs[0].data, at_.step_elements, out_.data());
        return;
    }
    const Rows& r = rows_[at_.k];
    uint64_t r0 = 0, r1 = 0;
    part_rows(at_.windows.rows(), r.granule, part, parts, &r0, &r1);
    if (passes_through(r)) {
        piece_ = inputs[0];
        return;
    }
    if (r1 <= r0) return;
    // Rows only rearranged are the step's output in staged_; encoded ones in out_ (staged first when rearranged).
    uint8_t* staged = r.swap || r.head_rows ? staged_.data() + r0 * r.in_row : nullptr;
    const Status s = convert_rows(at_.k, inputs[0].data + r0 * r.in_row, r1 - r0, at_.windows.matrix(), staged,
                                  r.encode ? floats_.data() + r0 * r.row_elements : nullptr,
                                  r.encode ? out_.data() + r0 * r.out_row : staged);
    if (!s.ok()) status = s;
}

ByteRange ConvertJob::input_rows(size_t k, uint64_t first_row, uint64_t n_rows) const {
    const ConvertTensor& p = plan_.tensors[k];
    const Rows& r = rows_[k];
    // A stacked tensor's matrix E is expert E's tensor (the rows asked for lie in one matrix).
    const uint64_t expert = p.experts.empty() ? 0 : first_row / r.rows_per_matrix;
    const TensorInfo& t = in_.tensors[p.experts.empty() ? p.input : p.experts[static_cast<size_t>(expert)]];
    return {t.file_index, t.offset + (first_row - expert * r.rows_per_matrix) * r.in_row, n_rows * r.in_row};
}

Status ConvertJob::convert_rows(size_t k, const uint8_t* src, uint64_t n_rows, uint64_t matrix, uint8_t* staged,
                                float* floats, uint8_t* out) const {
    const ConvertTensor& p = plan_.tensors[k];
    const TensorInfo& t = in_.tensors[p.input];
    const Rows& r = rows_[k];
    auto at_tensor = [&](const Status& s) { return make_error(s.code, t.info_offset, s.what); };
    const uint64_t n = n_rows * r.in_row;
    if (!r.encode || r.swap || r.head_rows) {
        // Rearranged (or copied) into the output, or into `staged` to be encoded from. The rows are whole heads, so
        // they permute among themselves.
        uint8_t* dst = r.encode ? staged : out;
        Status s = ok_status();
        if (r.head_rows) {
            s = hf_permute_rows(src, n_rows, r.head_rows, r.in_row, dst);
        } else {
            std::memcpy(dst, src, static_cast<size_t>(n));
        }
        if (s.ok() && r.swap) s = swap_to_little_endian(t.dtype, dst, n);
        if (!s.ok()) return at_tensor(s);
        src = dst;
    }
    if (!r.encode) return ok_status();
    // Importance is per matrix of the output (a stacked tensor: per expert).
    const float* imatrix =
        p.imatrix ? p.imatrix + matrix % static_cast<uint64_t>(p.out.ne[2]) * static_cast<uint64_t>(p.out.ne[0])
                  : nullptr;
    const RowEncoding e{t.dtype, p.out.dtype, r.row_elements, false, p.transform == Transform::kPlusOne};
    const Status s = encode_rows(e, src, n_rows, imatrix, floats, out);
    return s.ok() ? ok_status() : at_tensor(s);
}

Status ConvertJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    const Status problem = parts_verdict(part_status_);
    if (!problem.ok()) {
        failed_ = true;
        return problem;
    }
    bool last = false;
    switch (at_.step) {
        case Step::kHeader:
            *out = {plan_.header.data(), plan_.header.size()};
            return ok_status();
        case Step::kPadding:
            *out = {zeros_.data(), zeros_.size()};
            return ok_status();
        case Step::kCopy:
            *out = piece_;
            last = at_.fed == in_.tensors[plan_.tensors[at_.k].input].nbytes;
            break;
        case Step::kWiden:
            *out = {out_.data(), out_.size()};
            last = at_.fed == in_.tensors[plan_.tensors[at_.k].input].nbytes;
            break;
        case Step::kWindow:
            *out = rows_[at_.k].encode            ? ByteSpan{out_.data(), out_.size()}
                   : passes_through(rows_[at_.k]) ? piece_
                                                  : ByteSpan{staged_.data(), staged_.size()};
            last = at_.windows.last();
            break;
    }
    at_.written += out->size;
    const ConvertTensor& p = plan_.tensors[at_.k];
    if (last && at_.written != p.out.nbytes) {
        failed_ = true;
        return tensor_error(make_error(Error::kInternal, 0, "convert: output size"));
    }
    return ok_status();
}

Status ConvertJob::unreadable(const ByteRange&) {
    failed_ = true;
    return make_error(Error::kTruncated, in_.tensors[plan_.tensors[at_.k].input].offset, "tensor.data");
}

}  // namespace ws
