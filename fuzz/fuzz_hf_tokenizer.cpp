// SPDX-License-Identifier: MIT
// libFuzzer target: hf_tokenizer() on tokenizer.json bytes, then tokenize and detokenize. The input is the JSON, a
// separator "\0\0" and the text (no separator: a fixed text of varied scripts, spaces and added-token lookalikes).
#include <cstring>
#include <string>
#include <vector>

#include "weightstream/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    size_t json_size = size;
    for (size_t i = 0; i + 1 < size; ++i) {
        if (data[i] == 0 && data[i + 1] == 0) {
            json_size = i;
            break;
        }
    }
    std::string text =
        json_size + 2 <= size
            ? std::string(reinterpret_cast<const char*>(data) + json_size + 2, size - json_size - 2)
            : std::string("Hello  world!\n\t42 <s>[MASK] na\xC3\xAFve \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80 \xFF");
    auto r = ws::hf_tokenizer(data, json_size, nullptr, 0);
    if (!r.ok()) return 0;
    const ws::Tokenizer& t = *r.value();
    for (int mode = 0; mode < 4; ++mode) {
        ws::TokenizeOptions o;
        o.add_special = mode & 1;
        o.parse_special = mode & 2;
        std::vector<int32_t> ids;
        if (!t.tokenize(text, o, &ids).ok()) continue;
        std::string back;
        ws::DetokenizeOptions d;
        d.remove_special = mode & 1;
        d.unparse_special = mode & 2;
        (void)t.detokenize(ids.data(), ids.size(), d, &back);
        for (int32_t id : ids) {
            if (id < 0 || size_t(id) >= t.size()) __builtin_trap();  // every id is in the table
            (void)t.piece(id);
        }
    }
    return 0;
}
