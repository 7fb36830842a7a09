// SPDX-License-Identifier: MIT
// The quantize benchmark shared by `weightstream bench --quantize` (native/cli/cmd_bench.cpp) and the wasm build
// under Node (wasm/bench_bindings.cpp, bench/wasm_bench.mjs): one input per type (realistic weights, and an
// importance matrix where ggml reads one), its reference bytes, a check of the timed quantizer against them,
// and the timer. It times quantize_rows() as this build and CPU run it (the k-quants' scale searches on SIMD lanes
// where there are lanes); that those give ggml's bytes is tests/quantize_test.cpp's and quantize_simd_test.cpp's job.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws::bench {

// Columns of every bench input (a typical hidden size; a whole number of blocks of every type).
constexpr int64_t kQuantizeRowElements = 4096;

// Every type quantize_rows() produces, in ggml id order.
std::vector<DType> quantizable_types();

// True where ggml's quantizer for t reads an importance matrix (ggml_quantize_chunk passes it to F32, F16,
// BF16, Q8_0, TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0 and Q2_0 but they ignore it).
bool quantize_reads_imatrix(DType t);

// One benchmark case: rows x kQuantizeRowElements floats of t's input, the importance matrix (empty without
// one) and the bytes quantize_rows() gives for them on the calling thread.
struct QuantizeCase {
    DType type = DType::kUnknown;
    int64_t rows = 0;
    std::vector<float> src;
    std::vector<float> imatrix;
    std::vector<uint8_t> reference;
    uint64_t reference_hash = 0;  // fnv1a64(reference): how the wasm run's bytes are compared with native's
};

// Rows of t's input (with or without an importance matrix): sized by t's reference speed, from 4 MB/s (IQ2_XS)
// to 7 GB/s (F32) on the machine of docs/SPEED.md's figures, so that one quantize takes at most about a tenth of
// a second there and a full native run (every type, both ways, 1 and 2 threads, best of 5) well under two
// minutes. 32-1024 rows.
int64_t quantize_rows_for(DType t, bool with_imatrix);

// Builds the case of t (with_imatrix: with an importance matrix; ignored where t does not read one, required
// where quantize_requires_imatrix(t)): weights drawn as N(0, 0.02) with about one value in 512 an outlier
// 4-35 times larger, an importance matrix of squared normal column weights with one column in 256 dominant
// (as llama-imatrix's in_sum2 / counts are), both deterministic and the same floats natively and in wasm;
// then the reference bytes. quantize_rows()'s errors (an unsupported type, no importance matrix where one is
// required).
Status make_quantize_case(DType t, bool with_imatrix, QuantizeCase* out);

// A quantizer under test, with quantize_rows()'s contract.
using QuantizeFn =
    std::function<Status(const float* src, int64_t nrows, int64_t n_per_row, const float* imatrix, uint8_t* dst)>;

// Runs fn over the case once into scratch and says whether it wrote exactly the reference bytes.
bool quantize_matches(const QuantizeCase& c, const QuantizeFn& fn, std::vector<uint8_t>* scratch);

// MB/s (1e6 bytes per second) of float32 input of fn over the case, best of reps runs into scratch.
double quantize_mbps(const QuantizeCase& c, const QuantizeFn& fn, int reps, std::vector<uint8_t>* scratch);

// FNV-1a, 64 bits.
uint64_t fnv1a64(const uint8_t* data, size_t n);

// h as 16 lowercase hex digits: how both benchmarks print a reference_hash.
std::string hex16(uint64_t h);

}  // namespace ws::bench
