// SPDX-License-Identifier: MIT
// hf_vocab(): a checkpoint's tokenizer as convert_hf_to_gguf.py writes it (weightstream/hf_vocab.h says what is
// followed). The JSON files are parsed as ordered objects: Python's json keeps a file's key order (and the last
// of duplicate keys at the first one's place), and the order decides which entry wins.
#include "weightstream/hf_vocab.h"

#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/json_depth.h"
#include "weightstream/hf_bpe_vocab.h"
#include "weightstream/utf8.h"

namespace ws {
namespace {

using ojson = nlohmann::ordered_json;

// -1000 and -10000: the scores the converter gives added tokens and padding.
constexpr float kAddedScore = -1000.0f;
constexpr float kPadScore = -10000.0f;

const uint8_t* bytes_of(std::string_view v) {
    return reinterpret_cast<const uint8_t*>(v.data());
}

// Parses a JSON object file; `keep` (when given) names the only top-level keys built into the tree, so that a
// tokenizer.json's vocabulary and merges are skipped rather than built.
Status parse_object(std::string_view text, const char* what, ojson* out, std::initializer_list<const char*> keep = {}) {
    if (text.size() > kHfTokenizerFileMaxBytes) return make_error(Error::kTooLarge, 0, what);
    if (json_nests_deeper_than(text.data(), text.size(), kHfTokenizerJsonMaxDepth)) {
        return make_error(Error::kTooLarge, 0, what);
    }
    const bool filter = keep.size() > 0;
    ojson::parser_callback_t cb = [&](int depth, ojson::parse_event_t event, ojson& parsed) {
        if (!filter || event != ojson::parse_event_t::key || depth != 1) return true;
        for (const char* k : keep) {
            if (parsed == k) return true;
        }
        return false;
    };
    *out = ojson::parse(text.begin(), text.end(), cb, false);
    if (out->is_discarded() || !out->is_object()) return make_error(Error::kBadJson, 0, what);
    return ok_status();
}

// Python's truth value of a JSON value (token_data.get("special")).
bool truthy(const ojson& v) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer()) return v.get<int64_t>() != 0;
    if (v.is_number_float()) return v.get<double>() != 0;
    if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
    return false;
}

const ojson* member(const ojson& o, const char* key) {
    if (!o.is_object()) return nullptr;
    const auto it = o.find(key);
    return it == o.end() ? nullptr : &*it;
}

// An id as Python's isinstance(v, int) sees it: integers, and true / false as 1 / 0.
bool python_int(const ojson& v, int64_t* out) {
    if (v.is_boolean()) {
        *out = v.get<bool>() ? 1 : 0;
        return true;
    }
    if (v.is_number_integer()) {
        if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
            *out = INT64_MAX;
        else
            *out = v.get<int64_t>();
        return true;
    }
    return false;
}

// The converter's does_token_look_special(): texts some models mark as not special that are control tokens.
bool looks_special(std::string_view t) {
    auto starts = [&](std::string_view p) { return t.size() >= p.size() && t.substr(0, p.size()) == p; };
    auto ends = [&](std::string_view s) { return t.size() >= s.size() && t.substr(t.size() - s.size()) == s; };
    if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
    if (starts("<|") && ends("|>")) return true;
    // clang-format off
    if (starts("<\xEF\xBD\x9C") && ends("\xEF\xBD\x9C>")) return true;  // <｜ ... ｜> (deepseek-coder)
    // clang-format on
    return starts("<unused") && ends(">");
}

