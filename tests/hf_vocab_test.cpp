// SPDX-License-Identifier: MIT
// hf_vocab() and hf_general_metadata(): what convert_hf_to_gguf.py and gguf-py write for a checkpoint's tokenizer
// and general.* (the whole files are checked byte for byte against the converter's in cli_convert_test; these
// check the rules one by one, and the refusals).
#include "weightstream/hf_vocab.h"

#include <catch2/catch.hpp>
#include <string>

#include "support/test_util.h"
#include "weightstream/hf_general.h"

using namespace ws_test;

namespace {

std::string text_of(const std::vector<uint8_t>& v) {
    return std::string(v.begin(), v.end());
}

const ws::MetadataEntry* find(const std::vector<ws::MetadataEntry>& kv, const std::string& key) {
    for (const ws::MetadataEntry& e : kv) {
        if (e.key == key) return &e;
    }
    return nullptr;
}

std::vector<std::string> keys(const std::vector<ws::MetadataEntry>& kv) {
    std::vector<std::string> out;
    for (const ws::MetadataEntry& e : kv) out.push_back(e.key);
    return out;
}

ws::HfConfig config_of(const std::string& text) {
    ws::Result<ws::HfConfig> c = ws::parse_hf_config(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    REQUIRE(c.ok());
    return c.value();
}

// The tiny-llama-spm checkpoint's files (../shared/testdata/convert), held for the views.
struct LlamaFiles {
    std::string model = text_of(read_file(shared_path("convert/tiny-llama-spm/tokenizer.model")));
    std::string tokenizer_config = text_of(read_file(shared_path("convert/tiny-llama-spm/tokenizer_config.json")));
    std::string config = text_of(read_file(shared_path("convert/tiny-llama-spm/config.json")));
    ws::HfVocabFiles files() const {
        ws::HfVocabFiles f;
        f.tokenizer.tokenizer_model = model;
        f.tokenizer.tokenizer_config = tokenizer_config;
        f.config = config;
        return f;
    }
};

}  // namespace

TEST_CASE("hf_vocab writes the SentencePiece path's keys in the converter's order, with its types") {
    LlamaFiles l;
    ws::Result<ws::HfVocab> v = ws::hf_vocab(l.files(), config_of(l.config), "Tiny Llama Spm");
    REQUIRE(v.ok());
    CHECK(keys(v.value().metadata) ==
          std::vector<std::string>{"tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
                                   "tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.bos_token_id",
                                   "tokenizer.ggml.eos_token_id", "tokenizer.ggml.add_bos_token",
                                   "tokenizer.ggml.add_eos_token", "tokenizer.chat_template"});
    const ws::VocabTable& t = v.value().table;
    CHECK(t.model == "llama");
    CHECK(t.tokens.size() == 2000);
    CHECK(t.tokens[3] == "<|user|>");
    CHECK(t.token_types[3] == int32_t(ws::TokenKind::kNormal));  // SentencePiece's USER_DEFINED, written NORMAL
    CHECK(t.bos == 1);
    CHECK(t.eos == 2);
    CHECK(t.unk == -1);  // SpecialVocab does not read tokenizer.model's ids
    CHECK(t.add_bos == 1);
    CHECK(t.name == "Tiny Llama Spm");
    CHECK(ws::hf_vocab_check(v.value(), l.files()).empty());
}

TEST_CASE("hf_vocab pads to config.json's vocab_size and applies added tokens as the converter does") {
    LlamaFiles l;
    ws::HfVocabFiles f = l.files();
    const std::string config =
        "{\"model_type\": \"llama\", \"vocab_size\": 2003, \"eos_token_id\": 2002, \"pad_token_id\": 5000}";
    const std::string added = "{\"<extra>\": 2000, \"<far>\": 9999, \"<again>\": 2000}";
    const std::string tc =
        "{\"added_tokens_decoder\": {\"2001\": {\"content\": \"a\\u2581b\", \"special\": false},"
        " \"2002\": {\"content\": \"<|end|>\"}}, \"add_bos_token\": false}";
    f.config = config;
    f.added_tokens = added;
    f.tokenizer.tokenizer_config = tc;
    ws::Result<ws::HfVocab> v = ws::hf_vocab(f, config_of(config), "x");
    REQUIRE(v.ok());
    const ws::VocabTable& t = v.value().table;
    REQUIRE(t.tokens.size() == 2003);
    CHECK(t.tokens[2000] == "<again>");  // the last of two names for one id
    CHECK(t.token_types[2000] == int32_t(ws::TokenKind::kUserDefined));
    CHECK(t.scores[2000] == -1000.0f);
    CHECK(t.tokens[2001] == "a b");  // a user-defined token's U+2581 is a space
    CHECK(t.token_types[2001] == int32_t(ws::TokenKind::kUserDefined));
    CHECK(t.tokens[2002] == "<|end|>");  // looks special: CONTROL
    CHECK(t.token_types[2002] == int32_t(ws::TokenKind::kControl));
    CHECK(t.eos == 2002);
    CHECK(t.pad == -1);  // 5000 is out of range: skipped, with a warning
    CHECK(t.add_bos == 0);
    bool warned_far = false, warned_pad = false;
    for (const std::string& w : v.value().warnings) {
        warned_far = warned_far || w.find("added_tokens.json: 1 token(s)") != std::string::npos;
        warned_pad = warned_pad || w.find("pad id 5000 is out of range") != std::string::npos;
    }
    CHECK(warned_far);
    CHECK(warned_pad);
    // Padding past the SentencePiece pieces: [PADi], -10000, UNUSED (none here: all three are added tokens).
    const std::string bigger = "{\"model_type\": \"llama\", \"vocab_size\": 2002}";
    f.added_tokens = {};
    f.tokenizer.tokenizer_config = {};
    ws::Result<ws::HfVocab> p = ws::hf_vocab(f, config_of(bigger), "x");
    REQUIRE(p.ok());
    CHECK(p.value().table.tokens[2001] == "[PAD2001]");
    CHECK(p.value().table.scores[2001] == -10000.0f);
    CHECK(p.value().table.token_types[2001] == int32_t(ws::TokenKind::kUnused));
}

TEST_CASE("hf_vocab reads SpecialVocab's post_processor, tokenizer.json's added tokens and chat template files") {
    LlamaFiles l;
    ws::HfVocabFiles f = l.files();
    const std::string tj =
        "{\"added_tokens\": [{\"id\": 1, \"content\": \"<s>\"}, {\"id\": 2, \"content\": \"</s>\"},"
        " {\"id\": 0, \"content\": \"<unk>\"}], \"model\": {\"vocab\": {}},"
        " \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}},"
        " {\"Sequence\": {\"id\": \"A\"}}, {\"SpecialToken\": {\"id\": \"</s>\"}}]}}";
    const std::string tc = "{\"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"unk_token\": {\"content\": \"<unk>\"}}";
    f.tokenizer.tokenizer_json = tj;
    f.tokenizer.tokenizer_config = tc;
    f.chat_template_jinja = "{{ messages }}";
    f.config = "{}";
    ws::Result<ws::HfVocab> v = ws::hf_vocab(f, config_of("{\"model_type\": \"llama\"}"), "x");
    REQUIRE(v.ok());
    const ws::VocabTable& t = v.value().table;
    CHECK(t.bos == 1);
    CHECK(t.eos == 2);
    CHECK(t.unk == 0);
    CHECK(t.add_bos == 1);
    CHECK(t.add_eos == 1);
    CHECK(t.chat_template == "{{ messages }}");
    // The template names the ids in the order they were set: bos, eos, unk.
    const std::vector<std::string> k = keys(v.value().metadata);
    CHECK(std::vector<std::string>(k.begin() + 5, k.end()) ==
          std::vector<std::string>{"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                   "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.add_bos_token",
                                   "tokenizer.ggml.add_eos_token", "tokenizer.chat_template"});
    // tokenizer_config.json's own chat_template wins over the .jinja file; a list becomes named templates.
    const std::string tc2 =
        "{\"chat_template\": [{\"name\": \"default\", \"template\": \"D\"},"
        " {\"name\": \"tool use\", \"template\": \"T\"}]}";
    f.tokenizer.tokenizer_config = tc2;
    ws::Result<ws::HfVocab> w = ws::hf_vocab(f, config_of("{\"model_type\": \"llama\"}"), "x");
    REQUIRE(w.ok());
    REQUIRE(find(w.value().metadata, "tokenizer.chat_template.tool_use"));
    CHECK(find(w.value().metadata, "tokenizer.chat_template.tool_use")->value.str == "T");
    CHECK(find(w.value().metadata, "tokenizer.chat_templates")->value.strings == std::vector<std::string>{"tool_use"});
    CHECK(w.value().table.chat_template == "D");
}

TEST_CASE("hf_vocab: Gemma's fixed EOT id and add_space_prefix false; the gpt2 path is left to its caller") {
    const std::string model = text_of(read_file(shared_path("convert/tiny-gemma/tokenizer.model")));
    const std::string config = text_of(read_file(shared_path("convert/tiny-gemma/config.json")));
    ws::HfVocabFiles f;
    f.tokenizer.tokenizer_model = model;
    f.config = config;
    ws::Result<ws::HfVocab> v = ws::hf_vocab(f, config_of(config), "Tiny Gemma");
    REQUIRE(v.ok());
    const std::vector<std::string> k = keys(v.value().metadata);
    CHECK(k.back() == "tokenizer.ggml.add_space_prefix");
    CHECK(k[k.size() - 2] == "tokenizer.ggml.eot_token_id");
    CHECK(v.value().table.eot == 107);
    CHECK(v.value().table.model == "llama");  // a Unigram model, written as the converter writes it
    CHECK(v.value().table.add_space_prefix == 0);

    ws::HfVocabFiles bpe;
    bpe.tokenizer.tokenizer_json = "{\"model\": {\"type\": \"BPE\"}}";
    ws::Result<ws::HfVocab> u = ws::hf_vocab(bpe, config_of("{\"model_type\": \"qwen2\"}"), "x");
    REQUIRE_FALSE(u.ok());
    CHECK(u.status().code == ws::Error::kUnsupported);
    CHECK(std::string(u.status().what) == "tokenizer.json");
}

TEST_CASE("hf_vocab refuses tokenizer files that contradict config.json or are malformed") {
    LlamaFiles l;
    struct Case {
        std::string config, added, tokenizer_config;
        ws::Error code;
        const char* what;
    };
    const std::string base = "{\"model_type\": \"llama\", \"vocab_size\": 2000}";
    const Case cases[] = {
        {"{\"model_type\": \"llama\", \"vocab_size\": 1999}", "", "", ws::Error::kBadKey, "config.json.vocab_size"},
        {"{\"model_type\": \"llama\", \"vocab_size\": -1}", "", "", ws::Error::kBadKey, "config.json.vocab_size"},
        {"{\"model_type\": \"llama\", \"vocab_size\": 100000000}", "", "", ws::Error::kTooLarge,
         "config.json.vocab_size"},
        {base, "{\"a\": -1}", "", ws::Error::kBadKey, "added_tokens.json"},
        {base, "{\"a\": 1.5}", "", ws::Error::kBadKey, "added_tokens.json"},
        {base, "[]", "", ws::Error::kBadJson, "added_tokens.json"},
        {base, "{\"a\": ", "", ws::Error::kBadJson, "added_tokens.json"},
        {base, "", "{\"added_tokens_decoder\": {\"2000\": {\"content\": \"x\"}}}", ws::Error::kBadKey,
         "tokenizer_config.json.added_tokens_decoder"},
        {base, "", "{\"added_tokens_decoder\": {\"-1\": {\"content\": \"x\"}}}", ws::Error::kBadKey,
         "tokenizer_config.json.added_tokens_decoder"},
        {base, "", "{\"added_tokens_decoder\": {\"1\": {}}}", ws::Error::kBadJson,
         "tokenizer_config.json.added_tokens_decoder"},
        {base, "", "{\"added_tokens_decoder\": []}", ws::Error::kBadJson, "tokenizer_config.json.added_tokens_decoder"},
        {base, "", "{\"bos_token_id\": 1}", ws::Error::kOk, ""},
        {"{\"model_type\": \"llama\", \"bos_token_id\": -3}", "", "", ws::Error::kBadKey, "config.json"},
        {base, "", std::string(200, '[') + std::string(200, ']'), ws::Error::kTooLarge, "tokenizer_config.json"},
    };
    for (const Case& c : cases) {
        INFO(c.config << " " << c.added << " " << c.tokenizer_config);
        ws::HfVocabFiles f;
        f.tokenizer.tokenizer_model = l.model;
        f.config = c.config;
        f.added_tokens = c.added;
        f.tokenizer.tokenizer_config = c.tokenizer_config;
        ws::Result<ws::HfVocab> v = ws::hf_vocab(f, config_of(c.config), "x");
        if (c.code == ws::Error::kOk) {
            CHECK(v.ok());
            continue;
        }
        REQUIRE_FALSE(v.ok());
        CHECK(v.status().code == c.code);
        CHECK(std::string(v.status().what) == c.what);
    }
    // A token text over kTokenizerMaxTokenBytes.
    ws::HfVocabFiles f = l.files();
    const std::string added = "{\"" + std::string(ws::kTokenizerMaxTokenBytes + 1, 'a') + "\": 5}";
    f.added_tokens = added;
    ws::Result<ws::HfVocab> v = ws::hf_vocab(f, config_of(base), "x");
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().code == ws::Error::kTooLarge);
}

