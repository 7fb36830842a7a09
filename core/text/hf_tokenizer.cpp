// SPDX-License-Identifier: MIT
// hf_tokenizer(): a Hugging Face tokenizer.json as the Rust `tokenizers` crate runs it (TokenizerImpl::encode):
// added tokens split out of the raw text (AddedVocabulary, leftmost-longest), each remaining section normalized,
// added tokens split out of the normalized text, pre-tokenized, run through the model; then the post-processor's
// special tokens. Decoding maps ids to token strings and runs the decoder chain.
#include <algorithm>
#include <cstring>

#include "base/json_depth.h"
#include "text/hf_components.h"
#include "text/hf_models.h"
#include "text/hf_tokenizer_json.h"
#include "weightstream/tokenizer.h"
#include "weightstream/unicode.h"
#include "weightstream/utf8.h"

namespace ws {
namespace {

using hf::field;

constexpr uint32_t kTokenizerJsonMaxDepth = 64;

// The added tokens of one matching pass: a byte trie, leftmost-longest. Matching costs O(text x the longest
// token) at worst (a token that almost matches everywhere), which hf::kMaxAddedTokenBytes bounds.
class AddedTrie {
public:
    AddedTrie() { std::fill(root_, root_ + 256, -1); }
    void insert(const std::string& s, int32_t token) {
        if (s.empty()) return;
        int32_t node = -1;
        for (size_t i = 0; i < s.size(); ++i) {
            const uint8_t b = uint8_t(s[i]);
            int32_t* link = node < 0 ? &root_[b] : &nodes_[size_t(node)].child;
            int32_t found = -1;
            if (node < 0) {
                found = *link;
            } else {
                for (int32_t c = *link; c >= 0; c = nodes_[size_t(c)].sibling) {
                    if (nodes_[size_t(c)].byte == b) {
                        found = c;
                        break;
                    }
                }
            }
            if (found < 0) {
                found = int32_t(nodes_.size());
                Node fresh;
                fresh.byte = b;
                if (node < 0) {
                    root_[b] = found;
                } else {
                    fresh.sibling = nodes_[size_t(node)].child;
                    nodes_[size_t(node)].child = found;
                }
                nodes_.push_back(fresh);
            }
            node = found;
        }
        nodes_[size_t(node)].token = token;  // the last of equal contents wins
    }
    bool empty() const { return nodes_.empty(); }
    // The leftmost-longest match at or after `from`: its token, begin and end; false when none.
    bool find(const char* s, size_t n, size_t from, int32_t* token, size_t* begin, size_t* end) const {
        for (size_t i = from; i < n; ++i) {
            int32_t node = root_[uint8_t(s[i])];
            int32_t best = -1;
            size_t best_end = 0;
            for (size_t k = i + 1; node >= 0; ++k) {
                if (nodes_[size_t(node)].token >= 0) {
                    best = nodes_[size_t(node)].token;
                    best_end = k;
                }
                if (k >= n) break;
                const uint8_t b = uint8_t(s[k]);
                int32_t next = -1;
                for (int32_t c = nodes_[size_t(node)].child; c >= 0; c = nodes_[size_t(c)].sibling) {
                    if (nodes_[size_t(c)].byte == b) {
                        next = c;
                        break;
                    }
                }
                node = next;
            }
            if (best >= 0) {
                *token = best;
                *begin = i;
                *end = best_end;
                return true;
            }
        }
        return false;
    }

private:
    struct Node {
        int32_t child = -1, sibling = -1, token = -1;
        uint8_t byte = 0;
    };
    int32_t root_[256];
    std::vector<Node> nodes_;
};

struct AddedToken {
    std::string content;
    int32_t id = 0;
    bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = false;
};

bool is_word_char(uint32_t cp) {
    if (cp == '_') return true;
    const UnicodeCategory c = unicode_category(cp);
    return (c >= UnicodeCategory::kLu && c <= UnicodeCategory::kLo) ||
           (c >= UnicodeCategory::kNd && c <= UnicodeCategory::kNo);
}

// A section of a text: an added token's id, or text [begin, end) (id -1).
struct Section {
    int32_t token;
    uint32_t begin, end;
};

class HfTokenizer final : public Tokenizer {
public:
    Status load(const nlohmann::json& tok, const hf::StagedModel& staged, const nlohmann::json* config);

