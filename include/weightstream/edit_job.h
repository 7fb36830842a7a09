// SPDX-License-Identifier: MIT
// EditJob: `weightstream edit` (and the package's edit()) as a job (job.h). The plan (gguf_edit.h) gives the new
// header and where every tensor goes; the steps are then, in output order: the header; per tensor (the input's
// order), its stored bytes copied in pieces of about kCopyPieceBytes, zero-copy (the step's output is its input);
// the zero padding after it. Memory: the plan (the header) and one tensor's padding.
//
// Errors of a step: kTruncated "tensor.data" at the tensor's data offset (TensorInfo::offset; JobStep::tensor names
// the tensor) for an input range the driver cannot read (unreadable()).
//
// Sources: the input model's files (TensorInfo::file_index; one file for an edit).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weightstream/gguf_edit.h"
#include "weightstream/job.h"
#include "weightstream/model_info.h"

namespace ws {

class EditJob final : public Job {
public:
    // Plans editing `in` with `edits` (plan_gguf_edit(): its errors, and *failed_key naming the key one is about).
    // Safe on untrusted input. `in` must outlive the job.
    static Result<std::unique_ptr<EditJob>> make(const ModelInfo& in, const MetadataEdits& edits,
                                                 std::string* failed_key = nullptr);
    // A job writing `plan` (its layout made for in's tensors, in order: plan_gguf_rewrite(), split_plan.h), for a
    // rewrite of a model that is not an edit of its metadata (merge). `in` may have several files (TensorInfo::
    // file_index names the source). kInternal "plan" when the layout is not one for in's tensors.
    static Result<std::unique_ptr<EditJob>> make(const ModelInfo& in, EditPlan plan);

    const EditPlan& plan() const { return plan_; }

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    Status unreadable(const ByteRange& range) override;
    uint64_t total_work() const override { return total_work_; }

private:
    enum class Step { kHeader, kCopy, kPadding };
    EditJob(const ModelInfo& in, EditPlan plan);

    const ModelInfo& in_;
    EditPlan plan_;
    uint64_t total_work_ = 0;

    // Where the job is: before the header (started_ false), or in tensor k_, of which fed_ bytes were handed out;
    // padded_ once its padding was handed out.
    bool started_ = false;
    size_t k_ = 0;
    uint64_t fed_ = 0;
    bool padded_ = false;

    // The current step: what it is, and its output.
    Step step_ = Step::kHeader;
    ByteSpan piece_;              // a copied piece: its bytes (the step's input)
    std::vector<uint8_t> zeros_;  // padding
    bool failed_ = false;
};

}  // namespace ws