TEST_CASE("hf_vocab_check names the first token where the written tokenizer and the source's differ") {
    LlamaFiles l;
    ws::Result<ws::HfVocab> v = ws::hf_vocab(l.files(), config_of(l.config), "x");
    REQUIRE(v.ok());
    CHECK(ws::hf_vocab_check(v.value(), l.files()).empty());
    // The source is another tokenizer.model (the gemma checkpoint's): the check sees the difference.
    const std::string gemma = text_of(read_file(shared_path("convert/tiny-gemma/tokenizer.model")));
    ws::HfVocabFiles other = l.files();
    other.tokenizer.tokenizer_model = gemma;
    const std::string said = ws::hf_vocab_check(v.value(), other);
    CHECK(said.find("the written tokenizer and the source's differ on the check text at token ") == 0);
}

TEST_CASE("hf_general_metadata: general.name and the rest from the folder's name, size_label from the count") {
    ws::HfConfig c = config_of("{\"model_type\": \"llama\"}");
    std::vector<ws::TensorInfo> tensors(1);
    tensors[0].name = "token_embd.weight";
    tensors[0].n_elements = 8030261248ull;
    auto kv = ws::hf_general_metadata("Meta-Llama-3-8B-Instruct", c, tensors);
    CHECK(keys(kv) == std::vector<std::string>{"general.type", "general.name", "general.finetune", "general.basename",
                                               "general.size_label"});
    CHECK(find(kv, "general.name")->value.str == "Meta Llama 3 8B Instruct");
    CHECK(find(kv, "general.finetune")->value.str == "Instruct");
    CHECK(find(kv, "general.basename")->value.str == "Meta-Llama-3");
    CHECK(find(kv, "general.size_label")->value.str == "8B");
    kv = ws::hf_general_metadata("tiny-llama-spm", c, tensors);
    CHECK(keys(kv) == std::vector<std::string>{"general.type", "general.name", "general.size_label"});
    CHECK(find(kv, "general.name")->value.str == "Tiny Llama Spm");
    CHECK(find(kv, "general.size_label")->value.str == "8.0B");
    // _name_or_path (a model id) comes first.
    c = config_of("{\"model_type\": \"qwen2\", \"_name_or_path\": \"Qwen/Qwen2.5-7B-Instruct\"}");
    kv = ws::hf_general_metadata("x", c, tensors);
    CHECK(find(kv, "general.name")->value.str == "Qwen2.5 7B Instruct");
    CHECK(find(kv, "general.organization")->value.str == "Qwen");
    CHECK(find(kv, "general.basename")->value.str == "Qwen2.5");
    CHECK(find(kv, "general.size_label")->value.str == "7B");

    CHECK(ws::hf_size_label(329984, 0, 0, 0) == "330K");
    CHECK(ws::hf_size_label(1235814400, 0, 0, 0) == "1.2B");
    CHECK(ws::hf_size_label(494032768, 0, 0, 0) == "494M");
    CHECK(ws::hf_size_label(70553706496ull, 0, 0, 0) == "71B");
    CHECK(ws::hf_size_label(0, 1000000000, 6000000000ull, 8) == "8x7.0B");
}
