// SPDX-License-Identifier: MIT
#include "io/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "weightstream/dequant.h"

namespace ws {

namespace {
constexpr uint64_t kMinElementsPerThread = uint64_t(1) << 18;  // 1 MiB of float32 output
}

unsigned default_threads() {
    return std::max(1u, std::thread::hardware_concurrency());
}

Status parallel_dequantize(DType t, const uint8_t* src, uint64_t n_elements, float* dst, unsigned threads) {
    WS_TRY(check_decodable(t, n_elements));
    const DTypeTraits& traits = dtype_traits(t);
    const uint64_t blocks = n_elements / traits.block_elems;
    const uint64_t useful = std::max<uint64_t>(1, n_elements / kMinElementsPerThread);
    const uint64_t n = std::min<uint64_t>({threads ? threads : 1, useful, blocks ? blocks : 1});
    // Checked above, so the kernel runs on whole blocks directly (no check per thread).
    const DequantRowFn kernel = dequant_row_fn(t);
    if (n <= 1) {
        if (n_elements != 0) kernel(src, dst, static_cast<int64_t>(n_elements));
        return ok_status();
    }
    const uint32_t floats_per_element = dequant_floats_per_element(t);
    std::vector<std::thread> workers;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t first = blocks * i / n, last = blocks * (i + 1) / n;
        workers.emplace_back([&, first, last] {
            kernel(src + first * traits.block_bytes, dst + first * traits.block_elems * floats_per_element,
                   static_cast<int64_t>((last - first) * traits.block_elems));
        });
    }
    for (std::thread& w : workers) w.join();
    return ok_status();
}

}  // namespace ws
