// SPDX-License-Identifier: MIT
// libFuzzer target: sentencepiece_vocab() on tokenizer.model bytes (a protobuf ModelProto).
#include "weightstream/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto r = ws::sentencepiece_vocab(data, size);
    if (r.ok() && (r.value().tokens.size() != r.value().scores.size() ||
                   r.value().tokens.size() != r.value().token_types.size())) {
        __builtin_trap();
    }
    return 0;
}
