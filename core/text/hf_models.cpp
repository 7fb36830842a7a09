// SPDX-License-Identifier: MIT
// Hugging Face models: BPE (models/bpe/model.rs: merge_word + Word::merge_all, which is bpe_merge() here),
// WordPiece (models/wordpiece), Unigram (models/unigram: encode_optimized's Viterbi) and WordLevel.
#include "text/hf_models.h"

#include <algorithm>
#include <cstring>

#include "text/hf_components.h"
#include "weightstream/tokenizer.h"

namespace ws {
namespace hf {

void StringTable::reserve(size_t strings, size_t bytes) {
    entries_.reserve(strings);
    arena_.reserve(bytes);
    size_t slots = 16;
    while (slots < strings * 2) slots *= 2;
    if (slots > slots_.size()) rehash(slots);
}

void StringTable::rehash(size_t slots) {
    slots_.assign(slots, -1);
    const size_t mask = slots - 1;
    for (size_t e = 0; e < entries_.size(); ++e) {
        size_t i = entries_[e].hash_low & mask;
        while (slots_[i] >= 0) i = (i + 1) & mask;
        slots_[i] = int32_t(e);
    }
}

void StringTable::insert(std::string_view s, int32_t id) {
    const uint64_t h = hash(s);
    if (slots_.empty() || (entries_.size() + 1) * 2 > slots_.size()) rehash(std::max<size_t>(16, slots_.size() * 2));
    const size_t mask = slots_.size() - 1;
    for (size_t i = size_t(h) & mask;; i = (i + 1) & mask) {
        const int32_t e = slots_[i];
        if (e < 0) {
            slots_[i] = int32_t(entries_.size());
            entries_.push_back({uint32_t(arena_.size()), uint32_t(s.size()), id, uint32_t(h)});
            arena_.append(s.data(), s.size());
            max_length_ = std::max(max_length_, s.size());
            return;
        }
        const Entry& x = entries_[size_t(e)];
        if (x.hash_low == uint32_t(h) && x.length == s.size() &&
            std::memcmp(arena_.data() + x.offset, s.data(), s.size()) == 0) {
            entries_[size_t(e)].id = id;
            return;
        }
    }
}

int32_t StringTable::find(std::string_view s, uint64_t h) const {
    if (slots_.empty()) return -1;
    const size_t mask = slots_.size() - 1;
    for (size_t i = size_t(h) & mask;; i = (i + 1) & mask) {
        const int32_t e = slots_[i];
        if (e < 0) return -1;
        const Entry& x = entries_[size_t(e)];
        if (x.hash_low == uint32_t(h) && x.length == s.size() &&
            (s.empty() || std::memcmp(arena_.data() + x.offset, s.data(), s.size()) == 0)) {
            return x.id;
        }
    }
}

const char* Model::name() const {
    switch (kind_) {
        case Kind::kBPE:
            return "BPE";
        case Kind::kWordPiece:
            return "WordPiece";
        case Kind::kUnigram:
            return "Unigram";
        case Kind::kWordLevel:
            return "WordLevel";
    }
    return "";
}

namespace {

constexpr size_t kCharIdTable = 0x3100;  // Latin .. CJK punctuation, GPT-2's byte characters, U+2581

}  // namespace

Status Model::load_vocab_object(const StagedModel& staged) {
    if (staged.vocab_form != StagedModel::VocabForm::kObject) return make_error(Error::kBadJson, 0, "model.vocab");
    if (staged.vocab.size() > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, "model.vocab");
    size_t bytes = 0;
    for (const StagedModel::VocabEntry& e : staged.vocab) bytes += e.text.length;
    vocab_.reserve(staged.vocab.size(), bytes);
    for (size_t i = 0; i < staged.vocab.size(); ++i) {
        const StagedModel::VocabEntry& e = staged.vocab[i];
        if (!(e.value >= 0 && e.value < double(kTokenizerMaxTokens)))
            return make_error(Error::kBadKey, i, "model.vocab.id");
        if (e.text.length > kTokenizerMaxTokenBytes) return make_error(Error::kTooLarge, i, "model.vocab.token");
        vocab_.insert(staged.view(e.text), int32_t(e.value));
    }
    return ok_status();
}

Status Model::load(const nlohmann::json& j, const StagedModel& staged) {
    if (!j.is_object()) return make_error(Error::kBadJson, 0, "model");
    std::fill(byte_ids_, byte_ids_ + 256, -1);
    std::string type = string_field(j, "type");
    if (staged.vocab_form == StagedModel::VocabForm::kAbsent) return make_error(Error::kBadJson, 0, "model.vocab");
    if (type.empty()) {
        // Files from before "type" was written: the crate tells the models apart by their fields.
        if (staged.vocab_form == StagedModel::VocabForm::kPairs) {
            type = "Unigram";
        } else if (staged.has_merges) {
            type = "BPE";
        } else if (field(j, "continuing_subword_prefix")) {
            type = "WordPiece";
        } else {
            type = "WordLevel";
        }
    }
    const std::string unk = string_field(j, "unk_token");
    if (type == "BPE") {
        kind_ = Kind::kBPE;
        WS_TRY(load_vocab_object(staged));
        WS_TRY(load_bpe(j, staged));
        if (const nlohmann::json* u = field(j, "unk_token"); u && u->is_string()) {
            unk_id_ = vocab_.find(unk);
            // The crate fails at the first unknown character when the unk token is missing from the vocab; refuse
            // the file instead.
            if (unk_id_ < 0) return make_error(Error::kBadKey, 0, "model.unk_token");
        }
    } else if (type == "WordPiece") {
        kind_ = Kind::kWordPiece;
        WS_TRY(load_vocab_object(staged));
        prefix_ = string_field(j, "continuing_subword_prefix", "##");
        const nlohmann::json* m = field(j, "max_input_chars_per_word");
        if (m && m->is_number_unsigned())
            max_input_chars_per_word_ = size_t(std::min<uint64_t>(m->get<uint64_t>(), 1u << 20));
        unk_id_ = vocab_.find(unk.empty() ? std::string("[UNK]") : unk);
        if (unk_id_ < 0) return make_error(Error::kBadKey, 0, "model.unk_token");
    } else if (type == "WordLevel") {
        kind_ = Kind::kWordLevel;
        WS_TRY(load_vocab_object(staged));
        unk_id_ = unk.empty() ? -1 : vocab_.find(unk);
    } else if (type == "Unigram") {
        kind_ = Kind::kUnigram;
        if (staged.vocab_form != StagedModel::VocabForm::kPairs) return make_error(Error::kBadJson, 0, "model.vocab");
        const size_t n = staged.vocab.size();
        if (n > kTokenizerMaxTokens) return make_error(Error::kTooLarge, 0, "model.vocab");
        vocab_.reserve(n, staged.arena.size());
        scores_.reserve(n);
        min_score_ = 0;
        for (size_t i = 0; i < n; ++i) {
            const StagedModel::VocabEntry& e = staged.vocab[i];
            if (e.text.length > kTokenizerMaxTokenBytes) return make_error(Error::kTooLarge, i, "model.vocab.token");
            vocab_.insert(staged.view(e.text), int32_t(i));
            scores_.push_back(e.value);
            if (i == 0 || e.value < min_score_) min_score_ = e.value;
        }
        const nlohmann::json* u = field(j, "unk_id");
        if (u && u->is_number_integer()) {
            const int64_t x = u->get<int64_t>();
            if (x < 0 || uint64_t(x) >= scores_.size()) return make_error(Error::kBadKey, 0, "model.unk_id");
            unk_id_ = int32_t(x);
        }
        byte_fallback_ = bool_field(j, "byte_fallback", false);
    } else {
        return make_error(Error::kUnsupported, 0, "model.type");
    }
    if (kind_ == Kind::kBPE) byte_fallback_ = bool_field(j, "byte_fallback", false);
    // WordPiece and Unigram try every vocabulary entry that starts at each position of a word: O(text x the
    // longest entry), which this bounds (real entries are tens of bytes).
    if ((kind_ == Kind::kWordPiece || kind_ == Kind::kUnigram) && vocab_.max_length() > kMaxPrefixSearchBytes) {
        return make_error(Error::kTooLarge, 0, "model.vocab.token");
    }
    if (byte_fallback_) {
        static const char kHex[] = "0123456789ABCDEF";
        for (int b = 0; b < 256; ++b) {
            const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
            byte_ids_[b] = vocab_.find(std::string_view(name, 6));
        }
    }
    char_ids_.assign(kCharIdTable, -1);
    std::string s;
    for (uint32_t cp = 0; cp < kCharIdTable; ++cp) {
        s.clear();
        utf8_append(cp, &s);
        char_ids_[cp] = vocab_.find(s);
    }
    return ok_status();
}

Status Model::load_bpe(const nlohmann::json& j, const StagedModel& staged) {
    const nlohmann::json* p = field(j, "continuing_subword_prefix");
    if (p && p->is_string()) prefix_ = p->get<std::string>();
    const nlohmann::json* s = field(j, "end_of_word_suffix");
    if (s && s->is_string()) suffix_ = s->get<std::string>();
    fuse_unk_ = bool_field(j, "fuse_unk", false);
    ignore_merges_ = bool_field(j, "ignore_merges", false);
    const nlohmann::json* dropout = field(j, "dropout");
    if (dropout && dropout->is_number() && dropout->get<double>() > 0.0) {
        return make_error(Error::kUnsupported, 0, "model.dropout");  // random merges: nothing to be exact with
    }
    if (staged.merges.size() > kTokenizerMaxMerges) return make_error(Error::kTooLarge, 0, "model.merges");
    merges_.reserve(staged.merges.size());
    std::string joined;
    int32_t rank = 0;
    for (const StagedModel::Merge& m : staged.merges) {
        const std::string_view a = staged.view(m.left), b = staged.view(m.right);
        const int32_t left = vocab_.find(a), right = vocab_.find(b);
        if (left < 0 || right < 0) return make_error(Error::kBadKey, m.index, "model.merges.unknown_token");
        if (b.size() < prefix_.size()) return make_error(Error::kBadKey, m.index, "model.merges.unknown_token");
        joined.assign(a.data(), a.size());
        joined.append(b.data() + prefix_.size(), b.size() - prefix_.size());
        const int32_t merged = vocab_.find(joined);
        if (merged < 0) return make_error(Error::kBadKey, m.index, "model.merges.unknown_token");
        // Hugging Face builds a map from the list: of duplicate pairs the last wins.
        merges_.insert(left, right, BpeMerges::Rule{rank, merged}, true);
        ++rank;
    }
    return ok_status();
}

int32_t Model::char_id(const char* s, size_t len, uint32_t cp) const {
    if (cp < char_ids_.size()) return char_ids_[cp];
    return vocab_.find(std::string_view(s, len));
}

void Model::tokenize(const char* s, size_t n, ModelScratch* sc, std::vector<int32_t>* ids) const {
    if (n == 0) return;
    switch (kind_) {
        case Kind::kBPE:
            tokenize_bpe(s, n, sc, ids);
            return;
        case Kind::kWordPiece:
            tokenize_wordpiece(s, n, sc, ids);
            return;
        case Kind::kUnigram:
            tokenize_unigram(s, n, sc, ids);
            return;
        case Kind::kWordLevel: {
            const int32_t id = vocab_.find(std::string_view(s, n));
            if (id >= 0) {
                ids->push_back(id);
            } else if (unk_id_ >= 0) {
                ids->push_back(unk_id_);
            }
            return;
        }
    }
}

void Model::tokenize_bpe(const char* s, size_t n, ModelScratch* sc, std::vector<int32_t>* ids) const {
    if (ignore_merges_) {
        const int32_t whole = vocab_.find(std::string_view(s, n));
        if (whole >= 0) {
            ids->push_back(whole);
            return;
        }
    }
    // merge_word: one symbol per character (with the continuing-subword prefix after the first and the
    // end-of-word suffix on the last), byte fallback or the (fused) unknown token for characters the
    // vocabulary lacks.
    std::vector<int32_t>& word = sc->word;
    word.clear();
    int32_t pending_unk = -1;  // a pending unk symbol (fuse_unk extends it)
    const bool plain = prefix_.empty() && suffix_.empty();
    for (size_t i = 0, len = 0; i < n; i += len) {
        const uint32_t cp = next_cp(s, n, i, &len);
        int32_t id;
        std::string_view piece(s + i, len);
        if (plain) {
            id = char_id(s + i, len, cp);
        } else {
            sc->tmp.clear();
            if (i > 0) sc->tmp += prefix_;
            sc->tmp.append(s + i, len);
            if (i + len == n) sc->tmp += suffix_;
            piece = sc->tmp;
            id = vocab_.find(piece);
        }
        if (id >= 0) {
            if (pending_unk >= 0) {
                word.push_back(pending_unk);
                pending_unk = -1;
            }
            word.push_back(id);
            continue;
        }
        if (byte_fallback_) {
            bool all = true;
            for (char c : piece) all = all && byte_ids_[uint8_t(c)] >= 0;
            if (all) {
                // As the crate: the bytes go in before a pending unk symbol is flushed.
                for (char c : piece) word.push_back(byte_ids_[uint8_t(c)]);
                continue;
            }
        }
        if (unk_id_ >= 0) {
            if (pending_unk >= 0 && !fuse_unk_) word.push_back(pending_unk);
            pending_unk = unk_id_;
        }
    }
    if (pending_unk >= 0) word.push_back(pending_unk);
    bpe_merge(merges_, &word, &sc->bpe);
    ids->insert(ids->end(), word.begin(), word.end());
}

void Model::tokenize_wordpiece(const char* s, size_t n, ModelScratch* sc, std::vector<int32_t>* ids) const {
    size_t chars = 0;
    for (size_t i = 0; i < n; ++i) chars += (uint8_t(s[i]) & 0xC0) != 0x80;
    if (chars > max_input_chars_per_word_) {
        ids->push_back(unk_id_);
        return;
    }
    // Longest match first from each start (the crate searches down from the end of the word; searching up and
    // keeping the last hit finds the same end), hashing incrementally: O(word x the longest token).
    const size_t mark = ids->size();
    const size_t max_len = vocab_.max_length();
    size_t start = 0;
    while (start < n) {
        sc->tmp.clear();
        if (start > 0) sc->tmp += prefix_;
        uint64_t h = StringTable::hash_init();
        for (char c : sc->tmp) h = StringTable::hash_step(h, uint8_t(c));
        int32_t found = -1;
        size_t found_end = start;
        for (size_t end = start; end < n && sc->tmp.size() < max_len;) {
            sc->tmp.push_back(s[end]);
            h = StringTable::hash_step(h, uint8_t(s[end]));
            ++end;
            if (end < n && (uint8_t(s[end]) & 0xC0) == 0x80) continue;  // whole characters only
            const int32_t id = vocab_.find(sc->tmp, h);
            if (id >= 0) {
                found = id;
                found_end = end;
            }
        }
        if (found < 0) {
            ids->resize(mark);
            ids->push_back(unk_id_);
            return;
        }
        ids->push_back(found);
        start = found_end;
    }
}

void Model::tokenize_unigram(const char* s, size_t n, ModelScratch* sc, std::vector<int32_t>* ids) const {
    // Viterbi over byte positions (encode_optimized): best[i] is the best path ending at byte i.
    const double unk_score = min_score_ - 10.0;
    sc->best_score.assign(n + 1, 0.0);
    sc->best_id.assign(n + 1, -1);
    sc->best_start.assign(n + 1, UINT32_MAX);
    const size_t max_len = vocab_.max_length();
    for (size_t start = 0, mblen = 0; start < n; start += mblen) {
        next_cp(s, n, start, &mblen);
        if (start > 0 && sc->best_start[start] == UINT32_MAX) continue;  // unreachable (cannot happen: unk)
        const double here = sc->best_score[start];
        bool single = false;
        uint64_t h = StringTable::hash_init();
        for (size_t end = start; end < n && end - start < max_len;) {
            h = StringTable::hash_step(h, uint8_t(s[end]));
            ++end;
            if (end < n && (uint8_t(s[end]) & 0xC0) == 0x80) continue;  // pieces are whole characters
            const int32_t id = vocab_.find(std::string_view(s + start, end - start), h);
            if (id < 0) continue;
            const double score = here + scores_[size_t(id)];
            if (sc->best_start[end] == UINT32_MAX || score > sc->best_score[end]) {
                sc->best_score[end] = score;
                sc->best_start[end] = uint32_t(start);
                sc->best_id[end] = id;
            }
            if (end - start == mblen) single = true;
        }
        if (!single) {
            const size_t end = start + mblen;
            const double score = here + unk_score;
            if (sc->best_start[end] == UINT32_MAX || score > sc->best_score[end]) {
                sc->best_score[end] = score;
                sc->best_start[end] = uint32_t(start);
                sc->best_id[end] = unk_id_;
            }
        }
    }
    // Back from the end; consecutive unknown pieces fuse into one (the crate's fuse_unk, on for Unigram).
    std::vector<std::pair<uint32_t, uint32_t>>& spans = sc->spans;  // (begin, end) per token, reversed
    spans.clear();
    std::vector<int32_t>& tok = sc->word;
    tok.clear();
    for (size_t end = n; end > 0;) {
        const uint32_t start = sc->best_start[end];
        const int32_t id = sc->best_id[end];
        if (start == UINT32_MAX) break;  // no path (an unknown character without an unk id)
        if (id == unk_id_ && unk_id_ >= 0 && !tok.empty() && tok.back() == unk_id_) {
            spans.back().first = start;
        } else {
            spans.push_back({start, uint32_t(end)});
            tok.push_back(id < 0 ? -1 : id);
        }
        end = start;
    }
    for (size_t k = spans.size(); k-- > 0;) {
        const int32_t id = tok[k];
        const std::string_view piece(s + spans[k].first, spans[k].second - spans[k].first);
        // A token's string maps back to an id through the vocabulary (a fused unknown run is not in it).
        const int32_t again = id == unk_id_ ? vocab_.find(piece) : id;
        if (again >= 0 && (id != unk_id_ || again != -1)) {
            ids->push_back(again);
            continue;
        }
        if (byte_fallback_) {
            bool all = true;
            for (char c : piece) all = all && byte_ids_[uint8_t(c)] >= 0;
            if (all) {
                for (char c : piece) ids->push_back(byte_ids_[uint8_t(c)]);
                continue;
            }
        }
        if (unk_id_ >= 0) ids->push_back(unk_id_);
    }
}

}  // namespace hf
}  // namespace ws
