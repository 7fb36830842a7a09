// SPDX-License-Identifier: MIT
// Tokenizers: text -> token ids -> text, exactly as the reference each kind of file names.
//
//   gguf_tokenizer()          a GGUF's tokenizer.ggml.* keys, token-exact with llama.cpp (src/llama-vocab.cpp):
//                             every tokenizer.ggml.model it handles (llama SPM, gpt2 BPE with its
//                             tokenizer.ggml.pre splitters, gemma4 SentencePiece-style BPE, bert WPM, t5 UGM,
//                             rwkv).
//   hf_tokenizer()            a Hugging Face tokenizer.json (+ tokenizer_config.json), token-exact with Hugging
//                             Face's tokenizers library.
//   sentencepiece_vocab()     a SentencePiece tokenizer.model, read into the same table a GGUF holds (as
//                             convert_hf_to_gguf.py reads it); tokenized by the llama.cpp algorithms.
//
// One interface for all of them (Tokenizer), so that the CLI, the package and the page never ask which kind they
// hold. Every entry point is safe on untrusted input: a table or file that is malformed, inconsistent or beyond
// the limits below is an error (code, what, and the byte offset or token index where), never a crash, a hang or an
// allocation out of proportion to the input. Tokenizing is linear in the text (regex.h's engine, merge queues):
// no input text makes it quadratic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

// A token's kind, numbered as GGUF's tokenizer.ggml.token_type stores it (llama.h llama_token_type).
enum class TokenKind : uint8_t {
    kUndefined = 0,
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,      // BOS, EOS, <|im_start|>: special; never produced from text unless parse_special
    kUserDefined = 4,  // added tokens matched in the text before the model splits it
    kUnused = 5,
    kByte = 6,  // <0x0A>: byte fallback
};

// Caps on what a tokenizer file may declare, checked before anything is allocated from a count.
constexpr size_t kTokenizerMaxTokens = size_t(1) << 22;      // 4,194,304 tokens (the largest real: 262,144)
constexpr size_t kTokenizerMaxMerges = size_t(1) << 23;      // merges (real: up to ~500,000)
constexpr size_t kTokenizerMaxTokenBytes = size_t(1) << 16;  // bytes of one token's text

struct TokenizeOptions {
    bool add_special = true;    // add the BOS/EOS (or template) tokens the model asks for (llama-tokenize's default)
    bool parse_special = true;  // match special tokens written in the text ("<|eot_id|>") as themselves
    // With add_special: false leaves out what is added before the text (the BOS; a Hugging Face template's tokens
    // before the text) and adds the rest (llama-tokenize --no-bos).
    bool add_bos = true;
};

struct DetokenizeOptions {
    bool remove_special = false;  // drop a leading BOS and trailing EOS the model adds (llama.cpp's remove_special)
    bool unparse_special = true;  // write special tokens' text; false drops them (llama.cpp's unparse_special)
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // Text (UTF-8; invalid bytes are handled as the reference does) to token ids, appended to *ids.
    // Thread-safe: a const Tokenizer may tokenize on several threads at once.
    virtual Status tokenize(std::string_view text, const TokenizeOptions& options, std::vector<int32_t>* ids) const = 0;
    // Token ids to text, appended to *text. An id outside [0, size()) is kBadKey with the id's index as the offset.
    virtual Status detokenize(const int32_t* ids, size_t count, const DetokenizeOptions& options,
                              std::string* text) const = 0;

    // What token `id` stands for inside a text (not at its start), appended to *text: llama.cpp's token_to_piece with
    // special tokens' text, as llama-tokenize prints it beside each id; for a Hugging Face tokenizer the decoders on
    // the token alone as if others came before and after it (no first- or last-token rule: Metaspace's dropped
    // leading space, Strip, BPEDecoder's last suffix). For showing a tokenization token by token: may be part of a
    // character (a byte token, a byte-level piece of a split character). kBadKey for an id outside [0, size()).
    virtual Status token_text(int32_t id, std::string* text) const = 0;

