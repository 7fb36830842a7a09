// SPDX-License-Identifier: MIT
// tokenizer.json read once and shared: hf_tokenizer() builds its tokenizer from it, and the converter's vocabulary
// (hf/hf_bpe_vocab.cpp) reads the same lists (the token list, the added tokens' flags, the merges as written) without
// parsing the file a second time. Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>

#include "text/hf_models.h"
#include "weightstream/status.h"
#include "weightstream/tokenizer.h"

namespace ws {
namespace hf {

// tokenizer.json: a tree of everything but model.vocab and model.merges, which are staged (no tree node per entry).
struct TokenizerJson {
    nlohmann::json root;
    StagedModel staged;
};
// The errors of hf_tokenizer() for the bytes (kBadJson with the offset, kTooLarge for nesting or list lengths).
Status read_tokenizer_json(const uint8_t* data, size_t size, TokenizerJson* out);
// A JSON object file (tokenizer_config.json) after the nesting check; kBadJson / kTooLarge with `what`.
Status parse_json_object(const uint8_t* data, size_t size, const char* what, nlohmann::json* out);
// hf_tokenizer() of a file already read (config may be null). The tokenizer keeps no reference into `tok`.
Result<std::unique_ptr<Tokenizer>> hf_tokenizer_from(const TokenizerJson& tok, const nlohmann::json* config);

}  // namespace hf
}  // namespace ws