// U+2581 (SentencePiece's space) as a space: the converter pre-normalizes user-defined tokens so.
std::string lower_blocks_as_spaces(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s.compare(i, 3, "\xE2\x96\x81") == 0) {
            out += ' ';
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

Value u32_value(uint64_t v) {
    Value out;
    out.type = ValueType::kUint32;
    out.bits = v;
    return out;
}

void append(std::vector<MetadataEntry>* kv, std::string key, Value v) {
    MetadataEntry e;
    e.key = std::move(key);
    e.value = std::move(v);
    kv->push_back(std::move(e));
}

void append_string(std::vector<MetadataEntry>* kv, std::string key, std::string s) {
    Value v;
    v.type = ValueType::kString;
    v.str = std::move(s);
    append(kv, std::move(key), std::move(v));
}

void append_bool(std::vector<MetadataEntry>* kv, std::string key, bool b) {
    Value v;
    v.type = ValueType::kBool;
    v.bits = b ? 1 : 0;
    append(kv, std::move(key), std::move(v));
}

Value string_array(const std::vector<std::string>& items) {
    Value v;
    v.type = ValueType::kArray;
    v.item_type = ValueType::kString;
    v.length = items.size();
    v.strings = items;
    return v;
}

template <typename T>
Value scalar_array(ValueType type, const std::vector<T>& items) {
    static_assert(sizeof(T) == 4, "f32 and i32 items");
    Value v;
    v.type = ValueType::kArray;
    v.item_type = type;
    v.length = items.size();
    v.raw.resize(items.size() * 4);
    for (size_t i = 0; i < items.size(); ++i) {
        uint32_t bits;
        std::memcpy(&bits, &items[i], 4);
        for (int b = 0; b < 4; ++b) v.raw[i * 4 + b] = static_cast<uint8_t>(bits >> (8 * b));
    }
    return v;
}

// gguf-py's add_<type>_token_id handlers: the types it has a key for, and where each goes on a VocabTable.
struct IdKey {
    const char* type;
    const char* key;
    int32_t VocabTable::*field;
};
constexpr IdKey kIdKeys[] = {
    {"bos", "tokenizer.ggml.bos_token_id", &VocabTable::bos},
    {"eos", "tokenizer.ggml.eos_token_id", &VocabTable::eos},
    {"unk", "tokenizer.ggml.unknown_token_id", &VocabTable::unk},
    {"sep", "tokenizer.ggml.seperator_token_id", &VocabTable::sep},
    {"pad", "tokenizer.ggml.padding_token_id", &VocabTable::pad},
    {"mask", "tokenizer.ggml.mask_token_id", &VocabTable::mask},
    {"eot", "tokenizer.ggml.eot_token_id", &VocabTable::eot},
    {"eom", "tokenizer.ggml.eom_token_id", &VocabTable::eom},
};
struct AddKey {
    const char* type;
    const char* key;
    int8_t VocabTable::*field;
};
constexpr AddKey kAddKeys[] = {
    {"bos", "tokenizer.ggml.add_bos_token", &VocabTable::add_bos},
    {"eos", "tokenizer.ggml.add_eos_token", &VocabTable::add_eos},
    {"sep", "tokenizer.ggml.add_sep_token", &VocabTable::add_sep},
};

bool has_key(const std::vector<MetadataEntry>& kv, const std::string& key) {
    for (const MetadataEntry& e : kv) {
        if (e.key == key) return true;
    }
    return false;
}

// One SpecialVocab: what it resolved, in the order it set it (Python dicts keep insertion order).
struct Special {
    std::vector<std::string> types;
    std::vector<std::pair<std::string, int64_t>> ids;
    std::vector<std::pair<std::string, bool>> add;
    bool has_template = false;
    ojson chat_template;   // a string or a list of {name, template}
    int64_t n_vocab = -1;  // -1: no range check (SpecialVocab's n_vocab=None)

    bool has_type(const std::string& t) const {
        for (const std::string& x : types) {
            if (x == t) return true;
        }
        return false;
    }
    void set_add(const std::string& type, bool v) {
        for (auto& a : add) {
            if (a.first == type) {
                a.second = v;
                return;
            }
        }
        add.emplace_back(type, v);
    }
    // _set_special_token(): ints only; negative is an error; the first id set for a type stays.
    Status set_id(const std::string& type, const ojson* tid, const char* source, std::vector<std::string>* warnings) {
        int64_t id = 0;
        if (!tid || !python_int(*tid, &id)) return ok_status();
        if (id < 0) return make_error(Error::kBadKey, 0, source);
        if (n_vocab < 0 || id < n_vocab) {
            for (const auto& x : ids) {
                if (x.first == type) return ok_status();
            }
            ids.emplace_back(type, id);
            return ok_status();
        }
        warnings->push_back(std::string(source) + ": special token " + type + " id " + std::to_string(id) +
                            " is out of range (the vocabulary has " + std::to_string(n_vocab) +
                            " tokens): not written");
        return ok_status();
    }
};

// The parsed files SpecialVocab reads.
struct Parsed {
    ojson tokenizer;      // tokenizer.json: added_tokens, post_processor (null when absent)
    ojson config;         // tokenizer_config.json (null when absent)
    ojson model_config;   // config.json (null when absent)
    ojson template_json;  // chat_template.json (null when absent)
};

Status parse_files(const HfVocabFiles& files, Parsed* p) {
    if (!files.tokenizer.tokenizer_json.empty()) {
        WS_TRY(parse_object(files.tokenizer.tokenizer_json, "tokenizer.json", &p->tokenizer,
                            {"added_tokens", "post_processor", "normalizer"}));
    }
    if (!files.tokenizer.tokenizer_config.empty()) {
        WS_TRY(parse_object(files.tokenizer.tokenizer_config, "tokenizer_config.json", &p->config));
    }
    if (!files.config.empty()) WS_TRY(parse_object(files.config, "config.json", &p->model_config));
    if (!files.chat_template_json.empty()) {
        WS_TRY(parse_object(files.chat_template_json, "chat_template.json", &p->template_json));
    }
    if (files.chat_template_jinja.size() > kHfTokenizerFileMaxBytes) {
        return make_error(Error::kTooLarge, 0, "chat_template.jinja");
    }
    return ok_status();
}

// tokenizer.json's post_processor, as today's gguf-py reads it for add_bos / add_eos / add_sep (a crude reading of
// TemplateProcessing's single and pair templates; RobertaProcessing adds all three). May set tokenizer_config
// entries (bos_token from cls_token, eot_token when the template's last token is not the EOS), as gguf-py does.
void read_post_processor(const ojson& tokenizer, ojson* config, Special* s) {
    const bool have_config = config->is_object() && !config->empty();
    auto cfg = [&](const char* k) -> ojson {
        const ojson* v = member(*config, k);
        return v ? *v : ojson();
    };
    ojson special_bos = cfg("bos_token"), special_cls = cfg("cls_token");
    ojson special_eos = cfg("eos_token"), special_sep = cfg("sep_token");
    if (!truthy(special_bos) && truthy(special_cls) && have_config) (*config)["bos_token"] = special_bos = special_cls;
    if (!truthy(special_eos) && truthy(special_sep) && have_config) (*config)["eos_token"] = special_eos = special_sep;
    const ojson* post = member(tokenizer, "post_processor");
    if (!post || !truthy(*post) || !post->is_object()) return;
    std::vector<const ojson*> processors;
    const ojson* list = member(*post, "processors");
    if (list && list->is_array()) {
        for (const ojson& p : *list) processors.push_back(&p);
    } else if (!list) {
        processors.push_back(post);
    }
    auto special_id = [](const ojson& piece) -> ojson {
        const ojson* st = member(piece, "SpecialToken");
        const ojson* id = st ? member(*st, "id") : nullptr;
        return id ? *id : ojson();
    };
    auto seq_id = [](const ojson& piece) -> ojson {
        const ojson* st = member(piece, "Sequence");
        const ojson* id = st ? member(*st, "id") : nullptr;
        return id ? *id : ojson();
    };
    for (const ojson* proc : processors) {
        const ojson* type = member(*proc, "type");
        if (!type || !type->is_string()) continue;
        if (*type == "RobertaProcessing") {
            s->set_add("bos", true);
            s->set_add("eos", true);
            s->set_add("sep", true);
            if (!truthy(special_cls) && have_config) {
                const ojson* c = member(*proc, "cls");
                special_cls = c && c->is_array() && !c->empty() ? (*c)[0] : special_bos;
                (*config)["cls_token"] = special_cls;
            }
            if (!truthy(special_sep) && have_config) {
                const ojson* c = member(*proc, "sep");
                special_sep = c && c->is_array() && !c->empty() ? (*c)[0] : special_eos;
                (*config)["sep_token"] = special_sep;
            }
            continue;
        }
        if (*type != "TemplateProcessing") continue;
        const ojson* single = member(*proc, "single");
        const ojson* pair = member(*proc, "pair");
        ojson first, last;
        if (single && single->is_array() && single->size() > 1) {
            first = special_id(single->front());
            if (truthy(first)) {
                if (!have_config) special_bos = first;
                s->set_add("bos", first == special_bos || first == special_cls);
            }
            last = special_id(single->back());
            if (truthy(last)) {
                if (!have_config) {
                    special_eos = last;
                } else if (last != special_eos) {
                    if (!s->has_type("eot")) {
                        s->types.push_back("eot");
                        (*config)["eot_token"] = special_eos;
                    } else if (!s->has_type("eom")) {
                        s->types.push_back("eom");
                        (*config)["eom_token"] = special_eos;
                    }
                    (*config)["eos_token"] = special_eos = last;
                }
                s->set_add("eos", last == special_eos);
            }
        }
        if (!pair || !pair->is_array() || pair->empty()) continue;
        size_t start = truthy(first) && special_id(pair->front()) == first ? 1 : 0;
        size_t stop = truthy(last) && special_id(pair->back()) == last ? pair->size() - 1 : pair->size();
        if (stop <= start) continue;
        std::vector<const ojson*> mid;
        for (size_t i = start; i < stop; ++i) mid.push_back(&(*pair)[i]);
        if (seq_id(*mid.front()) != "A" || seq_id(*mid.back()) != "B" || mid.size() < 3) continue;
        // A [sep] [eos] B
        bool add_sep = false;
        const ojson e1 = special_id(*mid[1]);
        if (truthy(e1) && (e1 == special_sep || e1 == special_eos) && !truthy(last)) add_sep = true;
        if (mid.size() == 4) {
            const ojson e2 = special_id(*mid[2]);
            if (truthy(e2) && (e2 == special_sep || e2 == special_eos)) add_sep = true;
        }
        s->set_add("sep", add_sep);
        if (add_sep && !truthy(special_sep) && have_config) (*config)["sep_token"] = special_eos;
    }
}

// SpecialVocab._load(): tokenizer.json + tokenizer_config.json, then config.json.
Status load_special(const HfVocabFiles& files, Parsed* p, Special* s, std::vector<std::string>* warnings) {
    ojson added = ojson::array();
    if (!p->tokenizer.is_null()) {
        const ojson* a = member(p->tokenizer, "added_tokens");
        if (a && a->is_array()) added = *a;
        read_post_processor(p->tokenizer, &p->config, s);
    }
    if (p->config.is_object() && !p->config.empty()) {
        // The chat template: tokenizer_config.json's (even null) when it has the key, else chat_template.jinja,
        // else chat_template.json's chat_template.
        ojson alt;
        if (!files.chat_template_jinja.empty()) {
            alt = std::string(files.chat_template_jinja);
        } else if (const ojson* t = member(p->template_json, "chat_template")) {
            alt = *t;
        }
        const ojson* t = member(p->config, "chat_template");
        const ojson chat = t ? *t : alt;
        if (chat.is_string() || chat.is_array()) {
            s->has_template = true;
            s->chat_template = chat;
        } else if (!chat.is_null()) {
            warnings->push_back("tokenizer_config.json's chat_template is neither a string nor a list: ignored");
        }
        for (size_t k = 0; k < s->types.size(); ++k) {
            const std::string type = s->types[k];
            const ojson* add = member(p->config, ("add_" + type + "_token").c_str());
            if (add && add->is_boolean()) s->set_add(type, add->get<bool>());
            const ojson* entry = member(p->config, (type + "_token").c_str());
            if (!entry) continue;
            const ojson* content = entry->is_string() ? entry : member(*entry, "content");
            if (!content || !content->is_string()) continue;
            for (size_t i = 0; i < added.size(); ++i) {
                const ojson* c = member(added[i], "content");
                if (c && *c == *content) {
                    WS_TRY(s->set_id(type, member(added[i], "id"), "tokenizer.json.added_tokens", warnings));
                    break;
                }
            }
        }
    }
    if (p->model_config.is_object()) {
        const ojson* text_config = member(p->model_config, "text_config");
        for (const std::string& type : s->types) {
            const std::string key = type + "_token_id";
            const ojson* id = member(p->model_config, key.c_str());
            if ((!id || id->is_null()) && text_config) id = member(*text_config, key.c_str());
            WS_TRY(s->set_id(type, id, "config.json", warnings));
        }
    }
    return ok_status();
}

// SpecialVocab.add_to_gguf() without the merges: ids, add flags, chat template; onto the table too.
void write_special(const Special& s, bool with_template, VocabTable* table, std::vector<MetadataEntry>* out) {
    for (const auto& [type, id] : s.ids) {
        for (const IdKey& k : kIdKeys) {
            if (type == k.type && !has_key(*out, k.key)) {
                append(out, k.key, u32_value(static_cast<uint64_t>(id) & 0xffffffffull));
                table->*k.field = static_cast<int32_t>(id);
            }
        }
    }
    for (const auto& [type, v] : s.add) {
        for (const AddKey& k : kAddKeys) {
            if (type == k.type && !has_key(*out, k.key)) {
                append_bool(out, k.key, v);
                table->*k.field = v ? 1 : 0;
            }
        }
    }
    if (!with_template || !s.has_template) return;
    if (s.chat_template.is_string()) {
        append_string(out, "tokenizer.chat_template", s.chat_template.get<std::string>());
        table->chat_template = s.chat_template.get<std::string>();
        return;
    }
    // A list of {name, template}: named ones as tokenizer.chat_template.NAME (the name's characters outside
    // [A-Za-z0-9] as '_'), "default" as tokenizer.chat_template. gguf-py lists the names from a Python set, in no
    // fixed order; here they are in the file's order.
    std::vector<std::string> names;
    const ojson* def = nullptr;
    for (const ojson& choice : s.chat_template) {
        const ojson* n = member(choice, "name");
        const ojson* t = member(choice, "template");
        if (!n || !n->is_string() || !t || !t->is_string()) continue;
        std::string name = n->get<std::string>();
        for (char& c : name) {
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) c = '_';
        }
        if (name.empty()) continue;
        if (name == "default") {
            def = t;
        } else {
            const std::string key = "tokenizer.chat_template." + name;
            if (has_key(*out, key)) continue;
            names.push_back(name);
            append_string(out, key, t->get<std::string>());
        }
    }
    if (!names.empty()) append(out, "tokenizer.chat_templates", string_array(names));
    if (def) {
        append_string(out, "tokenizer.chat_template", def->get<std::string>());
        table->chat_template = def->get<std::string>();
    }
}

