// SPDX-License-Identifier: MIT
#include "quantize_bench.h"

#include <cstdio>
#include <cstring>

#include "dequant_bench.h"
#include "weightstream/quantize.h"

namespace ws::bench {
namespace {

// An approximately standard normal value: the sum of 12 uniforms of 16 bits, less 6 (Irwin-Hall; within
// +-6). Additions of exact values only, no libm: the wasm build draws the very same floats as the native one.
double normal(uint64_t* state) {
    double sum = 0;
    for (int i = 0; i < 3; ++i) {
        const uint64_t r = splitmix64(state);
        for (int k = 0; k < 4; ++k) sum += static_cast<double>((r >> (16 * k)) & 0xffff) * 0x1p-16;
    }
    return sum - 6.0;
}

}  // namespace

std::vector<DType> quantizable_types() {
    std::vector<DType> types;
    for (uint32_t v = 0; v < static_cast<uint32_t>(DType::kGgmlCount); ++v) {
        const DType t = static_cast<DType>(v);
        if (quantize_supported(t)) types.push_back(t);
    }
    return types;
}

bool quantize_reads_imatrix(DType t) {
    switch (t) {
        case DType::F32:
        case DType::F16:
        case DType::BF16:
        case DType::Q8_0:
        case DType::TQ1_0:
        case DType::TQ2_0:
        case DType::MXFP4:
        case DType::NVFP4:
        case DType::Q1_0:
        case DType::Q2_0:
            return false;
        default:
            return quantize_supported(t);
    }
}

int64_t quantize_rows_for(DType t, bool with_imatrix) {
    const bool imatrix = with_imatrix && quantize_reads_imatrix(t);
    switch (t) {
        case DType::F32:
        case DType::F16:
        case DType::BF16:
        case DType::Q8_0:
        case DType::TQ1_0:
        case DType::TQ2_0:
        case DType::MXFP4:
        case DType::Q1_0:
        case DType::Q2_0:
            return 1024;  // 0.5-7 GB/s
        case DType::Q4_0:
        case DType::Q5_0:
            return imatrix ? 256 : 1024;  // 1.5 GB/s; about 115 MB/s with an imatrix
        case DType::Q4_1:
        case DType::Q5_1:
            return imatrix ? 128 : 1024;  // 1.8 GB/s; about 35 MB/s with an imatrix
        case DType::NVFP4:
        case DType::Q3_K:
            return imatrix ? 128 : 256;  // 150-250 MB/s; Q3_K about 60 with an imatrix
        case DType::Q2_K:
        case DType::Q4_K:
        case DType::Q5_K:
        case DType::Q6_K:
        case DType::IQ1_S:
            return 128;  // 18-80 MB/s
        case DType::IQ4_NL:
        case DType::IQ4_XS:
        case DType::IQ2_XXS:
        case DType::IQ2_S:
        case DType::IQ3_S:
            return 64;  // 9-16 MB/s
        default:
            return 32;  // IQ2_XS, IQ3_XXS, IQ1_M: 4-8 MB/s
    }
}

Status make_quantize_case(DType t, bool with_imatrix, QuantizeCase* out) {
    QuantizeCase c;
    c.type = t;
    c.rows = quantize_rows_for(t, with_imatrix);
    const uint64_t n = static_cast<uint64_t>(c.rows * kQuantizeRowElements);
    uint64_t state = 0x5eed0000u + static_cast<uint64_t>(t);
    c.src.resize(n);
    for (float& x : c.src) {
        double v = 0.02 * normal(&state);
        const uint64_t r = splitmix64(&state);
        if ((r & 511) == 0) v *= 4.0 + static_cast<double>(r >> 59);  // an outlier, 4-35 times larger
        x = static_cast<float>(v);
    }
    if (with_imatrix && quantize_reads_imatrix(t)) {
        c.imatrix.resize(kQuantizeRowElements);
        for (float& w : c.imatrix) {
            const double z = normal(&state);
            double v = 1e-3 * (0.05 + z * z);                 // a mean square activation
            if ((splitmix64(&state) & 255) == 0) v *= 100.0;  // a dominant column
            w = static_cast<float>(v);
        }
    }
    uint64_t bytes = 0;
    if (!dtype_bytes_for(t, n, &bytes)) return make_error(Error::kUnsupported, 0, "dtype");
    c.reference.resize(bytes);
    WS_TRY(quantize_rows(t, c.src.data(), c.rows, kQuantizeRowElements, c.imatrix.empty() ? nullptr : c.imatrix.data(),
                         c.reference.data()));
    c.reference_hash = fnv1a64(c.reference.data(), c.reference.size());
    *out = std::move(c);
    return ok_status();
}

bool quantize_matches(const QuantizeCase& c, const QuantizeFn& fn, std::vector<uint8_t>* scratch) {
    scratch->assign(c.reference.size(), 0);
    const Status s =
        fn(c.src.data(), c.rows, kQuantizeRowElements, c.imatrix.empty() ? nullptr : c.imatrix.data(), scratch->data());
    return s.ok() && std::memcmp(scratch->data(), c.reference.data(), c.reference.size()) == 0;
}

double quantize_mbps(const QuantizeCase& c, const QuantizeFn& fn, int reps, std::vector<uint8_t>* scratch) {
    scratch->resize(c.reference.size());
    const double seconds = best_seconds(reps, [&] {
        (void)fn(c.src.data(), c.rows, kQuantizeRowElements, c.imatrix.empty() ? nullptr : c.imatrix.data(),
                 scratch->data());
    });
    return static_cast<double>(c.src.size() * sizeof(float)) / seconds / 1e6;
}

uint64_t fnv1a64(const uint8_t* data, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
    return h;
}

std::string hex16(uint64_t h) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
    return text;
}

}  // namespace ws::bench
