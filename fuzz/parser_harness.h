// SPDX-License-Identifier: MIT
// The body of the header-parser fuzz targets. Beyond "no crash": parsing the input whole and in chunks
// must agree, since both paths are used in production (natively whole, in wasm chunked), and every
// tensor the parser accepts must lie inside the file; the derived facts of what it accepts are computed too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "weightstream/model_facts.h"
#include "weightstream/model_info.h"
#include "weightstream/parse_options.h"

namespace ws_fuzz {

inline void check(bool condition) {
    if (!condition) std::abort();  // a disagreement is a bug the fuzzer should report
}

template <typename Parser>
int fuzz_parser(const uint8_t* data, size_t size) {
    ws::ParseOptions options;
    options.file_size = size;
    options.max_header_bytes = 1 << 24;  // keep the fuzzer's memory small
    options.max_string_bytes = 1 << 20;
    options.max_array_length = 1 << 20;

    Parser whole(options);
    const ws::Status whole_status = whole.feed(data, size);

    // Chunk sizes from the input's own bytes so the fuzzer explores chunk boundaries too.
    Parser chunked(options);
    ws::Status chunked_status = {ws::Error::kNeedMoreData, 0, ""};
    size_t pos = 0, step = 0;
    while (pos < size && chunked_status.code == ws::Error::kNeedMoreData) {
        const size_t n = std::min<size_t>(size - pos, 1 + data[step++ % size] % 61);
        chunked_status = chunked.feed(data + pos, n);
        pos += n;
    }
    if (size == 0) return 0;
    check(chunked_status.code == whole_status.code);
    check(chunked_status.offset == whole_status.offset);
    if (whole_status.ok()) {
        const ws::ModelInfo& a = whole.info();
        const ws::ModelInfo& b = chunked.info();
        check(a.metadata.size() == b.metadata.size() && a.tensors.size() == b.tensors.size());
        check(a.data_offset == b.data_offset);
        for (size_t i = 0; i < a.tensors.size(); ++i) {
            check(a.tensors[i].name == b.tensors[i].name && a.tensors[i].offset == b.tensors[i].offset &&
                  a.tensors[i].nbytes == b.tensors[i].nbytes);
            // Every tensor the parser accepts lies inside the file.
            check(a.tensors[i].offset <= size && a.tensors[i].nbytes <= size - a.tensors[i].offset);
        }
        // The derived facts (info's summary and --json "facts"): every tensor in exactly one layer group or
        // among the others.
        const ws::ModelFacts facts = ws::model_facts(a);
        const ws::LayerGroups groups = ws::layer_groups(a);
        size_t grouped = groups.other.size();
        for (const ws::LayerGroup& g : groups.layers) grouped += g.tensors.size();
        check(grouped == a.tensors.size() && facts.layer_count == groups.layers.size());
    }
    return 0;
}

}  // namespace ws_fuzz