// A token id written as a JSON object key ("2000"): Python's int() of it; digits only here.
bool id_of_key(const std::string& key, int64_t* out) {
    if (key.empty() || key.size() > 18) return false;
    int64_t v = 0;
    for (char c : key) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
}

// _create_vocab_sentencepiece() (and Phi3MiniModel.set_vocab's variant, phi3 = true).
Status sentencepiece_table(const HfVocabFiles& files, const HfConfig& config, const Parsed& p, bool phi3, VocabTable* t,
                           std::vector<std::string>* warnings) {
    if (files.tokenizer.tokenizer_model.size() > kHfTokenizerFileMaxBytes) {
        return make_error(Error::kTooLarge, 0, "tokenizer.model");
    }
    Result<VocabTable> sp =
        sentencepiece_vocab(bytes_of(files.tokenizer.tokenizer_model), files.tokenizer.tokenizer_model.size());
    // The file named (the protobuf field is what sentencepiece_vocab() names); the offset stays its byte.
    if (!sp.ok()) return make_error(sp.status().code, sp.status().offset, "tokenizer.model");
    VocabTable& s = sp.value();
    const size_t n_sp = s.tokens.size();
    size_t vocab_size = n_sp;
    if (config.hparams.contains("vocab_size")) {
        const nlohmann::json& vs = config.hparams["vocab_size"];
        if (!vs.is_number_unsigned()) return make_error(Error::kBadKey, 0, "config.json.vocab_size");
        if (vs.get<uint64_t>() > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, "config.json.vocab_size");
        vocab_size = static_cast<size_t>(vs.get<uint64_t>());
    }
    // The converter indexes a list of vocab_size entries by the SentencePiece ids: more pieces than that fails.
    if (n_sp > vocab_size) return make_error(Error::kBadKey, vocab_size, "config.json.vocab_size");
    t->model = "llama";
    t->pre = "default";
    t->tokens.resize(vocab_size);
    t->scores.assign(vocab_size, kPadScore);
    t->token_types.assign(vocab_size, static_cast<int32_t>(TokenKind::kUnused));
    for (size_t i = 0; i < vocab_size; ++i) {
        if (i < n_sp) {
            t->tokens[i] = std::move(s.tokens[i]);
            t->scores[i] = s.scores[i];
            t->token_types[i] = s.token_types[i];
        } else {
            t->tokens[i] = "[PAD" + std::to_string(i) + "]";
        }
    }
    auto set = [&](size_t id, std::string text, TokenKind kind) {
        t->tokens[id] = std::move(text);
        t->scores[id] = kAddedScore;
        t->token_types[id] = static_cast<int32_t>(kind);
    };
    auto check_text = [](const ojson& v, const char* what, size_t index) -> Status {
        if (!v.is_string()) return make_error(Error::kBadJson, index, what);
        if (v.get_ref<const std::string&>().size() > kTokenizerMaxTokenBytes) {
            return make_error(Error::kTooLarge, index, what);
        }
        return ok_status();
    };
    if (!files.added_tokens.empty()) {
        ojson added;
        WS_TRY(parse_object(files.added_tokens, "added_tokens.json", &added));
        if (added.size() > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, "added_tokens.json");
        size_t index = 0;
        size_t ignored = 0;
        for (auto it = added.begin(); it != added.end(); ++it, ++index) {
            int64_t id = 0;
            if (!python_int(it.value(), &id) || id < 0) return make_error(Error::kBadKey, index, "added_tokens.json");
            if (it.key().size() > kTokenizerMaxTokenBytes)
                return make_error(Error::kTooLarge, index, "added_tokens.json");
            if (static_cast<uint64_t>(id) >= vocab_size) {
                ++ignored;
                continue;
            }
            set(static_cast<size_t>(id), it.key(), TokenKind::kUserDefined);
        }
        if (ignored > 0) {
            warnings->push_back("added_tokens.json: " + std::to_string(ignored) +
                                " token(s) with an id past config.json's vocab_size (" + std::to_string(vocab_size) +
                                ") ignored, as convert_hf_to_gguf.py ignores them");
        }
    }
    // added_tokens_decoder, and for Phi-3 tokenizer.json's added_tokens: ids must be in range (the converter fails).
    auto decoder_entry = [&](int64_t id, const ojson& data, const char* what, size_t index) -> Status {
        if (id < 0 || static_cast<uint64_t>(id) >= vocab_size) return make_error(Error::kBadKey, index, what);
        const ojson* content = member(data, "content");
        if (!content) return make_error(Error::kBadJson, index, what);
        WS_TRY(check_text(*content, what, index));
        std::string text = content->get<std::string>();
        const ojson* special = member(data, "special");
        const bool is_special = special && truthy(*special);
        if (phi3) {
            set(static_cast<size_t>(id), std::move(text), is_special ? TokenKind::kControl : TokenKind::kUserDefined);
        } else if (is_special || looks_special(text)) {
            set(static_cast<size_t>(id), std::move(text), TokenKind::kControl);
        } else {
            set(static_cast<size_t>(id), lower_blocks_as_spaces(text), TokenKind::kUserDefined);
        }
        return ok_status();
    };
    if (const ojson* decoder = member(p.config, "added_tokens_decoder")) {
        const char* what = "tokenizer_config.json.added_tokens_decoder";
        if (!decoder->is_object()) return make_error(Error::kBadJson, 0, what);
        if (decoder->size() > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, what);
        size_t index = 0;
        for (auto it = decoder->begin(); it != decoder->end(); ++it, ++index) {
            int64_t id = 0;
            if (!id_of_key(it.key(), &id)) return make_error(Error::kBadKey, index, what);
            WS_TRY(decoder_entry(id, it.value(), what, index));
        }
    }
    if (phi3) {
        if (const ojson* added = member(p.tokenizer, "added_tokens")) {
            const char* what = "tokenizer.json.added_tokens";
            if (!added->is_array()) return make_error(Error::kBadJson, 0, what);
            if (added->size() > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, what);
            for (size_t i = 0; i < added->size(); ++i) {
                const ojson* id = member((*added)[i], "id");
                int64_t v = 0;
                if (!id || !python_int(*id, &v)) return make_error(Error::kBadKey, i, what);
                WS_TRY(decoder_entry(v, (*added)[i], what, i));
            }
        }
    }
    return ok_status();
}

