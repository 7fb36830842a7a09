// SPDX-License-Identifier: MIT
// A Hugging Face checkpoint's tokenizer as convert_hf_to_gguf.py writes it into a GGUF: the tokenizer.* keys, in
// the converter's order and with gguf-py's types, and the same table as a VocabTable (tokenizer.h) so that the
// written tokenizer can be run (llama_tokenizer()) before anything is written. Pure: the caller reads the files.
//
// What is followed (llama.cpp's convert_hf_to_gguf.py and gguf-py/gguf/vocab.py; the 2025-02 snapshot for what
// testdata/convert covers, today's for what it adds):
//   - the SentencePiece path (_set_vocab_sentencepiece / _create_vocab_sentencepiece): tokenizer.model's pieces,
//     scores and types (sentencepiece_vocab()), "[PADi]" / -10000 / UNUSED up to config.json's vocab_size,
//     added_tokens.json (USER_DEFINED, -1000; ids >= vocab_size ignored), tokenizer_config.json's
//     added_tokens_decoder (CONTROL when "special" or when the text looks special, else USER_DEFINED with U+2581
//     as a space; -1000); model "llama", pre "default" whatever the SentencePiece model type;
//   - the families' own steps: Phi3MiniModel.set_vocab (its added-token rules, tokenizer.json's added_tokens too;
//     a GPT2Tokenizer class takes the gpt2 path), GemmaModel (a second SpecialVocab with the fixed FIM / EOT ids of
//     which gguf-py writes eot, then add_space_prefix false), Gemma2/3 (add_space_prefix false), LlamaModel
//     (CodeLlama's ids at vocab_size 32016, tokenizer_config.json's add_prefix_space);
//   - gguf-py's SpecialVocab (hf_special_vocab()): special token ids from tokenizer_config.json's *_token matched
//     against tokenizer.json's added_tokens, then config.json's *_token_id (root, then text_config), the first
//     one set winning, ids >= the token count skipped with a warning; add_bos/eos/sep_token from
//     tokenizer_config.json and tokenizer.json's post_processor (TemplateProcessing, RobertaProcessing); the chat
//     template from tokenizer_config.json, else chat_template.jinja, else chat_template.json (a list of named
//     templates becomes tokenizer.chat_template.NAME keys + tokenizer.chat_templates).
// Not followed: special_tokens_map.json (SpecialVocab does not read it), merges.txt, the additional_chat_templates
// folder, tokenizer.json's normalizer (tokenizer.ggml.normalizer_lowercase).
//
// A checkpoint with no tokenizer.model takes the converter's gpt2 path (tokenizer.json BPE): hf_vocab() returns
// kUnsupported "tokenizer.json" for it (the gpt2 table is hf_bpe_vocab.h's; its SpecialVocab keys are
// hf_special_vocab()'s).
//
// Every input is untrusted: files over kHfTokenizerFileMaxBytes, JSON nested over kHfTokenizerJsonMaxDepth, a
// token count over config.json's vocab_size (or over kTokenizerMaxTokens), an added token id that is negative,
// not an integer or (added_tokens_decoder, tokenizer.json) >= vocab_size, a token over kTokenizerMaxTokenBytes,
// more added tokens than kTokenizerMaxTokens: an error (code, what names the file and field, offset the entry's
// index; for tokenizer.model the byte offset of sentencepiece_vocab()'s error), never a crash or an allocation
// beyond the input's size and the vocabulary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weightstream/hf_checkpoint.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"
#include "weightstream/tokenizer.h"

namespace ws {

// A tokenizer file beside a checkpoint larger than this is refused (kTooLarge): the largest real tokenizer.json
// (262k tokens) is about 35 MB.
constexpr uint64_t kHfTokenizerFileMaxBytes = uint64_t(64) << 20;
constexpr uint32_t kHfTokenizerJsonMaxDepth = 64;

// The files beside a checkpoint that the converter's tokenizer steps read, by role; an absent file is empty.
struct HfVocabFiles {
    HfTokenizerFiles tokenizer;            // tokenizer.json, tokenizer_config.json, tokenizer.model
    std::string_view added_tokens;         // added_tokens.json
    std::string_view chat_template_jinja;  // chat_template.jinja
    std::string_view chat_template_json;   // chat_template.json
    std::string_view config;               // config.json (SpecialVocab reads its *_token_id as stored)
};
// Their names as the CLI finds them beside the model and the package takes them, in one order.
constexpr const char* kHfVocabFileNames[] = {"tokenizer.json",    "tokenizer_config.json", "tokenizer.model",
                                             "added_tokens.json", "chat_template.jinja",   "chat_template.json"};
// The slot of file `name` (one of kHfVocabFileNames, or "config.json") in *files, or nullptr.
std::string_view* hf_vocab_file_slot(HfVocabFiles* files, std::string_view name);

struct HfVocab {
    VocabTable table;                     // the written keys as llama_tokenizer() takes them (name: general.name)
    std::vector<MetadataEntry> metadata;  // the tokenizer.* entries, in the converter's order, typed as it types
    std::vector<std::string> warnings;    // the converter's warnings that change what is written, in words
};

// The tokenizer convert_hf_to_gguf.py writes for a checkpoint of config.family (a family hf_names.h knows), with
// general.name `name` (llama.cpp reads it for Phi-3's token attributes): the SentencePiece path when there is a
// tokenizer.model, else the gpt2 path (tokenizer.json BPE: hf_gpt2_vocab(), then SpecialVocab with merges). Errors
// as above and hf_gpt2_vocab()'s (a token id not below vocab_size is kBadKey "config.json.vocab_size" on both
// paths); kUnsupported "tokenizer.model" when there is no tokenizer file at all. *chkhsh (when not null) receives
// the gpt2 path's pre-tokenizer check hash whenever it was computed, also with the unknown-hash error.
Result<HfVocab> hf_vocab(const HfVocabFiles& files, const HfConfig& config, const std::string& name,
                         std::string* chkhsh = nullptr);

// tokenizer.ggml.model, .pre, .tokens, .scores (when the table has them) and .token_type of `table`, as the
// converter's paths write them first.
std::vector<MetadataEntry> hf_vocab_entries(const VocabTable& table);
// gguf-py's SpecialVocab(dir, n_vocab = table->tokens.size()).add_to_gguf(): appends to *entries the table's
// merges (when it has any), the special token ids, the add_*_token flags and the chat template, in gguf-py's
// order, and sets them on *table. Warnings (ids out of range, values of the wrong type) go to *warnings.
Status hf_special_vocab(const HfVocabFiles& files, VocabTable* table, std::vector<MetadataEntry>* entries,
                        std::vector<std::string>* warnings);

// The text of the check on the way out: English, accents, German, Russian, Greek, Arabic, Hindi, Chinese,
// Japanese, Korean, emoji, digits, code, runs of spaces, tabs and newlines.
extern const char* const kHfVocabCheckText;
// The check on the way out: kHfVocabCheckText tokenized (add_special, parse_special) by the written table's
// tokenizer (llama_tokenizer(), llama.cpp-exact) and by the source's (hf_files_tokenizer(), Hugging Face-exact).
// "" when they agree; else a sentence naming the first differing token (its index, both ids and pieces), or
// saying why a tokenizer could not be made (the check is then not made).
std::string hf_vocab_check(const HfVocab& vocab, const HfVocabFiles& files);

}  // namespace ws
