// SPDX-License-Identifier: MIT
// llama.cpp's BPE pre-tokenizers: what each tokenizer.ggml.pre name means to src/llama-vocab.cpp (the regexes
// llm_tokenizer_bpe splits the text with, in order, and the flags llama_vocab::impl::load sets with the type).
// Internal to the GGUF tokenizer (core/text/llama_tokenizer.cpp).
#pragma once

#include <string>
#include <vector>

namespace ws {

struct LlamaPreTokenizer {
    const char* type = "";             // llama.cpp's LLAMA_VOCAB_PRE_TYPE_* without the prefix, lower case
    std::vector<const char*> regexes;  // applied one after the other, each inside the pieces of the last
    bool ignore_merges = false;        // a whole piece that is a token is that token (llama3, tekken)
    bool clean_spaces = true;          // detokenize's clean_up_tokenization_spaces passes
    bool add_bos = false;              // the default of add_bos before tokenizer.ggml.add_bos_token
    bool add_sep = false;              // the default of add_sep before tokenizer.ggml.add_sep_token
    bool bos_none = false;             // chatglm-bpe: no BOS token by default
    // SentencePiece-style BPE (gemma4, sarvam-moe; llama.cpp after the snapshot): spaces become U+2581 before
    // splitting, symbols are the text's own UTF-8 characters (no GPT-2 byte-level alphabet), and a symbol that is
    // no token falls back to <0xXX> byte tokens.
    bool byte_encode = true;
    bool escape_whitespaces = false;
    bool newline_runs = false;  // gemma4: a piece of newlines that is a token is that token, unmerged
};

// The pre-tokenizer of a gpt2 (BPE) vocabulary by its tokenizer.ggml.pre ("" is llama.cpp's "default", as is
// a missing key). False for a name llama.cpp does not know.
bool llama_pre_tokenizer(const std::string& pre, LlamaPreTokenizer* out);
// Every name llama_pre_tokenizer() knows (for tests: each must compile).
std::vector<std::string> llama_pre_tokenizer_names();

}  // namespace ws
