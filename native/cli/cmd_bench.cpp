// SPDX-License-Identifier: MIT
// `bench [FILE] [--json] [--threads N] [--type NAME]`: decode throughput per type (or of one type) against a
// plain float32 store loop measured in the same run, single- and multi-threaded; with FILE also the time to
// parse and decode that file. Before timing,
// each type's fast kernel is checked against its scalar reference (and the threaded decode against both).
// `bench --quantize [--json] [--threads N] [--type NAME]`: quantize throughput per type (bench/quantize_bench.h),
// MB/s of float32 input, with and without an importance matrix, on one thread and with rows split over N; the
// threaded bytes are checked against the one-thread bytes before timing.
// `bench --hash [FILE] [--json] [--threads N] [--rounds R]`: `hash`'s throughput (GB/s of tensor bytes in)
// against decoding alone, each on 1 and N threads, in R alternating rounds (medians); without FILE on a
// generated GGUF of 1.13 GiB (Q4_K, Q8_0, F16, F32 in a llama-like layout) written to $TMPDIR and removed
// after. The 1- and N-thread digests are checked to be equal before timing.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "cli/cli.h"
#include "cli/tensor_hash.h"
#include "dequant_bench.h"
#include "ggml_loops.h"
#include "io/crypto_library.h"
#include "io/job_driver.h"
#include "io/parallel.h"
#include "io/tensor_io.h"
#include "quantize_bench.h"
#include "weightstream/dequant.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/header_parser.h"
#include "weightstream/model_json.h"
#include "weightstream/quantize.h"

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

constexpr int kGgmlRounds = 12;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Our single-thread decode of t against ggml's loop for it (bench/ggml_loops.h), after checking that both give
// the same bits: kGgmlRounds rounds, each timing one run of each into the same buffer, which first alternating (so both
// meet the same load). Medians of each side's GB/s and of the per-round ratios (ours over ggml's). False if the bits
// differ.
bool versus_ggml_loop(DType t, DequantRowFn ggml, const std::vector<uint8_t>& src, uint64_t n, std::vector<float>* out,
                      std::vector<float>* check, double* ours_gbps, double* ggml_gbps, double* ratio) {
    ggml(src.data(), check->data(), static_cast<int64_t>(n));
    if (!dequantize(t, src.data(), n, out->data()).ok() || !outputs_agree(*out, *check)) return false;
    std::vector<double> ours, theirs, ratios;
    for (int r = 0; r < kGgmlRounds; ++r) {
        // Both write the same buffer, and which goes first alternates: the second run of a pair is measurably
        // favoured (the first one's writes leave the buffer's pages and lines in a better state).
        const auto ours_run = [&] {
            return bench::best_seconds(1, [&] { (void)dequantize(t, src.data(), n, out->data()); });
        };
        const auto ggml_run = [&] {
            return bench::best_seconds(1, [&] { ggml(src.data(), out->data(), static_cast<int64_t>(n)); });
        };
        double a = 0, b = 0;
        if (r % 2 == 0) {
            a = ours_run();
            b = ggml_run();
        } else {
            b = ggml_run();
            a = ours_run();
        }
        ours.push_back(gbps(kOutputBytes, a));
        theirs.push_back(gbps(kOutputBytes, b));
        ratios.push_back(b / a);
    }
    *ours_gbps = median(ours);
    *ggml_gbps = median(theirs);
    *ratio = median(ratios);
    return true;
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
        nlohmann::json row = {{"dtype", dtype_name(t)},
                              {"gbps_out", one},
                              {"ratio_to_store", one / store},
                              {"store_gbps", store},
                              {"threads", 1}};
        if (const DequantRowFn ggml = bench::ggml_loop(t)) {
            double ours_gbps = 0, ggml_gbps = 0, ratio = 0;
            if (!versus_ggml_loop(t, ggml, src, n, &out, &check, &ours_gbps, &ggml_gbps, &ratio)) {
                *exit_status = fail(kExitInvalid, std::string("bench: ") + dtype_name(t) + " ggml loop differs");
                return nullptr;
            }
            row["ggml_loop"] = {
                {"rounds", kGgmlRounds}, {"gbps_out", ours_gbps}, {"ggml_gbps_out", ggml_gbps}, {"ratio", ratio}};
            if (!json)
                std::printf("%-12s against ggml's loop: %.2f GB/s vs %.2f GB/s, ratio %.3f (median of %d rounds)\n",
                            dtype_name(t), ours_gbps, ggml_gbps, ratio, kGgmlRounds);
        }
        results.push_back(row);
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
        std::printf("\n%s: header %s parsed in %.2f ms; %s decoded to %s f32 in %.1f ms (%.2f GB/s out, %s)\n",
                    path.c_str(), human_bytes(model.info.data_offset).c_str(), parse_s * 1e3,
                    human_bytes(in_bytes).c_str(), human_bytes(out_bytes).c_str(), decode_s * 1e3,
                    gbps(out_bytes, decode_s), counted(threads, "thread").c_str());
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
            "quantize: MB/s of float32 input (%lld values a row), best of %d, through the quantizers this CPU\n"
            "runs (the k-quants' scale searches on SIMD lanes where it has them; same bytes as ggml's).\n",
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
    // path: the quantizers timed, those quantize_rows() runs on this CPU.
    return {{"path", "fastest"},
            {"note", "the quantizers this CPU runs (the k-quants' scale searches on SIMD lanes where it has them)"},
            {"row_elements", bench::kQuantizeRowElements},
            {"reps", kReps},
            {"threads", threads},
            {"results", results}};
}

