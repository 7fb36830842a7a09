// SPDX-License-Identifier: MIT
// A Hugging Face tokenizer.json with a byte-level BPE model (Llama 3, Qwen2/Qwen3, DeepSeek, Mistral-Nemo, ...) as
// the GGUF tokenizer table convert_hf_to_gguf.py writes for it (_set_vocab_gpt2): get_vocab_base()'s token list and
// types, get_vocab_base_pre()'s tokenizer.ggml.pre (named by the hash of the token ids of its check text), and the
// merges as gguf-py's SpecialVocab writes them. Special token ids, add_bos / add_eos and the chat template are
// SpecialVocab's other half (hf_vocab.h), not filled here.
//
// Safe on untrusted input: malformed or contradictory files are an error (code, what, and the id or byte offset
// where), never a crash or an allocation out of proportion to the input (every count is capped by tokenizer.h's
// kTokenizer* limits before anything is allocated from it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weightstream/status.h"
#include "weightstream/tokenizer.h"

namespace ws {

// get_vocab_base_pre()'s check text (chktxt), byte for byte.
std::string_view bpe_pre_check_text();
// The check hash of token ids: sha256, as lower-case hex, of Python's str() of the id list ("[128000, 198, ...]").
std::string bpe_pre_chkhsh(const std::vector<int32_t>& ids);
// The tokenizer.ggml.pre the converter's table names for a check hash; empty when the table lacks it. A hash the
// table lists twice takes its last entry, as the converter's chain of `if`s does (mpt / olmo, bert-bge /
// jina-v2-en).
std::string_view bpe_pre_from_chkhsh(std::string_view chkhsh);
// The converter's table, in its order (for listing and tests).
struct BpePreEntry {
    const char* chkhsh;  // 64 hex digits
    const char* pre;     // tokenizer.ggml.pre
    const char* ref;     // the Hugging Face repository the hash was taken from
};
const std::vector<BpePreEntry>& bpe_pre_table();

// The table of a tokenizer.json BPE checkpoint (files.tokenizer_json, with files.tokenizer_config when present:
// its clean_up_tokenization_spaces shapes the decode below): model "gpt2", pre, tokens, token_types, merges.
//   tokens       every id below the vocabulary size: config_vocab_size (config.json's vocab_size; < 0 when it has
//                none: then the number of distinct token texts, the model's vocabulary with the added tokens); an
//                id no token has is "[PAD<id>]", UNUSED.
//   added tokens (added_tokens) CONTROL when marked special or when their text looks special (<|...|>, <｜...｜>,
//                <unused...>, <pad>, <mask>, <2mass>, [@BOS@]), else USER_DEFINED with "▁" written as " ". One not
//                marked normalized is first encoded and decoded by the tokenizer (hf_tokenizer()), as the converter
//                does with AutoTokenizer. Each text has one id, as in transformers' get_vocab(): an added
//                token's text that the vocabulary also has at another id leaves that id a [PAD<id>].
//   other tokens NORMAL.
//   merges       "left right" in rank order from either JSON form ("a b" or ["a", "b"]); a space inside a part
//                is written as U+0120 "Ġ", as SpecialVocab does.
//   pre          bpe_pre_from_chkhsh() of the tokenizer's ids for bpe_pre_check_text() with its special tokens
//                (transformers' encode(): the post-processor's, or for tokenizer_config.json's tokenizer_class
//                Llama/CodeLlama/GemmaTokenizer(Fast) a BOS and EOS per its add_bos_token / add_eos_token).
// *chkhsh (when not null) receives the check hash whenever it was computed, also with the unknown-hash error.
// Errors: hf_tokenizer()'s for the files; kUnsupported what "model.type" for a model other than BPE;
// kUnsupported with llama.cpp's words "BPE pre-tokenizer was not recognized - update get_vocab_base_pre()" for a
// hash the table lacks; kTooLarge what "config.vocab_size" past kTokenizerMaxTokens; kBadKey what
// "config.vocab_size" (offset: the largest id) when a token's id is not below the vocabulary size (the converter's
// assertion: contradictory files); kBadKey what "vocab.duplicate_id" (offset: the id) for two token texts of one id.
Result<VocabTable> hf_gpt2_vocab(const HfTokenizerFiles& files, int64_t config_vocab_size, std::string* chkhsh);

}  // namespace ws
