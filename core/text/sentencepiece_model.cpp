// SPDX-License-Identifier: MIT
// sentencepiece_vocab(): a SentencePiece tokenizer.model (protobuf ModelProto, sentencepiece_model.proto) read into
// the table a GGUF holds, as convert_hf_to_gguf.py's _create_vocab_sentencepiece fills tokens, scores and
// token_types. A minimal protobuf reader: every length and varint is checked against the bytes left; fields this
// reader does not need are skipped by wire type; groups (wire types 3 and 4, unused by ModelProto) are refused.
#include <cstring>

#include "weightstream/tokenizer.h"

namespace ws {
namespace {

class ProtoReader {
public:
    ProtoReader(const uint8_t* p, size_t n, uint64_t base) : p_(p), n_(n), base_(base) {}
    bool done() const { return at_ >= n_; }
    uint64_t offset() const { return base_ + at_; }

    Status varint(uint64_t* v) {
        uint64_t x = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at_ >= n_) return make_error(Error::kBadKey, offset(), "protobuf.varint");
            const uint8_t b = p_[at_++];
            x |= uint64_t(b & 0x7F) << shift;
            if (!(b & 0x80)) {
                *v = x;
                return ok_status();
            }
        }
        return make_error(Error::kBadKey, offset(), "protobuf.varint");
    }
    // The next field's number and wire type.
    Status tag(uint32_t* field, uint32_t* wire) {
        uint64_t t = 0;
        WS_TRY(varint(&t));
        if ((t >> 3) == 0 || (t >> 3) > 0x1FFFFFFF) return make_error(Error::kBadKey, offset(), "protobuf.tag");
        *field = uint32_t(t >> 3);
        *wire = uint32_t(t & 7);
        return ok_status();
    }
    // A length-delimited field's bytes (wire type 2).
    Status bytes(const uint8_t** data, size_t* size, uint64_t* at) {
        uint64_t len = 0;
        WS_TRY(varint(&len));
        if (len > n_ - at_) return make_error(Error::kTruncated, offset(), "protobuf.length");
        *data = p_ + at_;
        *size = size_t(len);
        *at = offset();
        at_ += size_t(len);
        return ok_status();
    }
    Status fixed32(uint32_t* v) {
        if (n_ - at_ < 4) return make_error(Error::kTruncated, offset(), "protobuf.fixed32");
        *v = uint32_t(p_[at_]) | uint32_t(p_[at_ + 1]) << 8 | uint32_t(p_[at_ + 2]) << 16 | uint32_t(p_[at_ + 3]) << 24;
        at_ += 4;
        return ok_status();
    }
    Status skip(uint32_t wire) {
        uint64_t v = 0;
        const uint8_t* d = nullptr;
        size_t s = 0;
        switch (wire) {
            case 0:
                return varint(&v);
            case 1:
                if (n_ - at_ < 8) return make_error(Error::kTruncated, offset(), "protobuf.fixed64");
                at_ += 8;
                return ok_status();
            case 2:
                return bytes(&d, &s, &v);
            case 5:
                if (n_ - at_ < 4) return make_error(Error::kTruncated, offset(), "protobuf.fixed32");
                at_ += 4;
                return ok_status();
            default:
                return make_error(Error::kBadKey, offset(), "protobuf.wire_type");
        }
    }

private:
    const uint8_t* p_;
    size_t n_;
    size_t at_ = 0;
    uint64_t base_;
};

struct Spec {
    int64_t model_type = 1;  // UNIGRAM
    int64_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
    bool add_dummy_prefix = true, remove_extra_whitespaces = true;
    std::string charsmap;
};

Status read_piece(const uint8_t* d, size_t n, uint64_t base, VocabTable* t) {
    ProtoReader r(d, n, base);
    std::string piece;
    float score = 0.0f;
    uint64_t type = 1;  // NORMAL
    while (!r.done()) {
        uint32_t f = 0, w = 0;
        WS_TRY(r.tag(&f, &w));
        if (f == 1 && w == 2) {
            const uint8_t* s = nullptr;
            size_t len = 0;
            uint64_t at = 0;
            WS_TRY(r.bytes(&s, &len, &at));
            if (len > kTokenizerMaxTokenBytes) return make_error(Error::kTooLarge, at, "pieces.piece");
            piece.assign(reinterpret_cast<const char*>(s), len);
        } else if (f == 2 && w == 5) {
            uint32_t bits = 0;
            WS_TRY(r.fixed32(&bits));
            std::memcpy(&score, &bits, 4);
        } else if (f == 3 && w == 0) {
            WS_TRY(r.varint(&type));
        } else {
            WS_TRY(r.skip(w));
        }
    }
    // SentencePieceTokenTypes as the converter sets them: UNKNOWN, CONTROL, UNUSED and BYTE keep their kind,
    // every other piece (USER_DEFINED too) is NORMAL.
    TokenKind kind = TokenKind::kNormal;
    if (type == 2) {
        kind = TokenKind::kUnknown;
    } else if (type == 3) {
        kind = TokenKind::kControl;
    } else if (type == 5) {
        kind = TokenKind::kUnused;
    } else if (type == 6) {
        kind = TokenKind::kByte;
    }
    t->tokens.push_back(std::move(piece));
    t->scores.push_back(score);
    t->token_types.push_back(int32_t(kind));
    return ok_status();
}

