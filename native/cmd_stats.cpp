// SPDX-License-Identifier: MIT
// `stats FILE [TENSOR ...] [--json] [--threads N]`: per tensor min, max, mean and population std of the
// finite values, counts of NaN, +Inf, -Inf and zeros, and a histogram of the finite values.
//
// The numbers do not depend on --threads: values are summarised in fixed runs of kRun floats (two passes in
// double within a run: the mean, then the squared deviations from it) and the runs are merged in order
// (Chan et al.'s pairwise update), so the same floats always give the same bits.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "dequant.h"
#include "model_json.h"
#include "progress.h"
#include "tensor_io.h"

namespace ws::cli {
namespace {

constexpr uint64_t kRun = uint64_t(1) << 16;  // floats per summarised run; divides kPieceElements
constexpr int kBins = 32;

struct Summary {
    uint64_t finite = 0;
    double mean = 0;
    double m2 = 0;                   // sum of squared deviations from the mean
    uint32_t min_key = 0xffffffffu;  // the finite minimum and maximum as ordered() keys (-0 sorts below +0)
    uint32_t max_key = 0;
    uint64_t nan = 0, pos_inf = 0, neg_inf = 0, zeros = 0;
};

// Sums run in kLanes independent accumulators (element i in lane i % kLanes) so consecutive additions do not
// wait for each other; the lanes are added up in a fixed order, so the result is still deterministic.
constexpr size_t kLanes = 4;

uint32_t bits_of(float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

bool finite_bits(float v) {
    return (bits_of(v) & 0x7f800000u) != 0x7f800000u;
}

// Finite floats as unsigned integers in the same order (negative ones reversed below the positive ones), so
// min/max become integer operations the compiler vectorizes (float min/max reductions it will not).
uint32_t ordered(uint32_t u) {
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}
float unordered(uint32_t k) {
    const uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
    float v;
    std::memcpy(&v, &u, sizeof v);
    return v;
}

// The usual case, a run without NaN or Inf, in branch-free loops the compiler can vectorize. Returns false
// (and leaves *s alone) when the run has a NaN or Inf after all.
bool summarise_finite(const float* x, size_t n, Summary* s) {
    uint32_t lo = 0xffffffffu, hi = 0, non_finite = 0, zeros = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t u = bits_of(x[i]);
        const uint32_t k = ordered(u);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
        non_finite += (u & 0x7f800000u) == 0x7f800000u;
        zeros += (u & 0x7fffffffu) == 0;
    }
    if (n == 0 || non_finite != 0) return false;
    double sum[kLanes] = {};
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        for (size_t l = 0; l < kLanes; ++l) sum[l] += x[i + l];
    }
    for (; i < n; ++i) sum[i % kLanes] += x[i];
    s->finite = n;
    s->min_key = lo;
    s->max_key = hi;
    s->zeros = zeros;
    s->mean = ((sum[0] + sum[1]) + (sum[2] + sum[3])) / static_cast<double>(n);
    double m2[kLanes] = {};
    for (i = 0; i + kLanes <= n; i += kLanes) {
        for (size_t l = 0; l < kLanes; ++l) {
            const double d = static_cast<double>(x[i + l]) - s->mean;
            m2[l] += d * d;
        }
    }
    for (; i < n; ++i) {
        const double d = static_cast<double>(x[i]) - s->mean;
        m2[i % kLanes] += d * d;
    }
    s->m2 = (m2[0] + m2[1]) + (m2[2] + m2[3]);
    return true;
}

Summary summarise(const float* x, size_t n) {
    Summary s;
    if (summarise_finite(x, n, &s)) return s;
    double sum[kLanes] = {};
    for (size_t i = 0; i < n; ++i) {
        const float v = x[i];
        if (!std::isfinite(v)) {
            ++(std::isnan(v) ? s.nan : v > 0 ? s.pos_inf : s.neg_inf);
            continue;
        }
        ++s.finite;
        sum[i % kLanes] += v;
        s.min_key = std::min(s.min_key, ordered(bits_of(v)));
        s.max_key = std::max(s.max_key, ordered(bits_of(v)));
        s.zeros += v == 0.0f;
    }
    if (s.finite == 0) return s;
    s.mean = ((sum[0] + sum[1]) + (sum[2] + sum[3])) / static_cast<double>(s.finite);
    double m2[kLanes] = {};
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(x[i])) continue;
        const double d = static_cast<double>(x[i]) - s.mean;
        m2[i % kLanes] += d * d;
    }
    s.m2 = (m2[0] + m2[1]) + (m2[2] + m2[3]);
    return s;
}