// The generated model of `bench --hash`: a 7-layer llama-7B-like slice (F16 embeddings, Q4_K attention and
// ffn gate/up, Q8_0 ffn down, F32 norms), 1.22 GB of tensor data (6.2 GB as float32). Writes it to `path`.
bool write_hash_model(const std::string& path, std::string* why) {
    constexpr int64_t kEmbd = 4096, kFf = 11008, kVocab = 32000;
    constexpr int kLayers = 7;
    const auto make = [](const std::string& name, DType t, int64_t ne0, int64_t ne1) {
        TensorInfo info;
        info.name = name;
        info.dtype = t;
        info.n_dims = ne1 > 1 ? 2 : 1;
        info.ne[0] = ne0;
        info.ne[1] = ne1;
        return info;
    };
    std::vector<TensorInfo> tensors = {make("token_embd.weight", DType::F16, kEmbd, kVocab)};
    for (int l = 0; l < kLayers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        tensors.push_back(make(b + "attn_norm.weight", DType::F32, kEmbd, 1));
        for (const char* w : {"attn_q", "attn_k", "attn_v", "attn_output"})
            tensors.push_back(make(b + w + ".weight", DType::Q4_K, kEmbd, kEmbd));
        tensors.push_back(make(b + "ffn_norm.weight", DType::F32, kEmbd, 1));
        tensors.push_back(make(b + "ffn_gate.weight", DType::Q4_K, kEmbd, kFf));
        tensors.push_back(make(b + "ffn_up.weight", DType::Q4_K, kEmbd, kFf));
        tensors.push_back(make(b + "ffn_down.weight", DType::Q8_0, kFf, kEmbd));
    }
    Result<GgufLayout> layout = gguf_layout({string_entry("general.name", "weightstream bench --hash")}, tensors);
    if (!layout.ok()) {
        *why = "cannot lay out the generated model";
        return false;
    }
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        *why = "cannot write " + path;
        return false;
    }
    bool ok =
        std::fwrite(layout.value().header.data(), 1, layout.value().header.size(), f) == layout.value().header.size();
    // One synthetic payload per (type, size), shared by the tensors of that shape: generating 1.2 GB of
    // blocks would take longer than the benchmark.
    std::vector<std::pair<std::pair<DType, uint64_t>, std::vector<uint8_t>>> payloads;
    const std::vector<uint8_t> zeros(64, 0);
    for (size_t i = 0; i < tensors.size() && ok; ++i) {
        const TensorInfo& t = tensors[i];
        const uint64_t n = static_cast<uint64_t>(t.ne[0] * t.ne[1]);
        auto it = std::find_if(payloads.begin(), payloads.end(),
                               [&](const auto& p) { return p.first == std::make_pair(t.dtype, n); });
        if (it == payloads.end()) {
            payloads.push_back({{t.dtype, n}, bench::synthetic_tensor(t.dtype, n, payloads.size() + 1)});
            it = payloads.end() - 1;
        }
        ok = std::fwrite(it->second.data(), 1, it->second.size(), f) == it->second.size() &&
             std::fwrite(zeros.data(), 1, layout.value().tensor_padding[i], f) == layout.value().tensor_padding[i];
    }
    ok = std::fclose(f) == 0 && ok;
    if (!ok) *why = "cannot write " + path;
    return ok;
}

