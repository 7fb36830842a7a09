// SPDX-License-Identifier: MIT
// `stats FILE [TENSOR ... | --filter PATTERN] [--rows SLICE] [--bins N] [--json] [--threads N]`: per tensor (or window
// of rows) min, max, mean and population std of the finite values, counts of NaN, +Inf, -Inf and zeros, and a histogram
// of the finite values: the core's statistics (include/weightstream/stats.h), the numbers the package's model.stats()
// gives, independent of --threads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "cli/progress.h"
#include "io/io_metrics.h"
#include "io/tensor_io.h"
#include "weightstream/dequant.h"
#include "weightstream/model_json.h"
#include "weightstream/row_window.h"
#include "weightstream/stats.h"

namespace ws::cli {
namespace {

// Runs fn(run index) for runs [0, n_runs) on up to `threads` threads; fn(run, worker) knows its worker.
template <typename Fn>
void parallel_runs(size_t n_runs, unsigned threads, const Fn& fn) {
    const size_t n = std::min<size_t>(threads, n_runs);
    if (n <= 1) {
        for (size_t i = 0; i < n_runs; ++i) fn(i, 0);
        return;
    }
    std::vector<std::thread> workers;
    for (size_t w = 0; w < n; ++w) {
        workers.emplace_back([&, w] {
            for (size_t i = w; i < n_runs; i += n) fn(i, w);
        });
    }
    for (std::thread& t : workers) t.join();
}

// Decodes the window once, piece by piece; each piece's runs are summarised on the threads (the core's
// fixed runs keep the numbers independent of the thread count) and added in order.
Status window_stats(DType dtype, const uint8_t* data, uint64_t n_elements, bool big_endian, unsigned threads,
                    uint32_t bins, Progress* progress, Stats* out) {
    const DTypeTraits& traits = dtype_traits(dtype);
    const uint32_t per_element = dequant_floats_per_element(dtype);
    StatsAccumulator acc;
    std::vector<RunSummary> runs;
    std::vector<GridHistogram> histograms(std::max(1u, threads));
    WS_TRY(for_each_decoded(
        dtype, data, n_elements, threads,
        [&](const float* x, uint64_t, uint64_t n) {
            const uint64_t floats = n * per_element;
            runs.assign(static_cast<size_t>((floats + kStatsRun - 1) / kStatsRun), RunSummary());
            parallel_runs(runs.size(), threads, [&](size_t i, size_t worker) {
                const size_t m = static_cast<size_t>(std::min<uint64_t>(kStatsRun, floats - i * kStatsRun));
                runs[i] = summarise_run(x + i * kStatsRun, m);
                histograms[worker].add(x + i * kStatsRun, m);
            });
            acc.add_runs(runs.data(), runs.size());
            progress->add(n / traits.block_elems * traits.block_bytes);
            return true;
        },
        big_endian));
    for (const GridHistogram& h : histograms) acc.add_histogram(h);
    *out = acc.finish(bins);
    return ok_status();
}

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
    std::vector<const TensorInfo*> selected;
    if (named) {
        for (size_t i = 1; i < args.positional.size(); ++i) {
            const TensorInfo* t = find_tensor_or_fail(model, args.positional[0], args.positional[i], &status);
            if (!t) return status;
            const std::string problem = decode_problem(model.info, *t);
            if (!problem.empty()) {
                return fail(kExitInvalid, describe(model.paths[t->file_index],
                                                   make_error(Error::kUnsupported, t->info_offset, "tensor.type")) +
                                              ": tensor " + printable(t->name, 200) + ": " + problem);
            }
            selected.push_back(t);
        }
    } else {
        for (const TensorInfo& t : model.info.tensors) {
            if (!by_filter || filter.matches(t.name)) selected.push_back(&t);
        }
        if (filter.failed()) return fail(kExitUsage, "--filter: the regular expression is too complex to match");
        if (by_filter && selected.empty()) warn("--filter " + args.get("--filter") + " matches no tensor");
    }

    uint64_t total = 0;
    for (const TensorInfo* t : selected) total += t->nbytes;
    Progress progress("stats", total);
    nlohmann::json tensors = nlohmann::json::array();
    std::vector<std::string> warnings;
    for (const TensorInfo* t : selected) {
        const std::string problem = decode_problem(model.info, *t);
        if (!problem.empty()) {
            tensors.push_back(
                {{"name", t->name}, {"dtype", t->dtype_name()}, {"n_elements", t->n_elements}, {"error", problem}});
            warnings.push_back("tensor " + printable(t->name, 200) + ": " + problem + "; no statistics");
            progress.add(t->nbytes);
            continue;
        }
        TensorBytes held;
        const uint8_t* data = tensor_bytes_or_fail(model, *t, &held, &status);
        if (!data) {
            progress.finish();
            return status;
        }
        uint64_t n_elements = t->n_elements, decoded = t->nbytes;
        uint64_t row_start = 0, row_n = 0;
        if (rows) {
            const bool inside = slice.resolve(row_count(*t), &row_start, &row_n);
            Result<RowWindow> w = row_window(*t, row_start, row_n);
            if (!inside || w.status().code == Error::kBadOffset || w.status().code == Error::kOverflow) {
                progress.finish();
                return fail(kExitUsage, "--rows " + args.get("--rows") + " is outside tensor " +
                                            printable(t->name, 200) + " (" + counted(row_count(*t), "row") + " of " +
                                            counted(static_cast<uint64_t>(t->ne[0]), "element") + ")");
            }
            if (!w.ok()) {
                return fail(kExitInvalid, describe(model.paths[t->file_index], w.status()));
            }
            data += w.value().offset - t->offset;
            n_elements = w.value().n_elements;
            decoded = w.value().nbytes;
        }
        Stats st;
        const uint64_t started = io_now_us();
        const Status s = window_stats(t->dtype, data, n_elements, model.info.big_endian, std::min(threads, 64u),
                                      static_cast<uint32_t>(bins), &progress, &st);
        if (!s.ok()) {
            progress.finish();
            return fail(kExitInvalid, describe(model.paths[t->file_index], make_error(s.code, t->info_offset, s.what)) +
                                          ": tensor " + printable(t->name, 200));
        }
        record_decode(t->name, t->dtype_name(), decoded, started, io_now_us() - started);
        nlohmann::json j = stats_to_json(*t, st);
        if (rows) j["rows"] = {row_start, row_n};
        tensors.push_back(std::move(j));
    }
    progress.finish();
    for (const std::string& w : warnings) warn(w);

    if (args.has("--json")) {
        nlohmann::json out{{"tensors", std::move(tensors)}};
        if (io_in_json()) out["io"] = io_json();
        std::printf("%s\n", json_dump(out).c_str());
        return kExitOk;
    }
    size_t width = 4;
    for (const TensorInfo* t : selected) width = std::max(width, std::min<size_t>(t->name.size(), 48));
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