bool is_family(const std::string& f, std::initializer_list<const char*> names) {
    for (const char* n : names) {
        if (f == n) return true;
    }
    return false;
}

// _set_vocab_gpt2(): hf_bpe_vocab.h's table (model, pre, tokens, types), then gguf-py's SpecialVocab with merges.
Result<HfVocab> gpt2_vocab(const HfVocabFiles& files, const HfConfig& config, const std::string& name,
                           std::string* chkhsh) {
    int64_t vocab_size = -1;
    const auto v = config.hparams.find("vocab_size");
    if (v != config.hparams.end() && v->is_number_integer()) vocab_size = v->get<int64_t>();
    Result<VocabTable> table = hf_gpt2_vocab(files.tokenizer, vocab_size, chkhsh);
    if (!table.ok()) {
        const Status& s = table.status();
        // A token id not below config.json's vocab_size: the contradiction the SentencePiece path names so too.
        if (s.code == Error::kBadKey && std::strcmp(s.what, "config.vocab_size") == 0) {
            return make_error(Error::kBadKey, s.offset, "config.json.vocab_size");
        }
        return s;
    }
    HfVocab out;
    out.table = std::move(table).value();
    out.table.name = name;
    out.metadata = hf_vocab_entries(out.table);
    WS_TRY(hf_special_vocab(files, &out.table, &out.metadata, &out.warnings));
    return out;
}

}  // namespace

