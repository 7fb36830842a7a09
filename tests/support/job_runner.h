// SPDX-License-Identifier: MIT
// Runs a core job (weightstream/job.h) in-process over files held in memory, as a driver does, with a chosen
// number of parts per step run one after another in a shuffled order: what a test needs to show that a job's
// bytes do not depend on how its steps are split or in which order the parts run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "weightstream/job.h"

namespace ws_test {

struct JobRun {
    ws::Status status;            // the first failed step's verdict, or ok
    std::vector<uint8_t> output;  // every step's output, in order
    uint64_t work = 0;            // the steps' work, summed
    size_t steps = 0;
};

// files: the job's sources, by index. parts: how many parts each step is run in (at most its max_parts).
inline JobRun run_job(ws::Job& job, const std::vector<std::vector<uint8_t>>& files, uint32_t parts, uint32_t seed = 1) {
    JobRun r;
    std::mt19937 shuffle(seed);
    ws::JobStep step;
    while (job.next(&step)) {
        ++r.steps;
        r.work += step.work;
        std::vector<ws::ByteSpan> inputs;
        bool skipped = false;
        for (const ws::ByteRange& range : step.inputs) {
            const std::vector<uint8_t>& f = files.at(range.source);
            if (range.offset > f.size() || range.size > f.size() - range.offset) {
                r.status = job.unreadable(range);
                if (!r.status.ok()) return r;
                skipped = true;
                break;
            }
            inputs.push_back({f.data() + range.offset, range.size});
        }
        if (skipped) continue;
        const uint32_t k = std::max<uint32_t>(1, std::min(parts, step.max_parts));
        std::vector<uint32_t> order(k);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), shuffle);
        for (uint32_t part : order) job.run(inputs.data(), part, k);
        ws::ByteSpan out;
        r.status = job.complete(&out);
        if (!r.status.ok()) return r;
        r.output.insert(r.output.end(), out.data, out.data + out.size);
    }
    return r;
}

}  // namespace ws_test
