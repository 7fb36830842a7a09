// SPDX-License-Identifier: MIT
// Embind adapters of the decode benchmark (bench/dequant_bench.h) for the wasm build, run under Node by
// bench/wasm_bench.mjs: the same synthetic tensors, timer and store loop as `weightstream bench`, over the
// same core compiled to WebAssembly. A separate module, so the npm package carries no benchmark code.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dequant.h"
#include "dequant_bench.h"
#include "dtype.h"

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

}  // namespace
}  // namespace ws

EMSCRIPTEN_BINDINGS(weightstream_bench) {
    emscripten::function("benchTypes", &ws::bench_types);
    emscripten::function("benchStore", &ws::bench_store);
    emscripten::function("benchDecode", &ws::bench_decode);
}
