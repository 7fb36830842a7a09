// SPDX-License-Identifier: MIT
// `bench [FILE] [--json] [--threads N] [--type NAME]`: decode throughput per type (or of one type) against a
// plain float32 store loop measured in the same run, single- and multi-threaded; with FILE also the time to
// parse and decode that file. Before timing,
// each type's fast kernel is checked against its scalar reference (and the threaded decode against both).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "cli.h"
#include "dequant.h"
#include "dequant_bench.h"
#include "header_parser.h"
#include "model_json.h"
#include "parallel.h"
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

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--json"}, {"--threads", "--type"}, &args)) return kExitUsage;
    if (args.positional.size() > 1)
        return fail(kExitUsage, "usage: weightstream bench [FILE] [--json] [--threads N] [--type NAME]");
    unsigned threads = 0;
    if (!parse_threads(args, &threads)) return kExitUsage;
    std::vector<DType> types = bench::decodable_types();
    if (args.has("--type")) {
        const std::string name = args.get("--type");
        const auto it = std::find_if(types.begin(), types.end(), [&](DType t) { return name == dtype_name(t); });
        if (it == types.end()) return fail(kExitUsage, "--type: '" + name + "' is not a decodable type (e.g. Q4_K)");
        types = {*it};
    }
    const bool json = args.has("--json");
    int status = kExitOk;
    if (!json)
        std::printf("machine: %s, %u hardware threads\n", cpu_model().c_str(), std::thread::hardware_concurrency());
    nlohmann::json report = bench_types(types, threads, json, &status);
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
