// SPDX-License-Identifier: MIT
// VerifyJob: the decode phase of `verify` (and `scan --decode`) as a job (job.h). Every tensor that has a
// decoder (decode_problem() empty; the others are the caller's warnings) is decoded, in tensor order, a window of
// kVerifyWindowElements elements at a time; the parts of a step are disjoint runs of the window's blocks. Per
// tensor it finds the blocks whose f16 scales (or mins) are NaN or Inf (the file is valid, the values they scale
// are not) and, when asked, whether every decoded value is zero. The first tensor that does not decode or whose
// bytes cannot be read ends the job: the report names it, and holds what the tensors before it gave. The findings
// do not depend on the number of parts. Safe on untrusted bytes: every problem is the report's.
//
// Sources: the model's files, by TensorInfo::file_index. Memory: per part 64 KiB of floats (and, for a
// big-endian file, its run of bytes swapped).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weightstream/job.h"
#include "weightstream/model_info.h"

namespace ws {

// Elements decoded per step: a multiple of every block size.
constexpr uint64_t kVerifyWindowElements = uint64_t(1) << 23;

// A tensor whose block scales are NaN or Inf.
struct ScaleFinding {
    size_t tensor = 0;          // its index
    uint64_t blocks = 0;        // the tensor's blocks
    uint64_t nan_blocks = 0;    // blocks with a NaN scale
    uint64_t inf_blocks = 0;    // blocks with an Inf scale and none NaN
    uint64_t first_offset = 0;  // absolute offset of the first such block
};

struct VerifyReport {
    size_t decoded = 0;                // tensors decoded whole (those before the failure)
    std::vector<ScaleFinding> scales;  // in tensor order
    std::vector<size_t> zeros;         // with find_zeros: the tensors (indices) whose every value is zero
    int64_t failed = -1;               // the tensor that ended the job, or -1
    bool unreadable = false;           // ... because its bytes lie outside its file (else: it does not decode)
    Status failure;                    // its error: kTruncated "tensor.data" at its offset, or the decode's at its
                                       // info_offset
};

class VerifyJob final : public Job {
public:
    // model must outlive the job. find_zeros: list the all-zero tensors (with at least one element).
    VerifyJob(const ModelInfo& model, bool find_zeros);

    const VerifyReport& report() const { return report_; }

    bool next(JobStep* step) override;
    void run(const ByteSpan* inputs, uint32_t part, uint32_t parts) override;
    Status complete(ByteSpan* out) override;
    // The tensor's bytes lie outside its file: the job ends with kTruncated at the tensor's offset.
    Status unreadable(const ByteRange& range) override;
    uint64_t total_work() const override { return total_work_; }

private:
    // What one part found in its blocks.
    struct PartFindings {
        uint64_t nan_blocks = 0, inf_blocks = 0;
        uint64_t first_offset = UINT64_MAX;  // the first block with a NaN or Inf scale
        bool nonzero = false;                // a decoded value is not zero
        Status status;
    };
    // Moves to the next tensor to decode (tensor_ past the end when there is none); false when it fails.
    bool start_tensor();
    Status fail(const Status& s, bool unreadable);

    const ModelInfo& model_;
    bool find_zeros_ = false;
    uint64_t total_work_ = 0;
    VerifyReport report_;

    size_t tensor_ = 0;                // the tensor being decoded
    uint64_t window_first_ = 0;        // the current window: its first element
    uint64_t window_elements_ = 0;     // ... and its elements
    std::vector<PartFindings> parts_;  // the current step's, per part
    ScaleFinding scale_;               // the tensor's, summed over its windows
    bool nonzero_ = false;             // the tensor has a value that is not zero
};

}  // namespace ws
