// SPDX-License-Identifier: MIT
// llama.cpp's BPE pre-tokenizers: what each tokenizer.ggml.pre name means to src/llama-vocab.cpp (the regexes
// llm_tokenizer_bpe splits the text with, in order, and the flags llama_vocab::impl::load sets with the type).
// Internal to the GGUF tokenizer (core/text/llama_tokenizer.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weightstream/regex.h"
#include "weightstream/status.h"

namespace ws {

struct LlamaPreTokenizer {
    const char* type = "";  // llama.cpp's LLAMA_VOCAB_PRE_TYPE_* without the prefix, lower case
    // llama.cpp's regex_exprs: applied one after the other, each inside the pieces of the last. A few are not run as
    // regexes but name a splitter (LlamaSplitter below), as llama.cpp's unicode_regex_split_custom() does.
    std::vector<const char*> regexes;
    bool ignore_merges = false;  // a whole piece that is a token is that token (llama3, tekken)
    bool clean_spaces = true;    // detokenize's clean_up_tokenization_spaces passes
    bool add_bos = false;        // the default of add_bos before tokenizer.ggml.add_bos_token
    bool add_sep = false;        // the default of add_sep before tokenizer.ggml.add_sep_token
    bool bos_none = false;       // chatglm-bpe: no BOS token by default
    // SentencePiece-style BPE (gemma4, sarvam-moe; llama.cpp after the snapshot): spaces become U+2581 before
    // splitting, symbols are the text's own UTF-8 characters (no GPT-2 byte-level alphabet), and a symbol that is
    // no token falls back to <0xXX> byte tokens.
    bool byte_encode = true;
    bool escape_whitespaces = false;
    bool newline_runs = false;  // gemma4: a piece of newlines that is a token is that token, unmerged
    // The whitespace model's session lower-cases unless tokenizer.ggml.normalizer.lowercase says otherwise
    // (llama.cpp's normalizer_opts default), except after the whitespace pre-tokenizer, which clears it.
    bool lowercase = true;
};

// The pre-tokenizer of a gpt2 (BPE) vocabulary by its tokenizer.ggml.pre ("" is llama.cpp's "default", as is
// a missing key). False for a name llama.cpp does not know.
bool llama_pre_tokenizer(const std::string& pre, LlamaPreTokenizer* out);
// Every name llama_pre_tokenizer() knows (for tests: each must compile).
std::vector<std::string> llama_pre_tokenizer_names();

// The pieces a pre-tokenizer's regexes cut a text into: llama.cpp's unicode_regex_split() without its byte-level
// encoding. Each step runs inside the pieces of the last; the gaps between a regex's matches are pieces too, empty
// ones are dropped. Most steps are regex.h patterns; these expressions (llama.cpp's strings) are hand-written
// splitters instead:
//   \p{Han}+                   kimi-k2: llama.cpp's unicode_regex_split_custom_kimi_k2, which runs the whole K2
//                               pattern (and differs from the regex its comment gives: see the .cpp)
//   \p{AFMoE_digits}           afmoe: unicode_regex_split_custom_afmoe (digit runs cut in threes from the right)
//   (?=(\d{3})+(?!\d))          superbpe: std::regex in llama.cpp
//   \d{1,3}(?=(?:\d{3})*\b)     tiny_aya: std::regex in llama.cpp
// The last two need look-aheads longer than one character, which regex.h does not run. Both only cut runs of ASCII
// digits (std::wregex's \d and \b are ASCII in the C locale llama.cpp runs in), so a splitter over the digit runs
// is exact and linear, where a general look-ahead in the engine would be a second matcher for two patterns; it
// also does what libstdc++ does with tiny_aya's \b at the start of a text, which no regex engine would.
// Cost: linear in the text (each splitter visits each code point a bounded number of times).
// Working memory of LlamaSplitter::split(), reused across calls (one per thread of execution).
struct LlamaSplitScratch {
    RegexScratch regex;
    std::vector<std::pair<size_t, size_t>> next;  // the pieces a step makes
    std::vector<uint32_t> cps;                    // a piece's code points, for the splitters
    std::vector<uint8_t> lens;                    // and their lengths in bytes
};

class LlamaSplitter {
public:
    // Errors: kInternal when a pattern does not compile (the table is ours, so a test catches it).
    Status init(const std::vector<const char*>& exprs);
    // Cuts text[0 .. size) (well-formed UTF-8; the tokenizer passes the text's code points re-encoded) into
    // pieces, [begin, end) byte ranges in order that cover it.
    void split(const char* text, size_t size, std::vector<std::pair<size_t, size_t>>* pieces,
               LlamaSplitScratch* scratch) const;

    enum class Kind : uint8_t { kRegex, kKimiK2, kAfmoeDigits, kSuperBpeDigits, kTinyAyaDigits };

private:
    struct Step {
        Kind kind = Kind::kRegex;
        Regex regex;  // kRegex only
    };
    std::vector<Step> steps_;
};

}  // namespace ws
