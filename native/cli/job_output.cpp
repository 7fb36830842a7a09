// SPDX-License-Identifier: MIT
#include "cli/job_output.h"

#include <algorithm>

#include "cli/cli.h"
#include "cli/progress.h"
#include "io/job_driver.h"
#include "io/output_file.h"
#include "io/tensor_io.h"

namespace ws::cli {

int write_job_output(Job& job, const LoadedModel& model, const std::string& out_path, unsigned threads,
                     const std::string& label, size_t tensors, const StepProblem& problem) {
    OutputFile out;
    if (!out.open(out_path, input_files(model))) return fail(kExitIo, out.error());
    Progress progress(label, job.total_work());
    size_t begun = 0;
    int64_t last_tensor = -1;
    DriveOptions options;
    options.threads = threads;
    options.drop_pages = true;
    options.write = [&](const uint8_t* bytes, size_t n) { return out.write(bytes, n); };
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
            return fail(kExitIo, out.error());
        case DriveResult::Kind::kSource:
            return fail_load(result.load);
        case DriveResult::Kind::kJob: {
            const TensorInfo& t = model.info.tensors[static_cast<size_t>(std::max<int64_t>(0, result.tensor))];
            const std::string why = problem ? problem(result.status, result.tensor) : std::string();
            return fail(kExitInvalid, describe(model.paths[t.file_index], result.status) + ": tensor " +
                                          printable(t.name, 200) + (why.empty() ? "" : ": " + why));
        }
    }
    if (!out.commit()) return fail(kExitIo, out.error());
    return kExitOk;
}

}  // namespace ws::cli