    Status tokenize(std::string_view text, const TokenizeOptions& options, std::vector<int32_t>* ids) const override;
    Status detokenize(const int32_t* ids, size_t count, const DetokenizeOptions& options,
                      std::string* text) const override;
    Status token_text(int32_t id, std::string* text) const override {
        if (id < 0 || size_t(id) >= pieces_.size()) return make_error(Error::kBadKey, 0, "id");
        std::vector<std::string> tokens(1, std::string(pieces_[size_t(id)]));
        if (has_decoder_) hf::decode_chain(decoder_, &tokens, /*middle=*/true);
        for (const std::string& t : tokens) *text += t;  // none left when CTC drops the token (its pad)
        return ok_status();
    }
    size_t size() const override { return pieces_.size(); }
    std::string_view piece(int32_t id) const override {
        return id >= 0 && size_t(id) < pieces_.size() ? pieces_[size_t(id)] : std::string_view();
    }
    TokenKind kind(int32_t id) const override {
        return id >= 0 && size_t(id) < kinds_.size() ? TokenKind(kinds_[size_t(id)]) : TokenKind::kUndefined;
    }
    std::string description() const override { return std::string("hf:") + model_.name(); }

private:
    struct Scratch {
        std::string section;
        hf::NormalizeScratch norm;
        hf::PreTokenizeScratch pre;
        hf::Pieces pieces;
        hf::ModelScratch model;
        std::vector<Section> inner;
    };
    Status load_added(const nlohmann::json& list);
    Status load_post_processor(const nlohmann::json& j, int depth, std::vector<int32_t>* prefix,
                               std::vector<int32_t>* suffix);
    void split_added(const AddedTrie& trie, const char* s, size_t n, bool parse_special,
                     std::vector<Section>* out) const;
    void encode_plain(const char* s, size_t n, bool at_start, bool parse_special, Scratch* sc,
                      std::vector<int32_t>* ids) const;

