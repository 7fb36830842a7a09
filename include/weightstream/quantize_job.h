// SPDX-License-Identifier: MIT
// QuantizeJob: llama-quantize as a job (job.h). The plan (quant_recipe.h) gives the output header and every
// tensor's place and type; the steps are then, in output order: the header; per tensor, its stored bytes in
// pieces (copied: validated as llama-quantize's loader validates them, and passed through untouched) or in
// windows of whole rows of one matrix (quantized: validated, decoded, quantize_rows(), the output validated);
// the zero padding after it. Rows are independent, so the bytes are llama-quantize's whatever the window size
// and the number of parts a window is run in. Memory: one window of floats (at most kQuantizeWindowElements
// unless one row is longer) and its output.
//
// Sources: the input model's files, numbered as TensorInfo::file_index.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weightstream/job.h"
#include "weightstream/model_info.h"
#include "weightstream/quant_recipe.h"

namespace ws {

constexpr uint64_t kQuantizeWindowElements = uint64_t(1) << 22;  // floats per window of rows

class QuantizeJob final : public Job {
public:
    // Plans quantizing `in` with `options` (plan_quantization(); its errors, kUnsupported "endianness" for a
    // big-endian GGUF, and kUnsupported "dtype" at the tensor's entry when this build cannot produce a planned
    // type). `in`, options.imatrix and what
    // options.matcher refers to are used only here; `in` must outlive the job.
    static Result<std::unique_ptr<QuantizeJob>> make(const ModelInfo& in, const RecipeOptions& options);

    const QuantPlan& plan() const { return plan_; }
    // Tensors quantized (not copied) so far.
    size_t quantized() const { return quantized_; }

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    uint64_t total_work() const override { return total_work_; }

private:
    enum class Step { kHeader, kCopy, kWindow, kPadding };
    QuantizeJob(const ModelInfo& in, QuantPlan plan);
    // Sets up tensor k_ (its rows' sizes and window) with nothing of it handed out yet.
    void start_tensor();

    const ModelInfo& in_;
    QuantPlan plan_;
    uint64_t total_work_ = 0;
    size_t quantized_ = 0;

    // Where the job is: before the header (started_ false), or in tensor k_ (plan order), of which fed_ input
    // bytes were handed out and written_ output bytes completed; a quantized one at windows_'s window; padded_
    // once its padding was handed out.
    bool started_ = false;
    size_t k_ = 0;
    uint64_t fed_ = 0, written_ = 0;
    bool padded_ = false;
    uint64_t in_row_ = 0, out_row_ = 0;  // a quantized tensor's bytes per row, in and out
    RowWindows windows_;

    // The current step: what it is (a window: windows_'s current one).
    Step step_ = Step::kHeader;
    ByteSpan piece_;                   // a copied piece: its bytes (the step's input)
    std::vector<float> floats_;        // a window, decoded
    std::vector<uint8_t> out_;         // a window, quantized
    std::vector<uint8_t> zeros_;       // padding
    std::vector<Status> part_status_;  // each part's problem (run() of part i writes entry i only)
    bool failed_ = false;
};

}  // namespace ws