std::string_view* hf_vocab_file_slot(HfVocabFiles* files, std::string_view name) {
    if (name == "tokenizer.json") return &files->tokenizer.tokenizer_json;
    if (name == "tokenizer_config.json") return &files->tokenizer.tokenizer_config;
    if (name == "tokenizer.model") return &files->tokenizer.tokenizer_model;
    if (name == "added_tokens.json") return &files->added_tokens;
    if (name == "chat_template.jinja") return &files->chat_template_jinja;
    if (name == "chat_template.json") return &files->chat_template_json;
    if (name == "config.json") return &files->config;
    return nullptr;
}

std::vector<MetadataEntry> hf_vocab_entries(const VocabTable& table) {
    std::vector<MetadataEntry> out;
    append_string(&out, "tokenizer.ggml.model", table.model);
    append_string(&out, "tokenizer.ggml.pre", table.pre.empty() ? "default" : table.pre);
    append(&out, "tokenizer.ggml.tokens", string_array(table.tokens));
    if (!table.scores.empty()) append(&out, "tokenizer.ggml.scores", scalar_array(ValueType::kFloat32, table.scores));
    append(&out, "tokenizer.ggml.token_type", scalar_array(ValueType::kInt32, table.token_types));
    return out;
}

Status hf_special_vocab(const HfVocabFiles& files, VocabTable* table, std::vector<MetadataEntry>* entries,
                        std::vector<std::string>* warnings) {
    Parsed p;
    WS_TRY(parse_files(files, &p));
    Special s;
    s.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    s.n_vocab = static_cast<int64_t>(table->tokens.size());
    WS_TRY(load_special(files, &p, &s, warnings));
    if (!table->merges.empty()) append(entries, "tokenizer.ggml.merges", string_array(table->merges));
    write_special(s, true, table, entries);
    return ok_status();
}