    hf::Model model_;
    bool has_normalizer_ = false, has_pre_ = false, has_decoder_ = false;
    hf::Normalizer normalizer_;
    hf::PreTokenizer pre_;
    hf::Decoder decoder_;
    std::vector<int32_t> prefix_, suffix_;  // the post-processor's special tokens around a single sequence
    std::vector<AddedToken> added_;
    AddedTrie raw_trie_, normalized_trie_;
    bool cleanup_ = false;
    std::vector<std::string_view> pieces_;
    std::vector<uint8_t> kinds_;
    std::vector<uint8_t> special_;  // per id: a special added token
};

Status HfTokenizer::load_added(const nlohmann::json& list) {
    if (!list.is_array()) return make_error(Error::kBadJson, 0, "added_tokens");
    if (list.size() > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, "added_tokens");
    added_.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
        const nlohmann::json& a = list[i];
        const nlohmann::json* content = field(a, "content");
        const nlohmann::json* id = field(a, "id");
        if (!content || !content->is_string() || !id || !id->is_number_integer()) {
            return make_error(Error::kBadJson, i, "added_tokens.entry");
        }
        const int64_t x = id->get<int64_t>();
        if (x < 0 || uint64_t(x) >= kTokenizerMaxTokens) return make_error(Error::kBadKey, i, "added_tokens.id");
        AddedToken t;
        t.content = content->get<std::string>();
        if (t.content.size() > hf::kMaxAddedTokenBytes) return make_error(Error::kTooLarge, i, "added_tokens.content");
        t.id = int32_t(x);
        t.special = hf::bool_field(a, "special", false);
        t.single_word = hf::bool_field(a, "single_word", false);
        t.lstrip = hf::bool_field(a, "lstrip", false);
        t.rstrip = hf::bool_field(a, "rstrip", false);
        t.normalized = hf::bool_field(a, "normalized", !t.special);
        added_.push_back(std::move(t));
    }
    return ok_status();
}

Status HfTokenizer::load_post_processor(const nlohmann::json& j, int depth, std::vector<int32_t>* prefix,
                                        std::vector<int32_t>* suffix) {
    if (depth > hf::kMaxComponentDepth) return make_error(Error::kTooLarge, 0, "post_processor.depth");
    if (!j.is_object()) return make_error(Error::kBadJson, 0, "post_processor");
    const std::string type = hf::string_field(j, "type");
    auto pair_id = [](const nlohmann::json* p, int32_t* id) {
        if (!p || !p->is_array() || p->size() != 2 || !(*p)[1].is_number_integer()) return false;
        const int64_t x = (*p)[1].get<int64_t>();
        if (x < 0 || uint64_t(x) >= kTokenizerMaxTokens) return false;
        *id = int32_t(x);
        return true;
    };
    if (type == "ByteLevel") return ok_status();  // offsets only
    if (type == "BertProcessing" || type == "RobertaProcessing") {
        int32_t cls = 0, sep = 0;
        if (!pair_id(field(j, "cls"), &cls) || !pair_id(field(j, "sep"), &sep)) {
            return make_error(Error::kBadJson, 0, "post_processor.cls");
        }
        prefix->push_back(cls);
        suffix->push_back(sep);
        return ok_status();
    }
    if (type == "Sequence") {
        const nlohmann::json* list = field(j, "processors");
        if (!list || !list->is_array()) return make_error(Error::kBadJson, 0, "post_processor.processors");
        for (const nlohmann::json& p : *list) {
            // Each processor wraps what the ones before it produced.
            std::vector<int32_t> pre, suf;
            WS_TRY(load_post_processor(p, depth + 1, &pre, &suf));
            prefix->insert(prefix->begin(), pre.begin(), pre.end());
            suffix->insert(suffix->end(), suf.begin(), suf.end());
        }
        return ok_status();
    }
    if (type == "TemplateProcessing") {
        const nlohmann::json* single = field(j, "single");
        const nlohmann::json* specials = field(j, "special_tokens");
        if (!single || !single->is_array()) return make_error(Error::kUnsupported, 0, "post_processor.single");
        bool after = false;
        for (const nlohmann::json& item : *single) {
            if (const nlohmann::json* seq = field(item, "Sequence")) {
                if (hf::string_field(*seq, "id") == "A") after = true;
                continue;
            }
            const nlohmann::json* st = field(item, "SpecialToken");
            if (!st) return make_error(Error::kBadJson, 0, "post_processor.single.item");
            const std::string name = hf::string_field(*st, "id");
            const nlohmann::json* entry = specials ? field(*specials, name.c_str()) : nullptr;
            const nlohmann::json* list = entry ? field(*entry, "ids") : nullptr;
            if (!list || !list->is_array()) return make_error(Error::kBadKey, 0, "post_processor.special_tokens");
            for (const nlohmann::json& v : *list) {
                if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
                    uint64_t(v.get<int64_t>()) >= kTokenizerMaxTokens) {
                    return make_error(Error::kBadKey, 0, "post_processor.special_tokens.ids");
                }
                (after ? suffix : prefix)->push_back(int32_t(v.get<int64_t>()));
            }
        }
        return ok_status();
    }
    return make_error(Error::kUnsupported, 0, "post_processor.type");
}