double gb_per_s(const std::function<void()>& run, uint64_t bytes) {
    const auto start = std::chrono::steady_clock::now();
    run();
    return gbps(bytes, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

double process_cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string one;
    in >> one;
    return one.empty() ? "unknown" : one;
}

// SHA-256 GB/s over a cache-resident 256 KiB buffer: the ceiling of hashing the float32 decode on one thread.
double sha256_gbps() {
    std::vector<uint8_t> buf(256 << 10, 0x5a);
    return gb_per_s(
        [&] {
            Hasher h(HashAlgo::kSha256);
            for (int i = 0; i < 2048; ++i) h.update(buf.data(), buf.size());
            (void)h.hex();
        },
        uint64_t(2048) * buf.size());
}

// Digests nothing: the decode alone, bench's baseline.
class NoDigest final : public Digest {
public:
    void update(const uint8_t*, uint64_t) override {}
    std::vector<uint8_t> finish() override { return {}; }
};

// `hash`'s job over the mapped model on `threads` threads: its digests, or (digests false) the decode alone.
HashReport hash_model(const LoadedModel& model, unsigned threads, bool digests) {
    HashJobOptions options = fingerprint_options(model);
    if (!digests) options.stored.clear();
    HashJob job(
        model.info, std::move(options),
        digests ? hasher_factory() : [](uint32_t) { return std::unique_ptr<Digest>(new NoDigest); });
    DriveOptions drive_options;
    drive_options.threads = threads;
    (void)drive(job, sources_of(model), drive_options);
    return job.report();
}

nlohmann::json bench_hash(const std::string& given, unsigned threads, int rounds, bool json, int* exit_status) {
    std::string unloaded;
    if (!crypto_library(&unloaded)) {
        *exit_status = fail(kExitIo, "bench --hash: " + unloaded);
        return nullptr;
    }
    std::string path = given;
    if (path.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        path =
            std::string(tmp && *tmp ? tmp : "/tmp") + "/weightstream-bench-hash-" + std::to_string(getpid()) + ".gguf";
        std::string why;
        if (!json) std::printf("writing a generated model to %s\n", path.c_str());
        std::fflush(stdout);
        if (!write_hash_model(path, &why)) {
            std::remove(path.c_str());
            *exit_status = fail(kExitIo, "bench --hash: " + why);
            return nullptr;
        }
    }
    // Removes the generated file however this returns.
    const std::unique_ptr<const std::string, void (*)(const std::string*)> cleanup(
        given.empty() ? &path : nullptr, [](const std::string* p) { std::remove(p->c_str()); });
    LoadedModel model;
    if (!load(path, false, &model, exit_status)) return nullptr;
    if (model.files.size() == 1 && model.files[0].is_stream()) {
        *exit_status = fail(kExitUsage, "bench --hash: FILE must be a regular file, not a stream");
        return nullptr;
    }
    uint64_t in_bytes = 0, f32_bytes = 0;
    for (const TensorInfo& t : model.info.tensors) {
        in_bytes += t.nbytes;
        if (dtype_decodable(t.dtype)) f32_bytes += t.n_elements * dequant_floats_per_element(t.dtype) * 4;
    }
    // Verified before timing: the N-thread digests are the 1-thread ones, and nothing failed.
    const HashReport one = hash_model(model, 1, true);
    const HashReport many = hash_model(model, threads, true);
    if (one.failed >= 0 || many.failed >= 0) {
        const size_t i = static_cast<size_t>(one.failed >= 0 ? one.failed : many.failed);
        *exit_status = fail(
            kExitInvalid, "bench --hash: tensor " + printable(model.info.tensors[i].name, 200) + ": cannot be hashed");
        return nullptr;
    }
    for (size_t i = 0; i < one.tensors.size(); ++i) {
        if (one.tensors[i].stored != many.tensors[i].stored || one.tensors[i].decoded != many.tensors[i].decoded) {
            *exit_status = fail(kExitInvalid, "bench --hash: tensor " + printable(model.info.tensors[i].name, 200) +
                                                  ": threaded digests differ");
            return nullptr;
        }
    }
    // A digest is one task, so N threads can go at most total / longest times faster than one.
    uint64_t longest = 0, work = 0;
    for (const TensorInfo& t : model.info.tensors) {
        const uint64_t f32 = t.n_elements * dequant_floats_per_element(t.dtype) * 4;
        longest = std::max(longest, f32);
        work += f32 + t.nbytes;
    }
    const double balance_bound =
        std::min<double>(threads, static_cast<double>(work) / static_cast<double>(std::max<uint64_t>(longest, 1)));
    // Wall-clock GB/s, and the N-thread hash's GB per CPU-second: on a machine whose other cores are busy
    // (this kernel schedules each session as one group) threads cannot show in wall time, but a CPU
    // efficiency near the 1-thread one says the work divides without overhead.
    double cpu_seconds = 0;
    const auto run = [&](unsigned n, bool digests) {
        const double cpu0 = process_cpu_seconds();
        const double g = gb_per_s([&] { (void)hash_model(model, n, digests); }, in_bytes);
        cpu_seconds = process_cpu_seconds() - cpu0;
        return g;
    };
    std::vector<double> decode1, decoden, hash1, hashn, ratio1, scaling, sha, cpu1, cpun;
    const std::string load_before = load_average();
    if (!json) {
        std::printf("%s: %s of tensors (%s as float32), %d rounds; GB/s of tensor bytes in; load average %s\n",
                    path.c_str(), human_bytes(in_bytes).c_str(), human_bytes(f32_bytes).c_str(), rounds,
                    load_before.c_str());
        std::printf("%5s %10s %10s %10s %10s %12s %12s\n", "round", "decode 1t", "hash 1t",
                    ("decode " + std::to_string(threads) + "t").c_str(),
                    ("hash " + std::to_string(threads) + "t").c_str(), "hash/decode",
                    ("hash " + std::to_string(threads) + "t/1t").c_str());
    }
    for (int r = 0; r < rounds; ++r) {
        // Alternating within a round, so that each ratio compares runs that met the same load.
        decode1.push_back(run(1, false));
        hash1.push_back(run(1, true));
        cpu1.push_back(gbps(in_bytes, cpu_seconds));
        decoden.push_back(run(threads, false));
        hashn.push_back(run(threads, true));
        cpun.push_back(gbps(in_bytes, cpu_seconds));
        sha.push_back(sha256_gbps());
        ratio1.push_back(hash1.back() / decode1.back());
        scaling.push_back(hashn.back() / hash1.back());
        if (!json) {
            std::printf("%5d %10.3f %10.3f %10.3f %10.3f %12.3f %12.3f\n", r + 1, decode1.back(), hash1.back(),
                        decoden.back(), hashn.back(), ratio1.back(), scaling.back());
            std::fflush(stdout);
        }
    }
    // The most one thread can do: SHA-256 over every float32 byte (and the stored bytes), nothing else.
    const double ceiling =
        median(sha) * 1e9 / static_cast<double>(f32_bytes + in_bytes) * static_cast<double>(in_bytes) / 1e9;
    if (!json) {
        std::printf("median %9.3f %10.3f %10.3f %10.3f %12.3f %12.3f\n", median(decode1), median(hash1),
                    median(decoden), median(hashn), median(ratio1), median(scaling));
        std::printf("sha256 alone %.2f GB/s (cache-resident): hash on 1 thread can reach at most %.3f GB/s in here\n",
                    median(sha), ceiling);
        std::printf(
            "hash GB per CPU-second: %.3f on 1 thread, %.3f on %u; digests as tasks bound %u threads to %.2fx\n",
            median(cpu1), median(cpun), threads, threads, balance_bound);
        std::printf("load average %s at the start, %s at the end\n", load_before.c_str(), load_average().c_str());
    }
    return {{"path", given.empty() ? "generated" : given},
            {"tensor_bytes", in_bytes},
            {"f32_bytes", f32_bytes},
            {"rounds", rounds},
            {"threads", threads},
            {"decode_gbps_1t", median(decode1)},
            {"hash_gbps_1t", median(hash1)},
            {"decode_gbps_nt", median(decoden)},
            {"hash_gbps_nt", median(hashn)},
            {"hash_over_decode_1t", median(ratio1)},
            {"hash_nt_over_1t", median(scaling)},
            {"sha256_gbps", median(sha)},
            {"hash_1t_ceiling_gbps", ceiling},
            {"hash_cpu_gbps_1t", median(cpu1)},
            {"hash_cpu_gbps_nt", median(cpun)},
            {"task_balance_bound", balance_bound},
            {"load_average", {load_before, load_average()}}};
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--json", "--quantize", "--hash"}, {"--threads", "--type", "--rounds"}, &args))
        return kExitUsage;
    const bool quantize = args.has("--quantize");
    if (args.has("--hash")) {
        unsigned threads = 0;
        uint64_t rounds = 10;
        if (args.positional.size() > 1 || quantize || args.has("--type") ||
            (args.has("--rounds") && (!parse_u64(args.get("--rounds"), &rounds) || rounds == 0 || rounds > 1000)))
            return usage_error();
        if (!parse_threads(args, &threads)) return kExitUsage;
        const bool json = args.has("--json");
        if (!json)
            std::printf("machine: %s, %s\n", cpu_model().c_str(),
                        counted(std::thread::hardware_concurrency(), "hardware thread").c_str());
        int status = kExitOk;
        nlohmann::json report = bench_hash(args.positional.empty() ? "" : args.positional[0], threads,
                                           static_cast<int>(rounds), json, &status);
        if (status != kExitOk) return status;
        if (json) {
            report["machine"] = {{"cpu", cpu_model()}, {"hardware_threads", std::thread::hardware_concurrency()}};
            std::printf("%s\n", json_dump(nlohmann::json{{"hash", report}}).c_str());
        }
        return kExitOk;
    }
    if (args.positional.size() > (quantize ? 0u : 1u)) return usage_error();
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
        std::printf("machine: %s, %s\n", cpu_model().c_str(),
                    counted(std::thread::hardware_concurrency(), "hardware thread").c_str());
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
