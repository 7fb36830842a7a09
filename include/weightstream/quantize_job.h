// SPDX-License-Identifier: MIT
// QuantizeJob: llama-quantize as a job (job.h). The plan (quant_recipe.h) gives the output header and every
// tensor's place and type; the steps are then, in output order: the header; per tensor, its stored bytes in
// pieces (copied: validated as llama-quantize's loader validates them, and passed through untouched) or in
// windows of whole rows of one matrix (quantized: validated, decoded, quantize_rows(), the output validated);
// the zero padding after it. Rows are independent, so the bytes are llama-quantize's whatever the window size
// and the number of parts a window is run in. Memory: one window of floats (at most kQuantizeWindowElements
// unless one row is longer) and its output.
//
// One pass (make_converted()): the input is the GGUF a ConvertJob would write (a Hugging Face checkpoint to a float
// type), quantized without writing it. The plan is made from that file's header (converted_model()), so the output
// is byte for byte `convert` then `quantize`; each tensor's rows are read from the checkpoint and made as the
// conversion makes them (ConvertJob::convert_rows(): permuted, + 1, rounded to the intermediate type), then
// validated and quantized or copied as above. A window of a permuted tensor is whole heads. A tensor that passes the
// conversion unchanged is copied from the checkpoint zero-copy. Memory: a window of floats, its intermediate bytes
// and its output.
//
// Sources: the input model's files, numbered as TensorInfo::file_index (one pass: the checkpoint's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weightstream/job.h"
#include "weightstream/model_info.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/window_buffer.h"

namespace ws {

class ConvertJob;
struct ConvertOptions;

constexpr uint64_t kQuantizeWindowElements = uint64_t(1) << 22;  // floats per window of rows

class QuantizeJob final : public Job {
public:
    // Plans quantizing `in` with `options` (plan_quantization(); its errors, kUnsupported "endianness" for a
    // big-endian GGUF, and kUnsupported "dtype" at the tensor's entry when this build cannot produce a planned
    // type). `in`, options.imatrix and what
    // options.matcher refers to are used only here; `in` must outlive the job.
    static Result<std::unique_ptr<QuantizeJob>> make(const ModelInfo& in, const RecipeOptions& options);
    // One pass: plans quantizing `converted` (converted_model() of conversion's plan: the file the conversion would
    // write) with `options`, as make() plans a GGUF (its errors, at entries of `converted`), and reads the rows
    // through `conversion` (made by ConvertJob::make(); its steps are not run). kUnsupported "tensor.type" at the
    // entry of a tensor the conversion widens (an unsigned integer), kBadShape "tensor.ne" at the entry of one to
    // quantize whose conversion rows are not whole rows of ne[0] elements. `converted` and conversion's input
    // must outlive the job.
    static Result<std::unique_ptr<QuantizeJob>> make_converted(const ModelInfo& converted,
                                                               std::unique_ptr<ConvertJob> conversion,
                                                               const RecipeOptions& options);
    // The one pass's first decision, for a safetensors model `in` and what was found beside it (`found`: hf,
    // config_name and config_problem, as the conversion takes them): *converted true when it is quantized through
    // its conversion (config.json names a family the converter knows: a Hugging Face checkpoint), false when it is
    // quantized as it is (no config.json, general.architecture among its metadata: the safetensors file of
    // `convert x.gguf y.safetensors`; and any model that is not safetensors). Otherwise a refusal, before anything
    // is planned, *why a sentence naming found.config_name: kUnsupported "config.json" (missing beside tensors
    // without general.architecture, or unusable: found.config_problem), kUnsupported "config.model_type" (a family
    // the converter does not know, named with the known ones). Safe on any input.
    static Status one_pass_source(const ModelInfo& in, const ConvertOptions& found, bool* converted, std::string* why);
    ~QuantizeJob() override;

    // The index of the tensor whose bytes planned tensor p is made from, in the model the driver reads: p's input
    // (one pass: the checkpoint's tensor it is converted from). JobStep::tensor and step errors name it.
    size_t source_tensor(const PlannedTensor& p) const;

    const QuantPlan& plan() const { return plan_; }
    // Tensors quantized (not copied) so far.
    size_t quantized() const { return at_.quantized; }

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    uint64_t total_work() const override { return total_work_; }

private:
    enum class Step { kHeader, kCopy, kWindow, kRows, kPadding };  // kRows: a copied tensor made by the conversion
    QuantizeJob(const ModelInfo& in, QuantPlan plan, std::unique_ptr<ConvertJob> conversion);
    static Result<QuantPlan> checked_plan(const ModelInfo& in, const RecipeOptions& options);
    // Moves at_ to the next step, its inputs, work, parts and tensor in *step; false when there is none. Touches
    // nothing but at_ (next() also looks ahead with it).
    bool advance(JobStep* step);
    // Sets up tensor at_.k (its rows' sizes and window) with nothing of it handed out yet.
    void start_tensor();
    // Whether tensor at_.k is read through the conversion, rows made by it (else: its stored bytes, from the input or,
    // one pass, from the checkpoint as they pass the conversion unchanged).
    bool converting() const;
    // Converting tensor at_.k: whether its rows are rearranged before they are encoded (ConvertJob::convert_rows()'s
    // `staged`).
    bool staged() const;
    // The source tensor of tensor at_.k (source_tensor()).
    const TensorInfo& source() const;

    const ModelInfo& in_;
    QuantPlan plan_;
    std::unique_ptr<ConvertJob> conversion_;  // one pass: the conversion the rows are read through, else null
    uint64_t total_work_ = 0;

    // Where the job is: before the header (started false), or in tensor k (plan order), of which fed input bytes
    // were handed out and written output bytes completed; a quantized one at windows's window; padded once its
    // padding was handed out; at step, the current step's kind (a window: windows's current one). next()
    // moves it, and looks one step ahead from a copy.
    struct Position {
        bool started = false;
        size_t k = 0;
        uint64_t fed = 0, written = 0;
        bool padded = false;
        uint64_t in_row = 0, out_row = 0;  // a quantized tensor's bytes per row, in and out
        // Converting: conversion rows per window row (a quantized tensor's rows are ne[0] elements; a copied
        // one's are the conversion's), and a window row's bytes in the checkpoint.
        uint64_t conv_rows = 1, src_row = 0;
        RowWindows windows;
        Step step = Step::kHeader;
        size_t quantized = 0;  // tensors whose data was all handed out, quantized
    };
    Position at_;

    // The current step's data.
    ByteSpan piece_;                   // a copied piece: its bytes (the step's input)
    WindowBuffer<float> floats_;       // a window, decoded
    WindowBuffer<uint8_t> staged_;     // converting: a window rearranged before it is encoded
    WindowBuffer<uint8_t> mid_;        // converting: a window as the conversion writes it (a copied one: the output)
    WindowBuffer<uint8_t> out_;        // a window, quantized
    std::vector<uint8_t> zeros_;       // padding
    std::vector<Status> part_status_;  // each part's problem (run() of part i writes entry i only)
    bool failed_ = false;
};

}  // namespace ws