    virtual size_t size() const = 0;                       // tokens in the table
    virtual std::string_view piece(int32_t id) const = 0;  // the token's text as stored ("Ġthe", "▁the", "<0x0A>")
    virtual TokenKind kind(int32_t id) const = 0;
    // What the tokenizer is, for display: "llama", "gpt2/llama-bpe", "bert", "t5", "rwkv", "plamo2" (a GGUF's model
    // and, for the BPE models gpt2, whitespace and hybriddna, its pre),
    // "hf:BPE", "hf:WordPiece", "hf:Unigram" (tokenizer.json's model type).
    virtual std::string description() const = 0;
};

// A GGUF's tokenizer as it stores it: the tokenizer.ggml.* keys, checked for type and consistent lengths. The same
// table is what the converter writes (sentencepiece_vocab(), and the Hugging Face conversion).
struct VocabTable {
    // tokenizer.ggml.model: "llama", "gpt2", "gemma4", "bert", "t5", "rwkv", "plamo2", "no_vocab", ...
    std::string model;
    std::string pre;  // tokenizer.ggml.pre ("" when absent: llama.cpp's "default")
    std::vector<std::string> tokens;
    std::vector<float> scores;         // empty, or one per token
    std::vector<int32_t> token_types;  // empty, or one per token (TokenKind values)
    std::vector<std::string> merges;   // "left right", in rank order (gpt2)
    std::string precompiled_charsmap;  // t5: SentencePiece's normalizer trie, as stored
    // Special token ids: -1 when the key is absent.
    int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, sep = -1, pad = -1, mask = -1;
    int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
    // Flags: -1 when the key is absent (the tokenizer model's default applies), else 0 or 1.
    int8_t add_bos = -1, add_eos = -1, add_sep = -1, add_space_prefix = -1, remove_extra_whitespaces = -1;
    // tokenizer.ggml.normalizer.lowercase / .strip_accents: -1 when absent, else 0 or 1. The whitespace model reads
    // lowercase; a bert (WPM) table both, as BertNormalizer's options (lowercase defaults to true, strip_accents to
    // lowercase).
    int8_t normalizer_lowercase = -1, normalizer_strip_accents = -1;
    std::string chat_template;  // tokenizer.chat_template ("" when absent)
    // general.name and general.architecture: llama.cpp sets per-token strip attributes by them (phi-3's rstrip,
    // the <mask> / [MASK] lstrip of nomic-bert-moe, jina-bert-v3 and modern-bert)
    std::string name, architecture;
};

// The table of a GGUF's metadata. kBadKey (what = the key) for a tokenizer key of the wrong type (the types
// llama.cpp's loader insists on: u32 ids, bool flags, string model/pre, string/f32/i32 arrays; scores may be f32
// or i32, as llama.cpp reads them now) and for arrays of
// mismatched lengths; kTooLarge past the caps above; kUnsupported when there is no tokenizer.ggml.model. A
// special token id >= the token count is kept as stored: llama.cpp ignores such a key (the model's default id
// applies), and so does llama_tokenizer().
Result<VocabTable> vocab_from_gguf(const ModelInfo& info);
// The llama.cpp tokenizer of a table (core/text/llama_tokenizer.cpp says what it follows and where it differs).
// kUnsupported for a model or pre-tokenizer it does not handle, what = "tokenizer.ggml.model" or
// "tokenizer.ggml.pre" (the Status has no room for the value); kBadKey for duplicate tokens, merges naming tokens
// the table lacks (Hugging Face refuses them too), a plamo2 table without all 256 byte tokens (llama.cpp refuses
// it) and the like, offset = the index, and for a table whose add_bos, add_eos or add_sep (given or the model's
// default) asks for a token it has no id for (llama.cpp's check_add_special_token). Tokenizing returns kBadKey
// where llama.cpp would push an id the table lacks or throw (WPM's [CLS] or [SEP] missing, no byte token for a
// byte).
Result<std::unique_ptr<Tokenizer>> llama_tokenizer(VocabTable table);
// Both of the above.
Result<std::unique_ptr<Tokenizer>> gguf_tokenizer(const ModelInfo& info);

