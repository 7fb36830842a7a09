// SPDX-License-Identifier: MIT
// ConvertJob: `weightstream convert` as a job (job.h). The plan (convert_plan.h) gives the output header and every
// tensor's place, type and action; the steps are then, in output order: the header; per tensor, its bytes
//   - copied in pieces of kCopyPieceBytes, zero-copy (the step's output is its input), when they pass unchanged;
//   - in windows of whole rows (job.h's RowWindows, about kConvertWindowElements elements) otherwise, and always for
//     a stacked *_exps tensor, whose matrix E is read from expert E's tensor (a window never crosses two, so a
//     step reads one range of one expert, in whichever file it is; rows copied as stored are zero-copy): a big-endian
//     GGUF's swapped, a Q/K tensor's rows permuted (a window is whole heads, so the permutation stays inside it),
//     decoded, Gemma's + 1 added and encoded as the plan's type (encode_rows(), as QuantizeJob quantizes); a step's
//     parts are whole rows (whole heads), so the bytes are the same for any number of parts;
//   - widened in windows of kConvertWindowElements elements (an unsigned integer as the next wider signed one);
// and the zero padding after it. Memory: a window of floats, its input when swapped or permuted, and its output.
//
// Errors of a step (Status::offset is the tensor's entry, TensorInfo::info_offset, as make()'s are; JobStep::tensor
// names the tensor): dequantize()'s and quantize_rows()'s, kTruncated "tensor.data" at the tensor's data offset for
// an input range the driver cannot read (unreadable()), kInternal "convert: output size" when a tensor came out at
// another size than the layout's.
//
// Sources: the input model's files, numbered as TensorInfo::file_index.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weightstream/convert_plan.h"
#include "weightstream/job.h"
#include "weightstream/model_info.h"
#include "weightstream/window_buffer.h"

namespace ws {

constexpr uint64_t kConvertWindowElements = uint64_t(1) << 22;  // elements per window of rows

class ConvertJob final : public Job {
public:
    // Plans converting `in` with `options` (plan_conversion(): its errors and *refusal) and sets up every tensor's
    // windows: kBadShape "tensor.ne" (kTensor) when the rows of a tensor to quantize or to permute cannot be cut
    // (ne[0] not a positive whole number of blocks; a Q/K tensor whose rows are not heads of an even number of rows).
    // `in` must outlive the job, and options.imatrix with it.
    static Result<std::unique_ptr<ConvertJob>> make(const ModelInfo& in, const ConvertOptions& options,
                                                    ConvertRefusal* refusal = nullptr);

    const ConvertPlan& plan() const { return plan_; }
    const ModelInfo& input() const { return in_; }

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    Status unreadable(const ByteRange& range) override;
    uint64_t total_work() const override { return total_work_; }

    enum class Step { kHeader, kCopy, kWindow, kWiden, kPadding };
    // How a tensor's data is stepped through, how its rows are cut and what is done to them (make() checks that it
    // is sound). Every tensor but a widened one has rows: a copied tensor's are its blocks.
    struct Rows {
        Step data = Step::kCopy;    // the steps of its data: kCopy, kWindow or kWiden
        uint64_t row_elements = 1;  // elements per row
        uint64_t rows_per_matrix = 0, matrices = 0;
        uint64_t granule = 1;              // rows a window and a part are whole multiples of: a head when permuting
        uint64_t head_rows = 0;            // permuting: rows per head; 0: no permutation
        uint64_t in_row = 0, out_row = 0;  // bytes per row, stored and written
        bool swap = false;                 // big-endian data, swapped to little-endian
        bool encode = false;               // decoded and encoded (else the rows pass as stored, reordered or swapped)
    };

    // The output's tensors by rows, for a job that reads what this conversion writes without writing it
    // (QuantizeJob::make_converted(), the one-pass quantize): tensor k's (plan order) rows, ...
    const Rows& rows(size_t k) const { return rows_[k]; }
    // ... the input bytes rows [first_row, first_row + n_rows) of tensor k are made from (k not widened; whole
    // granules of rows, inside one matrix: a stacked tensor's matrix E is read from expert E's tensor), ...
    ByteRange input_rows(size_t k, uint64_t first_row, uint64_t n_rows) const;
    // ... and those rows made from them, as this job writes them: `src` is their input bytes, `out` receives n_rows *
    // out_row bytes; `staged` (n_rows * in_row bytes) is needed when rows are both rearranged (permuted or swapped)
    // and encoded, `floats` (n_rows * row_elements) when encoded; `matrix` is the rows' matrix (the importance
    // row of a quantized output). Thread-safe (const): parts of a window call it on their own rows. Errors are the
    // transforms' and encode_rows()'s, at the tensor's entry (TensorInfo::info_offset).
    Status convert_rows(size_t k, const uint8_t* src, uint64_t n_rows, uint64_t matrix, uint8_t* staged, float* floats,
                        uint8_t* out) const;

private:
    ConvertJob(const ModelInfo& in, ConvertPlan plan, std::vector<Rows> rows);
    static bool passes_through(const Rows& r);
    // Sets up tensor at_.k with nothing of it handed out yet.
    // Moves at_ to the next step, its inputs, work, parts and tensor in *step; false when there is none. Touches
    // nothing but at_ (next() also looks ahead with it).
    bool advance(JobStep* step);
    void start_tensor();
    Status tensor_error(const Status& s) const;

    const ModelInfo& in_;
    ConvertPlan plan_;
    std::vector<Rows> rows_;  // per planned tensor
    uint64_t total_work_ = 0;

    // Where the job is: before the header (started false), or in tensor k (plan order), of which fed input bytes
    // were handed out and written output bytes completed; a windowed one at windows's window; padded once its
    // padding was handed out; at step, the current step's kind (a widening one of step_elements elements).
    // next() moves it, and looks one step ahead from a copy.
    struct Position {
        bool started = false;
        size_t k = 0;
        uint64_t fed = 0, written = 0;
        bool padded = false;
        RowWindows windows;
        Step step = Step::kHeader;
        uint64_t step_elements = 0;
    };
    Position at_;

    // The current step's input (a copied piece) and buffers.
    ByteSpan piece_;
    WindowBuffer<uint8_t> staged_;     // a window's input, swapped or permuted
    WindowBuffer<float> floats_;       // a window, decoded
    WindowBuffer<uint8_t> out_;        // a window's or a widening step's output
    std::vector<uint8_t> zeros_;       // padding
    std::vector<Status> part_status_;  // each part's problem (run() of part i writes entry i only)
    bool failed_ = false;
};

}  // namespace ws
