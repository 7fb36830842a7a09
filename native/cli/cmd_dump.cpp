// SPDX-License-Identifier: MIT
// `dump FILE (TENSOR | --filter PATTERN) [-o OUT] [--as f32|f16|bf16|raw] [--rows SLICE] [--threads N]`: one
// tensor's values (or stored bytes) as little-endian numbers, or as a NumPy .npy file when OUT ends in .npy.
// --filter names the tensor by a pattern that must match exactly one (a dump is one array; several tensors
// are several dumps).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "cli/npy.h"
#include "cli/progress.h"
#include "io/tensor_io.h"
#include "weightstream/dequant.h"
#include "weightstream/row_window.h"

namespace ws::cli {
namespace {

constexpr size_t kRawPiece = size_t(16) << 20;  // bytes copied per write of --as raw

enum class As { kF32, kF16, kBf16, kRaw };

// The .npy dtype and shape of what we write. numpy has no bfloat16, so bf16 is written as its bits ('<u2');
// C64 as float32 is numpy's complex64 ('<c8'), as f16/bf16 it gets a trailing dim of 2 (real, imaginary).
void npy_type(As as, DType dtype, std::vector<int64_t> shape, uint64_t raw_bytes, std::string* descr,
              std::vector<int64_t>* out_shape) {
    switch (as) {
        case As::kRaw:
            *descr = "|u1";
            *out_shape = {static_cast<int64_t>(raw_bytes)};
            return;
        case As::kF32:
            *descr = dtype == DType::C64 ? "<c8" : "<f4";
            break;
        case As::kF16:
            *descr = "<f2";
            break;
        case As::kBf16:
            *descr = "<u2";
            break;
    }
    if (dtype == DType::C64 && as != As::kF32) shape.push_back(2);
    *out_shape = std::move(shape);
}

}  // namespace

int cmd_dump(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {}, {"-o", "--as", "--rows", "--threads", "--filter"}, &args)) return kExitUsage;
    const bool by_filter = args.has("--filter");
    if (args.positional.size() != (by_filter ? 1u : 2u)) {
        return usage_error(by_filter && args.positional.size() == 2 ? "give TENSOR or --filter, not both" : "");
    }
    TensorFilter filter;
    std::string filter_error;
    if (by_filter && !filter.parse(args.get("--filter"), &filter_error)) return usage_error(filter_error);
    const std::string as_name = args.get("--as", "f32");
    As as;
    if (as_name == "f32") {
        as = As::kF32;
    } else if (as_name == "f16") {
        as = As::kF16;
    } else if (as_name == "bf16") {
        as = As::kBf16;
    } else if (as_name == "raw") {
        as = As::kRaw;
    } else {
        return fail(kExitUsage, "--as takes f32, f16, bf16 or raw, not '" + as_name + "'");
    }
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;
    RowSlice slice;
    const bool rows = args.has("--rows");
    if (rows && !parse_rows(args.get("--rows"), &slice)) {
        return fail(kExitUsage,
                    "--rows takes a Python slice of rows (0:16, -8:, :4, 5), not '" + args.get("--rows") + "'");
    }
    const std::string out_path = args.get("-o", "-");
    if (out_path == "-" && ::isatty(STDOUT_FILENO)) {
        return fail(kExitUsage, "not writing binary data to a terminal: use -o OUT or a pipe");
    }

    LoadedModel model;
    int status = kExitOk;
    if (!load(args.positional[0], false, &model, &status)) return status;
    const TensorInfo* t = nullptr;
    if (by_filter) {
        std::vector<const TensorInfo*> matches;
        for (const TensorInfo& x : model.info.tensors) {
            if (filter.matches(x.name)) matches.push_back(&x);
        }
        if (matches.size() != 1) {
            std::string names;
            for (size_t i = 0; i < matches.size() && i < 8; ++i) names += (i ? ", " : ": ") + matches[i]->name;
            if (matches.size() > 8) names += ", ...";
            return fail(kExitUsage, "--filter " + args.get("--filter") + " matches " +
                                        counted(matches.size(), "tensor") + names + " (dump takes exactly one)");
        }
        t = matches[0];
    } else {
        t = find_tensor_or_fail(model, args.positional[0], args.positional[1], &status);
        if (!t) return status;
    }
    const std::string& file = model.paths[t->file_index];
    const std::string problem = as == As::kRaw ? "" : decode_problem(model.info, *t);
    if (!problem.empty()) {
        return fail(kExitInvalid, describe(file, make_error(Error::kUnsupported, t->info_offset, "tensor.type")) +
                                      ": tensor " + printable(t->name, 200) + ": " + problem +
                                      " (--as raw dumps its bytes)");
    }
    // The window: a row is ne[0] elements; the window's shape is [COUNT, ne[0]]. Only its bytes are read
    // (from a URL: fetched).
    uint64_t offset = t->offset, nbytes = t->nbytes, n_elements = t->n_elements;
    std::vector<int64_t> shape = t->shape();
    if (rows) {
        uint64_t row_start = 0, row_n = 0;
        if (!slice.resolve(ws::row_count(*t), &row_start, &row_n)) {
            return fail(kExitUsage, "--rows " + args.get("--rows") + " is outside tensor " + printable(t->name, 200) +
                                        " (" + counted(ws::row_count(*t), "row") + " of " +
                                        counted(static_cast<uint64_t>(t->ne[0]), "element") + ")");
        }
        Result<RowWindow> w = row_window(*t, row_start, row_n);
        const Status s = w.status();
        if (s.code == Error::kBadOffset || s.code == Error::kOverflow) {
            return fail(kExitUsage, "--rows " + args.get("--rows") + " is outside tensor " + printable(t->name, 200) +
                                        " (" + counted(ws::row_count(*t), "row") + " of " +
                                        counted(static_cast<uint64_t>(t->ne[0]), "element") + ")");
        }
        if (!s.ok()) return fail(kExitInvalid, describe(file, make_error(s.code, t->info_offset, s.what)));
        offset = w.value().offset;
        nbytes = w.value().nbytes;
        n_elements = w.value().n_elements;
        shape = std::move(w.value().shape);
    }
    TensorBytes held;
    const uint8_t* src = range_bytes_or_fail(model, *t, offset, nbytes, &held, &status);
    if (!src) return status;
    // An F16 tensor read as f16 is its stored bits (a round trip through float32 would rewrite NaN payloads).
    const bool stored_bits = as == As::kRaw || (as == As::kF16 && t->dtype == DType::F16);

    OutputFile out;
    if (!out.open(out_path, input_files(model))) return fail(kExitIo, out.error());
    if (ends_with(out_path, ".npy")) {
        std::string descr;
        std::vector<int64_t> npy_shape;
        npy_type(as, t->dtype, shape, nbytes, &descr, &npy_shape);
        const std::string header = npy_header(descr, npy_shape);
        if (!out.write(header.data(), header.size())) return fail(kExitIo, out.error());
    }

    Progress progress("dump", nbytes);
    if (stored_bits) {
        for (uint64_t done = 0; done < nbytes;) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(kRawPiece, nbytes - done));
            if (!out.write(src + done, n)) {
                progress.finish();
                return fail(kExitIo, out.error());
            }
            done += n;
            progress.add(n);
        }
    } else {
        const DTypeTraits& traits = dtype_traits(t->dtype);
        const uint32_t per_element = dequant_floats_per_element(t->dtype);
        std::vector<uint16_t> halves;
        bool written = true;
        const Status s = for_each_decoded(
            t->dtype, src, n_elements, threads,
            [&](const float* floats, uint64_t, uint64_t n) {
                const size_t count = static_cast<size_t>(n * per_element);
                if (as == As::kF32) {
                    written = out.write(floats, count * sizeof(float));
                } else {
                    halves.resize(count);
                    for (size_t i = 0; i < count; ++i) {
                        halves[i] = as == As::kF16 ? fp32_to_fp16(floats[i]) : fp32_to_bf16(floats[i]);
                    }
                    written = out.write(halves.data(), count * sizeof(uint16_t));
                }
                progress.add(n / traits.block_elems * traits.block_bytes);
                return written;
            },
            model.info.big_endian);
        progress.finish();
        if (!s.ok()) return fail(kExitInvalid, describe(file, make_error(s.code, t->info_offset, s.what)));
        if (!written) return fail(kExitIo, out.error());
    }
    progress.finish();
    if (!out.commit()) return fail(kExitIo, out.error());
    return kExitOk;
}

}  // namespace ws::cli
