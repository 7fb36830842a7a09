// SPDX-License-Identifier: MIT
// `verify`: every structural check in strict mode (what ggml itself accepts), then every tensor's type
// and byte range.
#include <cstdio>

#include "cli.h"

namespace ws::cli {

int cmd_verify(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {}, {}, &args)) return kExitUsage;
    if (args.positional.size() != 1) return fail(kExitUsage, "usage: weightstream verify FILE");
    const std::string& path = args.positional[0];
    LoadedModel model;
    int status = kExitOk;
    if (!load(path, true, &model, &status)) return status;

    for (const TensorInfo& t : model.info.tensors) {
        const std::string& file = model.paths[t.file_index];
        if (!dtype_traits(t.dtype).decodable) {
            return fail(kExitInvalid, describe(file, make_error(dtype_traits(t.dtype).kind == DTypeKind::kQuantized
                                                                    ? Error::kUnsupported
                                                                    : Error::kBadType,
                                                                t.info_offset, "tensor.type")) +
                                          ": tensor " + t.name + " has type " + t.dtype_name());
        }
        if (!model.tensor_data(t)) {
            return fail(kExitInvalid, describe(file, make_error(Error::kTruncated, t.offset, "tensor.data")) +
                                          ": tensor " + t.name);
        }
    }
    std::printf("%s: ok: %zu tensors, %zu metadata keys\n", path.c_str(), model.info.tensors.size(),
                model.info.metadata.size());
    return kExitOk;
}

}  // namespace ws::cli