void merge(Summary* a, const Summary& b) {
    if (b.finite > 0) {
        const double na = static_cast<double>(a->finite), nb = static_cast<double>(b.finite);
        const double n = na + nb, delta = b.mean - a->mean;
        a->mean += delta * (nb / n);
        a->m2 += b.m2 + delta * delta * (na * nb / n);
        a->finite += b.finite;
        a->min_key = std::min(a->min_key, b.min_key);
        a->max_key = std::max(a->max_key, b.max_key);
    }
    a->nan += b.nan;
    a->pos_inf += b.pos_inf;
    a->neg_inf += b.neg_inf;
    a->zeros += b.zeros;
}

// Runs fn(run index) for runs [0, n_runs) on up to `threads` threads.
template <typename Fn>
void parallel_runs(size_t n_runs, unsigned threads, const Fn& fn) {
    const size_t n = std::min<size_t>(threads, n_runs);
    if (n <= 1) {
        for (size_t i = 0; i < n_runs; ++i) fn(i);
        return;
    }
    std::vector<std::thread> workers;
    for (size_t w = 0; w < n; ++w) {
        workers.emplace_back([&, w] {
            for (size_t i = w; i < n_runs; i += n) fn(i);
        });
    }
    for (std::thread& t : workers) t.join();
}

struct TensorStats {
    Summary summary;
    uint64_t counts[kBins] = {};
};

size_t runs_of(uint64_t floats) {
    return static_cast<size_t>((floats + kRun - 1) / kRun);
}

void add_summary(const float* x, uint64_t floats, unsigned threads, Summary* out) {
    std::vector<Summary> runs(runs_of(floats));
    parallel_runs(runs.size(), threads, [&](size_t i) {
        runs[i] = summarise(x + i * kRun, static_cast<size_t>(std::min(kRun, floats - i * kRun)));
    });
    for (const Summary& r : runs) merge(out, r);
}

// Bin k holds the finite values v with floor((v - min) * (32 / (max - min))) == k; the maximum goes in the
// last bin, and when max == min everything is in the first.
void add_histogram(const float* x, uint64_t floats, unsigned threads, const Summary& s, uint64_t* counts) {
    const double lo = unordered(s.min_key), width = static_cast<double>(unordered(s.max_key)) - lo;
    const double scale = width > 0 ? kBins / width : 0.0;
    const bool all_finite = s.nan + s.pos_inf + s.neg_inf == 0;
    // kLanes sub-histograms, so runs of equal bins (a peaked distribution) do not serialise on one counter.
    std::vector<std::array<uint32_t, kBins * kLanes>> runs(runs_of(floats));
    parallel_runs(runs.size(), threads, [&](size_t i) {
        std::array<uint32_t, kBins* kLanes>& c = runs[i];
        c.fill(0);
        const float* v = x + i * kRun;
        const size_t m = static_cast<size_t>(std::min(kRun, floats - i * kRun));
        if (!all_finite) {
            for (size_t j = 0; j < m; ++j) {
                if (!finite_bits(v[j])) continue;
                const int bin = std::min(kBins - 1, static_cast<int>((static_cast<double>(v[j]) - lo) * scale));
                c[(j % kLanes) * kBins + static_cast<size_t>(bin)]++;
            }
            return;
        }
        // Bin numbers for a batch first (a loop the compiler vectorizes), then the counting.
        constexpr size_t kBatch = 256;
        int32_t bins[kBatch];
        for (size_t first = 0; first < m; first += kBatch) {
            const size_t b = std::min(kBatch, m - first);
            for (size_t j = 0; j < b; ++j) {
                const int32_t bin = static_cast<int32_t>((static_cast<double>(v[first + j]) - lo) * scale);
                bins[j] = bin < kBins - 1 ? bin : kBins - 1;
            }
            for (size_t j = 0; j < b; ++j) c[(j % kLanes) * kBins + static_cast<size_t>(bins[j])]++;
        }
    });
    for (const auto& c : runs) {
        for (size_t b = 0; b < kBins * kLanes; ++b) counts[b % kBins] += c[b];
    }
}

// The summary gives the histogram's range, so a tensor larger than one decode piece is decoded twice; a
// smaller one (most tensors) is decoded once. Progress counts the tensor's bytes once per decode.
Status tensor_stats(const TensorInfo& t, const uint8_t* data, unsigned threads, Progress* progress, TensorStats* out) {
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const uint32_t per_element = dequant_floats_per_element(t.dtype);
    const bool one_piece = t.n_elements <= kPieceElements;
    WS_TRY(for_each_decoded(t.dtype, data, t.n_elements, threads, [&](const float* x, uint64_t, uint64_t n) {
        add_summary(x, n * per_element, threads, &out->summary);
        if (one_piece && out->summary.finite > 0) add_histogram(x, n * per_element, threads, out->summary, out->counts);
        progress->add(n / traits.block_elems * traits.block_bytes);
        return true;
    }));
    if (one_piece || out->summary.finite == 0) {
        progress->add(t.nbytes);  // no second decode
        return ok_status();
    }
    return for_each_decoded(t.dtype, data, t.n_elements, threads, [&](const float* x, uint64_t, uint64_t n) {
        add_histogram(x, n * per_element, threads, out->summary, out->counts);
        progress->add(n / traits.block_elems * traits.block_bytes);
        return true;
    });
}

