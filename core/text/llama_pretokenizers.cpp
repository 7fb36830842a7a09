// SPDX-License-Identifier: MIT
// The table of llama.cpp's BPE pre-tokenizers (src/llama-vocab.cpp of the 2025-02 snapshot c392e50: the regex
// lists of llm_tokenizer_bpe and the flags llama_vocab::impl::load sets per tokenizer.ggml.pre). The patterns are
// llama.cpp's own strings, in the syntax of regex.h, run over Unicode code points with Unicode's categories as
// llama.cpp reads them (RegexOptions::llama_categories): it runs a pattern with \p{..} on a "collapsed" text (each
// code point above U+007F one byte per category) where \p{Lu}, \p{Ll}, \p{Lt}, \p{Lm} and \p{Lo} all mean
// \p{L}, and its ASCII list for \p{S} lacks '~'. So "HelloWorld" stays whole with youtu's and tiny_aya's patterns
// (Hugging Face splits it), and the deepseek-v3-style patterns (deepseek-v3, hunyuan-dense, joyai-llm, hy_v4,
// spark2_5, afmoe) leave '~' out of [\p{P}\p{S}] ("x ~ y": "x", " ", "~", " y", as llama-tokenize gives it;
// Hugging Face: "x", " ~", " y").
#include "text/llama_pretokenizers.h"

#include <cstring>

#include "weightstream/unicode.h"

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
// Types added to llama.cpp after the snapshot (read from ggml-org/llama.cpp's src/llama-vocab.cpp at 00ad355,
// 2026), including the SentencePiece-style ones (gemma4, sarvam-moe) and those with hand-written splitters
// (LlamaSplitter). The whitespace and hybriddna models' sessions are in llama_tokenizer.cpp.
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

const char* const kSpark25Main =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+";
const char* const kUfakzeka =
    "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kTinyAyaMain =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|"
    "'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{"
    "Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// clang-format off (non-ASCII)
const char* const kAfmoeCjk =
    "[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+";
// clang-format on
const char* const kAfmoeMain =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// The expressions LlamaSplitter runs as splitters (llama.cpp's strings).
const char* const kKimiK2Trigger = "\\p{Han}+";
const char* const kAfmoeDigits = "\\p{AFMoE_digits}";
const char* const kSuperBpeDigits = "(?=(\\d{3})+(?!\\d))";
const char* const kTinyAyaDigits = "\\d{1,3}(?=(?:\\d{3})*\\b)";