Status HfTokenizer::load(const nlohmann::json& tok, const hf::StagedModel& staged, const nlohmann::json* config) {
    if (!tok.is_object()) return make_error(Error::kBadJson, 0, "tokenizer.json");
    const nlohmann::json* model = field(tok, "model");
    if (!model) return make_error(Error::kBadJson, 0, "model");
    WS_TRY(model_.load(*model, staged));
    if (const nlohmann::json* n = field(tok, "normalizer"); n && !n->is_null()) {
        WS_TRY(hf::normalizer_from_json(*n, &normalizer_));
        has_normalizer_ = true;
    }
    if (const nlohmann::json* p = field(tok, "pre_tokenizer"); p && !p->is_null()) {
        WS_TRY(hf::pre_tokenizer_from_json(*p, &pre_));
        has_pre_ = true;
    }
    if (const nlohmann::json* d = field(tok, "decoder"); d && !d->is_null()) {
        WS_TRY(hf::decoder_from_json(*d, &decoder_));
        has_decoder_ = true;
    }
    if (const nlohmann::json* p = field(tok, "post_processor"); p && !p->is_null()) {
        WS_TRY(load_post_processor(*p, 0, &prefix_, &suffix_));
    }
    // "truncation" and "padding" shape batches for a model's input; a tokenizer of whole texts leaves them out, as
    // transformers does unless a call asks for them (and the JavaScript port always).
    if (const nlohmann::json* a = field(tok, "added_tokens"); a && !a->is_null()) WS_TRY(load_added(*a));

    // The matching sets: tokens that are special or not normalized match the raw text; the others match the
    // normalized text, as their content normalized (AddedVocabulary::refresh_added_tokens; the JavaScript port
    // puts them with the raw ones when there is no normalizer, which matches the same).
    hf::NormalizeScratch ns;
    for (size_t i = 0; i < added_.size(); ++i) {
        const AddedToken& t = added_[i];
        if (t.normalized && has_normalizer_) {
            std::string c = t.content;
            hf::normalize(normalizer_, &c, &ns);
            normalized_trie_.insert(c, int32_t(i));
        } else {
            raw_trie_.insert(t.content, int32_t(i));
        }
    }

    // The token table: the model's vocabulary, then the added tokens over it.
    size_t n = 0;
    model_.vocab().for_each([&](std::string_view, int32_t id) { n = std::max(n, size_t(id) + 1); });
    for (const AddedToken& t : added_) n = std::max(n, size_t(t.id) + 1);
    for (int32_t id : prefix_) n = std::max(n, size_t(id) + 1);
    for (int32_t id : suffix_) n = std::max(n, size_t(id) + 1);
    if (n > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, "vocab");
    // The id table is as long as the largest id: ids far past the number of tokens (a few bytes of JSON naming id
    // 4,000,000) would make it out of proportion to the file. Real vocabularies are dense.
    if (n > 2 * (model_.vocab().size() + added_.size()) + 1024)
        return make_error(Error::kBadKey, 0, "vocab.sparse_ids");
    pieces_.assign(n, std::string_view());
    kinds_.assign(n, uint8_t(TokenKind::kUndefined));
    special_.assign(n, 0);
    model_.vocab().for_each([&](std::string_view s, int32_t id) {
        pieces_[size_t(id)] = s;
        TokenKind k = TokenKind::kNormal;
        if (id == model_.unk_id()) {
            k = TokenKind::kUnknown;
        } else if (model_.byte_fallback() && s.size() == 6 && s.compare(0, 3, "<0x") == 0 && s[5] == '>') {
            k = TokenKind::kByte;
        }
        kinds_[size_t(id)] = uint8_t(k);
    });
    for (const AddedToken& t : added_) {
        pieces_[size_t(t.id)] = t.content;
        // The model's unknown token stays kUnknown when it is also a special added token (Gemma's <unk>).
        if (t.id != model_.unk_id())
            kinds_[size_t(t.id)] = uint8_t(t.special ? TokenKind::kControl : TokenKind::kUserDefined);
        special_[size_t(t.id)] = t.special;
    }
    for (int32_t id : prefix_) {
        if (pieces_[size_t(id)].empty()) return make_error(Error::kBadKey, 0, "post_processor.special_tokens.ids");
    }
    for (int32_t id : suffix_) {
        if (pieces_[size_t(id)].empty()) return make_error(Error::kBadKey, 0, "post_processor.special_tokens.ids");
    }

    // tokenizer_config.json: transformers' decode cleans up spaces before punctuation unless told not to (the
    // JavaScript port's default too).
    if (config) cleanup_ = hf::bool_field(*config, "clean_up_tokenization_spaces", true);
    return ok_status();
}

void HfTokenizer::split_added(const AddedTrie& trie, const char* s, size_t n, bool parse_special,
                              std::vector<Section>* out) const {
    // AddedVocabulary::find_matches: leftmost-longest matches; a special token is text when specials are not
    // parsed (the crate's encode_special_tokens); single_word needs no word character on either side; lstrip and
    // rstrip take the whitespace beside the token into it.
    size_t start_offset = 0, from = 0;
    int32_t index = 0;
    size_t b = 0, e = 0;
    while (!trie.empty() && trie.find(s, n, from, &index, &b, &e)) {
        from = e;
        const AddedToken& t = added_[size_t(index)];
        if (t.special && !parse_special) continue;
        if (t.single_word) {
            bool word_before = false, word_after = false;
            if (b > 0) {
                size_t p = b - 1;
                while (p > 0 && (uint8_t(s[p]) & 0xC0) == 0x80) --p;
                size_t len = 0;
                word_before = is_word_char(hf::next_cp(s, n, p, &len));
            }
            if (e < n) {
                size_t len = 0;
                word_after = is_word_char(hf::next_cp(s, n, e, &len));
            }
            if (word_before || word_after) continue;
        }
        if (t.lstrip) {
            size_t nb = b;
            while (nb > 0) {
                size_t p = nb - 1;
                while (p > 0 && (uint8_t(s[p]) & 0xC0) == 0x80) --p;
                size_t len = 0;
                if (!unicode_is_white_space(hf::next_cp(s, n, p, &len))) break;
                nb = p;
            }
            b = std::max(nb, start_offset);
        }
        if (t.rstrip) {
            while (e < n) {
                size_t len = 0;
                if (!unicode_is_white_space(hf::next_cp(s, n, e, &len))) break;
                e += len;
            }
            from = e;
        }
        if (b > start_offset) out->push_back({-1, uint32_t(start_offset), uint32_t(b)});
        out->push_back({t.id, uint32_t(b), uint32_t(e)});
        start_offset = e;
    }
    if (start_offset < n) out->push_back({-1, uint32_t(start_offset), uint32_t(n)});
}

