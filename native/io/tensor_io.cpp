// SPDX-License-Identifier: MIT
#include "io/tensor_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "io/parallel.h"
#include "io/source_error.h"
#include "weightstream/dequant.h"

namespace ws::cli {

bool parse_threads(const Args& args, unsigned* threads) {
    *threads = default_threads();
    if (!args.has("--threads")) return true;
    const std::string v = args.get("--threads");
    char* end = nullptr;
    errno = 0;
    const unsigned long n = std::strtoul(v.c_str(), &end, 10);
    // Beyond a few hundred threads the pieces would be split finer than parallel_dequantize splits them.
    if (v.empty() || v[0] == '-' || *end != '\0' || errno != 0 || n < 1 || n > 1024) {
        fail(kExitUsage, "--threads needs a number from 1 to 1024, not '" + v + "'");
        return false;
    }
    *threads = static_cast<unsigned>(n);
    return true;
}

const TensorInfo* find_tensor_or_fail(const LoadedModel& model, const std::string& path, const std::string& name,
                                      int* exit_status) {
    const TensorInfo* t = model.info.find_tensor(name);
    if (!t) *exit_status = fail(kExitUsage, path + ": no tensor named '" + printable(name, 200) + "'");
    return t;
}

const uint8_t* tensor_bytes_or_fail(const LoadedModel& model, const TensorInfo& t, TensorBytes* held,
                                    int* exit_status) {
    return range_bytes_or_fail(model, t, t.offset, t.nbytes, held, exit_status);
}

const uint8_t* range_bytes_or_fail(const LoadedModel& model, const TensorInfo& t, uint64_t offset, uint64_t nbytes,
                                   TensorBytes* held, int* exit_status) {
    if (t.file_index < model.files.size() && model.files[t.file_index].is_stream()) {
        *exit_status =
            fail(kExitIo, source_error_text(model.paths[t.file_index], Error::kNotSeekable,
                                            model.remote(t) ? "the server ignores Range requests, and this command "
                                                              "needs to seek in the tensor data (download it first; "
                                                              "info, tensors and hash read it as it comes)"
                                                            : "not a regular file: this command needs to seek in the "
                                                              "tensor data (save it to a file first; info, tensors and "
                                                              "hash read a pipe as it comes)"));
        return nullptr;
    }
    LoadError error;
    if (!model.tensor_in_file(t) || !model.read_tensor(t, offset, nbytes, held, &error)) {
        if (error.source_failed()) {
            *exit_status = fail_load(error);
            return nullptr;
        }
        *exit_status = fail(
            kExitInvalid, describe(model.paths[t.file_index], make_error(Error::kTruncated, t.offset, "tensor.data")) +
                              ": tensor " + printable(t.name, 200));
        return nullptr;
    }
    return held->data;
}

Status for_each_decoded(DType t, const uint8_t* src, uint64_t n_elements, unsigned threads,
                        const std::function<bool(const float*, uint64_t, uint64_t)>& fn, bool big_endian) {
    WS_TRY(check_decodable(t, n_elements));  // before the block arithmetic below
    if (big_endian && !big_endian_order_defined(t)) {
        return make_error(Error::kUnsupported, 0, "big-endian tensor data: no byte order is defined for this type");
    }
    const DTypeTraits& traits = dtype_traits(t);
    const uint64_t floats_per_element = dequant_floats_per_element(t);
    const uint64_t piece = std::min(n_elements, kPieceElements);
    std::unique_ptr<float[]> buffer(new float[static_cast<size_t>(std::max<uint64_t>(piece, 1) * floats_per_element)]);
    // Big-endian pieces are swapped in a copy (the mapping is read-only).
    std::unique_ptr<uint8_t[]> swapped(big_endian ? new uint8_t[piece / traits.block_elems * traits.block_bytes]
                                                  : nullptr);
    for (uint64_t first = 0; first < n_elements; first += piece) {
        const uint64_t n = std::min(piece, n_elements - first);
        const uint8_t* from = src + first / traits.block_elems * traits.block_bytes;
        if (big_endian) {
            const uint64_t nbytes = n / traits.block_elems * traits.block_bytes;
            std::memcpy(swapped.get(), from, static_cast<size_t>(nbytes));
            WS_TRY(swap_to_little_endian(t, swapped.get(), nbytes));
            from = swapped.get();
        }
        WS_TRY(parallel_dequantize(t, from, n, buffer.get(), threads));
        if (!fn(buffer.get(), first, n)) break;
    }
    return ok_status();
}

std::vector<FileIdentity> input_files(const LoadedModel& model) {
    std::vector<FileIdentity> ids;
    for (const MappedFile& f : model.files) ids.push_back(f.identity());
    return ids;
}

}  // namespace ws::cli
