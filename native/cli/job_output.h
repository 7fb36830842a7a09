// SPDX-License-Identifier: MIT
// A job whose output is a file (quantize, convert, edit) or several (split: the parts of a split GGUF): the output
// written through OutputFile (a temporary file renamed over OUT only when complete), a progress bar labelled with
// the tensor being worked on, and every way it can fail turned into the command's error line and exit status.
#pragma once

#include <functional>
#include <string>
#include <vector>

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

// The same for a job writing several files: out_paths[k] gets the steps tagged k (JobStep::output). Each is
// written to a temporary file (unnamed on Linux: holding a descriptor each, so the open-file limit is raised to
// fit, or the command fails before writing); when all are complete and fsync'd they are renamed into place, the
// last first, so that a first file under its final name means every file is complete. A failure before the renames
// leaves none of them; a kill during the renames (one rename per file) can leave the last files renamed without the
// first, each file complete. An out path that is one of the model's files is refused before anything is written.
int write_job_outputs(Job& job, const LoadedModel& model, const std::vector<std::string>& out_paths, unsigned threads,
                      const std::string& label, size_t tensors, const StepProblem& problem);

}  // namespace ws::cli
