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
// clang-format off (clang-format 14 measures these non-ASCII lines differently on every run)
const char* const kDeepseekLetters =
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆ"
    "Έ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷ"
    "ᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐ"
    "ῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄ"
    "Ⰰ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-"
    "ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+";
// clang-format on
const char* const kDeepseekPunct = "\\s?[!-/:-~！-／：-～‘-‟　-。]+";
const char* const kDeepseekCjk = "[一-龥ࠀ-一가-퟿]+";
const char* const kDeepseek3Cjk = "[一-龥぀-ゟ゠-ヿ]+";
const char* const kDeepseek3Main =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
const char* const kBloom = " ?[^(\\s|.,!?…。，、।۔،)]+";
// Types added to llama.cpp after the snapshot (read from ggml-org/llama.cpp in 2026): those whose splitting is
// regexes alone, including the SentencePiece-style ones (gemma4, sarvam-moe). Not here: whitespace (its own
// session and normalizer), kimi-k2 and afmoe (custom splitters), tiny_aya and superbpe (look-aheads longer than
// one character, which regex.h does not run).
const char* const kJais2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}"
    "(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}";
const char* const kQwen35 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| "
    "?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kYoutuCjk =
    "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+";
const char* const kYoutuMain =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|"
    "'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{"
    "Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kGpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL]"
    "[lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV]["
    "eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kGraniteEmbMulti =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]"
    "|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|"
    "'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kBailingMoe =
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
const char* const kSeedCoder =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| "
    "?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kExaoneMoe =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: "
    "\\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
const char* const kMiniCpm5 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kTekken =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+"
    "((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

struct Entry {
    const char* type;
    std::vector<const char*> regexes;
    bool ignore_merges, clean_spaces, add_bos, bos_none;
    bool sentencepiece_style = false;  // byte_encode false, escape_whitespaces true
    bool newline_runs = false;
};

// One entry per pre-tokenizer type.
enum : int {
    kDefault,
    kLlama3T,
    kDbrx,
    kDeepseekLlm,
    kDeepseek3,
    kDeepseekCoder,
    kFalcon,
    kStarcoder,
    kGpt2T,
    kQwen2T,
    kPoro,
    kChatglm4,
    kViking,
    kTekkenT,
    kChameleon,
    // after the snapshot
    kJais2T,
    kQwen35T,
    kYoutuT,
    kGpt4oT,
    kGraniteEmbMultiT,
    kBailingMoeT,
    kSeedCoderT,
    kExaoneMoeT,
    kMiniCpm5T,
    kLagunaT,
    kGemma4T,
    kSarvamT,
    kCount
};

const Entry kEntries[kCount] = {
    // kDefault: no tokenizer.ggml.pre (llama.cpp warns that quality will be degraded) or "default"
    {"default", {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}, false, true, false, false},
    {"llama3", {kLlama3}, true, true, true, false},
    {"dbrx", {kLlama3}, false, true, false, false},
    {"deepseek-llm",
     {"[\r\n]", kDeepseekLetters, kDeepseekPunct, "\\s+$", kDeepseekCjk, "\\p{N}+"},
     false,
     false,
     false,
     false},
    {"deepseek3-llm", {"\\p{N}{1,3}", kDeepseek3Cjk, kDeepseek3Main}, false, false, false, false},
    {"deepseek-coder", {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kDeepseekCjk, "\\p{N}"}, false, false, false, false},
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
     false,
     false,
     true,
     false},
    {"jais2", {kJais2}, false, true, false, false},
    {"qwen35", {kQwen35}, false, false, false, false},
    {"youtu", {kYoutuCjk, kYoutuMain}, true, false, false, false},
    {"gpt4o", {kGpt4o}, false, false, false, false},
    {"granite-emb-multi", {kGraniteEmbMulti}, true, false, false, false},
    {"bailingmoe", {kBailingMoe}, false, false, false, false},
    {"seed-coder", {kSeedCoder}, false, false, false, false},
    {"exaone-moe", {kExaoneMoe}, false, true, false, false},
    {"minicpm5", {"\\p{N}{1,3}", kMiniCpm5}, true, true, false, false},
    {"laguna", {"[^\\n]+|[\\n]+", kQwen2}, false, false, false, false},
    {"gemma4", {"[^\\n]+|[\\n]+"}, false, true, false, false, true, true},
    {"sarvam-moe", {"[^\\n]+|[\\n]+"}, false, false, false, false, true, false},
};

