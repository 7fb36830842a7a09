// SPDX-License-Identifier: MIT
// Writing a split GGUF from the CLI (cmd_split.cpp): `split`, and `convert` / `quantize` with --split-max-tensors
// or --split-max-size, which write the parts of their output directly (SplitJob over their own job: the parts that
// `split` would make of the single file, without it).
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/job_output.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/job.h"
#include "weightstream/split_plan.h"

namespace ws::cli {

// The options of a split, for parse_args(): valued and flags.
extern const std::vector<std::string> kSplitValued;  // --split-max-tensors, --split-max-size
extern const std::vector<std::string> kSplitFlags;   // --no-tensor-first-split

// a followed by b: a command's own options and the split's.
std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b);

// Reads the split options in `args` into *options; *requested says whether any was given. False after printing a
// usage error (both limits, N not a positive whole number, a size not N(M|G) as llama-gguf-split reads it).
bool parse_split_options(const Args& args, SplitOptions* options, bool* requested);

// The part files of a split of OUT: OUT's name without ".gguf", then "-%05d-of-%05d.gguf".
std::string split_prefix_of(const std::string& out_path);

// Plans the split of a single GGUF of `metadata` and `tensors`; on failure prints the error (naming `what`, the
// input or the output being split) and sets *status.
bool plan_split_or_fail(const std::vector<MetadataEntry>& metadata, const std::vector<TensorInfo>& tensors,
                        const SplitOptions& options, const std::string& what, SplitPlan* plan, int* status);

// Runs `inner` (writing one GGUF laid out as `layout`) into the parts of `plan` named from `prefix`, as
// write_job_outputs() does. Prints a line per part written unless `quiet`. Returns the exit status.
int write_split_parts(Job& inner, const GgufLayout& layout, SplitPlan plan, const LoadedModel& model,
                      const std::string& prefix, unsigned threads, const std::string& label, size_t tensors,
                      const StepProblem& problem, bool quiet);

// convert and quantize: writes the output `inner` would write as one GGUF (of `metadata`, `tensors` laid out as
// `layout`) as the parts of out_path's split instead (split_prefix_of()): plan_split_or_fail(), then
// write_split_parts(). Returns the exit status.
int write_output_split(Job& inner, const std::vector<MetadataEntry>& metadata, const std::vector<TensorInfo>& tensors,
                       const GgufLayout& layout, const SplitOptions& options, const LoadedModel& model,
                       const std::string& out_path, unsigned threads, const std::string& label,
                       const StepProblem& problem, bool quiet);

}  // namespace ws::cli