struct Entry {
    const char* type;
    std::vector<const char*> regexes;
    bool ignore_merges, clean_spaces, add_bos, bos_none;
    bool sentencepiece_style = false;  // byte_encode false, escape_whitespaces true
    bool newline_runs = false;
    bool raw_utf8 = false;  // byte_encode false only (whitespace)
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
    kSpark25T,
    kUfakzekaT,
    kTinyAyaT,
    kSuperBpeT,
    kKimiK2T,
    kAfmoeT,
    kWhitespaceT,
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
    {"spark2_5", {"\\p{N}{1,3}", kDeepseek3Cjk, kSpark25Main, "\\p{N}"}, false, false, false, false},
    {"ufakzeka", {kUfakzeka}, false, false, false, false},
    {"tiny_aya", {kTinyAyaDigits, kTinyAyaMain}, false, false, false, false},
    {"superbpe", {"\\p{N}+", kSuperBpeDigits}, false, false, false, false},
    {"kimi-k2", {kKimiK2Trigger}, false, false, false, false},
    {"afmoe", {kAfmoeDigits, kAfmoeCjk, kAfmoeMain}, false, false, false, false},
    // jina-embeddings-v2-base-zh; with tokenizer.ggml.model "whitespace" the text is first cut at whitespace
    {"whitespace", {"\\S+"}, false, true, false, false, false, false, true},
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
    {"spark2_5", kSpark25T, -1},
    {"hy_v4", kDeepseek3, -1},
    {"ufakzeka", kUfakzekaT, -1},
    {"tiny_aya", kTinyAyaT, -1},
    {"cohere2moe", kTinyAyaT, -1},
    {"superbpe", kSuperBpeT, -1},
    {"kimi-k2", kKimiK2T, -1},
    {"afmoe", kAfmoeT, -1},
    {"whitespace", kWhitespaceT, -1},
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
        out->byte_encode = !e.sentencepiece_style && !e.raw_utf8;
        out->escape_whitespaces = e.sentencepiece_style;
        out->newline_runs = e.newline_runs;
        out->lowercase = n.type != kWhitespaceT;
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

namespace ws {
namespace {

// The code points of one piece and their lengths in bytes.
struct CodePoints {
    const std::vector<uint32_t>& cp;
    const std::vector<uint8_t>& len;
    size_t size() const { return cp.size(); }
};

void decode(const char* text, size_t size, std::vector<uint32_t>* cps, std::vector<uint8_t>* lens) {
    cps->clear();
    lens->clear();
    const uint8_t* p = reinterpret_cast<const uint8_t*>(text);
    for (size_t i = 0; i < size;) {
        size_t len = 1;
        cps->push_back(unicode_next_lossy(p + i, size - i, &len));
        lens->push_back(uint8_t(len));
        i += len;
    }
}

// llama.cpp's unicode_cpt_flags, as the splitters test them.
bool is_letter(uint32_t cp) {
    const UnicodeCategory c = unicode_category(cp);
    return c >= UnicodeCategory::kLu && c <= UnicodeCategory::kLo;
}
bool is_number(uint32_t cp) {
    const UnicodeCategory c = unicode_category(cp);
    return c >= UnicodeCategory::kNd && c <= UnicodeCategory::kNo;
}
// flags.as_uint() != 0: llama.cpp gives unassigned code points (Cn) no flag at all.
bool has_flags(uint32_t cp) {
    return unicode_category(cp) != UnicodeCategory::kCn || unicode_is_white_space(cp);
}
bool is_ascii_digit(uint32_t cp) {
    return cp >= '0' && cp <= '9';
}
// std::wregex's \w in the C locale: [0-9A-Za-z_]
bool is_ascii_word(uint32_t cp) {
    return is_ascii_digit(cp) || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || cp == '_';
}

// llama.cpp's unicode_cpt_is_han: the CJK ideograph blocks (not Unicode's Script=Han, which adds U+3005, U+3007,
// the radicals and more, and lacks the blocks' unassigned code points).
bool is_han(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2EBEF) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Emits the pieces [prev, end) (code point indexes, increasing) of a piece that starts at byte `base`, skipping
// empty ones.
class Cutter {
public:
    Cutter(const CodePoints& cps, size_t base, std::vector<std::pair<size_t, size_t>>* out)
        : cps_(cps), byte_(base), out_(out) {}
    void cut(size_t end) {
        const size_t begin = byte_;
        for (; prev_ < end; ++prev_) byte_ += cps_.len[prev_];
        if (byte_ > begin) out_->push_back({begin, byte_});
    }

private:
    const CodePoints& cps_;
    size_t byte_;  // where the piece at prev_ starts
    std::vector<std::pair<size_t, size_t>>* out_;
    size_t prev_ = 0;
};

// unicode_regex_split_custom_kimi_k2. Its comment gives the K2 pattern (tokenization_kimi.py):
//   [\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}
//   \p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// but what the code does, and so what this does, is
//   H+|[^\r\n\p{L}\p{N}]?(?:(?!H)\p{L})+(?:'[sS]|'[tT]|'[mM]|'[dD]|'[rR][eE]|'[vV][eE]|'[lL][lL])?|\p{N}{1,3}|
//   ?[^\s\p{L}\p{N}\p{Cn}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+|[^]
// with H its Han blocks (is_han): a word is any run of letters (no case split: "HelloWorld" is one piece, no
// marks: a combining mark is punctuation), unassigned code points are no punctuation, and a code point nothing
// matches is a piece of its own.
void split_kimi_k2(const CodePoints& cps, Cutter* cut) {
    const size_t n = cps.size();
    auto cp_at = [&](size_t i) -> uint32_t { return i < n ? cps.cp[i] : 0xFFFFFFFFu; };
    auto word_letter = [&](size_t i) { return i < n && is_letter(cps.cp[i]) && !is_han(cps.cp[i]); };
    auto punct = [&](size_t i) {
        return i < n && !unicode_is_white_space(cps.cp[i]) && !is_letter(cps.cp[i]) && !is_number(cps.cp[i]) &&
               has_flags(cps.cp[i]);
    };
    for (size_t pos = 0; pos < n;) {
        const uint32_t cp = cps.cp[pos];
        if (is_han(cp)) {
            while (pos < n && is_han(cps.cp[pos])) ++pos;
            cut->cut(pos);
            continue;
        }
        const bool lead = !(cp == '\r' || cp == '\n' || is_letter(cp) || is_number(cp));
        if (word_letter(pos) || (lead && word_letter(pos + 1))) {
            if (lead) ++pos;
            while (word_letter(pos)) ++pos;
            if (cp_at(pos) == '\'' && pos + 1 < n) {
                const uint32_t c1 = unicode_to_lower(cps.cp[pos + 1]);
                if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
                    pos += 2;
                } else if (pos + 2 < n) {
                    const uint32_t c2 = unicode_to_lower(cps.cp[pos + 2]);
                    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) pos += 3;
                }
            }
            cut->cut(pos);
            continue;
        }
        if (is_number(cp)) {
            size_t run = 0;
            while (pos < n && is_number(cps.cp[pos])) {
                ++pos;
                if (++run == 3) {
                    cut->cut(pos);
                    run = 0;
                }
            }
            cut->cut(pos);
            continue;
        }
        if (punct(cp == ' ' ? pos + 1 : pos)) {
            pos += cp == ' ';
            while (punct(pos)) ++pos;
            while (cp_at(pos) == '\r' || cp_at(pos) == '\n') ++pos;
            cut->cut(pos);
            continue;
        }
        size_t spaces = 0, last_newline_end = 0;
        while (pos + spaces < n && unicode_is_white_space(cps.cp[pos + spaces])) {
            const uint32_t c = cps.cp[pos + spaces];
            ++spaces;
            if (c == '\r' || c == '\n') last_newline_end = pos + spaces;
        }
        if (last_newline_end > 0) {
            pos = last_newline_end;
        } else if (spaces > 1 && pos + spaces < n) {
            pos += spaces - 1;
        } else if (spaces > 0) {
            pos += spaces;
        } else {
            ++pos;
        }
        cut->cut(pos);
    }
}

// unicode_regex_split_custom_afmoe: a run of digits (\p{N}) is cut so that its first piece has 1 or 2 digits when
// its length is no multiple of 3 and the others 3. As in llama.cpp, the text before a run joins the run's first
// piece ("ab1234" gives "ab1", "234"), which the later regexes then split (it can matter: "a  1" keeps "  1"
// together for them, so \s+(?!\S) leaves the last space to the digit's side); the text after the last run is a piece.
void split_afmoe_digits(const CodePoints& cps, Cutter* cut) {
    const size_t n = cps.size();
    for (size_t pos = 0; pos < n;) {
        if (!is_number(cps.cp[pos])) {
            ++pos;
            continue;
        }
        const size_t start = pos;
        while (pos < n && is_number(cps.cp[pos])) ++pos;
        size_t at = start + (pos - start) % 3;
        if (at > start) cut->cut(at);
        for (; at < pos; at += 3) cut->cut(at + 3);
    }
    cut->cut(n);
}

// (?=(\d{3})+(?!\d)) with \d ASCII: empty matches where the rest of a digit run is a positive multiple of 3, so
// the run is cut in threes from its end (the gaps between the matches are the pieces).
void split_superbpe_digits(const CodePoints& cps, Cutter* cut) {
    const size_t n = cps.size();
    for (size_t pos = 0; pos < n;) {
        if (!is_ascii_digit(cps.cp[pos])) {
            ++pos;
            continue;
        }
        const size_t start = pos;
        while (pos < n && is_ascii_digit(cps.cp[pos])) ++pos;
        for (size_t at = start + (pos - start) % 3; at < pos; at += 3) cut->cut(at);
    }
    cut->cut(n);
}

// \d{1,3}(?=(?:\d{3})*\b) with \d and \b ASCII (std::wregex in the C locale): a run of digits followed by a
// non-word character or the end is matched as 1 to 3 digits, then threes; a run followed by a letter or '_' has
// no match (the look-ahead cannot reach a boundary), so it stays in the gap around it. Except at the start of the
// text, as libstdc++ (llama.cpp on Linux; checked against it in the tests) runs it: its first attempt, at the
// first character, runs the look-ahead with no character before it, so a \b right where the look-ahead starts
// holds when a word character follows. A run there of more than 3 digits starts with "123"; of 1 to 3 digits
// followed by a word character is matched whole; of 2 or 3 digits followed by a non-word character starts with
// all but its last digit; a single digit followed by a non-word character is not matched. The rest of the run
// is then matched as above.
void split_tiny_aya_digits(const CodePoints& cps, Cutter* cut) {
    const size_t n = cps.size();
    for (size_t pos = 0; pos < n;) {
        if (!is_ascii_digit(cps.cp[pos])) {
            ++pos;
            continue;
        }
        size_t start = pos;
        while (pos < n && is_ascii_digit(cps.cp[pos])) ++pos;
        const bool word_after = pos < n && is_ascii_word(cps.cp[pos]);
        if (start == 0) {
            const size_t first = pos > 3 ? 3 : word_after ? pos : pos - 1;
            if (first == 0) continue;
            cut->cut(first);
            start = first;
            if (start == pos) continue;
        }
        if (word_after) continue;
        cut->cut(start);
        size_t at = start + ((pos - start) % 3 == 0 ? 3 : (pos - start) % 3);
        cut->cut(at);
        for (; at < pos; at += 3) cut->cut(at + 3);
    }
    cut->cut(n);
}

}  // namespace

