// SPDX-License-Identifier: MIT
// `diff A B [--json] [--tensors REGEX] [--max-nmse X] [--threads N]`: compares two models tensor by tensor
// (include/weightstream/compare.h does the pairing, the metrics and the hints; this file decodes windows and prints).
//
// The comparison is the core's CompareJob (weightstream/compare_job.h), run by the job driver (io/job_driver.h):
// pair by pair, a window of whole outer rows of both sides at a time, each window decoded on up to --threads
// threads, so memory does not grow with tensor or model size: the two decoded windows (about
// kCompareWindowElements floats per side), the comparator's transformed and re-encoded copies of one window,
// and for 2-D pairs four doubles per row element (the transposition hint). The mapped files' pages come on top,
// as for every command. A pair's numbers do not depend on --threads (core/compare.h fixes the summation order).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "cli/hf_config_file.h"
#include "cli/progress.h"
#include "io/io_metrics.h"
#include "io/job_driver.h"
#include "io/tensor_io.h"
#include "weightstream/compare_job.h"
#include "weightstream/model_json.h"

namespace ws::cli {
namespace {

constexpr int kExitOverThreshold = 4;  // --max-nmse exceeded

// config.json beside a safetensors side: kRead (parsed into *out), kMissing, kUnusable (a warning says which) or
// kFailed (beside a URL, a server error: *problem says it; the command fails, as the package's compare() does).
ConfigFile read_config(const std::string& model_path, HfConfig* out, std::string* problem) {
    const ConfigFile read = read_hf_config(model_path, out, problem);
    if (read == ConfigFile::kUnusable) warn(*problem);
    return read;
}

// Worst first: incomparable, non_finite, then different by nmse (largest first), only_a, only_b, identical.
int verdict_rank(Verdict v) {
    switch (v) {
        case Verdict::kIncomparable:
            return 0;
        case Verdict::kNonFinite:
            return 1;
        case Verdict::kDifferent:
            return 2;
        case Verdict::kOnlyA:
            return 3;
        case Verdict::kOnlyB:
            return 4;
        case Verdict::kIdentical:
            return 5;
    }
    return 6;
}

std::string number_text(double v) {
    if (std::isnan(v)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

// nmse on a log scale from 1e-10 (empty) to 1 (full), coloured green / yellow / red on a terminal.
std::string nmse_bar(double nmse, bool colour) {
    constexpr int kWidth = 20;
    int filled = kWidth;
    if (nmse <= 0) {
        filled = 0;
    } else if (nmse < 1) {
        filled = std::max(1, static_cast<int>((10.0 + std::log10(nmse)) / 10.0 * kWidth));
    }
    std::string bar;
    for (int i = 0; i < kWidth; ++i) bar += i < filled ? "\u2588" : " ";
    if (!colour) return bar;
    const char* c = nmse < 1e-4 ? "\x1b[32m" : nmse < 1e-2 ? "\x1b[33m" : "\x1b[31m";
    return c + bar + "\x1b[0m";
}

std::string value_text(const Value& v) {
    return printable(json_dump(value_to_json(v), -1), 60);
}

void print_human(const CompareReport& report, const LoadedModel& ma, const LoadedModel& mb) {
    const CompareSummary s = summarize(report.tensors);
    const bool colour = colour_enabled(STDOUT_FILENO);
    std::printf("A: %s (%s, %s)\n", printable(report.a.path, 200).c_str(), format_name(report.a.format),
                counted(ma.info.tensors.size(), "tensor").c_str());
    std::printf("B: %s (%s, %s)\n", printable(report.b.path, 200).c_str(), format_name(report.b.format),
                counted(mb.info.tensors.size(), "tensor").c_str());
    std::printf(
        "paired by %s: %s identical, %s different, %s non-finite, %s only in A, %s only in B, %s incomparable\n",
        report.mapping.c_str(), with_commas(s.identical).c_str(), with_commas(s.different).c_str(),
        with_commas(s.non_finite).c_str(), with_commas(s.only_a).c_str(), with_commas(s.only_b).c_str(),
        with_commas(s.incomparable).c_str());

    std::vector<size_t> order(report.tensors.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const CompareRow &rx = report.tensors[x], &ry = report.tensors[y];
        if (verdict_rank(rx.verdict) != verdict_rank(ry.verdict)) {
            return verdict_rank(rx.verdict) < verdict_rank(ry.verdict);
        }
        return rx.has_metrics && ry.has_metrics && rx.metrics.nmse() > ry.metrics.nmse();
    });
    if (!order.empty()) {
        std::printf("\n%-12s %10s %10s %10s %-20s  %-8s %-8s %s\n", "verdict", "nmse", "cosine", "max_abs",
                    "nmse (log, 1e-10..1)", "dtype_a", "dtype_b", "tensor");
    }
    for (size_t i : order) {
        const CompareRow& r = report.tensors[i];
        std::string name = printable(r.a.empty() ? r.b : r.a, 80);
        if (!r.a.empty() && !r.b.empty() && r.a != r.b) name += " <-> " + printable(r.b, 80);
        const char* transform = transform_name(r.transform);
        if (transform) name += std::string(" [") + transform + "]";
        const std::string nmse = r.has_metrics ? number_text(r.metrics.nmse()) : "-";
        const std::string cosine = r.has_metrics ? number_text(r.metrics.cosine()) : "-";
        const std::string max_abs = r.has_metrics ? number_text(r.metrics.max_abs) : "-";
        const std::string bar = r.has_metrics ? nmse_bar(r.metrics.nmse(), colour) : std::string(20, ' ');
        std::printf("%-12s %10s %10s %10s %s  %-8s %-8s %s\n", verdict_name(r.verdict), nmse.c_str(), cosine.c_str(),
                    max_abs.c_str(), bar.c_str(), r.dtype_a.empty() ? "-" : r.dtype_a.c_str(),
                    r.dtype_b.empty() ? "-" : r.dtype_b.c_str(), name.c_str());
        if (!r.hint.empty()) std::printf("%12s hint: %s\n", "", printable(r.hint, 300).c_str());
    }
    const MetadataDiff& m = report.metadata;
    if (m.only_a.empty() && m.only_b.empty() && m.changed.empty()) return;
    std::printf("\nmetadata:\n");
    for (const std::string& k : m.only_a) std::printf("  only in A: %s\n", printable(k, 200).c_str());
    for (const std::string& k : m.only_b) std::printf("  only in B: %s\n", printable(k, 200).c_str());
    for (const MetadataChange& c : m.changed) {
        std::printf("  changed:   %s: %s -> %s\n", printable(c.key, 200).c_str(), value_text(c.a).c_str(),
                    value_text(c.b).c_str());
    }
}

}  // namespace

int cmd_diff(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--json"}, {"--tensors", "--max-nmse", "--threads"}, &args)) return kExitUsage;
    if (args.positional.size() != 2) return usage_error();
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;
    Regex filter;  // the linear-time engine: no backtracking blow-up, no recursion per character of a name
    const bool filtered = args.has("--tensors");
    if (filtered) {
        Result<Regex> r = Regex::compile(args.get("--tensors"));
        if (!r.ok()) return fail(kExitUsage, regex_error("--tensors", args.get("--tensors"), r.status()));
        filter = std::move(r).value();
    }
    double max_nmse = 0;
    const bool gated = args.has("--max-nmse");
    if (gated) {
        const std::string v = args.get("--max-nmse");
        char* end = nullptr;
        errno = 0;
        max_nmse = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || errno != 0 || !(max_nmse >= 0) || !std::isfinite(max_nmse)) {
            return fail(kExitUsage, "--max-nmse needs a number >= 0, not '" + v + "'");
        }
    }

