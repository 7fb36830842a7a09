// SPDX-License-Identifier: MIT
// sentencepiece_vocab() (include/weightstream/tokenizer.h): the real tokenizer.model files of
// ../shared/testdata/convert against the tokens, scores and token types convert_hf_to_gguf.py wrote for them
// (read back with the GGUF parser), and malformed protobufs.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "support/parse_model.h"
#include "support/test_util.h"
#include "weightstream/tokenizer.h"

namespace {

const ws::Value* find_key(const ws::ModelInfo& info, const char* key) {
    for (const ws::MetadataEntry& e : info.metadata) {
        if (e.key == key) return &e.value;
    }
    return nullptr;
}

ws::Result<ws::VocabTable> read(const std::string& bytes) {
    return ws::sentencepiece_vocab(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

std::string varint(uint64_t v) {
    std::string s;
    do {
        uint8_t b = v & 0x7F;
        v >>= 7;
        if (v) b |= 0x80;
        s.push_back(char(b));
    } while (v);
    return s;
}

std::string len_field(uint32_t field, const std::string& body) {
    return varint(uint64_t(field) << 3 | 2) + varint(body.size()) + body;
}

std::string piece(const std::string& text, float score, int type) {
    uint32_t bits = 0;
    std::memcpy(&bits, &score, 4);
    std::string s = len_field(1, text);
    s += varint(2 << 3 | 5);
    for (int i = 0; i < 4; ++i) s.push_back(char(bits >> (8 * i)));
    s += varint(3 << 3) + varint(uint64_t(type));
    return s;
}

}  // namespace

TEST_CASE("sentencepiece_vocab reads tokens, scores and types as convert_hf_to_gguf.py writes them") {
    const char* const dirs[] = {"tiny-llama-spm", "tiny-gemma", "tiny-phi3"};
    for (const char* dir : dirs) {
        const std::string base = ws_test::shared_path(std::string("convert/") + dir);
        if (!ws_test::file_exists(base + "/tokenizer.model")) continue;
        INFO(dir);
        const std::vector<uint8_t> model = ws_test::read_file(base + "/tokenizer.model");
        auto r = ws::sentencepiece_vocab(model.data(), model.size());
        INFO(ws::error_name(r.status().code) << " " << r.status().what << " at " << r.status().offset);
        REQUIRE(r.ok());
        const ws::VocabTable& t = r.value();
        const ws::ModelInfo ref = ws_test::parse_model_bytes(
            ws_test::read_file(ws_test::shared_path(std::string("convert/ref/") + dir + "-f32.gguf")));
        const ws::Value* tokens = find_key(ref, "tokenizer.ggml.tokens");
        const ws::Value* scores = find_key(ref, "tokenizer.ggml.scores");
        const ws::Value* types = find_key(ref, "tokenizer.ggml.token_type");
        REQUIRE(tokens);
        REQUIRE(scores);
        REQUIRE(types);
        // The converter pads to config.json's vocab_size and lays added_tokens.json / added_tokens_decoder over
        // the pieces (a later issue): every id the SentencePiece model has and those leave alone must match.
        REQUIRE(tokens->strings.size() >= t.tokens.size());
        size_t compared = 0;
        for (size_t i = 0; i < t.tokens.size(); ++i) {
            INFO("token " << i << " " << t.tokens[i]);
            CHECK(t.tokens[i] == tokens->strings[i]);
            float want = 0;
            const uint32_t bits = uint32_t(scores->item_bits(i));
            std::memcpy(&want, &bits, 4);
            CHECK(t.scores[i] == want);
            CHECK(t.token_types[i] == int32_t(types->item_bits(i)));
            ++compared;
        }
        CHECK(compared >= 2000);
        CHECK(t.model == (std::string(dir) == "tiny-gemma" ? "t5" : "llama"));
        CHECK(t.unk >= 0);
    }
}

TEST_CASE("sentencepiece_vocab refuses malformed protobufs with an offset") {
    const std::string good = len_field(1, piece("<unk>", 0, 2)) + len_field(1, piece("a", -1.5f, 1)) +
                             len_field(2, varint(3 << 3) + varint(2));
    auto ok = read(good);
    REQUIRE(ok.ok());
    CHECK(ok.value().tokens.size() == 2);
    CHECK(ok.value().scores[1] == -1.5f);
    CHECK(ok.value().token_types[0] == int32_t(ws::TokenKind::kUnknown));
    CHECK(ok.value().model == "llama");

    // Truncated anywhere: a clear error, never a crash.
    for (size_t n = 1; n < good.size(); ++n) {
        auto r = read(good.substr(0, n));
        if (r.ok()) continue;  // a cut between whole fields is a valid (smaller) message
        CHECK((r.status().code == ws::Error::kTruncated || r.status().code == ws::Error::kBadKey));
        CHECK(r.status().offset <= n);
    }
    CHECK(read("").status().code == ws::Error::kBadKey);                       // no pieces
    CHECK(read(std::string(11, '\xff')).status().code == ws::Error::kBadKey);  // a varint over 10 bytes
    CHECK(read(varint(1 << 3 | 3)).status().code == ws::Error::kBadKey);       // a group
    CHECK(read(varint(1 << 3 | 2) + varint(1000) + "ab").status().code == ws::Error::kTruncated);  // length past end
    CHECK(read(len_field(1, piece("a", 0, 1)) + len_field(2, varint(3 << 3) + varint(4))).status().code ==
          ws::Error::kUnsupported);                                           // CHAR model
    CHECK(read(std::string("\x00", 1)).status().code == ws::Error::kBadKey);  // field number 0
}
