// SPDX-License-Identifier: MIT
// A job whose output is a file (quantize, convert): the output written through OutputFile (a temporary file
// renamed over OUT only when complete), a progress bar labelled with the tensor being worked on, and every way
// it can fail turned into the command's error line and exit status.
#pragma once

#include <functional>
#include <string>

#include "io/model.h"
#include "weightstream/job.h"

namespace ws::cli {

// Words for a failed step of tensor `tensor` (an index into the model's tensors) beyond what describe() says of
// its status, or "" for none.
using StepProblem = std::function<std::string(const Status& status, int64_t tensor)>;

// Runs `job` over `model`'s files into `out_path` on `threads` threads. `label` names the progress bar
// ("quantize"), `tensors` how many tensors the output has (for "label [i/n]"). Returns kExitOk, or the exit
// status of the failure it printed (nothing is left at out_path then, and an existing file there is untouched).
int write_job_output(Job& job, const LoadedModel& model, const std::string& out_path, unsigned threads,
                     const std::string& label, size_t tensors, const StepProblem& problem);

}  // namespace ws::cli