void HfTokenizer::encode_plain(const char* s, size_t n, bool at_start, bool parse_special, Scratch* sc,
                               std::vector<int32_t>* ids) const {
    sc->section.assign(s, n);
    if (has_normalizer_) hf::normalize(normalizer_, &sc->section, &sc->norm);
    std::vector<Section>& inner = sc->inner;
    inner.clear();
    split_added(normalized_trie_, sc->section.data(), sc->section.size(), parse_special, &inner);
    for (const Section& part : inner) {
        if (part.token >= 0) {
            ids->push_back(part.token);
            continue;
        }
        hf::Pieces& p = sc->pieces;
        p.text.assign(sc->section, part.begin, part.end - part.begin);
        p.pieces.assign(1, hf::Piece{0, uint32_t(p.text.size()), at_start && part.begin == 0});
        if (has_pre_) hf::pre_tokenize(pre_, &p, &sc->pre);
        for (const hf::Piece& piece : p.pieces) {
            model_.tokenize(p.text.data() + piece.begin, piece.end - piece.begin, &sc->model, ids);
        }
    }
}

Status HfTokenizer::tokenize(std::string_view text, const TokenizeOptions& options, std::vector<int32_t>* ids) const {
    if (text.size() > UINT32_MAX / 4) return make_error(Error::kTooLarge, 0, "text");
    // Hugging Face tokenizes Unicode strings: ill-formed bytes become U+FFFD first, as a JavaScript or Python
    // string made from them would hold (one per maximal subpart).
    std::string clean;
    if (!utf8_valid(text.data(), text.size())) {
        hf::append_utf8_lossy(text.data(), text.size(), &clean);
        text = clean;
    }
    Scratch sc;
    if (options.add_special && options.add_bos) ids->insert(ids->end(), prefix_.begin(), prefix_.end());
    std::vector<Section> sections;
    split_added(raw_trie_, text.data(), text.size(), options.parse_special, &sections);
    for (const Section& s : sections) {
        if (s.token >= 0) {
            ids->push_back(s.token);
        } else if (s.end > s.begin) {
            encode_plain(text.data() + s.begin, s.end - s.begin, s.begin == 0, options.parse_special, &sc, ids);
        }
    }
    if (options.add_special) ids->insert(ids->end(), suffix_.begin(), suffix_.end());
    return ok_status();
}

Status HfTokenizer::detokenize(const int32_t* ids, size_t count, const DetokenizeOptions& options,
                               std::string* text) const {
    for (size_t i = 0; i < count; ++i) {
        if (ids[i] < 0 || size_t(ids[i]) >= pieces_.size()) return make_error(Error::kBadKey, i, "id");
    }
    size_t first = 0, last = count;
    if (options.remove_special) {
        // The post-processor's own tokens at either end.
        for (size_t k = 0; k < prefix_.size() && first < last && ids[first] == prefix_[k]; ++k) ++first;
        for (size_t k = suffix_.size(); k-- > 0 && last > first && ids[last - 1] == suffix_[k];) --last;
    }
    std::vector<std::string> tokens;
    tokens.reserve(last - first);
    for (size_t i = first; i < last; ++i) {
        const size_t id = size_t(ids[i]);
        if (!options.unparse_special && special_[id]) continue;  // skip_special_tokens
        tokens.emplace_back(pieces_[id]);
    }
    std::string out;
    if (has_decoder_) {
        hf::decode_chain(decoder_, &tokens);
        for (const std::string& t : tokens) out += t;
    } else {
        for (size_t i = 0; i < tokens.size(); ++i) {
            if (i) out.push_back(' ');
            out += tokens[i];
        }
    }
    if (cleanup_) hf::clean_up_tokenization(&out);
    *text += out;
    return ok_status();
}

