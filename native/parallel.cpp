// SPDX-License-Identifier: MIT
#include "parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "dequant.h"

namespace ws {

namespace {
constexpr uint64_t kMinElementsPerThread = uint64_t(1) << 18;  // 1 MiB of float32 output
}

unsigned default_threads() {
    return std::max(1u, std::thread::hardware_concurrency());
}

Status parallel_dequantize(DType t, const uint8_t* src, uint64_t n_elements, float* dst, unsigned threads) {
    const DTypeTraits& traits = dtype_traits(t);
    if (!traits.decodable) return make_error(Error::kUnsupported, 0, "tensor.type");
    if (n_elements % traits.block_elems != 0) return make_error(Error::kBadShape, 0, "tensor.n_elements");
    const uint64_t blocks = n_elements / traits.block_elems;
    const uint64_t useful = std::max<uint64_t>(1, n_elements / kMinElementsPerThread);
    const uint64_t n = std::min<uint64_t>({threads ? threads : 1, useful, blocks ? blocks : 1});
    if (n <= 1) return dequantize(t, src, n_elements, dst);

    const uint32_t floats_per_element = dequant_floats_per_element(t);
    std::vector<std::thread> workers;
    std::vector<Status> results(n);
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t first = blocks * i / n, last = blocks * (i + 1) / n;
        workers.emplace_back([&, i, first, last] {
            results[i] = dequantize(t, src + first * traits.block_bytes, (last - first) * traits.block_elems,
                                    dst + first * traits.block_elems * floats_per_element);
        });
    }
    for (std::thread& w : workers) w.join();
    for (const Status& s : results) WS_TRY(s);
    return ok_status();
}

}  // namespace ws