Status LlamaSplitter::init(const std::vector<const char*>& exprs) {
    steps_.clear();
    for (const char* expr : exprs) {
        Step step;
        if (std::strcmp(expr, kKimiK2Trigger) == 0) {
            step.kind = Kind::kKimiK2;
        } else if (std::strcmp(expr, kAfmoeDigits) == 0) {
            step.kind = Kind::kAfmoeDigits;
        } else if (std::strcmp(expr, kSuperBpeDigits) == 0) {
            step.kind = Kind::kSuperBpeDigits;
        } else if (std::strcmp(expr, kTinyAyaDigits) == 0) {
            step.kind = Kind::kTinyAyaDigits;
        } else {
            RegexOptions options;
            options.llama_categories = true;  // \p{..} as llama.cpp reads it (regex.h)
            Result<Regex> r = Regex::compile(expr, options);
            if (!r.ok()) return make_error(Error::kInternal, r.status().offset, "llama pre-tokenizer regex");
            step.regex = std::move(r).value();
        }
        steps_.push_back(std::move(step));
    }
    return ok_status();
}

void LlamaSplitter::split(const char* text, size_t size, std::vector<std::pair<size_t, size_t>>* pieces,
                          LlamaSplitScratch* scratch) const {
    pieces->clear();
    if (size > 0) pieces->push_back({0, size});
    std::vector<std::pair<size_t, size_t>>& next = scratch->next;
    for (const Step& step : steps_) {
        next.clear();
        for (const auto& pc : *pieces) {
            const char* base = text + pc.first;
            const size_t n = pc.second - pc.first;
            if (step.kind != Kind::kRegex) {
                decode(base, n, &scratch->cps, &scratch->lens);
                const CodePoints cps{scratch->cps, scratch->lens};
                Cutter cut(cps, pc.first, &next);
                switch (step.kind) {
                    case Kind::kKimiK2:
                        split_kimi_k2(cps, &cut);
                        break;
                    case Kind::kAfmoeDigits:
                        split_afmoe_digits(cps, &cut);
                        break;
                    case Kind::kSuperBpeDigits:
                        split_superbpe_digits(cps, &cut);
                        break;
                    case Kind::kTinyAyaDigits:
                        split_tiny_aya_digits(cps, &cut);
                        break;
                    case Kind::kRegex:
                        break;
                }
                continue;
            }
            size_t gap = 0, from = 0;
            RegexMatch m;
            while (from <= n && step.regex.find(base, n, from, &m, &scratch->regex)) {
                if (m.end == m.begin) {
                    // An empty match cuts the gap before it (llama.cpp's std::regex_iterator loop; an empty word
                    // gives no tokens); search on one code point further.
                    if (m.begin > gap) next.push_back({pc.first + gap, pc.first + m.begin});
                    gap = m.begin;
                    if (m.end >= n) break;
                    size_t len = 1;
                    while (m.end + len < n && (uint8_t(base[m.end + len]) & 0xC0) == 0x80) ++len;
                    from = m.end + len;
                    continue;
                }
                if (m.begin > gap) next.push_back({pc.first + gap, pc.first + m.begin});
                next.push_back({pc.first + m.begin, pc.first + m.end});
                gap = from = m.end;
                if (from >= n) break;
            }
            if (gap < n) next.push_back({pc.first + gap, pc.first + n});
        }
        pieces->swap(next);
    }
}

}  // namespace ws