Status read_int(ProtoReader* r, int64_t* v) {
    uint64_t x = 0;
    WS_TRY(r->varint(&x));
    *v = int64_t(x);  // int32 fields: negative values are 10-byte sign-extended varints
    return ok_status();
}

Status read_trainer_spec(const uint8_t* d, size_t n, uint64_t base, Spec* spec) {
    ProtoReader r(d, n, base);
    while (!r.done()) {
        uint32_t f = 0, w = 0;
        WS_TRY(r.tag(&f, &w));
        if (w == 0 && (f == 3 || f == 40 || f == 41 || f == 42 || f == 43)) {
            int64_t v = 0;
            WS_TRY(read_int(&r, &v));
            if (f == 3) spec->model_type = v;
            if (f == 40) spec->unk_id = v;
            if (f == 41) spec->bos_id = v;
            if (f == 42) spec->eos_id = v;
            if (f == 43) spec->pad_id = v;
        } else {
            WS_TRY(r.skip(w));
        }
    }
    return ok_status();
}

Status read_normalizer_spec(const uint8_t* d, size_t n, uint64_t base, Spec* spec) {
    ProtoReader r(d, n, base);
    while (!r.done()) {
        uint32_t f = 0, w = 0;
        WS_TRY(r.tag(&f, &w));
        if (f == 2 && w == 2) {
            const uint8_t* s = nullptr;
            size_t len = 0;
            uint64_t at = 0;
            WS_TRY(r.bytes(&s, &len, &at));
            spec->charsmap.assign(reinterpret_cast<const char*>(s), len);
        } else if ((f == 3 || f == 4) && w == 0) {
            uint64_t v = 0;
            WS_TRY(r.varint(&v));
            (f == 3 ? spec->add_dummy_prefix : spec->remove_extra_whitespaces) = v != 0;
        } else {
            WS_TRY(r.skip(w));
        }
    }
    return ok_status();
}

}  // namespace

Result<VocabTable> sentencepiece_vocab(const uint8_t* model, size_t size) {
    VocabTable t;
    Spec spec;
    ProtoReader r(model, size, 0);
    while (!r.done()) {
        uint32_t f = 0, w = 0;
        WS_TRY(r.tag(&f, &w));
        if (w == 2 && (f == 1 || f == 2 || f == 3)) {
            const uint8_t* d = nullptr;
            size_t len = 0;
            uint64_t at = 0;
            WS_TRY(r.bytes(&d, &len, &at));
            if (f == 1) {
                if (t.tokens.size() >= kTokenizerMaxTokens) return make_error(Error::kTooLarge, at, "pieces");
                WS_TRY(read_piece(d, len, at, &t));
            } else if (f == 2) {
                WS_TRY(read_trainer_spec(d, len, at, &spec));
            } else {
                WS_TRY(read_normalizer_spec(d, len, at, &spec));
            }
        } else {
            WS_TRY(r.skip(w));
        }
    }
    if (t.tokens.empty()) return make_error(Error::kBadKey, 0, "pieces");
    if (spec.model_type == 2) {
        t.model = "llama";  // BPE
    } else if (spec.model_type == 1) {
        t.model = "t5";  // Unigram
        t.precompiled_charsmap = std::move(spec.charsmap);
    } else {
        return make_error(Error::kUnsupported, 0, "trainer_spec.model_type");
    }
    const int64_t n = int64_t(t.tokens.size());
    auto id = [n](int64_t v) { return v >= 0 && v < n ? int32_t(v) : int32_t(-1); };
    t.unk = id(spec.unk_id);
    t.bos = id(spec.bos_id);
    t.eos = id(spec.eos_id);
    t.pad = id(spec.pad_id);
    t.add_space_prefix = spec.add_dummy_prefix ? 1 : 0;
    t.remove_extra_whitespaces = spec.remove_extra_whitespaces ? 1 : 0;
    return t;
}

}  // namespace ws
