// SPDX-License-Identifier: MIT
// libFuzzer target: the safetensors header parser.
#include "parser_harness.h"
#include "weightstream/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return ws_fuzz::fuzz_parser<ws::SafetensorsParser>(data, size);
}