Result<HfVocab> hf_vocab(const HfVocabFiles& files, const HfConfig& config, const std::string& name,
                         std::string* chkhsh) {
    Parsed p;
    WS_TRY(parse_files(files, &p));
    const std::string& family = config.family;
    const bool phi3 = family == "phi3";
    // Phi-4 ships a GPT-2 tokenizer under the phi3 architecture.
    const ojson* cls = phi3 ? member(p.config, "tokenizer_class") : nullptr;
    if (files.tokenizer.tokenizer_model.empty() || (cls && *cls == "GPT2Tokenizer")) {
        if (files.tokenizer.tokenizer_json.empty()) return make_error(Error::kUnsupported, 0, "tokenizer.model");
        return gpt2_vocab(files, config, name, chkhsh);
    }
    HfVocab out;
    VocabTable& t = out.table;
    WS_TRY(sentencepiece_table(files, config, p, phi3, &t, &out.warnings));
    t.name = name;
    out.metadata = hf_vocab_entries(t);

    Special s;
    s.types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    s.n_vocab = static_cast<int64_t>(t.tokens.size());
    {
        Parsed mine = p;  // SpecialVocab may rewrite tokenizer_config entries as it reads the post_processor
        WS_TRY(load_special(files, &mine, &s, &out.warnings));
    }
    write_special(s, true, &t, &out.metadata);

    auto fixed_ids = [&](std::initializer_list<const char*> types,
                         std::initializer_list<std::pair<const char*, int64_t>> ids) -> Status {
        // A second SpecialVocab over the same files for these types (no range check), then the fixed ids where
        // the files set none. gguf-py has keys for eot only of these; the others are not written.
        Special f;
        for (const char* x : types) f.types.push_back(x);
        Parsed again = p;
        WS_TRY(load_special(files, &again, &f, &out.warnings));
        for (const auto& [type, id] : ids) {
            const ojson v = id;
            WS_TRY(f.set_id(type, &v, "convert_hf_to_gguf.py", &out.warnings));
        }
        f.add.clear();
        write_special(f, false, &t, &out.metadata);
        return ok_status();
    };
    if (family == "gemma") {
        WS_TRY(fixed_ids({"prefix", "suffix", "middle", "fsep", "eot"},
                         {{"prefix", 67}, {"suffix", 69}, {"middle", 68}, {"fsep", 70}, {"eot", 107}}));
    }
    const auto vocab_size = config.hparams.find("vocab_size");
    if (family == "llama" && vocab_size != config.hparams.end() && *vocab_size == 32016) {
        // CodeLlama.
        WS_TRY(fixed_ids({"prefix", "suffix", "middle", "eot"},
                         {{"prefix", 32007}, {"suffix", 32008}, {"middle", 32009}, {"eot", 32010}}));
    }
    if (family == "llama") {
        if (const ojson* prefix = member(p.config, "add_prefix_space")) {
            append_bool(&out.metadata, "tokenizer.ggml.add_space_prefix", truthy(*prefix));
            t.add_space_prefix = truthy(*prefix) ? 1 : 0;
        }
    }
    if (is_family(family, {"gemma", "gemma2", "gemma3"})) {
        append_bool(&out.metadata, "tokenizer.ggml.add_space_prefix", false);
        t.add_space_prefix = 0;
    }
    return out;
}

}  // namespace ws

