// SPDX-License-Identifier: MIT
// `verify`: every structural check in strict mode (what ggml itself accepts), then every tensor's type and
// byte range, then every tensor decoded. Block scales that are NaN or Inf (f16 fields with an all-ones
// exponent) are reported as warnings: the file is valid, but the values they scale are NaN/Inf.
#include <cstdio>

#include "cli/progress.h"
#include "cli/verify.h"
#include "io/job_driver.h"
#include "io/tensor_io.h"
#include "weightstream/dequant.h"
#include "weightstream/model_json.h"
#include "weightstream/utf8.h"
#include "weightstream/verify_job.h"

namespace ws::cli {
namespace {

// Sets the verdict of a failed check (file, s and message may point into *v).
void set_failure(Verdict* v, int status, const std::string& file, const Status& s, const std::string& message) {
    v->status = status;
    v->code = s.code;
    v->message = printable(message, SIZE_MAX);
    v->offset = s.offset;
    v->what = s.what;
    v->file = file;
}

}  // namespace

Verdict verify_model(const std::string& source, const VerifyOptions& options, LoadedModel* model) {
    Verdict v;
    ParseOptions parse;
    parse.strict = true;
    if (!load_model(source, parse, model, &v.load_error)) {
        const LoadError& e = v.load_error;
        set_failure(&v, e.source_failed() ? kExitIo : kExitInvalid, e.file, e.status, load_error_text(e));
        return v;
    }
    v.loaded = true;

    // A quantized type without a decoder, or without a defined big-endian layout in a big-endian file, is
    // valid (ggml accepts it) but not decoded: a warning. Removed and unknown ids have no layout: an error.
    uint64_t total = 0;
    for (const TensorInfo& t : model->info.tensors) {
        const std::string& file = model->paths[t.file_index];
        const DTypeKind kind = dtype_traits(t.dtype).kind;
        if (kind == DTypeKind::kUnknown || kind == DTypeKind::kRemoved) {
            const Status s = make_error(Error::kBadType, t.info_offset, "tensor.type");
            set_failure(&v, kExitInvalid, file, s,
                        describe(file, s) + ": tensor " + t.name + " has type " + t.dtype_name());
            return v;
        }
        if (!model->tensor_in_file(t)) {
            const Status s = make_error(Error::kTruncated, t.offset, "tensor.data");
            set_failure(&v, kExitInvalid, file, s, describe(file, s) + ": tensor " + t.name);
            return v;
        }
        const std::string problem = decode_problem(model->info, t);
        if (!problem.empty()) {
            v.warnings.push_back(
                printable(file + ": tensor " + printable(t.name, 200) + ": not decoded: " + problem, SIZE_MAX));
            continue;
        }
        total += t.nbytes;
    }
    if (!options.decode) return v;

    VerifyJob job(model->info, options.find_zeros);
    Progress progress("verify", total, options.progress);
    DriveOptions drive_options;
    drive_options.threads = options.threads;
    drive_options.progress = [&](const JobStep& step) { progress.add(step.work); };
    const DriveResult result = drive(job, sources_of(*model), drive_options);
    progress.finish();
    const VerifyReport& report = job.report();
    v.decoded = report.decoded;
    for (const ScaleFinding& f : report.scales) {
        const TensorInfo& t = model->info.tensors[f.tensor];
        std::string w = model->paths[t.file_index] + ": tensor " + printable(t.name, 200) + ": ";
        if (f.nan_blocks)
            w += with_commas(f.nan_blocks) + " of " + counted(f.blocks, "block") +
                 (f.nan_blocks == 1 ? " has" : " have") + " a NaN scale";
        if (f.nan_blocks && f.inf_blocks) w += ", ";
        if (f.inf_blocks)
            w += with_commas(f.inf_blocks) + " of " + counted(f.blocks, "block") +
                 (f.inf_blocks == 1 ? " has" : " have") + " an Inf scale";
        v.warnings.push_back(printable(w + " (first at byte " + std::to_string(f.first_offset) + ")", SIZE_MAX));
    }
    v.scales = report.scales;
    for (size_t i : report.zeros) v.zeros.push_back(model->info.tensors[i].name);
    if (result.kind == DriveResult::Kind::kSource) {
        set_failure(&v, kExitIo, result.load.file, result.load.status, load_error_text(result.load));
    } else if (report.failed >= 0) {
        const TensorInfo& t = model->info.tensors[static_cast<size_t>(report.failed)];
        const std::string& file = model->paths[t.file_index];
        set_failure(
            &v, kExitInvalid, file, report.failure,
            describe(file, report.failure) + ": tensor " + t.name + (report.unreadable ? "" : " does not decode"));
    } else if (!result.ok()) {
        set_failure(&v, kExitInvalid, model->paths[0], result.status,
                    std::string("internal error: ") + result.status.what);
    }
    return v;
}

std::string verdict_name(const Verdict& v) {
    return v.ok() ? "ok" : error_name(v.code);
}

void set_path(nlohmann::json* j, const std::string& key, const std::string& value) {
    (*j)[key] = value;
    if (!utf8_valid(value)) (*j)[key + "_hex"] = hex_of(value);
}

nlohmann::json verdict_error_json(const Verdict& v) {
    if (v.ok()) return nullptr;
    const bool source = is_source_error(v.code);
    nlohmann::json error = {{"message", v.message}};
    set_path(&error, "file", v.file);
    error["offset"] = source ? nlohmann::json(nullptr) : nlohmann::json(v.offset);
    error["what"] = source ? nlohmann::json(nullptr) : nlohmann::json(v.what);
    return error;
}

int cmd_verify(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--json"}, {"--threads"}, &args)) return kExitUsage;
    if (args.positional.size() != 1) return usage_error();
    VerifyOptions options;
    if (!parse_threads(args, &options.threads)) return kExitUsage;
    const std::string& path = args.positional[0];
    LoadedModel model;
    const Verdict v = verify_model(path, options, &model);
    if (args.has("--json")) {
        // The verdict as scan reports it, plus the counts of the text line; the error line still goes to stderr.
        nlohmann::json j = {{"verdict", verdict_name(v)}, {"error", verdict_error_json(v)}, {"warnings", v.warnings}};
        set_path(&j, "source", path);
        j["tensors"] = v.loaded ? nlohmann::json(model.info.tensors.size()) : nlohmann::json(nullptr);
        j["decoded"] = v.decoded;
        j["metadata_keys"] = v.loaded ? nlohmann::json(model.info.metadata.size()) : nlohmann::json(nullptr);
        nlohmann::json scales = nlohmann::json::array();
        for (const ScaleFinding& f : v.scales) {
            scales.push_back({{"tensor", model.info.tensors[f.tensor].name},
                              {"blocks", f.blocks},
                              {"nan_blocks", f.nan_blocks},
                              {"inf_blocks", f.inf_blocks},
                              {"first_offset", f.first_offset}});
        }
        j["scales"] = std::move(scales);
        std::printf("%s\n", json_dump(j).c_str());
    }
    if (!v.ok()) return fail(v.status, v.message);
    for (const std::string& w : v.warnings) warn(w);
    if (args.has("--json")) return kExitOk;
    const std::string tensors =
        v.decoded == model.info.tensors.size() ? std::string(" decoded") : ", " + with_commas(v.decoded) + " decoded";
    std::printf("%s: ok: %s%s, %s%s\n", path.c_str(), counted(model.info.tensors.size(), "tensor").c_str(),
                tensors.c_str(), counted(model.info.metadata.size(), "metadata key").c_str(),
                v.warnings.empty() ? "" : (", " + counted(v.warnings.size(), "warning")).c_str());
    return kExitOk;
}

}  // namespace ws::cli