    LoadedModel ma, mb;
    int status = kExitOk;
    if (!load(args.positional[0], false, &ma, &status)) return status;
    if (!load(args.positional[1], false, &mb, &status)) return status;
    HfConfig config_a, config_b;
    PairingOptions options;
    for (const bool b : {false, true}) {
        if ((b ? mb : ma).info.format != Format::kSafetensors) continue;
        std::string problem;
        const ConfigFile read = read_config(args.positional[b ? 1 : 0], b ? &config_b : &config_a, &problem);
        if (read == ConfigFile::kFailed) return fail(kExitIo, problem);
        if (read == ConfigFile::kRead) (b ? options.config_b : options.config_a) = b ? &config_b : &config_a;
    }

    CompareJob job(ma.info, mb.info, options, {args.positional[0], ma.info.format},
                   {args.positional[1], mb.info.format});
    if (filtered) {
        std::vector<size_t> selected;
        const std::vector<PairPlan>& pairs = job.plan().pairs;
        for (size_t i = 0; i < pairs.size(); ++i) {
            const PairPlan& p = pairs[i];
            const std::string a = p.a < 0 ? "" : ma.info.tensors[static_cast<size_t>(p.a)].name;
            const std::string b = p.b < 0 ? "" : mb.info.tensors[static_cast<size_t>(p.b)].name;
            if ((!a.empty() && filter.search(a)) || (!b.empty() && filter.search(b))) {
                selected.push_back(i);
            }
        }
        job.select(selected);
    }

    std::vector<JobSource> sources = sources_of(ma);
    for (const JobSource& s : sources_of(mb)) sources.push_back(s);
    Progress progress("diff", job.total_work());
    DriveOptions drive_options;
    drive_options.threads = threads;
    // A decode span per step (a window of up to kCompareLanes pairs, both sides), named by its first pair's A
    // tensor: steps run one after another, so a step began when the one before it ended.
    uint64_t step_started = io_now_us();
    drive_options.progress = [&](const JobStep& step) {
        progress.add(step.work);
        const uint64_t now = io_now_us();
        const std::string name = step.tensor >= 0 ? ma.info.tensors[static_cast<size_t>(step.tensor)].name : "";
        record_decode(name, "", step.work, step_started, now - step_started);
        step_started = now;
    };
    const DriveResult result = drive(job, sources, drive_options);
    progress.finish();
    if (result.kind == DriveResult::Kind::kSource) return fail_load(result.load);
    if (!result.ok()) return fail(kExitInvalid, std::string("internal error: ") + result.status.what);
    const CompareReport& report = job.report();

    if (args.has("--json")) {
        nlohmann::json out = compare_report_to_json(report);
        if (io_in_json()) out["io"] = io_json();
        std::printf("%s\n", json_dump(out).c_str());
    } else {
        print_human(report, ma, mb);
    }
    if (gated) {
        for (const CompareRow& r : report.tensors) {
            // NaN or Inf against a value the other side does not have fails whatever the nmse of the rest.
            if (r.verdict == Verdict::kNonFinite || (r.has_metrics && !(r.metrics.nmse() <= max_nmse))) {
                return kExitOverThreshold;
            }
        }
    }
    return kExitOk;
}

}  // namespace ws::cli
