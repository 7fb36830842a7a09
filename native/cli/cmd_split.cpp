// SPDX-License-Identifier: MIT
// `split IN PREFIX [--split-max-tensors N | --split-max-size N(M|G)] [--no-tensor-first-split] [--dry-run]` and
// `merge PART OUT [--force]`: llama.cpp's llama-gguf-split --split and --merge, the same bytes (split_plan.h says
// what they are). The parts are SplitJob's (split_job.h) over an EditJob copying IN's tensors; the merge is an
// EditJob over the split's parts, opened as one model (which checks split.no, split.count and split.tensors.count
// part by part, naming the part that disagrees). Both copy tensor bytes zero-copy in pieces, so memory is a piece,
// not a model.
//
// Outputs: every part is written to a temporary file and all are renamed into place only when all are complete,
// the first part last (job_output.h): nothing half-written, and a first part under its final name means the
// whole set is there. A part path that is an input file is refused before anything is written; existing parts
// of the same names are replaced (as the tool does). merge refuses an existing OUT (as the tool does) unless
// --force, and an OUT that is one of the parts whatever the options.
//
// Differences from the tool, all refusals where it would crash or write something unusable: --split-max-tensors 0
// or a negative number (the tool divides by zero or splits nonsensically), a size that is not a positive whole
// N(M|G) (the tool's sscanf reads "1.5G" as 1G and leaves "G" undefined), more than 65,535 parts (split.count is
// a u16), a general.alignment other than 32 (the tool writes the key but pads to 32). A part of a split given to
// `split` splits the whole model it belongs to (the tool would split that one file).
#include <sys/stat.h>

#include <climits>
#include <cstdio>

#include "cli/cli.h"
#include "cli/split_output.h"
#include "io/tensor_io.h"
#include "weightstream/edit_job.h"
#include "weightstream/split.h"
#include "weightstream/split_job.h"

