// SPDX-License-Identifier: MIT
// libFuzzer target: the GGUF header parser.
#include <algorithm>

#include "parser_harness.h"
#include "weightstream/gguf.h"

namespace {

// While the parser wants more, its guess of the rest of the header is at least its lower bound.
void check_guesses(const uint8_t* data, size_t size) {
    ws::ParseOptions options;
    options.file_size = size;
    options.max_header_bytes = 1 << 24;
    options.max_string_bytes = 1 << 20;
    options.max_array_length = 1 << 20;
    ws::GgufParser parser(options);
    size_t pos = 0;
    for (size_t step = 0; pos < size; ++step) {
        const size_t n = std::min<size_t>(size - pos, 1 + data[step % size] % 977);
        const ws::Status s = parser.feed(data + pos, n);
        pos += n;
        if (s.code != ws::Error::kNeedMoreData) return;
        ws_fuzz::check(parser.bytes_needed() <= parser.bytes_expected());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    check_guesses(data, size);
    return ws_fuzz::fuzz_parser<ws::GgufParser>(data, size);
}
