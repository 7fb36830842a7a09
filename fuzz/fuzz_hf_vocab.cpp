// SPDX-License-Identifier: MIT
// libFuzzer target: hf_vocab() (hf_vocab.h) on a checkpoint's tokenizer files. Input: one byte choosing the family
// (llama, gemma, phi3) and the file the rest goes to, a little-endian u32 length and that many bytes of
// tokenizer.model, then the chosen JSON file (config.json, added_tokens.json, tokenizer_config.json,
// tokenizer.json, chat_template.json). A table made must be consistent: one score and type per token, special ids
// inside it.
#include <string>
#include <string_view>

#include "weightstream/hf_vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 5) return 0;
    const uint8_t choice = data[0];
    const size_t model_size = size_t(data[1]) | size_t(data[2]) << 8 | size_t(data[3]) << 16 | size_t(data[4]) << 24;
    if (model_size > size - 5) return 0;
    const std::string_view model(reinterpret_cast<const char*>(data + 5), model_size);
    const std::string_view rest(reinterpret_cast<const char*>(data + 5 + model_size), size - 5 - model_size);
    static const char* const kFamilies[] = {"llama", "gemma", "phi3"};
    const std::string family = kFamilies[(choice & 3) % 3];
    ws::HfVocabFiles files;
    files.tokenizer.tokenizer_model = model;
    std::string config = "{\"model_type\": \"" + family + "\"}";
    switch ((choice >> 2) % 5) {
        case 0:
            config = std::string(rest);
            break;
        case 1:
            files.added_tokens = rest;
            break;
        case 2:
            files.tokenizer.tokenizer_config = rest;
            break;
        case 3:
            files.tokenizer.tokenizer_json = rest;
            files.tokenizer.tokenizer_config = "{\"bos_token\": \"<s>\"}";
            break;
        default:
            files.chat_template_json = rest;
            files.tokenizer.tokenizer_config = "{}";
            break;
    }
    files.config = config;
    ws::Result<ws::HfConfig> parsed =
        ws::parse_hf_config(reinterpret_cast<const uint8_t*>(config.data()), config.size());
    if (!parsed.ok()) return 0;
    parsed.value().family = family;
    ws::Result<ws::HfVocab> v = ws::hf_vocab(files, parsed.value(), "x");
    if (!v.ok()) return 0;
    const ws::VocabTable& t = v.value().table;
    const int64_t n = static_cast<int64_t>(t.tokens.size());
    if (t.scores.size() != t.tokens.size() || t.token_types.size() != t.tokens.size()) __builtin_trap();
    for (int32_t id : {t.bos, t.eos, t.unk, t.sep, t.pad, t.mask}) {
        if (id < -1 || id >= n) __builtin_trap();
    }
    return 0;
}
