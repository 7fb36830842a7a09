// SPDX-License-Identifier: MIT
#include "weightstream/quantize_job.h"

#include <algorithm>

#include "ops/copy_piece.h"
#include "ops/look_ahead.h"
#include "ops/row_encoder.h"
#include "weightstream/convert_job.h"
#include "weightstream/hf_names.h"
#include "weightstream/quantize.h"
#include "weightstream/utf8.h"

namespace ws {

QuantizeJob::QuantizeJob(const ModelInfo& in, QuantPlan plan, std::unique_ptr<ConvertJob> conversion)
    : in_(in), plan_(std::move(plan)), conversion_(std::move(conversion)) {
    if (conversion_) {
        total_work_ = conversion_->total_work();
    } else {
        for (const PlannedTensor& p : plan_.tensors) total_work_ += in_.tensors[p.input_index].nbytes;
    }
}

QuantizeJob::~QuantizeJob() = default;

Result<QuantPlan> QuantizeJob::checked_plan(const ModelInfo& in, const RecipeOptions& options) {
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
    return plan;
}

Result<std::unique_ptr<QuantizeJob>> QuantizeJob::make(const ModelInfo& in, const RecipeOptions& options) {
    WS_ASSIGN_OR_RETURN(QuantPlan plan, checked_plan(in, options));
    return std::unique_ptr<QuantizeJob>(new QuantizeJob(in, std::move(plan), nullptr));
}

Result<std::unique_ptr<QuantizeJob>> QuantizeJob::make_converted(const ModelInfo& converted,
                                                                 std::unique_ptr<ConvertJob> conversion,
                                                                 const RecipeOptions& options) {
    if (!conversion || conversion->plan().tensors.size() != converted.tensors.size()) {
        return make_error(Error::kInternal, 0, "converted");
    }
    WS_ASSIGN_OR_RETURN(QuantPlan plan, checked_plan(converted, options));
    for (const PlannedTensor& p : plan.tensors) {
        const TensorInfo& t = converted.tensors[p.input_index];
        const ConvertJob::Rows& c = conversion->rows(p.input_index);
        if (t.name != conversion->plan().tensors[p.input_index].out.name) {
            return make_error(Error::kInternal, t.info_offset, "converted");
        }
        if (c.data == ConvertJob::Step::kWiden) return make_error(Error::kUnsupported, t.info_offset, "tensor.type");
        // A quantized row (ne[0] elements) is whole conversion rows, and a head of a permutation whole quantized
        // rows (a permuted matrix's conversion rows are its rows). A copied tensor goes by the conversion's rows.
        const uint64_t ne0 = static_cast<uint64_t>(t.ne[0]);
        if (p.quantize && !(c.in_row > 0 && c.row_elements > 0 && ne0 % c.row_elements == 0 &&
                            (c.granule == 1 || c.row_elements == ne0))) {
            return make_error(Error::kBadShape, t.info_offset, "tensor.ne");
        }
    }
    return std::unique_ptr<QuantizeJob>(new QuantizeJob(converted, std::move(plan), std::move(conversion)));
}

Status QuantizeJob::one_pass_source(const ModelInfo& in, const ConvertOptions& found, bool* converted,
                                    std::string* why) {
    *converted = false;
    why->clear();
    if (in.format != Format::kSafetensors) return ok_status();
    if (!found.hf && !found.config_problem.empty()) {
        *why = found.config_problem;
        return make_error(Error::kUnsupported, 0, "config.json");
    }
    if (!found.hf) {
        if (in.find("general.architecture")) return ok_status();
        *why = found.config_name +
               ": missing: a Hugging Face checkpoint is quantized through its conversion, which needs config.json "
               "(the architecture, the head counts)";
        return make_error(Error::kUnsupported, 0, "config.json");
    }
    const HfConfig& c = *found.hf;
    if (c.family.empty()) {
        const std::string named =
            !c.model_type.empty()     ? "model_type '" + utf8_replace_invalid(c.model_type.substr(0, 40)) + "'"
            : !c.architecture.empty() ? "architectures[0] '" + utf8_replace_invalid(c.architecture.substr(0, 60)) + "'"
                                      : std::string("no model_type");
        *why = found.config_name + ": " + named + ": not an architecture this converter knows (" +
               hf_known_model_types() + ")";
        return make_error(Error::kUnsupported, 0, "config.model_type");
    }
    *converted = true;
    return ok_status();
}

size_t QuantizeJob::source_tensor(const PlannedTensor& p) const {
    return conversion_ ? conversion_->plan().tensors[p.input_index].input : p.input_index;
}

bool QuantizeJob::converting() const {
    return conversion_ && conversion_->rows(plan_.tensors[at_.k].input_index).data != ConvertJob::Step::kCopy;
}

bool QuantizeJob::staged() const {
    const ConvertJob::Rows& c = conversion_->rows(plan_.tensors[at_.k].input_index);
    return c.encode && (c.swap || c.head_rows);
}

const TensorInfo& QuantizeJob::source() const {
    return conversion_ ? conversion_->input().tensors[source_tensor(plan_.tensors[at_.k])]
                       : in_.tensors[plan_.tensors[at_.k].input_index];
}

void QuantizeJob::start_tensor() {
    at_.fed = at_.written = 0;
    at_.padded = false;
    at_.windows = RowWindows();
    if (at_.k >= plan_.tensors.size()) return;
    const PlannedTensor& p = plan_.tensors[at_.k];
    const TensorInfo& t = in_.tensors[p.input_index];
    if (!p.quantize) {
        // Made by the conversion: in windows of its rows, as ConvertJob makes them (copied otherwise).
        if (!converting()) return;
        const ConvertJob::Rows& c = conversion_->rows(p.input_index);
        at_.conv_rows = 1;
        at_.src_row = c.in_row;
        at_.out_row = c.out_row;
        at_.windows = RowWindows(c.rows_per_matrix, c.matrices, c.row_elements, c.granule, kQuantizeWindowElements);
        return;
    }
    const uint64_t ne0 = static_cast<uint64_t>(t.ne[0]);
    dtype_bytes_for(t.dtype, ne0, &at_.in_row);  // checked by make()
    dtype_bytes_for(p.out.dtype, ne0, &at_.out_row);
    uint64_t granule = 1;
    at_.conv_rows = 1;
    at_.src_row = at_.in_row;
    if (conversion_) {
        const ConvertJob::Rows& c = conversion_->rows(p.input_index);
        at_.conv_rows = ne0 / c.row_elements;  // checked by make_converted()
        at_.src_row = at_.conv_rows * c.in_row;
        granule = c.granule;  // a head of a permuted matrix, whose rows are ne[0] elements
    }
    at_.windows = RowWindows(static_cast<uint64_t>(t.ne[1]), static_cast<uint64_t>(t.ne[2] * t.ne[3]), ne0, granule,
                             kQuantizeWindowElements);
}

bool QuantizeJob::advance(JobStep* step) {
    *step = JobStep();
    if (!at_.started) {
        at_.started = true;
        at_.k = 0;
        start_tensor();
        at_.step = Step::kHeader;
        return true;
    }
    for (; at_.k < plan_.tensors.size(); ++at_.k, start_tensor()) {
        const PlannedTensor& p = plan_.tensors[at_.k];
        const TensorInfo& s = source();
        step->tensor = static_cast<int64_t>(source_tensor(p));
        if (!p.quantize && !converting() && at_.fed < s.nbytes) {
            // A piece of whole blocks (validate_row_data takes whole blocks), as stored (one pass: as the conversion
            // passes it unchanged).
            step->inputs.push_back(copy_piece(s, at_.fed, dtype_traits(s.dtype).block_bytes));
            step->work = step->inputs[0].size;
            at_.fed += step->work;
            at_.step = Step::kCopy;
            return true;
        }
        if ((p.quantize || converting()) && at_.windows.next()) {
            const uint64_t rows = at_.windows.rows();
            const uint64_t first = at_.windows.first_row();
            step->inputs.push_back(
                conversion_ ? conversion_->input_rows(p.input_index, first * at_.conv_rows, rows * at_.conv_rows)
                            : ByteRange{s.file_index, s.offset + first * at_.src_row, rows * at_.src_row});
            step->work = rows * at_.src_row;
            step->max_parts = row_parts(rows, at_.windows.granule());
            at_.fed += step->work;
            at_.step = p.quantize ? Step::kWindow : Step::kRows;
            return true;
        }
        if (at_.padded) continue;
        at_.padded = true;  // the tensor's data is all handed out
        if (p.quantize) ++at_.quantized;
        if (plan_.layout.tensor_padding[at_.k] > 0) {
            at_.step = Step::kPadding;
            return true;
        }
    }
    step->tensor = -1;
    return false;
}

bool QuantizeJob::next(JobStep* step) {
    if (failed_ || !advance(step)) {
        *step = JobStep();
        return false;
    }
    part_status_.assign(step->max_parts, ok_status());
    const PlannedTensor* p = at_.k < plan_.tensors.size() ? &plan_.tensors[at_.k] : nullptr;
    if (at_.step == Step::kWindow || at_.step == Step::kRows) {
        const uint64_t rows = at_.windows.rows();
        if (converting()) {
            if (staged()) staged_.set_size(static_cast<size_t>(rows * at_.src_row));
            mid_.set_size(static_cast<size_t>(rows * (p->quantize ? at_.in_row : at_.out_row)));
        }
        if (p->quantize) {
            floats_.set_size(static_cast<size_t>(rows * static_cast<uint64_t>(in_.tensors[p->input_index].ne[0])));
            out_.set_size(static_cast<size_t>(rows * at_.out_row));
        } else {
            const ConvertJob::Rows& c = conversion_->rows(p->input_index);
            if (c.encode) floats_.set_size(static_cast<size_t>(rows * c.row_elements));  // only encoding decodes
        }
    } else if (at_.step == Step::kPadding) {
        zeros_.assign(static_cast<size_t>(plan_.layout.tensor_padding[at_.k]), 0);
    }
    // For the driver to read while this step runs.
    step->next_inputs = next_reading_inputs(&at_, [this](JobStep* s) { return advance(s); });
    return true;
}

void QuantizeJob::run(const ByteSpan* inputs, uint32_t part, uint32_t parts) {
    if (at_.step == Step::kHeader || at_.step == Step::kPadding) return;
    const PlannedTensor& p = plan_.tensors[at_.k];
    const TensorInfo& t = in_.tensors[p.input_index];
    const uint64_t at = source().offset;  // where problems with the data are reported
    Status& status = part_status_[part];
    if (at_.step == Step::kCopy) {
        // Copied as stored; llama-quantize's loader still checks the values.
        piece_ = inputs[0];
        if (!validate_row_data(t.dtype, piece_.data, piece_.size)) {
            status = make_error(Error::kBadShape, at, "tensor.data");
        }
        return;
    }
    uint64_t r0 = 0, r1 = 0;
    part_rows(at_.windows.rows(), at_.windows.granule(), part, parts, &r0, &r1);
    if (r1 <= r0) return;
    const uint8_t* src = inputs[0].data + r0 * at_.src_row;
    if (converting()) {
        // The rows as the conversion writes them, then checked as llama-quantize's loader checks the file's.
        const ConvertJob::Rows& c = conversion_->rows(p.input_index);
        const uint64_t mid_row = p.quantize ? at_.in_row : at_.out_row;
        uint8_t* mid = mid_.data() + r0 * mid_row;
        const Status s =
            conversion_->convert_rows(p.input_index, src, (r1 - r0) * at_.conv_rows, at_.windows.matrix(),
                                      staged() ? staged_.data() + r0 * at_.src_row : nullptr,
                                      c.encode ? floats_.data() + r0 * at_.conv_rows * c.row_elements : nullptr, mid);
        if (!s.ok()) {
            status = s;
            return;
        }
        if (!p.quantize) {
            if (!validate_row_data(t.dtype, mid, (r1 - r0) * mid_row)) {
                status = make_error(Error::kBadShape, at, "tensor.data");
            }
            return;
        }
        src = mid;
    }
    const uint64_t n_per_row = static_cast<uint64_t>(t.ne[0]);
    const float* imatrix =
        p.imatrix ? p.imatrix->values.data() + at_.windows.matrix() % static_cast<uint64_t>(t.ne[2]) * n_per_row
                  : nullptr;
    const RowEncoding e{t.dtype, p.out.dtype, n_per_row, true, false};
    const Status s =
        encode_rows(e, src, r1 - r0, imatrix, floats_.data() + r0 * n_per_row, out_.data() + r0 * at_.out_row);
    if (!s.ok()) status = make_error(s.code, at, s.what);
}

Status QuantizeJob::complete(ByteSpan* out) {
    *out = ByteSpan();
    const Status problem = parts_verdict(part_status_);
    if (!problem.ok()) {
        failed_ = true;
        return problem;
    }
    switch (at_.step) {
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
        case Step::kRows:
            *out = {mid_.data(), mid_.size()};
            break;
    }
    at_.written += out->size;
    const PlannedTensor& p = plan_.tensors[at_.k];
    const bool last = at_.step == Step::kCopy ? at_.fed == source().nbytes : at_.windows.last();
    if (last && at_.written != p.out.nbytes) {
        failed_ = true;
        return make_error(Error::kInternal, source().offset, "quantize: output size");
    }
    return ok_status();
}

}  // namespace ws