namespace ws {

// clang-format off
const char* const kHfVocabCheckText =
    "Hello, world! The quick brown fox jumps over the lazy dog. It's 2025: 3.14159, 1,000,000 and -42.\n"
    "Caf\xC3\xA9 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9 \xC2\xA1Hola! \xC3\x9C" "ber Stra\xC3\x9F" "e und Gr\xC3\xB6\xC3\x9F" "e.\n"
    "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80! "
    "\xCE\x93\xCE\xB5\xCE\xB9\xCE\xAC \xCF\x83\xCE\xBF\xCF\x85 \xCE\xBA\xCF\x8C\xCF\x83\xCE\xBC\xCE\xB5. "
    "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xD8\xA8\xD8\xA7\xD9\x84\xD8\xB9\xD8\xA7\xD9\x84\xD9\x85 "
    "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87\n"
    "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xE3\x80\x82 "
    "\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF\xE4\xB8\x96\xE7\x95\x8C "
    "\xEC\x95\x88\xEB\x85\x95\xED\x95\x98\xEC\x84\xB8\xEC\x9A\x94 \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD\n"
    "def f(x):\n\treturn x  *  2   # spaces\n\n\n   indented    text\r\nend";
// clang-format on

std::string hf_vocab_check(const HfVocab& vocab, const HfVocabFiles& files) {
    Result<std::unique_ptr<Tokenizer>> written = llama_tokenizer(vocab.table);
    if (!written.ok()) {
        return std::string("the written tokenizer could not be made (") + error_name(written.status().code) + ": " +
               written.status().what + "): not checked";
    }
    Result<std::unique_ptr<Tokenizer>> source = hf_files_tokenizer(files.tokenizer);
    if (!source.ok()) {
        return std::string("the source tokenizer could not be made (") + error_name(source.status().code) + ": " +
               source.status().what + "): not checked";
    }
    const TokenizeOptions options;
    std::vector<int32_t> a, b;
    const Status sa = written.value()->tokenize(kHfVocabCheckText, options, &a);
    const Status sb = source.value()->tokenize(kHfVocabCheckText, options, &b);
    if (!sa.ok() || !sb.ok()) {
        const Status& s = sa.ok() ? sb : sa;
        return std::string("the ") + (sa.ok() ? "source" : "written") + " tokenizer failed on the check text (" +
               error_name(s.code) + ": " + s.what + ")";
    }
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    if (i == a.size() && i == b.size()) return std::string();
    auto show = [](const Tokenizer& t, const std::vector<int32_t>& ids, size_t k) {
        if (k >= ids.size()) return std::string("(end)");
        return std::to_string(ids[k]) + " '" + utf8_replace_invalid(std::string(t.piece(ids[k])).substr(0, 40)) + "'";
    };
    return "the written tokenizer and the source's differ on the check text at token " + std::to_string(i) +
           ": written " + show(*written.value(), a, i) + ", source " + show(*source.value(), b, i) + " (" +
           std::to_string(a.size()) + " and " + std::to_string(b.size()) + " tokens)";
}

}  // namespace ws
