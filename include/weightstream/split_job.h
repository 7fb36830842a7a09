// SPDX-License-Identifier: MIT
// SplitJob: the output of another job, a single GGUF, written as the parts of a split GGUF (split_plan.h) instead,
// without the single file in between. `split` drives it over an EditJob copying the input's tensors
// (plan_gguf_rewrite()); `convert` and `quantize` with --split-max-* over their own jobs. So the parts are what
// llama-gguf-split would make of the single file the inner job writes.
//
// How: the inner job's output is a stream laid out as `inner` (a GgufLayout: its header, then each tensor's bytes
// and padding); the parts hold the same tensors in the same order, each followed by the same padding (the plan
// pads to 32, so the inner layout must too). The job drops the inner header, emits part k's header (a step of its
// own, no inputs) before part k's first tensor byte, and tags every step with its part (JobStep::output): part k
// is a contiguous run of the inner stream. An inner step whose output runs past the end of a part has the rest
// copied and handed out as a step of its own after the next part's header (the inner jobs cut their output at
// tensor boundaries, so this does not happen with them). Memory: the inner job's, plus such a rest.
//
// Errors: the inner job's (its steps, its unreadable ranges), and kInternal "split.stream" if the inner job's
// output does not have the size its layout says.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weightstream/gguf_writer.h"
#include "weightstream/job.h"
#include "weightstream/split_plan.h"

namespace ws {

class SplitJob final : public Job {
public:
    // `inner` writes one GGUF laid out as `inner_layout`, whose tensors are the plan's; it must outlive the job and
    // is driven only through it. kInternal "split.plan" when the plan's tensors or padding are not the layout's.
    static Result<std::unique_ptr<SplitJob>> make(Job& inner, const GgufLayout& inner_layout, SplitPlan plan);

    const SplitPlan& plan() const { return plan_; }

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    Status unreadable(const ByteRange& range) override;
    uint64_t total_work() const override { return inner_.total_work(); }

private:
    enum class Step { kHeader, kInner, kRest, kShort };  // kShort: the inner job ended early
    SplitJob(Job& inner, SplitPlan plan, uint64_t data_offset, std::vector<uint64_t> ends);
    // Hands out the part of `bytes` (inner stream bytes from pos_) that belongs to the current part (or nothing,
    // while in the inner header); keeps what follows for a step of its own.
    Status route(ByteSpan bytes, ByteSpan* out);

    Job& inner_;
    SplitPlan plan_;
    uint64_t data_offset_ = 0;   // where the inner stream's tensor data starts
    std::vector<uint64_t> end_;  // end_[k]: the inner stream offset where part k's bytes end

    uint64_t pos_ = 0;           // inner stream bytes handed out (or dropped) so far
    size_t part_ = 0;            // the part being written
    bool header_done_ = false;   // whether part_'s header was handed out
    bool inner_done_ = false;    // the inner job has no more steps
    std::vector<uint8_t> rest_;  // inner output past the end of a part, not handed out yet
    std::vector<uint8_t> held_;  // the rest being handed out by the current step
    Step step_ = Step::kHeader;
    bool failed_ = false;
};

}  // namespace ws
