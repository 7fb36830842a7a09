// SPDX-License-Identifier: MIT
// libFuzzer target: the GGUF header parser.
#include "gguf.h"
#include "parser_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return ws_fuzz::fuzz_parser<ws::GgufParser>(data, size);
}