Status parse_json(const uint8_t* data, size_t size, const char* what, nlohmann::json* out) {
    const char* text = reinterpret_cast<const char*>(data);
    if (json_nests_deeper_than(text, size, kTokenizerJsonMaxDepth)) return make_error(Error::kTooLarge, 0, what);
    *out = nlohmann::json::parse(text, text + size, nullptr, false);
    if (out->is_discarded() || !out->is_object()) return make_error(Error::kBadJson, 0, what);
    return ok_status();
}

// Reads tokenizer.json in one pass of nlohmann's SAX parser: a JSON tree of everything but model.vocab and
// model.merges, which go straight into a StagedModel (no tree node per token or merge).
class TokenizerJsonReader {
public:
    using json = nlohmann::json;
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    json root;
    hf::StagedModel staged;
    Status error;  // set when a staged list is malformed (the parse stops)

    bool null() { return value(json(nullptr)); }
    bool boolean(bool v) { return value(json(v)); }
    bool number_integer(number_integer_t v) {
        return mode_ == Mode::kDom ? value(json(v)) : staged_number(double(v), true);
    }
    bool number_unsigned(number_unsigned_t v) {
        return mode_ == Mode::kDom ? value(json(v)) : staged_number(double(v), true);
    }
    bool number_float(number_float_t v, const string_t&) {
        return mode_ == Mode::kDom ? value(json(v)) : staged_number(v, false);
    }
    bool string(string_t& v) {
        if (mode_ == Mode::kDom) return value(json(std::move(v)));
        return staged_string(v);
    }
    bool binary(binary_t&) { return fail(Error::kBadJson, "tokenizer.json"); }
    bool start_object(std::size_t) {
        if (mode_ != Mode::kDom) return staged_container(true);
        if (depth_ == 2 && in_model_ && (key_ == "vocab")) {
            enter(Mode::kVocabObject);
            staged_.vocab_form = hf::StagedModel::VocabForm::kObject;
            return true;
        }
        return open(json::object());
    }
    bool key(string_t& k) {
        if (mode_ == Mode::kVocabObject && depth_ == mode_depth_) {
            pending_ = staged_.add(k);
            return true;
        }
        if (mode_ != Mode::kDom) return fail(Error::kBadJson, mode_what());
        key_ = k;
        return true;
    }
    bool end_object() {
        if (mode_ != Mode::kDom) return staged_end();
        return close();
    }
    bool start_array(std::size_t) {
        if (mode_ != Mode::kDom) return staged_container(false);
        if (depth_ == 2 && in_model_ && key_ == "vocab") {
            enter(Mode::kVocabPairs);
            staged_.vocab_form = hf::StagedModel::VocabForm::kPairs;
            return true;
        }
        if (depth_ == 2 && in_model_ && key_ == "merges") {
            enter(Mode::kMerges);
            staged_.has_merges = true;
            return true;
        }
        return open(json::array());
    }
    bool end_array() {
        if (mode_ != Mode::kDom) return staged_end();
        return close();
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
        if (error.ok()) error = make_error(Error::kBadJson, position, "tokenizer.json");
        return false;
    }

    // After the parse: the staged lists belong to the model object.
    void finish() { staged = std::move(staged_); }

private:
    enum class Mode : uint8_t { kDom, kVocabObject, kVocabPairs, kMerges };