// A Hugging Face tokenizer.json with its tokenizer_config.json (config may be empty: size 0). Errors: kBadJson for
// bytes that are not the expected JSON (offset: the byte offset of a syntax error, or the index of the malformed
// entry of merges, vocab or added_tokens); kBadKey for ids out of range, merges naming tokens the vocabulary
// lacks, and a Precompiled normalizer's charsmap that is not canonical base64 or that some text would walk outside
// of (where Hugging Face's crate panics); kUnsupported for a component this build does not implement, what naming
// it ("model.dropout", "pre_tokenizer.Split.pattern" for a regex the engine refuses, ...); kTooLarge past the caps,
// for nesting deeper than 64, or for an added token, a String pattern or a WordPiece / Unigram vocabulary entry
// over 1024 bytes (matching them costs O(text x their length); real ones are under 100).
// What the options mean here:
//   add_special     the post_processor's tokens (TemplateProcessing's single template, Bert/Roberta cls and sep).
//                   tokenizer_config.json's add_bos_token / add_eos_token are not applied: transformers rebuilds
//                   the post-processor from them for a few classes, the tokenizers library and its JavaScript
//                   port do not, and tokenizer.json is what both share.
//   parse_special   true: every added token written in the text is matched first (AddedVocabulary, leftmost
//                   longest, with single_word / lstrip / rstrip / normalized). false: added tokens marked special
//                   are not matched, so "<|im_start|>" in the text is tokenized as text (the crate's
//                   encode_special_tokens = true); non-special added tokens still match.
//   text            ill-formed UTF-8 becomes U+FFFD first (one per maximal subpart), as a JavaScript or Python
//                   string made from those bytes holds it.
//   truncation and padding of tokenizer.json are not applied (a whole text gives all its tokens).
//   remove_special  drops the post_processor's own tokens at either end; unparse_special false drops every
//                   special added token (skip_special_tokens). Decoding ends with transformers'
//                   clean_up_tokenization when tokenizer_config.json's clean_up_tokenization_spaces is true or
//                   absent (the JavaScript port's default); never without a config.
Result<std::unique_ptr<Tokenizer>> hf_tokenizer(const uint8_t* tokenizer_json, size_t tokenizer_json_size,
                                                const uint8_t* config_json, size_t config_json_size);

// A SentencePiece tokenizer.model (protobuf ModelProto) read as convert_hf_to_gguf.py's _create_vocab_sentencepiece
// reads it: pieces, scores and types; model "llama" for a BPE model, "t5" for a Unigram one (with the normalizer's
// precompiled_charsmap and flags; both: add_space_prefix from add_dummy_prefix, remove_extra_whitespaces, and
// unk/bos/eos/pad from the trainer spec when in range). Pieces of type USER_DEFINED are kNormal, as the converter
// writes them. kBadJson is not used: a malformed protobuf is kBadKey (a bad varint, tag or wire type) or
// kTruncated (a length past the end), with its byte offset; kUnsupported for a WORD or CHAR model.
Result<VocabTable> sentencepiece_vocab(const uint8_t* model, size_t size);

// A Hugging Face checkpoint's tokenizer files, by role; an absent file is empty. The bytes are only read.
struct HfTokenizerFiles {
    std::string_view tokenizer_json;    // tokenizer.json
    std::string_view tokenizer_config;  // tokenizer_config.json
    std::string_view tokenizer_model;   // tokenizer.model (SentencePiece)
};
// The tokenizer a checkpoint's files make, chosen as transformers' AutoTokenizer does: tokenizer.json when there
// is one (the fast tokenizer), else tokenizer.model through sentencepiece_vocab() and llama_tokenizer(), with
// tokenizer_config.json's add_bos_token / add_eos_token. kUnsupported when there is neither.
Result<std::unique_ptr<Tokenizer>> hf_files_tokenizer(const HfTokenizerFiles& files);

}  // namespace ws