struct Name {
    const char* pre;
    int type;
    int clean_spaces;      // -1: the type's; else llama.cpp sets it for this name
    bool add_sep = false;  // llama.cpp sets add_sep for this name (the BERT-like BPE vocabularies)
};

// tokenizer.ggml.pre -> type, in llama_vocab::impl::load's order. clean_spaces is per name there (qwen2 and
// stablelm2 share a type but only qwen2 clears it; megrez takes qwen2's regex but keeps clean_spaces).
const Name kNames[] = {
    {"default", kDefault, -1},
    {"llama3", kLlama3T, -1},
    {"llama-v3", kLlama3T, -1},
    {"llama-bpe", kLlama3T, -1},
    {"falcon3", kLlama3T, -1},
    {"deepseek-llm", kDeepseekLlm, -1},
    {"deepseek-coder", kDeepseekCoder, -1},
    {"deepseek-v3", kDeepseek3, -1},
    {"falcon", kFalcon, -1},
    {"mpt", kGpt2T, -1},
    {"starcoder", kStarcoder, -1},
    {"gpt-2", kGpt2T, -1},
    {"phi-2", kGpt2T, -1},
    {"jina-es", kGpt2T, -1},
    {"jina-de", kGpt2T, -1},
    {"gigachat", kGpt2T, -1},
    {"jina-v1-en", kGpt2T, -1, true},
    {"jina-v2-es", kGpt2T, -1},
    {"jina-v2-de", kGpt2T, -1},
    {"jina-v2-code", kGpt2T, -1, true},
    {"roberta-bpe", kGpt2T, -1, true},
    {"refact", kStarcoder, -1},
    {"command-r", kStarcoder, 0},
    {"qwen2", kQwen2T, 0},
    {"deepseek-r1-qwen", kQwen2T, 0},
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
    // after the snapshot
    {"falcon-h1", kLlama3T, -1},
    {"pixtral", kLlama3T, -1},
    {"midm-2.0", kLlama3T, -1},
    {"lfm2", kLlama3T, -1},
    {"jina-v5-nano", kLlama3T, -1},
    {"minicpm5", kMiniCpm5T, -1},
    {"youtu", kYoutuT, -1},
    {"a.x-4.0", kGpt2T, -1},
    {"mellum", kGpt2T, -1},
    {"modern-bert", kGpt2T, -1},
    {"exaone4", kGpt2T, -1},
    {"trillion", kGpt2T, 0},
    {"granite-docling", kGpt2T, 0},
    {"jais-2", kJais2T, -1},
    {"kormo", kQwen2T, 0},
    {"f2llmv2", kQwen2T, 0},
    {"hunyuan", kQwen2T, 0},
    {"solar-open", kQwen2T, 0},
    {"qwen35", kQwen35T, -1},
    {"glm4", kChatglm4, -1},
    {"exaone-moe", kExaoneMoeT, -1},
    {"gpt-4o", kGpt4oT, -1},
    {"llama4", kGpt4oT, -1},
    {"kanana2", kGpt4oT, -1},
    {"talkie", kGpt4oT, -1},
    {"minimax-m2", kGpt4oT, -1},
    {"granite-embed-multi-97m", kGraniteEmbMultiT, -1},
    {"bailingmoe", kBailingMoeT, -1},
    {"bailingmoe2", kBailingMoeT, -1},
    {"llada-moe", kBailingMoeT, -1},
    {"seed-coder", kSeedCoderT, -1},
    {"hunyuan-dense", kDeepseek3, -1},
    {"joyai-llm", kDeepseek3, -1},
    {"grok-2", kQwen2T, 0},
    {"laguna", kLagunaT, -1},
    {"mellum2", kStarcoder, -1},
    {"gemma4", kGemma4T, -1},
    {"granite-embed-multi-311m", kGemma4T, -1},
    {"sarvam-moe", kSarvamT, -1},
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
        out->byte_encode = !e.sentencepiece_style;
        out->escape_whitespaces = e.sentencepiece_style;
        out->newline_runs = e.newline_runs;
        out->add_sep = n.add_sep;
        return true;
    }
    return false;
}

std::vector<std::string> llama_pre_tokenizer_names() {
    std::vector<std::string> names;
    for (const Name& n : kNames) names.push_back(n.pre);
    return names;
}

}  // namespace ws
