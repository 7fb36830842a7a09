// SPDX-License-Identifier: MIT
// `diff A B [--json] [--tensors REGEX] [--max-nmse X] [--threads N]`: compares two models tensor by tensor
// (include/weightstream/compare.h does the pairing, the metrics and the hints; this file decodes windows and prints).
//
// Work is parallel over tensor pairs (largest first); each worker decodes its pair window by window, so memory
// does not grow with tensor or model size. Per worker: the two decoded windows (whole outer rows, about
// kWindowElements floats per side, at least one row and for a Q/K permutation at least one head of rows), the
// comparator's transformed and re-encoded copies of one window, and for 2-D pairs four doubles per row element
// (the transposition hint), and for a big-endian GGUF one window of its stored bytes (swapped in a copy):
// about 20 MiB per worker for ordinary tensors (38 MiB of anonymous memory measured
// with 2 threads on a 2 GiB F16 against a 1.1 GiB Q8_0 model). The mapped files' pages come on top, as for every
// command. A pair's numbers do not depend on --threads (include/weightstream/compare.h fixes the summation order).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <regex>
#include <thread>

#include "cli/progress.h"
#include "io/io_metrics.h"
#include "io/tensor_io.h"
#include "weightstream/compare.h"
#include "weightstream/dequant.h"
#include "weightstream/model_json.h"

