// SPDX-License-Identifier: MIT
#include "cli/quantize_io.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "io/parallel.h"
#include "io/tensor_io.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"

namespace ws::cli {
namespace {

// Drops the whole pages of [p, p + n) from this process (a read-only file mapping: they are re-read
// from the file if touched again), so reading a model once does not keep it all resident.
void drop_pages(const uint8_t* p, uint64_t n) {
    static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t first = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
    const uintptr_t last = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace

Status quantize_rows_streaming(const RowJob& job, unsigned threads,
                               const std::function<bool(const uint8_t*, size_t)>& write,
                               const std::function<void(uint64_t)>& progress) {
    const int64_t n_per_row = job.ne[0];
    const int64_t rows_per_matrix = job.ne[1];
    const int64_t n_matrices = job.ne[2] * job.ne[3];
    uint64_t in_row = 0, out_row = 0;
    if (n_per_row <= 0 || !dtype_bytes_for(job.in_type, static_cast<uint64_t>(n_per_row), &in_row)) {
        return make_error(Error::kBadShape, 0, "tensor.ne");
    }
    if (!dtype_bytes_for(job.out_type, static_cast<uint64_t>(n_per_row), &out_row)) {
        return make_error(Error::kBadShape, 0, "tensor.ne");
    }
    const int64_t window =
        std::max<int64_t>(1, std::min<int64_t>(rows_per_matrix, static_cast<int64_t>(kPieceElements) / n_per_row));
    std::unique_ptr<float[]> floats(new float[static_cast<size_t>(window * n_per_row)]);
    std::vector<uint8_t> out(static_cast<size_t>(window * static_cast<int64_t>(out_row)));
    threads = std::max(1u, threads);

    for (int64_t m = 0; m < n_matrices; ++m) {
        const float* imatrix = job.imatrix ? job.imatrix + (m % job.ne[2]) * n_per_row : nullptr;
        for (int64_t first = 0; first < rows_per_matrix; first += window) {
            const int64_t rows = std::min(window, rows_per_matrix - first);
            const uint8_t* src = job.src + static_cast<uint64_t>(m * rows_per_matrix + first) * in_row;
            const uint64_t src_bytes = static_cast<uint64_t>(rows) * in_row;
            if (job.validate && !validate_row_data(job.in_type, src, src_bytes)) {
                return make_error(Error::kBadShape, 0, "tensor.data");
            }
            WS_TRY(
                parallel_dequantize(job.in_type, src, static_cast<uint64_t>(rows * n_per_row), floats.get(), threads));
            if (job.drop_pages) drop_pages(src, src_bytes);

            // Whole rows per thread; a thread gets at least a few rows' worth of work.
            const int64_t n_threads = std::min<int64_t>(threads, std::max<int64_t>(1, rows / 4));
            std::vector<Status> results(static_cast<size_t>(n_threads));
            auto run = [&](int64_t i) {
                const int64_t r0 = rows * i / n_threads, r1 = rows * (i + 1) / n_threads;
                results[static_cast<size_t>(i)] =
                    quantize_rows(job.out_type, floats.get() + r0 * n_per_row, r1 - r0, n_per_row, imatrix,
                                  out.data() + static_cast<uint64_t>(r0) * out_row);
            };
            std::vector<std::thread> workers;
            for (int64_t i = 1; i < n_threads; ++i) workers.emplace_back(run, i);
            run(0);
            for (std::thread& w : workers) w.join();
            for (const Status& s : results) WS_TRY(s);

            const size_t out_bytes = static_cast<size_t>(static_cast<uint64_t>(rows) * out_row);
            if (job.validate && !validate_row_data(job.out_type, out.data(), out_bytes)) {
                return make_error(Error::kBadShape, 0, "quantized.data");
            }
            if (!write(out.data(), out_bytes)) return ok_status();
            progress(src_bytes);
        }
    }
    return ok_status();
}

}  // namespace ws::cli