    const char* mode_what() const {
        return mode_ == Mode::kMerges       ? "model.merges.entry"
               : mode_ == Mode::kVocabPairs ? "model.vocab.entry"
                                            : "model.vocab";
    }
    bool fail(Error code, const char* what) {
        if (error.ok()) error = make_error(code, item_, what);
        return false;
    }
    void enter(Mode m) {
        mode_ = m;
        ++depth_;
        mode_depth_ = depth_;
        item_ = 0;
        // A second "vocab" or "merges" key replaces the first, as in a JSON object.
        if (m == Mode::kMerges) {
            staged_.merges.clear();
        } else {
            staged_.vocab.clear();
        }
    }
    // A value inside a staged list.
    bool staged_number(double v, bool integer) {
        if (mode_ == Mode::kVocabObject && depth_ == mode_depth_) {
            if (!integer) return fail(Error::kBadKey, "model.vocab.id");
            if (staged_.vocab.size() >= kTokenizerMaxTokens) return fail(Error::kTooLarge, "model.vocab");
            staged_.vocab.push_back({pending_, v});
            ++item_;
            return true;
        }
        if (mode_ == Mode::kVocabPairs && depth_ == mode_depth_ + 1 && entry_fields_ == 1) {
            score_ = v;
            ++entry_fields_;
            return true;
        }
        return fail(mode_ == Mode::kVocabObject ? Error::kBadKey : Error::kBadJson, mode_what());
    }
    bool staged_string(const std::string& v) {
        if (mode_ == Mode::kMerges && depth_ == mode_depth_) {
            // "a b": exactly one space (the crate's legacy form); "#version" lines are comments.
            ++item_;
            if (v.compare(0, 8, "#version") == 0) return true;
            const size_t sp = v.find(' ');
            if (sp == std::string::npos || v.find(' ', sp + 1) != std::string::npos) {
                --item_;
                return fail(Error::kBadJson, "model.merges.entry");
            }
            if (staged_.merges.size() >= kTokenizerMaxMerges) return fail(Error::kTooLarge, "model.merges");
            const hf::StagedModel::Str all = staged_.add(v);
            staged_.merges.push_back({{all.offset, uint32_t(sp)},
                                      {all.offset + uint32_t(sp) + 1, all.length - uint32_t(sp) - 1},
                                      uint32_t(item_ - 1)});
            return true;
        }
        if (mode_ == Mode::kMerges && depth_ == mode_depth_ + 1 && entry_fields_ < 2) {
            parts_[entry_fields_++] = staged_.add(v);
            return true;
        }
        if (mode_ == Mode::kVocabPairs && depth_ == mode_depth_ + 1 && entry_fields_ == 0) {
            parts_[0] = staged_.add(v);
            ++entry_fields_;
            return true;
        }
        if (mode_ == Mode::kVocabObject) return fail(Error::kBadKey, "model.vocab.id");
        return fail(Error::kBadJson, mode_what());
    }
    bool staged_container(bool object) {
        // Only the entries of [[a, b], ...] and [[piece, score], ...] open arrays inside a staged list.
        if (object || depth_ != mode_depth_ || mode_ == Mode::kVocabObject) {
            return fail(mode_ == Mode::kVocabObject ? Error::kBadKey : Error::kBadJson, mode_what());
        }
        ++depth_;
        entry_fields_ = 0;
        return true;
    }
    bool staged_end() {
        if (depth_ == mode_depth_) {
            // The list ends.
            --depth_;
            mode_ = Mode::kDom;
            // The tree keeps a placeholder, so that a model object without the key is told apart.
            return true;
        }
        // An entry ends.
        --depth_;
        if (entry_fields_ != 2) return fail(Error::kBadJson, mode_what());
        if (mode_ == Mode::kMerges) {
            if (staged_.merges.size() >= kTokenizerMaxMerges) return fail(Error::kTooLarge, "model.merges");
            staged_.merges.push_back({parts_[0], parts_[1], uint32_t(item_)});
        } else {
            if (staged_.vocab.size() >= kTokenizerMaxTokens) return fail(Error::kTooLarge, "model.vocab");
            staged_.vocab.push_back({parts_[0], score_});
        }
        ++item_;
        return true;
    }

    bool value(json v) {
        if (stack_.empty()) {
            root = std::move(v);
            return true;
        }
        json& top = *stack_.back();
        if (top.is_array()) {
            top.push_back(std::move(v));
        } else {
            top[key_] = std::move(v);
        }
        return true;
    }
    bool open(json container) {
        const bool entering_model = depth_ == 1 && key_ == "model" && container.is_object();
        json* child;
        if (stack_.empty()) {
            root = std::move(container);
            child = &root;
        } else if (stack_.back()->is_array()) {
            stack_.back()->push_back(std::move(container));
            child = &stack_.back()->back();
        } else {
            child = &(*stack_.back())[key_];
            *child = std::move(container);
        }
        stack_.push_back(child);
        ++depth_;
        if (entering_model) {
            in_model_ = true;
            staged_ = hf::StagedModel();
        }
        return true;
    }
    bool close() {
        if (depth_ == 2 && in_model_) in_model_ = false;
        stack_.pop_back();
        --depth_;
        return true;
    }

