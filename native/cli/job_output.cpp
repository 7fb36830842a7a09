// SPDX-License-Identifier: MIT
#include "cli/job_output.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>

#include "cli/cli.h"
#include "cli/progress.h"
#include "io/job_driver.h"
#include "io/output_file.h"
#include "io/tensor_io.h"

namespace ws::cli {
namespace {

// Descriptors kept free for everything else the process opens (the inputs, a URL's connections, /proc).
constexpr rlim_t kSpareDescriptors = 64;

// Raises the soft open-file limit so that `files` more descriptors fit; false with *why when the hard limit is lower.
bool fit_open_files(size_t files, std::string* why) {
    struct rlimit limit;
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return true;  // unknown: let the opens say
    const rlim_t needed = static_cast<rlim_t>(files) + kSpareDescriptors;
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return true;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
        *why = std::to_string(files) + " output files are held open until all are complete, which needs " +
               std::to_string(needed) + " open files; the limit is " + std::to_string(limit.rlim_max) +
               " (ulimit -n): raise it or make fewer parts";
        return false;
    }
    limit.rlim_cur = needed;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
        *why = "cannot raise the open-file limit to " + std::to_string(needed) + " for " + std::to_string(files) +
               " output files (ulimit -n)";
        return false;
    }
    return true;
}

}  // namespace

int write_job_output(Job& job, const LoadedModel& model, const std::string& out_path, unsigned threads,
                     const std::string& label, size_t tensors, const StepProblem& problem) {
    return write_job_outputs(job, model, {out_path}, threads, label, tensors, problem);
}

int write_job_outputs(Job& job, const LoadedModel& model, const std::vector<std::string>& out_paths, unsigned threads,
                      const std::string& label, size_t tensors, const StepProblem& problem) {
    const std::vector<FileIdentity> inputs = input_files(model);
    // Every path checked before anything is written (OutputFile::open checks its own again).
    for (const std::string& path : out_paths) {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0) continue;
        for (const FileIdentity& in : inputs) {
            if (in.dev == st.st_dev && in.ino == st.st_ino) {
                return fail(kExitIo, "cannot write " + path + ": it is the input file (the same inode)");
            }
        }
    }
    std::string why;
    if (out_paths.size() > 1 && !fit_open_files(out_paths.size(), &why)) return fail(kExitIo, why);

    // Opened as their first bytes come (a file's 1 MiB buffer is freed once it is prepared).
    std::vector<std::unique_ptr<OutputFile>> outs(out_paths.size());
    size_t current = 0;
    std::string out_error;
    auto open = [&](size_t k) {
        if (outs[k]) return true;
        outs[k] = std::make_unique<OutputFile>();
        if (outs[k]->open(out_paths[k], inputs)) return true;
        out_error = outs[k]->error();
        return false;
    };
    Progress progress(label, job.total_work());
    size_t begun = 0;
    int64_t last_tensor = -1;
    DriveOptions options;
    options.threads = threads;
    options.write = [&](uint32_t k, const uint8_t* bytes, size_t n) {
        if (k >= outs.size() || k < current) {
            out_error = "internal error: output " + std::to_string(k) + " out of order";
            return false;
        }
        for (; current < k; ++current) {  // the files before k are complete
            if (!open(current)) return false;
            if (!outs[current]->prepare()) {
                out_error = outs[current]->error();
                return false;
            }
        }
        if (!open(k)) return false;
        if (outs[k]->write(bytes, n)) return true;
        out_error = outs[k]->error();
        return false;
    };
    options.progress = [&](const JobStep& step) {
        if (step.tensor >= 0 && step.tensor != last_tensor) {
            last_tensor = step.tensor;
            progress.set_label(label + " [" + std::to_string(++begun) + "/" + std::to_string(tensors) + "]");
        }
        progress.add(step.work);
    };
    const DriveResult result = drive(job, sources_of(model), options);
    progress.finish();
    switch (result.kind) {
        case DriveResult::Kind::kOk:
            break;
        case DriveResult::Kind::kOutput:
            return fail(kExitIo, out_error);
        case DriveResult::Kind::kSource:
            return fail_load(result.load);
        case DriveResult::Kind::kJob: {
            if (static_cast<size_t>(std::max<int64_t>(0, result.tensor)) >= model.info.tensors.size()) {
                return fail(kExitInvalid, describe(model.paths[0], result.status));  // not about a tensor
            }
            const TensorInfo& t = model.info.tensors[static_cast<size_t>(std::max<int64_t>(0, result.tensor))];
            const std::string step_why = problem ? problem(result.status, result.tensor) : std::string();
            return fail(kExitInvalid, describe(model.paths[t.file_index], result.status) + ": tensor " +
                                          printable(t.name, 200) + (step_why.empty() ? "" : ": " + step_why));
        }
    }
    // All complete and fsync'd first; then the renames, the first file last.
    for (size_t k = 0; k < outs.size(); ++k) {
        if (!open(k)) return fail(kExitIo, out_error);
        if (!outs[k]->prepare()) return fail(kExitIo, outs[k]->error());
    }
    for (size_t k = outs.size(); k-- > 0;) {
        if (!outs[k]->commit()) return fail(kExitIo, outs[k]->error());
    }
    return kExitOk;
}

}  // namespace ws::cli
