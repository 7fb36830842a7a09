// SPDX-License-Identifier: MIT
// The table of llama.cpp's BPE pre-tokenizers (src/llama-vocab.cpp of the 2025-02 snapshot c392e50: the regex
// lists of llm_tokenizer_bpe and the flags llama_vocab::impl::load sets per tokenizer.ggml.pre). The patterns are
// llama.cpp's own strings, in the syntax of regex.h (which runs them over Unicode code points, so llama.cpp's
// "collapsed categories" trick for std::regex is not needed: \p{L} is Unicode's L either way).
#include "text/llama_pretokenizers.h"

#include <cstring>

namespace ws {
namespace {

// The patterns, named by the pre-tokenizer type that introduced them.
const char* const kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const char* const kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kDeepseekLetters = "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+";
const char* const kDeepseekPunct = "\\s?[!-/:-~！-／：-～‘-‟　-。]+";
const char* const kDeepseekCjk = "[一-龥ࠀ-一가-퟿]+";
const char* const kDeepseek3Cjk = "[一-龥぀-ゟ゠-ヿ]+";
const char* const kDeepseek3Main = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
const char* const kBloom = " ?[^(\\s|.,!?…。，、।۔،)]+";
const char* const kTekken = "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

struct Entry {
    const char* type;
    std::vector<const char*> regexes;
    bool ignore_merges, clean_spaces, add_bos, bos_none;
};

// One entry per pre-tokenizer type.
enum : int {
    kDefault, kLlama3T, kDbrx, kDeepseekLlm, kDeepseek3, kDeepseekCoder, kFalcon, kStarcoder, kGpt2T, kQwen2T,
    kPoro, kChatglm4, kViking, kTekkenT, kChameleon, kCount
};

const Entry kEntries[kCount] = {
    // kDefault: no tokenizer.ggml.pre (llama.cpp warns that quality will be degraded) or "default"
    {"default", {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}, false, true, false, false},
    {"llama3", {kLlama3}, true, true, true, false},
    {"dbrx", {kLlama3}, false, true, false, false},
    {"deepseek-llm", {"[\r\n]", kDeepseekLetters, kDeepseekPunct, "\\s+$", kDeepseekCjk, "\\p{N}+"}, false, false,
     false, false},
    {"deepseek3-llm", {"\\p{N}{1,3}", kDeepseek3Cjk, kDeepseek3Main}, false, false, false, false},
    {"deepseek-coder", {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kDeepseekCjk, "\\p{N}"}, false, false, false,
     false},
    {"falcon", {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"}, false, true, false, false},
    {"starcoder", {"\\p{N}", kGpt2}, false, true, false, false},
    {"gpt2", {kGpt2}, false, true, false, false},
    {"qwen2", {kQwen2}, false, true, false, false},
    {"poro", {kBloom}, false, true, false, false},
    {"chatglm4", {kLlama3}, false, true, false, true},
    {"viking", {kBloom, "\\p{N}"}, false, true, false, false},
    {"tekken", {kTekken}, true, false, true, false},
    {"chameleon",
     {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
      "[\\p{P}!-/:-@\\[-`{-~]", kGpt2},
     false, false, true, false},
};

struct Name {
    const char* pre;
    int type;
    int clean_spaces;  // -1: the type's; else llama.cpp sets it for this name
};

// tokenizer.ggml.pre -> type, in llama_vocab::impl::load's order. clean_spaces is per name there (qwen2 and
// stablelm2 share a type but only qwen2 clears it; megrez takes qwen2's regex but keeps clean_spaces).
const Name kNames[] = {
    {"default", kDefault, -1},
    {"llama3", kLlama3T, -1}, {"llama-v3", kLlama3T, -1}, {"llama-bpe", kLlama3T, -1}, {"falcon3", kLlama3T, -1},
    {"deepseek-llm", kDeepseekLlm, -1},
    {"deepseek-coder", kDeepseekCoder, -1},
    {"deepseek-v3", kDeepseek3, -1},
    {"falcon", kFalcon, -1},
    {"mpt", kGpt2T, -1},
    {"starcoder", kStarcoder, -1},
    {"gpt-2", kGpt2T, -1}, {"phi-2", kGpt2T, -1}, {"jina-es", kGpt2T, -1}, {"jina-de", kGpt2T, -1},
    {"gigachat", kGpt2T, -1}, {"jina-v1-en", kGpt2T, -1}, {"jina-v2-es", kGpt2T, -1}, {"jina-v2-de", kGpt2T, -1},
    {"jina-v2-code", kGpt2T, -1}, {"roberta-bpe", kGpt2T, -1},
    {"refact", kStarcoder, -1},
    {"command-r", kStarcoder, 0},
    {"qwen2", kQwen2T, 0}, {"deepseek-r1-qwen", kQwen2T, 0},
    {"stablelm2", kQwen2T, -1},
    {"olmo", kGpt2T, -1},
    {"dbrx", kDbrx, -1},
    {"smaug-bpe", kDbrx, -1},
    {"poro-chat", kPoro, 0},
    {"chatglm-bpe", kChatglm4, -1},
    {"viking", kViking, 0},
    {"jais", kGpt2T, -1},
    {"tekken", kTekkenT, -1},
    {"smollm", kStarcoder, 0},
    {"codeshell", kStarcoder, -1},
    {"bloom", kPoro, -1},
    {"gpt3-finnish", kPoro, -1},
    {"exaone", kStarcoder, -1},
    {"chameleon", kChameleon, -1},
    {"minerva-7b", kStarcoder, -1},
    {"megrez", kQwen2T, -1},
};

}  // namespace

bool llama_pre_tokenizer(const std::string& pre, LlamaPreTokenizer* out) {
    const std::string name = pre.empty() ? "default" : pre;
    for (const Name& n : kNames) {
        if (name != n.pre) continue;
        const Entry& e = kEntries[n.type];
        out->type = e.type;
        out->regexes = e.regexes;
        out->ignore_merges = e.ignore_merges;
        out->clean_spaces = n.clean_spaces >= 0 ? n.clean_spaces != 0 : e.clean_spaces;
        out->add_bos = e.add_bos;
        out->bos_none = e.bos_none;
        return true;
    }
    return false;
}

}  // namespace ws