namespace ws::cli {

const std::vector<std::string> kSplitValued = {"--split-max-tensors", "--split-max-size"};
const std::vector<std::string> kSplitFlags = {"--no-tensor-first-split"};

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

bool parse_split_options(const Args& args, SplitOptions* options, bool* requested) {
    *options = SplitOptions();
    const bool by_tensors = args.has("--split-max-tensors"), by_size = args.has("--split-max-size");
    *requested = by_tensors || by_size;
    if (by_tensors && by_size) {
        usage_error("either --split-max-tensors or --split-max-size can be specified, but not both");
        return false;
    }
    if (by_tensors) {
        const std::string text = args.get("--split-max-tensors");
        uint64_t n = 0;
        if (!parse_u64(text, &n) || n == 0 || n > static_cast<uint64_t>(INT_MAX)) {
            usage_error("--split-max-tensors takes a whole number from 1 to " + std::to_string(INT_MAX) + ", not '" +
                        printable(text, 40) + "'");
            return false;
        }
        options->max_tensors = n;
    }
    if (by_size) {
        std::string why;
        if (!parse_split_size(args.get("--split-max-size"), &options->max_bytes, &why)) {
            usage_error("--split-max-size: " + printable(why, 200));
            return false;
        }
        options->mode = SplitOptions::Mode::kSize;
    }
    options->no_tensor_first_split = args.has("--no-tensor-first-split");
    return true;
}

std::string split_prefix_of(const std::string& out_path) {
    return ends_with(out_path, ".gguf") ? out_path.substr(0, out_path.size() - 5) : out_path;
}

bool plan_split_or_fail(const std::vector<MetadataEntry>& metadata, const std::vector<TensorInfo>& tensors,
                        const SplitOptions& options, const std::string& what, SplitPlan* plan, int* status) {
    Result<SplitPlan> planned = plan_gguf_split(metadata, tensors, options);
    if (planned.ok()) {
        *plan = std::move(planned).value();
        return true;
    }
    const Status& s = planned.status();
    const std::string field = s.what;
    if (field == "split.empty_part") {
        *status = usage_error(
            "a part would have no tensors: the limit is too small (a tensor larger than --split-max-size cannot "
            "start the split; llama-gguf-split: \"one of splits have 0 tensors\")");
    } else if (field == "split.count") {
        *status = usage_error("more than " + with_commas(kMaxSplitParts) +
                              " parts (split.count is a u16) or tensors: raise the limit");
    } else if (field == "general.alignment") {
        *status = fail(kExitInvalid, what +
                                         ": general.alignment is not 32: llama-gguf-split writes the key but pads "
                                         "every part to 32 (a first part its loader rejects); not split");
    } else {
        *status = fail(kExitInvalid, describe(what, s));
    }
    return false;
}

int write_split_parts(Job& inner, const GgufLayout& layout, SplitPlan plan, const LoadedModel& model,
                      const std::string& prefix, unsigned threads, const std::string& label, size_t tensors,
                      const StepProblem& problem, bool quiet) {
    const uint32_t n = static_cast<uint32_t>(plan.parts.size());
    std::vector<std::string> paths;
    for (uint32_t k = 0; k < n; ++k) paths.push_back(split_part_path(prefix, k + 1, n));
    Result<std::unique_ptr<SplitJob>> made = SplitJob::make(inner, layout, std::move(plan));
    if (!made.ok()) return fail(kExitInvalid, "internal error: the split does not fit the output's layout");
    SplitJob& job = *made.value();
    const int written = write_job_outputs(job, model, paths, threads, label, tensors, problem);
    if (written != kExitOk || quiet) return written;
    for (uint32_t k = 0; k < n; ++k) {
        const SplitPart& part = job.plan().parts[k];
        std::printf("%s: %s, %s bytes\n", paths[k].c_str(), counted(part.count, "tensor").c_str(),
                    with_commas(part.layout.file_size).c_str());
    }
    return kExitOk;
}

int write_output_split(Job& inner, const std::vector<MetadataEntry>& metadata, const std::vector<TensorInfo>& tensors,
                       const GgufLayout& layout, const SplitOptions& options, const LoadedModel& model,
                       const std::string& out_path, unsigned threads, const std::string& label,
                       const StepProblem& problem, bool quiet) {
    SplitPlan plan;
    int status = kExitOk;
    if (!plan_split_or_fail(metadata, tensors, options, out_path, &plan, &status)) return status;
    return write_split_parts(inner, layout, std::move(plan), model, split_prefix_of(out_path), threads, label,
                             tensors.size(), problem, quiet);
}

namespace {

// A GGUF that split and merge can write back: little-endian GGUF (a safetensors model is converted first).
bool check_gguf(const LoadedModel& model, const std::string& path, int* status) {
    if (model.info.format != Format::kGguf) {
        *status = fail(kExitInvalid, path + ": not a GGUF (" + format_name(model.info.format) +
                                         "): convert it to GGUF first (convert --split-max-size writes parts)");
        return false;
    }
    if (model.info.big_endian) {
        *status = fail(kExitInvalid, path + ": a big-endian GGUF is not supported");
        return false;
    }
    return true;
}

}  // namespace

int cmd_split(const std::vector<std::string>& argv) {
    std::vector<std::string> flags = kSplitFlags;
    flags.push_back("--dry-run");
    Args args;
    if (!parse_args(argv, flags, kSplitValued, &args)) return kExitUsage;
    if (args.positional.size() != 2) return usage_error();
    const std::string& in_path = args.positional[0];
    const std::string& prefix = args.positional[1];
    SplitOptions options;
    bool requested = false;
    if (!parse_split_options(args, &options, &requested)) return kExitUsage;
    if (prefix.empty()) return usage_error("split: PREFIX is empty");

    LoadedModel model;
    int status = kExitOk;
    if (!load(in_path, false, &model, &status)) return status;
    if (!check_gguf(model, in_path, &status)) return status;
    SplitPlan plan;
    if (!plan_split_or_fail(model.info.metadata, model.info.tensors, options, in_path, &plan, &status)) return status;
    std::fputs(split_plan_text(plan).c_str(), stdout);
    if (args.has("--dry-run")) return kExitOk;

    Result<EditPlan> copy = plan_gguf_rewrite(model.info, model.info.metadata);
    if (!copy.ok()) return fail(kExitInvalid, describe(in_path, copy.status()));
    Result<std::unique_ptr<EditJob>> inner = EditJob::make(model.info, std::move(copy).value());
    if (!inner.ok()) return fail(kExitInvalid, describe(in_path, inner.status()));
    const GgufLayout layout = inner.value()->plan().layout;
    // Every step is a copy in one part: no worker threads.
    return write_split_parts(*inner.value(), layout, std::move(plan), model, prefix, 1, "split",
                             model.info.tensors.size(), nullptr, false);
}

int cmd_merge(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--force"}, {}, &args)) return kExitUsage;
    if (args.positional.size() != 2) return usage_error();
    const std::string& in_path = args.positional[0];
    const std::string& out_path = args.positional[1];
    struct stat st;
    const bool out_exists = out_path != "-" && ::lstat(out_path.c_str(), &st) == 0;
    if (out_exists && !args.has("--force")) return usage_error(out_path + " exists (--force replaces it)");

    LoadedModel model;
    int status = kExitOk;
    if (!load(in_path, false, &model, &status)) return status;  // the parts checked against each other
    if (!check_gguf(model, in_path, &status)) return status;
    if (::stat(out_path.c_str(), &st) == 0) {
        for (size_t k = 0; k < model.files.size(); ++k) {
            const FileIdentity id = model.files[k].identity();
            if (id.ino != 0 && id.dev == st.st_dev && id.ino == st.st_ino) {
                return usage_error("OUT is " + model.paths[k] + ", one of the parts merged");
            }
        }
    }
    Result<EditPlan> plan = plan_gguf_merge(model.info);
    if (!plan.ok()) {
        if (std::string(plan.status().what) == "split.count") {
            return fail(kExitInvalid, in_path + ": not a split GGUF (no split.count): nothing to merge");
        }
        return fail(kExitInvalid, describe(in_path, plan.status()));
    }
    const uint64_t file_size = plan.value().layout.file_size;
    Result<std::unique_ptr<EditJob>> job = EditJob::make(model.info, std::move(plan).value());
    if (!job.ok()) return fail(kExitInvalid, describe(in_path, job.status()));
    const int written = write_job_output(*job.value(), model, out_path, 1, "merge", model.info.tensors.size(), nullptr);
    if (written != kExitOk) return written;
    if (out_path != "-") {
        std::printf("%s: merged from %s, %s, %s bytes\n", out_path.c_str(), counted(model.files.size(), "part").c_str(),
                    counted(model.info.tensors.size(), "tensor").c_str(), with_commas(file_size).c_str());
    }
    return kExitOk;
}

}  // namespace ws::cli
