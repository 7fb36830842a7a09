// SPDX-License-Identifier: MIT
// Embind adapters of the decode and quantize benchmarks (bench/dequant_bench.h, bench/quantize_bench.h) for the
// wasm build, run under Node by bench/wasm_bench.mjs: the same synthetic tensors and weights, timer and store loop
// as `weightstream bench [--quantize]`, over the same core compiled to WebAssembly. A separate module, so the
// npm package carries no benchmark code.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dequant_bench.h"
#include "ggml_loops.h"
#include "quantize_bench.h"
#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/quantize.h"

namespace ws {
namespace {

using emscripten::val;

// Every type with a decoder: [{id, name}], in the native benchmark's order.
val bench_types() {
    val list = val::array();
    for (DType t : bench::decodable_types()) {
        val r = val::object();
        r.set("id", static_cast<uint32_t>(t));
        r.set("name", std::string(dtype_name(t)));
        list.call<void>("push", r);
    }
    return list;
}

// GB/s of the float32 store loop over output_bytes, best of reps.
double bench_store(double output_bytes, int reps) {
    std::vector<float> out(static_cast<size_t>(output_bytes) / sizeof(float));
    return bench::store_gbps(out.data(), out.size(), reps);
}

// Decodes output_bytes worth of float32 of type `id` from the benchmark's synthetic tensor (seed 1, as
// natively): {verified, gbps} where verified says the timed decode equals the scalar reference kernel bit
// for bit and gbps is output GB/s of the best of reps runs.
val bench_decode(int id, double output_bytes, int reps) {
    const DType t = static_cast<DType>(static_cast<uint32_t>(id));
    val r = val::object();
    r.set("verified", false);
    r.set("gbps", 0.0);
    const DequantRowFn scalar = dequant_row_fn_scalar(t);
    if (!dtype_decodable(t) || !scalar) return r;
    std::vector<float> out(static_cast<size_t>(output_bytes) / sizeof(float));
    const uint64_t n = out.size() / dequant_floats_per_element(t);
    const std::vector<uint8_t> src = bench::synthetic_tensor(t, n, 1);
    if (src.empty()) return r;
    {
        std::vector<float> check(out.size());
        scalar(src.data(), check.data(), static_cast<int64_t>(n));
        if (!dequantize(t, src.data(), n, out.data()).ok()) return r;
        r.set("verified", std::memcmp(out.data(), check.data(), out.size() * sizeof(float)) == 0);
    }
    const double seconds = bench::best_seconds(reps, [&] { (void)dequantize(t, src.data(), n, out.data()); });
    r.set("gbps", static_cast<double>(out.size() * sizeof(float)) / seconds / 1e9);
    return r;
}

// Our decode of type `id` against ggml's loop for it (bench/ggml_loops.h, compiled here by emcc -O3 -msimd128
// as ggml's wasm build compiles it) over output_bytes of float32 from the synthetic tensor: rounds rounds, each
// one run of ours and one of ggml's into the same buffer, which first alternating. {verified, rounds, gbps, ggml_gbps,
// ratio}: verified says both gave the same bits, gbps and ggml_gbps are medians of output GB/s, ratio the median of
// ours over ggml's.
val bench_ggml_loop(int id, double output_bytes, int rounds) {
    const DType t = static_cast<DType>(static_cast<uint32_t>(id));
    val r = val::object();
    r.set("verified", false);
    const DequantRowFn ggml = bench::ggml_loop(t);
    if (!dtype_decodable(t) || !ggml || rounds <= 0) return r;
    std::vector<float> out(static_cast<size_t>(output_bytes) / sizeof(float)), check(out.size());
    const uint64_t n = out.size() / dequant_floats_per_element(t);
    const std::vector<uint8_t> src = bench::synthetic_tensor(t, n, 1);
    if (src.empty()) return r;
    ggml(src.data(), check.data(), static_cast<int64_t>(n));
    if (!dequantize(t, src.data(), n, out.data()).ok()) return r;
    r.set("verified", std::memcmp(out.data(), check.data(), out.size() * sizeof(float)) == 0);
    const double bytes = static_cast<double>(out.size() * sizeof(float));
    std::vector<double> ours, theirs, ratios;
    for (int i = 0; i < rounds; ++i) {
        // Both write the same buffer, and which goes first alternates: the second run of a pair is measurably
        // favoured (the first one's writes leave the buffer's pages and lines in a better state).
        const auto ours_run = [&] {
            return bench::best_seconds(1, [&] { (void)dequantize(t, src.data(), n, out.data()); });
        };
        const auto ggml_run = [&] {
            return bench::best_seconds(1, [&] { ggml(src.data(), out.data(), static_cast<int64_t>(n)); });
        };
        double a = 0, b = 0;
        if (i % 2 == 0) {
            a = ours_run();
            b = ggml_run();
        } else {
            b = ggml_run();
            a = ours_run();
        }
        ours.push_back(bytes / a / 1e9);
        theirs.push_back(bytes / b / 1e9);
        ratios.push_back(b / a);
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        const size_t m = v.size() / 2;
        return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
    };
    r.set("rounds", rounds);
    r.set("gbps", median(ours));
    r.set("ggml_gbps", median(theirs));
    r.set("ratio", median(ratios));
    return r;
}

// Every type quantize_rows() produces: [{id, name, imatrix}] in the native benchmark's order, imatrix "none"
// (ggml ignores one), "optional" or "required".
val bench_quantize_types() {
    val list = val::array();
    for (DType t : bench::quantizable_types()) {
        val r = val::object();
        r.set("id", static_cast<uint32_t>(t));
        r.set("name", std::string(dtype_name(t)));
        r.set("imatrix", std::string(quantize_requires_imatrix(t)       ? "required"
                                     : bench::quantize_reads_imatrix(t) ? "optional"
                                                                        : "none"));
        list.call<void>("push", r);
    }
    return list;
}

// Quantizes the benchmark's input of type `id` (bench::make_quantize_case, as natively) with quantize_rows()
// on this one thread: {ok, values, hash, mbps}: hash is the 16 hex digits of fnv1a64 of the bytes (the native
// run's output_fnv1a64 for the same case, when wasm writes the same bytes) and mbps MB/s of float32 input of
// the best of reps runs.
val bench_quantize(int id, bool with_imatrix, int reps) {
    const DType t = static_cast<DType>(static_cast<uint32_t>(id));
    val r = val::object();
    r.set("ok", false);
    bench::QuantizeCase c;
    if (!bench::make_quantize_case(t, with_imatrix, &c).ok()) return r;
    const bench::QuantizeFn single = [t](const float* src, int64_t nrows, int64_t n_per_row, const float* imatrix,
                                         uint8_t* dst) {
        return quantize_rows(t, src, nrows, n_per_row, imatrix, dst);
    };
    std::vector<uint8_t> scratch;
    r.set("ok", true);
    r.set("values", static_cast<double>(c.src.size()));
    r.set("hash", bench::hex16(c.reference_hash));
    r.set("mbps", bench::quantize_mbps(c, single, reps, &scratch));
    return r;
}

}  // namespace
}  // namespace ws

EMSCRIPTEN_BINDINGS(weightstream_bench) {
    emscripten::function("benchTypes", &ws::bench_types);
    emscripten::function("benchStore", &ws::bench_store);
    emscripten::function("benchDecode", &ws::bench_decode);
    emscripten::function("benchGgmlLoop", &ws::bench_ggml_loop);
    emscripten::function("benchQuantizeTypes", &ws::bench_quantize_types);
    emscripten::function("benchQuantize", &ws::bench_quantize);
}