namespace ws::cli {
namespace {

constexpr int kExitOverThreshold = 4;                     // --max-nmse exceeded
constexpr uint64_t kWindowElements = uint64_t(1) << 20;   // floats per side per window (4 MiB)
constexpr uint64_t kMaxConfigBytes = uint64_t(16) << 20;  // config.json larger than this is ignored

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// config.json beside a safetensors model (or its index), parsed; false when there is none or it is unusable
// (a warning says which).
bool read_config(const std::string& model_path, HfConfig* out) {
    const std::string path = dir_of(model_path) + "config.json";
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    std::string bytes;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && bytes.size() <= kMaxConfigBytes) bytes.append(buf, n);
    std::fclose(f);
    if (bytes.size() > kMaxConfigBytes) {
        warn(path + " is over 16 MiB; ignored");
        return false;
    }
    Result<HfConfig> config = parse_hf_config(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    if (!config.ok()) {
        warn(path + " is not a JSON object; ignored");
        return false;
    }
    *out = std::move(config).value();
    return true;
}

// Decodes rows [row0, row0 + n_rows) of a tensor whose outer rows have row_elements elements. big_endian: data
// is a big-endian GGUF's; the window's bytes are swapped in *scratch (the mapping is read-only) before decoding,
// as for_each_decoded() does for the other commands (decode_problem() has refused types with no defined order).
Status decode_rows(const TensorInfo& t, const uint8_t* data, uint64_t row0, uint64_t n_rows, uint64_t row_elements,
                   bool big_endian, std::vector<uint8_t>* scratch, float* out) {
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint64_t first = row0 * row_elements, n = n_rows * row_elements;
    if (first % traits.block_elems != 0 || n % traits.block_elems != 0) {
        return make_error(Error::kBadShape, t.info_offset, "diff.window");
    }
    const uint8_t* from = data + first / traits.block_elems * traits.block_bytes;
    if (big_endian) {
        const uint64_t nbytes = n / traits.block_elems * traits.block_bytes;
        scratch->assign(from, from + nbytes);
        WS_TRY(swap_to_little_endian(t.dtype, scratch->data(), nbytes));
        from = scratch->data();
    }
    return dequantize(t.dtype, from, n, out);
}

// Rows per window: about kWindowElements elements, a multiple of the comparator's unit and of what keeps
// both sides' windows on block boundaries.
uint64_t window_rows(const PairPlan& p, uint64_t unit, DType a, DType b) {
    uint64_t m = std::max<uint64_t>(unit, 1);
    for (DType t : {a, b}) {
        const uint64_t blk = dtype_traits(t).block_elems;
        const uint64_t q = blk / std::gcd(blk, std::max<uint64_t>(p.row_elements, 1));
        m = std::lcm(m, q);
    }
    const uint64_t target = std::max<uint64_t>(1, kWindowElements / std::max<uint64_t>(p.row_elements, 1));
    return std::max<uint64_t>(m, target / m * m);
}

struct Job {
    size_t row = 0;      // index in the report's rows
    uint64_t bytes = 0;  // stored bytes of both sides (for the progress bar and the order of work)
};

// Compares one pair; the row gets its verdict, metrics and hint (or incomparable with the reason).
CompareRow run_pair(const LoadedModel& ma, const LoadedModel& mb, const PairPlan& p, CompareRow row,
                    std::atomic<uint64_t>* done) {
    const TensorInfo& ta = ma.info.tensors[static_cast<size_t>(p.a)];
    const TensorInfo& tb = mb.info.tensors[static_cast<size_t>(p.b)];
    const uint64_t total = ta.nbytes + tb.nbytes;
    auto incomparable = [&](const std::string& why) {
        row.verdict = Verdict::kIncomparable;
        row.hint = why;
        done->fetch_add(total);
        return row;
    };
    std::string problem = decode_problem(ma, ta);
    if (!problem.empty()) return incomparable("A: " + problem);
    problem = decode_problem(mb, tb);
    if (!problem.empty()) return incomparable("B: " + problem);
    if (!ma.tensor_in_file(ta)) return incomparable("A: the tensor's data lies outside its file (truncated?)");
    if (!mb.tensor_in_file(tb)) return incomparable("B: the tensor's data lies outside its file (truncated?)");
    // A side at a URL: the pair's tensors fetched whole (one tensor per side per worker). A URL that cannot
    // be read ends the command as an unreadable file does (exit 3): the worker cannot return it.
    TensorBytes held_a, held_b;
    LoadError error;
    if (!ma.read_tensor(ta, ta.offset, ta.nbytes, &held_a, &error) ||
        !mb.read_tensor(tb, tb.offset, tb.nbytes, &held_b, &error)) {
        if (!error.source_failed()) return incomparable("the tensor's data lies outside its file (truncated?)");
        fail_load(error);
        std::fflush(stderr);
        _exit(kExitIo);
    }
    const uint8_t* da = held_a.data;
    const uint8_t* db = held_b.data;
    if (dequant_floats_per_element(ta.dtype) != 1 || dequant_floats_per_element(tb.dtype) != 1) {
        return incomparable("complex values are not compared");
    }

    PairComparator cmp(p, ta.dtype, tb.dtype);
    const uint64_t step = window_rows(p, cmp.window_rows(), ta.dtype, tb.dtype);
    const uint64_t window = std::min(step, p.rows) * p.row_elements;
    std::vector<float> wa(static_cast<size_t>(window)), wb(static_cast<size_t>(window));
    std::vector<uint8_t> swapped;  // a big-endian side's window of stored bytes
    uint64_t reported = 0;
    for (uint64_t r = 0; r < p.rows; r += step) {
        const uint64_t n = std::min(step, p.rows - r);
        Status s = decode_rows(ta, da, p.a_row0 + r, n, p.row_elements, ma.info.big_endian, &swapped, wa.data());
        if (!s.ok()) return incomparable(std::string("A: cannot decode the tensor (") + error_name(s.code) + ")");
        s = decode_rows(tb, db, p.b_row0 + r, n, p.row_elements, mb.info.big_endian, &swapped, wb.data());
        if (!s.ok()) return incomparable(std::string("B: cannot decode the tensor (") + error_name(s.code) + ")");
        s = cmp.add_window(r, n, wa.data(), wb.data());
        if (!s.ok()) return incomparable(std::string("internal error: ") + s.what);
        const uint64_t now = p.rows ? total * (r + n) / p.rows : total;
        done->fetch_add(now - reported);
        reported = now;
    }
    done->fetch_add(total - reported);
    return cmp.finish(std::move(row));
}

// Worst first: incomparable, then different by nmse (largest first), only_a, only_b, identical.
int verdict_rank(Verdict v) {
    switch (v) {
        case Verdict::kIncomparable:
            return 0;
        case Verdict::kDifferent:
            return 1;
        case Verdict::kOnlyA:
            return 2;
        case Verdict::kOnlyB:
            return 3;
        case Verdict::kIdentical:
            return 4;
    }
    return 5;
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
    std::printf("paired by %s: %s identical, %s different, %s only in A, %s only in B, %s incomparable\n",
                report.mapping.c_str(), with_commas(s.identical).c_str(), with_commas(s.different).c_str(),
                with_commas(s.only_a).c_str(), with_commas(s.only_b).c_str(), with_commas(s.incomparable).c_str());

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
    std::regex filter;
    const bool filtered = args.has("--tensors");
    if (filtered) {
        try {
            filter = std::regex(args.get("--tensors"), std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            return fail(kExitUsage, "--tensors: not a regular expression: " + args.get("--tensors"));
        }
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
    if (ma.info.format == Format::kSafetensors && read_config(args.positional[0], &config_a)) {
        options.config_a = &config_a;
    }
    if (mb.info.format == Format::kSafetensors && read_config(args.positional[1], &config_b)) {
        options.config_b = &config_b;
    }

    const ComparePlan plan = pair_models(ma.info, mb.info, options);
    CompareReport report;
    report.a = {args.positional[0], ma.info.format};
    report.b = {args.positional[1], mb.info.format};
    report.mapping = plan.mapping;
    report.metadata = diff_metadata(ma.info, mb.info);
    std::vector<const PairPlan*> pairs;
    for (const PairPlan& p : plan.pairs) {
        CompareRow row = plan_row(ma.info, mb.info, p);
        if (filtered && !(!row.a.empty() && std::regex_search(row.a, filter)) &&
            !(!row.b.empty() && std::regex_search(row.b, filter))) {
            continue;
        }
        report.tensors.push_back(std::move(row));
        pairs.push_back(&p);
    }

    std::vector<Job> jobs;
    uint64_t total = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
        const PairPlan& p = *pairs[i];
        if (p.a < 0 || p.b < 0 || !p.problem.empty()) continue;
        const uint64_t bytes =
            ma.info.tensors[static_cast<size_t>(p.a)].nbytes + mb.info.tensors[static_cast<size_t>(p.b)].nbytes;
        jobs.push_back({i, bytes});
        total += bytes;
    }
    // Largest pairs first, so the last thread to finish is not left with a big one.
    std::stable_sort(jobs.begin(), jobs.end(), [](const Job& x, const Job& y) { return x.bytes > y.bytes; });

    Progress progress("diff", total);
    std::atomic<uint64_t> done{0};
    std::atomic<size_t> next{0};
    std::atomic<size_t> finished{0};
    auto worker = [&] {
        for (size_t k = next.fetch_add(1); k < jobs.size(); k = next.fetch_add(1)) {
            const size_t i = jobs[k].row;
            const uint64_t started = io_now_us();
            report.tensors[i] = run_pair(ma, mb, *pairs[i], report.tensors[i], &done);
            record_decode(report.tensors[i].a, "", jobs[k].bytes, started, io_now_us() - started);  // both sides
            finished.fetch_add(1);
        }
    };
    const size_t n_workers = std::min<size_t>(std::max(1u, threads), std::max<size_t>(jobs.size(), 1));
    std::vector<std::thread> workers;
    for (size_t w = 0; w < n_workers; ++w) workers.emplace_back(worker);
    uint64_t shown = 0;
    while (finished.load() < jobs.size()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const uint64_t now = done.load();
        progress.add(now - shown);
        shown = now;
    }
    for (std::thread& t : workers) t.join();
    progress.finish();

    if (args.has("--json")) {
        nlohmann::json out = compare_report_to_json(report);
        if (io_in_json()) out["io"] = io_json();
        std::printf("%s\n", json_dump(out).c_str());
    } else {
        print_human(report, ma, mb);
    }
    if (gated) {
        for (const CompareRow& r : report.tensors) {
            if (r.has_metrics && !(r.metrics.nmse() <= max_nmse)) return kExitOverThreshold;
        }
    }
    return kExitOk;
}

}  // namespace ws::cli
