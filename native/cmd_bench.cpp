// SPDX-License-Identifier: MIT
// `bench [FILE] [--json] [--threads N] [--type NAME]`: decode throughput per type (or of one type) against a
// plain float32 store loop measured in the same run, single- and multi-threaded; with FILE also the time to
// parse and decode that file. Before timing,
// each type's fast kernel is checked against its scalar reference (and the threaded decode against both).
// `bench --quantize [--json] [--threads N] [--type NAME]`: quantize throughput per type (bench/quantize_bench.h),
// MB/s of float32 input, with and without an importance matrix, on one thread and with rows split over N; the
// threaded bytes are checked against the one-thread bytes before timing.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "cli.h"
#include "dequant.h"
#include "dequant_bench.h"
#include "header_parser.h"
#include "model_json.h"
#include "parallel.h"
#include "quantize.h"
#include "quantize_bench.h"
#include "tensor_io.h"

namespace ws::cli {
namespace {

constexpr uint64_t kOutputBytes = uint64_t(64) << 20;  // 64 MiB of float32 output per type
constexpr int kReps = 5;

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    }
    return "unknown";
}

double gbps(uint64_t bytes, double seconds) {
    return static_cast<double>(bytes) / seconds / 1e9;
}

// The decoded output of one thread must equal the threaded output before either is timed.
bool outputs_agree(const std::vector<float>& a, const std::vector<float>& b) {
    return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

nlohmann::json bench_types(const std::vector<DType>& types, unsigned threads, bool json, int* exit_status) {
    std::vector<float> out(kOutputBytes / sizeof(float)), check(out.size());
    if (!json) {
        std::printf("ratios: decode GB/s over a float32 store loop timed alternately with it (same load)\n");
        std::printf("%-12s %10s %10s %8s %12s %8s\n", "dtype", "GB/s out", "store GB/s", "ratio", "GB/s out xN",
                    "ratio");
    }
    double best_store = 0;
    nlohmann::json results = nlohmann::json::array();
    for (DType t : types) {
        const uint64_t n = out.size() / dequant_floats_per_element(t);
        const std::vector<uint8_t> src = bench::synthetic_tensor(t, n, 1);
        // The timed (fast) kernel must give the scalar reference's bits, and threads must not change them.
        dequant_row_fn_scalar(t)(src.data(), check.data(), static_cast<int64_t>(n));
        if (!dequantize(t, src.data(), n, out.data()).ok() || !outputs_agree(out, check)) {
            *exit_status =
                fail(kExitInvalid, std::string("bench: ") + dtype_name(t) + " fast decode differs from scalar");
            return nullptr;
        }
        if (!parallel_dequantize(t, src.data(), n, check.data(), threads).ok() || !outputs_agree(out, check)) {
            *exit_status = fail(kExitInvalid, std::string("bench: ") + dtype_name(t) + " threaded decode differs");
            return nullptr;
        }
        // Store-loop and decode runs alternate, so on a shared machine each ratio compares runs that saw the
        // same load; each figure is the best of kReps.
        double store = 0, one = 0, many = 0;
        for (int rep = 0; rep < kReps; ++rep) {
            store = std::max(store, bench::store_gbps(out.data(), out.size(), 1));
            one = std::max(one, gbps(kOutputBytes,
                                     bench::best_seconds(1, [&] { (void)dequantize(t, src.data(), n, out.data()); })));
            many = std::max(many, gbps(kOutputBytes, bench::best_seconds(1, [&] {
                                           (void)parallel_dequantize(t, src.data(), n, out.data(), threads);
                                       })));
        }
        best_store = std::max(best_store, store);
        results.push_back({{"dtype", dtype_name(t)},
                           {"gbps_out", one},
                           {"ratio_to_store", one / store},
                           {"store_gbps", store},
                           {"threads", 1}});
        results.push_back({{"dtype", dtype_name(t)},
                           {"gbps_out", many},
                           {"ratio_to_store", many / store},
                           {"store_gbps", store},
                           {"threads", threads}});
        if (!json) {
            std::printf("%-12s %10.2f %10.2f %8.2f %12.2f %8.2f\n", dtype_name(t), one, store, one / store, many,
                        many / store);
            std::fflush(stdout);
        }
    }
    // store_gbps: the best store-loop run of the whole benchmark; each row's ratio uses its own store_gbps.
    return {{"store_gbps", best_store}, {"results", results}};
}

nlohmann::json bench_file(const std::string& path, unsigned threads, bool json, int* exit_status) {
    LoadedModel model;
    if (!load(path, false, &model, exit_status)) return nullptr;
    const MappedFile& file = model.files[0];
    const double parse_s = bench::best_seconds(kReps, [&] {
        ParseOptions options;
        options.file_size = file.size();
        HeaderParser parser(options);
        (void)parser.feed(file.data(), file.size());
    });
    uint64_t in_bytes = 0, out_bytes = 0;
    std::vector<float> out;
    const double decode_s = bench::best_seconds(kReps, [&] {
        in_bytes = out_bytes = 0;
        for (const TensorInfo& t : model.info.tensors) {
            const uint8_t* src = model.tensor_data(t);
            if (!src || !dtype_decodable(t.dtype)) continue;
            out.resize(t.n_elements * dequant_floats_per_element(t.dtype));
            if (parallel_dequantize(t.dtype, src, t.n_elements, out.data(), threads).ok()) {
                in_bytes += t.nbytes;
                out_bytes += out.size() * sizeof(float);
            }
        }
    });
    if (!json) {
        std::printf("\n%s: header %s parsed in %.2f ms; %s decoded to %s f32 in %.1f ms (%.2f GB/s out, %u threads)\n",
                    path.c_str(), human_bytes(model.info.data_offset).c_str(), parse_s * 1e3,
                    human_bytes(in_bytes).c_str(), human_bytes(out_bytes).c_str(), decode_s * 1e3,
                    gbps(out_bytes, decode_s), threads);
    }
    return {{"path", path},
            {"header_bytes", model.info.data_offset},
            {"parse_ms", parse_s * 1e3},
            {"tensor_bytes", in_bytes},
            {"f32_bytes", out_bytes},
            {"decode_ms", decode_s * 1e3},
            {"decode_gbps_out", gbps(out_bytes, decode_s)},
            {"threads", threads}};
}

// quantize_rows() with the rows split over up to `threads` threads, as `quantize` splits a window (whole rows
// per thread, so the bytes are one thread's).
Status quantize_rows_threaded(DType t, const float* src, int64_t nrows, int64_t n_per_row, const float* imatrix,
                              uint8_t* dst, unsigned threads) {
    uint64_t row_bytes = 0;
    if (!dtype_bytes_for(t, static_cast<uint64_t>(n_per_row), &row_bytes))
        return quantize_rows(t, src, nrows, n_per_row, imatrix, dst);  // its error
    const int64_t n = std::max<int64_t>(1, std::min<int64_t>(threads, nrows));
    std::vector<Status> results(static_cast<size_t>(n), ok_status());
    const auto run = [&](int64_t i) {
        const int64_t r0 = nrows * i / n, r1 = nrows * (i + 1) / n;
        results[i] = quantize_rows(t, src + r0 * n_per_row, r1 - r0, n_per_row, imatrix, dst + r0 * row_bytes);
    };
    std::vector<std::thread> workers;
    for (int64_t i = 1; i < n; ++i) workers.emplace_back(run, i);
    run(0);
    for (std::thread& w : workers) w.join();
    for (const Status& s : results) WS_TRY(s);
    return ok_status();
}

nlohmann::json bench_quantize(const std::vector<DType>& types, unsigned threads, bool json, int* exit_status) {
    if (!json) {
        std::printf(
            "quantize: MB/s of float32 input (%lld values a row), best of %d. Every quantizer is ggml's\n"
            "scalar reference code (there is no faster path yet), so these ARE the reference path's figures.\n",
            static_cast<long long>(bench::kQuantizeRowElements), kReps);
        if (threads > 1)
            std::printf("The %u-thread bytes are checked against the 1-thread bytes before timing.\n", threads);
        std::printf("%-9s %-8s %8s %10s", "dtype", "imatrix", "MB in", "MB/s 1t");
        if (threads > 1)
            std::printf(" %12s %9s", ("MB/s " + std::to_string(threads) + "t").c_str(),
                        (std::to_string(threads) + "t / 1t").c_str());
        std::printf("\n");
    }
    nlohmann::json results = nlohmann::json::array();
    std::vector<uint8_t> scratch;
    for (DType t : types) {
        for (const bool with_imatrix : {false, true}) {
            if (with_imatrix ? !bench::quantize_reads_imatrix(t) : quantize_requires_imatrix(t)) continue;
            bench::QuantizeCase c;
            if (!bench::make_quantize_case(t, with_imatrix, &c).ok()) {
                *exit_status = fail(kExitInvalid, std::string("bench: cannot quantize to ") + dtype_name(t));
                return nullptr;
            }
            const bench::QuantizeFn single = [t](const float* src, int64_t nrows, int64_t n_per_row,
                                                 const float* imatrix, uint8_t* dst) {
                return quantize_rows(t, src, nrows, n_per_row, imatrix, dst);
            };
            const bench::QuantizeFn split = [t, threads](const float* src, int64_t nrows, int64_t n_per_row,
                                                         const float* imatrix, uint8_t* dst) {
                return quantize_rows_threaded(t, src, nrows, n_per_row, imatrix, dst, threads);
            };
            if (threads > 1 && !bench::quantize_matches(c, split, &scratch)) {
                *exit_status =
                    fail(kExitInvalid, std::string("bench: ") + dtype_name(t) + " threaded quantize differs");
                return nullptr;
            }
            // One-thread and threaded runs alternate, so both meet the same load; each figure is the best.
            double one = 0, many = 0;
            for (int rep = 0; rep < kReps; ++rep) {
                one = std::max(one, bench::quantize_mbps(c, single, 1, &scratch));
                if (threads > 1) many = std::max(many, bench::quantize_mbps(c, split, 1, &scratch));
            }
            const double mb_in = static_cast<double>(c.src.size() * sizeof(float)) / 1e6;
            // One row per thread count, as the decode results: 1, then `threads` when that is more.
            const auto add = [&](unsigned n, double mbps) {
                results.push_back({{"dtype", dtype_name(t)},
                                   {"imatrix", !c.imatrix.empty()},
                                   {"threads", n},
                                   {"mbps_in", mbps},
                                   {"values", c.src.size()},
                                   {"output_fnv1a64", bench::hex16(c.reference_hash)}});
            };
            add(1, one);
            if (threads > 1) add(threads, many);
            if (!json) {
                if (threads > 1) {
                    std::printf("%-9s %-8s %8.1f %10.1f %12.1f %9.2f\n", dtype_name(t), with_imatrix ? "yes" : "no",
                                mb_in, one, many, many / one);
                } else {
                    std::printf("%-9s %-8s %8.1f %10.1f\n", dtype_name(t), with_imatrix ? "yes" : "no", mb_in, one);
                }
                std::fflush(stdout);
            }
        }
    }
    // path: the quantizers timed; "reference" (ggml's scalar code) is the only one there is yet.
    return {{"path", "reference"},
            {"note", "every quantizer is ggml's scalar reference code (no faster path yet): these are its figures"},
            {"row_elements", bench::kQuantizeRowElements},
            {"reps", kReps},
            {"threads", threads},
            {"results", results}};
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--json", "--quantize"}, {"--threads", "--type"}, &args)) return kExitUsage;
    const bool quantize = args.has("--quantize");
    if (args.positional.size() > (quantize ? 0u : 1u))
        return fail(kExitUsage, "usage: weightstream bench [FILE | --quantize] [--json] [--threads N] [--type NAME]");
    // The benchmark times parsing and decoding bytes in memory; a URL would time the network.
    if (!args.positional.empty() && is_url(args.positional[0])) {
        return fail(kExitUsage,
                    "bench measures a local file; download " + url_without_userinfo(args.positional[0]) + " first");
    }
    unsigned threads = 0;
    if (!parse_threads(args, &threads)) return kExitUsage;
    std::vector<DType> types = quantize ? bench::quantizable_types() : bench::decodable_types();
    if (args.has("--type")) {
        const std::string name = args.get("--type");
        const auto it = std::find_if(types.begin(), types.end(), [&](DType t) { return name == dtype_name(t); });
        if (it == types.end())
            return fail(kExitUsage, "--type: '" + name + "' is not a " + (quantize ? "quantizable" : "decodable") +
                                        " type (e.g. Q4_K)");
        types = {*it};
    }
    const bool json = args.has("--json");
    int status = kExitOk;
    if (!json)
        std::printf("machine: %s, %u hardware threads\n", cpu_model().c_str(), std::thread::hardware_concurrency());
    nlohmann::json report;
    if (quantize) {
        report["quantize"] = bench_quantize(types, threads, json, &status);
    } else {
        report = bench_types(types, threads, json, &status);
    }
    if (status != kExitOk) return status;
    report["machine"] = {{"cpu", cpu_model()}, {"hardware_threads", std::thread::hardware_concurrency()}};
    if (!args.positional.empty()) {
        report["file"] = bench_file(args.positional[0], threads, json, &status);
        if (status != kExitOk) return status;
    }
    if (json) std::printf("%s\n", json_dump(report).c_str());
    return kExitOk;
}

}  // namespace ws::cli