    std::vector<json*> stack_;
    std::string key_;
    uint32_t depth_ = 0;
    bool in_model_ = false;
    Mode mode_ = Mode::kDom;
    uint32_t mode_depth_ = 0;
    uint64_t item_ = 0;
    int entry_fields_ = 0;
    hf::StagedModel::Str parts_[2] = {};
    hf::StagedModel::Str pending_ = {};
    double score_ = 0;
    hf::StagedModel staged_;
};

Status read_into(const uint8_t* data, size_t size, TokenizerJsonReader* reader) {
    const char* text = reinterpret_cast<const char*>(data);
    if (json_nests_deeper_than(text, size, kTokenizerJsonMaxDepth)) {
        return make_error(Error::kTooLarge, 0, "tokenizer.json.depth");
    }
    const bool parsed =
        nlohmann::json::sax_parse(text, text + size, reader, nlohmann::json::input_format_t::json, true);
    if (!reader->error.ok()) return reader->error;
    if (!parsed || !reader->root.is_object()) return make_error(Error::kBadJson, 0, "tokenizer.json");
    reader->finish();
    return ok_status();
}

}  // namespace

namespace hf {

Status read_tokenizer_json(const uint8_t* data, size_t size, TokenizerJson* out) {
    TokenizerJsonReader reader;
    WS_TRY(read_into(data, size, &reader));
    out->root = std::move(reader.root);
    out->staged = std::move(reader.staged);
    return ok_status();
}

Status parse_json_object(const uint8_t* data, size_t size, const char* what, nlohmann::json* out) {
    return parse_json(data, size, what, out);
}

Result<std::unique_ptr<Tokenizer>> hf_tokenizer_from(const TokenizerJson& tok, const nlohmann::json* config) {
    auto t = std::make_unique<HfTokenizer>();
    WS_TRY(t->load(tok.root, tok.staged, config));
    return std::unique_ptr<Tokenizer>(std::move(t));
}

}  // namespace hf

Result<std::unique_ptr<Tokenizer>> hf_tokenizer(const uint8_t* tokenizer_json, size_t tokenizer_json_size,
                                                const uint8_t* config_json, size_t config_json_size) {
    nlohmann::json config;
    if (config_json_size > 0) WS_TRY(parse_json(config_json, config_json_size, "tokenizer_config.json", &config));
    hf::TokenizerJson tok;
    WS_TRY(hf::read_tokenizer_json(tokenizer_json, tokenizer_json_size, &tok));
    // The tree and the staged lists go when this returns, before the tokenizer is used: only its compact tables stay.
    return hf::hf_tokenizer_from(tok, config_json_size > 0 ? &config : nullptr);
}

Result<std::unique_ptr<Tokenizer>> hf_files_tokenizer(const HfTokenizerFiles& files) {
    auto bytes = [](std::string_view v) { return reinterpret_cast<const uint8_t*>(v.data()); };
    if (!files.tokenizer_json.empty()) {
        return hf_tokenizer(bytes(files.tokenizer_json), files.tokenizer_json.size(), bytes(files.tokenizer_config),
                            files.tokenizer_config.size());
    }
    if (files.tokenizer_model.empty()) return make_error(Error::kUnsupported, 0, "tokenizer.json or tokenizer.model");
    Result<VocabTable> table = sentencepiece_vocab(bytes(files.tokenizer_model), files.tokenizer_model.size());
    if (!table.ok()) return table.status();
    // The slow (SentencePiece) tokenizers of transformers add the BOS and EOS tokenizer_config.json asks for; the
    // converter writes the same flags (add_bos_token / add_eos_token) into the GGUF.
    if (!files.tokenizer_config.empty()) {
        nlohmann::json config;
        WS_TRY(
            parse_json(bytes(files.tokenizer_config), files.tokenizer_config.size(), "tokenizer_config.json", &config));
        for (auto [key, flag] : {std::pair<const char*, int8_t*>{"add_bos_token", &table.value().add_bos},
                                 std::pair<const char*, int8_t*>{"add_eos_token", &table.value().add_eos}}) {
            const auto it = config.find(key);
            if (it != config.end() && it->is_boolean()) *flag = it->get<bool>() ? 1 : 0;
        }
    }
    return llama_tokenizer(std::move(table).value());
}

}  // namespace ws
