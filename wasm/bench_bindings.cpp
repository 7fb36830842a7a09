// SPDX-License-Identifier: MIT
// Embind adapters of the decode and quantize benchmarks (bench/dequant_bench.h, bench/quantize_bench.h) for the
// wasm build, run under Node by bench/wasm_bench.mjs: the same synthetic tensors and weights, timer and store loop
// as `weightstream bench [--quantize]`, over the same core compiled to WebAssembly. A separate module, so the
// npm package carries no benchmark code.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dequant.h"
#include "dequant_bench.h"
#include "dtype.h"
#include "quantize.h"
#include "quantize_bench.h"

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
    emscripten::function("benchQuantizeTypes", &ws::bench_quantize_types);
    emscripten::function("benchQuantize", &ws::bench_quantize);
}
