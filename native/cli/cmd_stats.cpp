// SPDX-License-Identifier: MIT
// `stats FILE [TENSOR ... | --filter PATTERN] [--rows SLICE] [--bins N] [--json] [--threads N]`: per tensor (or window
// of rows) min, max, mean and population std of the finite values, counts of NaN, +Inf, -Inf and zeros, and a histogram
// of the finite values: the core's statistics (include/weightstream/stats.h), the numbers the package's model.stats()
// gives, independent of --threads. The core's StatsJob (include/weightstream/stats_job.h) decodes and summarises;
// this file picks the tensors, drives the job and prints.
#include <algorithm>
#include <cstdio>

#include "cli/progress.h"
#include "io/io_metrics.h"
#include "io/job_driver.h"
#include "io/tensor_io.h"
#include "weightstream/model_json.h"
#include "weightstream/row_window.h"
#include "weightstream/stats_job.h"

namespace ws::cli {
namespace {

// The histogram as block characters (U+2581..U+2588) scaled to the fullest bin; empty bins are spaces.
std::string sparkline(const std::vector<uint64_t>& counts) {
    static const char* const kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588"};
    const uint64_t top = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
    std::string s;
    for (size_t b = 0; b < counts.size(); ++b) {
        if (counts[b] == 0) {
            s += ' ';
        } else {
            s += kBlocks[std::min<uint64_t>(7, counts[b] * 8 / (top + 1))];
        }
    }
    return s;
}

std::string number_text(const nlohmann::json& v) {
    if (v.is_null()) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
    return buf;
}

}  // namespace

int cmd_stats(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--json"}, {"--threads", "--rows", "--bins", "--filter"}, &args)) return kExitUsage;
    if (args.positional.empty()) return usage_error();
    const bool by_filter = args.has("--filter");
    if (by_filter && args.positional.size() > 1) return usage_error("give TENSOR names or --filter, not both");
    TensorFilter filter;
    std::string filter_error;
    if (by_filter && !filter.parse(args.get("--filter"), &filter_error)) return usage_error(filter_error);
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;
    uint64_t bins = kStatsDefaultBins;
    RowSlice slice;
    const bool rows = args.has("--rows");
    if (rows && !parse_rows(args.get("--rows"), &slice)) {
        return fail(kExitUsage,
                    "--rows takes a Python slice of rows (0:16, -8:, :4, 5), not '" + args.get("--rows") + "'");
    }
    if (rows && args.positional.size() != 2) return fail(kExitUsage, "--rows needs exactly one TENSOR");
    if (args.has("--bins") && (!parse_u64(args.get("--bins"), &bins) || bins < 1 || bins > kStatsMaxBins)) {
        return fail(kExitUsage, "--bins needs a number from 1 to " + std::to_string(kStatsMaxBins) + ", not '" +
                                    args.get("--bins") + "'");
    }
    LoadedModel model;
    int status = kExitOk;
    if (!load(args.positional[0], false, &model, &status)) return status;

    // Named tensors must exist and decode; with no names every tensor is summarised and those that cannot
    // be decoded are listed with an "error" (and a warning).
    const bool named = args.positional.size() > 1;
    std::vector<StatsRequest> requests;
    auto request_of = [&](const TensorInfo& t) {
        StatsRequest q;
        q.tensor = static_cast<size_t>(&t - model.info.tensors.data());
        q.bins = static_cast<uint32_t>(bins);
        return q;
    };
    if (named) {
        for (size_t i = 1; i < args.positional.size(); ++i) {
            const TensorInfo* t = find_tensor_or_fail(model, args.positional[0], args.positional[i], &status);
            if (!t) return status;
            requests.push_back(request_of(*t));
        }
    } else {
        for (const TensorInfo& t : model.info.tensors) {
            if (!by_filter || filter.matches(t.name)) requests.push_back(request_of(t));
        }
        if (by_filter && requests.empty()) warn("--filter " + args.get("--filter") + " matches no tensor");
    }
    bool inside = true;
    if (rows) {
        const TensorInfo& t = model.info.tensors[requests[0].tensor];
        inside = slice.resolve(row_count(t), &requests[0].first_row, &requests[0].rows);
        requests[0].window = true;
    }

    StatsJob job(model.info, requests);
    for (size_t i = 0; i < requests.size(); ++i) {
        const TensorInfo& t = model.info.tensors[requests[i].tensor];
        const StatsResult& r = job.result(i);
        if (named && !r.problem.empty()) {
            return fail(kExitInvalid, describe(model.paths[t.file_index], r.status) + ": tensor " +
                                          printable(t.name, 200) + ": " + r.problem);
        }
        if (rows && (!inside || r.status.code == Error::kBadOffset || r.status.code == Error::kOverflow)) {
            return fail(kExitUsage, "--rows " + args.get("--rows") + " is outside tensor " + printable(t.name, 200) +
                                        " (" + counted(row_count(t), "row") + " of " +
                                        counted(static_cast<uint64_t>(t.ne[0]), "element") + ")");
        }
        if (rows && !r.status.ok()) return fail(kExitInvalid, describe(model.paths[t.file_index], r.status));
    }

    Progress progress("stats", job.total_work());
    DriveOptions options;
    options.threads = std::min(threads, kStatsMaxParts);
    // A decode span per request, from when the one before it ended: requests run one after another.
    uint64_t started = io_now_us();
    options.progress = [&](const JobStep& step) {
        progress.add(step.work);
        if (!job.step_finished_request()) return;
        const size_t i = job.step_request();
        const TensorInfo& t = model.info.tensors[requests[i].tensor];
        const uint64_t now = io_now_us();
        record_decode(t.name, t.dtype_name(), job.result(i).nbytes, started, now - started);
        started = now;
    };
    const DriveResult result = drive(job, sources_of(model), options);
    progress.finish();
    if (result.kind == DriveResult::Kind::kSource) return fail_load(result.load);
    if (!result.ok()) {
        const TensorInfo& t = model.info.tensors[static_cast<size_t>(std::max<int64_t>(0, result.tensor))];
        return fail(kExitInvalid,
                    describe(model.paths[t.file_index], result.status) + ": tensor " + printable(t.name, 200));
    }

    nlohmann::json tensors = nlohmann::json::array();
    for (size_t i = 0; i < requests.size(); ++i) {
        const TensorInfo& t = model.info.tensors[requests[i].tensor];
        const StatsResult& r = job.result(i);
        if (!r.problem.empty()) {
            tensors.push_back(
                {{"name", t.name}, {"dtype", t.dtype_name()}, {"n_elements", t.n_elements}, {"error", r.problem}});
            warn("tensor " + printable(t.name, 200) + ": " + r.problem + "; no statistics");
            continue;
        }
        nlohmann::json j = stats_to_json(t, r.stats);
        if (rows) j["rows"] = {requests[i].first_row, requests[i].rows};
        tensors.push_back(std::move(j));
    }

    if (args.has("--json")) {
        nlohmann::json out{{"tensors", std::move(tensors)}};
        if (io_in_json()) out["io"] = io_json();
        std::printf("%s\n", json_dump(out).c_str());
        return kExitOk;
    }
    size_t width = 4;
    for (const StatsRequest& q : requests) {
        width = std::max(width, std::min<size_t>(model.info.tensors[q.tensor].name.size(), 48));
    }
    std::printf("%-*s  %-8s %13s %13s %13s %13s %9s %9s %9s %11s  %s\n", static_cast<int>(width), "name", "dtype",
                "min", "max", "mean", "std", "nan", "+inf", "-inf", "zeros", "histogram (min..max)");
    for (const nlohmann::json& j : tensors) {
        const std::string name = printable(j["name"].get<std::string>(), 48);
        if (j.contains("error")) {
            std::printf("%-*s  %-8s %s\n", static_cast<int>(width), name.c_str(), j["dtype"].get<std::string>().c_str(),
                        j["error"].get<std::string>().c_str());
            continue;
        }
        std::printf("%-*s  %-8s %13s %13s %13s %13s %9s %9s %9s %11s  %s\n", static_cast<int>(width), name.c_str(),
                    j["dtype"].get<std::string>().c_str(), number_text(j["min"]).c_str(), number_text(j["max"]).c_str(),
                    number_text(j["mean"]).c_str(), number_text(j["std"]).c_str(),
                    with_commas(j["nan"].get<uint64_t>()).c_str(), with_commas(j["pos_inf"].get<uint64_t>()).c_str(),
                    with_commas(j["neg_inf"].get<uint64_t>()).c_str(), with_commas(j["zeros"].get<uint64_t>()).c_str(),
                    sparkline(j["histogram"]["counts"].get<std::vector<uint64_t>>()).c_str());
    }
    return kExitOk;
}

}  // namespace ws::cli