nlohmann::json number_or_null(bool present, double v) {
    return present ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json stats_json(const TensorInfo& t, const TensorStats& st) {
    const Summary& s = st.summary;
    const bool any = s.finite > 0;
    const double min = unordered(s.min_key), max = unordered(s.max_key);
    nlohmann::json j{{"name", t.name},
                     {"dtype", t.dtype_name()},
                     {"n_elements", t.n_elements},
                     {"min", number_or_null(any, min)},
                     {"max", number_or_null(any, max)},
                     {"mean", number_or_null(any, s.mean)},
                     {"std", number_or_null(any, std::sqrt(s.m2 / static_cast<double>(s.finite)))},
                     {"nan", s.nan},
                     {"pos_inf", s.pos_inf},
                     {"neg_inf", s.neg_inf},
                     {"zeros", s.zeros}};
    j["histogram"] = {{"min", number_or_null(any, min)},
                      {"max", number_or_null(any, max)},
                      {"counts", std::vector<uint64_t>(st.counts, st.counts + kBins)}};
    return j;
}

// The histogram as 32 block characters (U+2581..U+2588) scaled to the fullest bin; empty bins are spaces.
std::string sparkline(const uint64_t* counts) {
    static const char* const kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588"};
    const uint64_t top = *std::max_element(counts, counts + kBins);
    std::string s;
    for (int b = 0; b < kBins; ++b) {
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
    if (!parse_args(argv, {"--json"}, {"--threads"}, &args)) return kExitUsage;
    if (args.positional.empty()) {
        return fail(kExitUsage, "usage: weightstream stats FILE [TENSOR ...] [--json] [--threads N]");
    }
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;
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
            const std::string problem = decode_problem(model, *t);
            if (!problem.empty()) {
                return fail(kExitInvalid, describe(model.paths[t->file_index],
                                                   make_error(Error::kUnsupported, t->info_offset, "tensor.type")) +
                                              ": tensor " + printable(t->name, 200) + ": " + problem);
            }
            selected.push_back(t);
        }
    } else {
        for (const TensorInfo& t : model.info.tensors) selected.push_back(&t);
    }

    uint64_t total = 0;
    for (const TensorInfo* t : selected) total += 2 * t->nbytes;
    Progress progress("stats", total);
    nlohmann::json tensors = nlohmann::json::array();
    std::vector<std::string> warnings;
    for (const TensorInfo* t : selected) {
        const std::string problem = decode_problem(model, *t);
        if (!problem.empty()) {
            tensors.push_back(
                {{"name", t->name}, {"dtype", t->dtype_name()}, {"n_elements", t->n_elements}, {"error", problem}});
            warnings.push_back("tensor " + printable(t->name, 200) + ": " + problem + "; no statistics");
            progress.add(2 * t->nbytes);
            continue;
        }
        const uint8_t* data = tensor_bytes_or_fail(model, *t, &status);
        if (!data) {
            progress.finish();
            return status;
        }
        TensorStats st;
        const Status s = tensor_stats(*t, data, threads, &progress, &st);
        if (!s.ok()) {
            progress.finish();
            return fail(kExitInvalid, describe(model.paths[t->file_index], make_error(s.code, t->info_offset, s.what)) +
                                          ": tensor " + printable(t->name, 200));
        }
        tensors.push_back(stats_json(*t, st));
    }
    progress.finish();
    for (const std::string& w : warnings) warn(w);

    if (args.has("--json")) {
        std::printf("%s\n", json_dump(nlohmann::json{{"tensors", std::move(tensors)}}).c_str());
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
        uint64_t counts[kBins];
        for (int b = 0; b < kBins; ++b) counts[b] = j["histogram"]["counts"][b].get<uint64_t>();
        std::printf("%-*s  %-8s %13s %13s %13s %13s %9s %9s %9s %11s  %s\n", static_cast<int>(width), name.c_str(),
                    j["dtype"].get<std::string>().c_str(), number_text(j["min"]).c_str(), number_text(j["max"]).c_str(),
                    number_text(j["mean"]).c_str(), number_text(j["std"]).c_str(),
                    with_commas(j["nan"].get<uint64_t>()).c_str(), with_commas(j["pos_inf"].get<uint64_t>()).c_str(),
                    with_commas(j["neg_inf"].get<uint64_t>()).c_str(), with_commas(j["zeros"].get<uint64_t>()).c_str(),
                    sparkline(counts).c_str());
    }
    return kExitOk;
}

}  // namespace ws::cli
