// SPDX-License-Identifier: MIT
// SentencePiece's precompiled charsmap (core/text/charsmap.h) and Hugging Face's Precompiled normalizer over it:
// the real nmt_nfkc charsmap (T5's, XLM-R's) against the JavaScript reimplementation of the crate
// (tests/text/precompiled_oracle.mjs) on a varied corpus, the crate's own test values, whole-tokenizer ids of a
// Unigram tokenizer.json, and hostile charsmaps.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "text/charsmap.h"
#include "text/hf_components.h"
#include "weightstream/tokenizer.h"
#include "weightstream/unicode.h"

namespace {

std::string charsmap_bytes() {
    const std::vector<uint8_t> b = ws_test::read_file(ws_test::data_path("text/nmt_nfkc.charsmap"));
    return std::string(b.begin(), b.end());
}

std::string base64(const std::string& in) {
    static const char* const kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < in.size(); i += 3) {
        const size_t n = std::min<size_t>(3, in.size() - i);
        uint32_t v = 0;
        for (size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? uint8_t(in[i + k]) : 0);
        for (size_t k = 0; k < 4; ++k) out.push_back(k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=');
    }
    return out;
}

ws::Status normalizer_of(const std::string& json, ws::hf::Normalizer* out) {
    const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
    REQUIRE(!j.is_discarded());
    return ws::hf::normalizer_from_json(j, out);
}

std::string precompiled_json(const std::string& blob) {
    return R"({"type": "Precompiled", "precompiled_charsmap": ")" + base64(blob) + "\"}";
}

std::string normalized(const ws::hf::Normalizer& n, std::string text) {
    ws::hf::NormalizeScratch sc;
    ws::hf::normalize(n, &text, &sc);
    return text;
}

// The charsmap as spm_precompiled's tests read it: the first key's offset, or -1.
int64_t first_key(const ws::Charsmap& cm, const std::string& s) {
    int64_t got = -1;
    cm.walk(s.data(), s.size(), [&](size_t, uint32_t v) {
        got = v;
        return false;
    });
    return got;
}

}  // namespace

TEST_CASE("charsmap: the nmt_nfkc trie as spm_precompiled's tests read it") {
    ws::Charsmap cm;
    REQUIRE(ws::Charsmap::parse(charsmap_bytes(), ws::Error::kBadKey, &cm).ok());
    REQUIRE(cm.check_complete(ws::Error::kBadKey).ok());
    // src/tests.rs, test_load_precompiled_map and test_precompiled_multi_char_replace_bug
    CHECK(first_key(cm, "\xEF\xAC\x81") == 2130);  // U+FB01
    CHECK(cm.replacement(2130) == "fi");
    CHECK(first_key(cm, " ") == -1);
    CHECK(first_key(cm, "\xF0\x9D\x94\xBE") == 1786);  // U+1D53E
    CHECK(cm.replacement(1786) == "G");
    CHECK(first_key(cm, "\xD8\xA7\xD9\x93") == 4050);
    CHECK(cm.replacement(4050) == "\xD8\xA2");
    // src/tests.rs, test_load_precompiled_map: transform() of U+1D560 and of ZWJ
    CHECK(first_key(cm, "\xF0\x9D\x95\xA0") >= 0);
    CHECK(cm.replacement(uint32_t(first_key(cm, "\xF0\x9D\x95\xA0"))) == "o");
    CHECK(first_key(cm, "\xE2\x80\x8D") >= 0);
    CHECK(cm.replacement(uint32_t(first_key(cm, "\xE2\x80\x8D"))) == " ");
}

TEST_CASE("Precompiled normalizer: the crate's own cases") {
    ws::hf::Normalizer n;
    REQUIRE(normalizer_of(precompiled_json(charsmap_bytes()), &n).ok());
    // src/tests.rs: test_precompiled_failure_mode, test_precompiled_hindi, test_precompiled_multi_char_replace_bug
    CHECK(normalized(n,
                     "\u0E40\u0E02\u0E32\u0E44\u0E21\u0E48\u0E44\u0E14\u0E49\u0E1E\u0E39\u0E14\u0E2A\u0E31\u0E01"
                     "\u0E04\u0E33") ==
          "\u0E40\u0E02\u0E32\u0E44\u0E21\u0E48\u0E44\u0E14\u0E49\u0E1E\u0E39\u0E14\u0E2A\u0E31\u0E01\u0E04\u0E4D"
          "\u0E32");
    CHECK(normalized(n, "\u0921\u093C\u0940 \u0926\u0941\u0916") == "\u0921\u093C\u0940 \u0926\u0941\u0916");
    CHECK(normalized(n, "\u0627\u0653") == "\u0622");
    // tokenizers' precompiled.rs test expansion_followed_by_removal simulates "™\x1eg" -> "TMg" with hand-made
    // replacements (™ -> TM, U+001E dropped); nmt_nfkc holds those same two.
    CHECK(normalized(n, "\u2122\x1Eg") == "TMg");
}

TEST_CASE("Precompiled normalizer: the oracle's normalized texts, and its grapheme clusters") {
    const std::vector<uint8_t> raw = ws_test::read_file(ws_test::data_path("text/precompiled_normalized.json"));
    const nlohmann::json d = nlohmann::json::parse(raw.begin(), raw.end(), nullptr, false);
    REQUIRE(d.is_object());
    REQUIRE(d["charsmap"] == "nmt_nfkc.charsmap");
    ws::hf::Normalizer n;
    REQUIRE(normalizer_of(precompiled_json(charsmap_bytes()), &n).ok());
    size_t cases = 0, same_clusters = 0;
    for (const nlohmann::json& c : d["cases"]) {
        const std::string text = c["text"].get<std::string>();
        INFO("text: " << text);
        CHECK(normalized(n, text) == c["normalized"].get<std::string>());
        // Intl.Segmenter (Unicode 17, GB9c) against UAX #29 of 15.0: the same clusters unless the case says why not.
        std::vector<size_t> ends;
        const uint8_t* p = reinterpret_cast<const uint8_t*>(text.data());
        for (size_t at = 0; at < text.size();) {
            at += ws::unicode_grapheme_length(p + at, text.size() - at);
            ends.push_back(at);
        }
        const bool same = ends == c["graphemes"].get<std::vector<size_t>>();
        if (c["mark"].is_null()) CHECK(same);
        ++cases;
        same_clusters += same;
    }
    CHECK(cases == 162);
    // The two marked cases: a Devanagari conjunct (GB9c joins it there) and a code point of Unicode 16.
    CHECK(same_clusters == 160);
}

TEST_CASE("Precompiled normalizer: hostile charsmaps are refused at load") {
    ws::hf::Normalizer n;
    auto what = [&](const std::string& json) {
        const ws::Status s = normalizer_of(json, &n);
        return s.ok() ? std::string("ok") : std::string(s.what);
    };
    const std::string good = charsmap_bytes();
    CHECK(what(precompiled_json(good)) == "ok");
    CHECK(what(R"({"type": "Precompiled"})") == "normalizer.Precompiled.precompiled_charsmap");
    CHECK(what(R"({"type": "Precompiled", "precompiled_charsmap": 7})") ==
          "normalizer.Precompiled.precompiled_charsmap");
    // Bad base64: a character outside the alphabet, a length not a multiple of 4, non-zero padding bits, whitespace.
    for (const char* b64 : {"AAA*", "AAAAA", "AAB=", "AA==AAAA", "AAAA AAAA", ""}) {
        INFO(b64);
        const std::string w = what(std::string(R"({"type": "Precompiled", "precompiled_charsmap": ")") + b64 + "\"}");
        CHECK(w.find("precompiled_charsmap") != std::string::npos);
        CHECK(w != "ok");
    }
    CHECK(what(precompiled_json(good.substr(0, 3))) == "precompiled_charsmap (shorter than its trie size)");
    // Truncated: the trie runs past the end.
    CHECK(what(precompiled_json(good.substr(0, 1000))) == "precompiled_charsmap (trie size past the end)");
    std::string odd = good;
    odd[0] = char(uint8_t(odd[0]) + 1);
    CHECK(what(precompiled_json(odd)) == "precompiled_charsmap (trie size not a multiple of 4)");
    CHECK(what(precompiled_json(std::string("\0\0\0\0abc", 7))) == "precompiled_charsmap (no root unit)");
    // The trie's last block of 256 units removed (the strings kept): some leaf's value unit is past the array.
    const uint32_t trie = uint32_t(uint8_t(good[0])) | uint32_t(uint8_t(good[1])) << 8 |
                          uint32_t(uint8_t(good[2])) << 16 | uint32_t(uint8_t(good[3])) << 24;
    const uint32_t shorter = trie - 1024;
    std::string cut = good.substr(0, 4 + shorter) + good.substr(4 + trie);
    for (int i = 0; i < 4; ++i) cut[size_t(i)] = char((shorter >> (8 * i)) & 0xFF);
    CHECK(what(precompiled_json(cut)) == "precompiled_charsmap (a leaf past the end)");
    // Strings that are not UTF-8.
    CHECK(what(precompiled_json(good + "\xFF")) == "precompiled_charsmap (strings not UTF-8)");
    // Hand-built tries, one block of 256 units: root 0 with OFFSET 0 (children at c), strings "x\0".
    auto trie_of = [](std::vector<uint32_t> units) {
        units.resize(256, 0);
        std::string b(4, '\0');
        const uint32_t size = uint32_t(units.size() * 4);
        for (int i = 0; i < 4; ++i) b[size_t(i)] = char((size >> (8 * i)) & 0xFF);
        for (uint32_t u : units)
            for (int i = 0; i < 4; ++i) b.push_back(char((u >> (8 * i)) & 0xFF));
        return b + std::string("x\0", 2);
    };
    // 'a' (unit 97, LABEL 'a', OFFSET 97 so its block is unit 0 again): a path back to the root.
    std::vector<uint32_t> loop(256, 0);
    loop[97] = 97u | (97u << 10);
    CHECK(what(precompiled_json(trie_of(loop))) == "precompiled_charsmap (a cycle)");
    // 'a' whose children's block (97 ^ 512) is past the 256 units.
    std::vector<uint32_t> wide(256, 0);
    wide[97] = 97u | (512u << 10);
    CHECK(what(precompiled_json(trie_of(wide))) == "precompiled_charsmap (a node's children past the end)");
    // 'a' with a leaf whose value is past the strings.
    std::vector<uint32_t> far(256, 0);
    far[97] = 97u | (1u << 8) | (1u << 10);  // LABEL 'a', HAS_LEAF, block 97 ^ 1 = 96
    far[96] = 0x80000000u | 3;               // value 3 > "x\0"'s 2 bytes
    CHECK(what(precompiled_json(trie_of(far))) == "precompiled_charsmap (a replacement offset outside the strings)");
    far[96] = 0x80000000u | 0;
    REQUIRE(what(precompiled_json(trie_of(far))) == "ok");
    CHECK(normalized(n, "bab") == "bxb");
    // A long text stays linear: each walk is over one grapheme (under 6 bytes) or one character.
    ws::hf::Normalizer good_n;
    REQUIRE(normalizer_of(precompiled_json(good), &good_n).ok());
    const std::string big(1 << 20, 'a');
    CHECK(normalized(good_n, big) == big);
}

TEST_CASE("Precompiled in a Unigram tokenizer.json: ids as the normalized text gives them") {
    // A hand-built vocabulary (no npm package ships a T5/XLM-R tokenizer.json): T5's pipeline, Precompiled then
    // WhitespaceSplit and Metaspace, and XLM-R's, Sequence[Precompiled, Replace(" {2,}", " ")].
    const std::string vocab = R"([["<unk>", 0], ["\u2581", -2], ["\u2581fi", -1], ["fi", -1.5], ["TM", -1],
        ["\u2581TM", -0.5], ["\u2581ABC", -1], ["A", -3], ["B", -3], ["C", -3], ["\u2581a", -2], ["a", -2.5],
        ["\u00e9", -2], ["\u2581G", -2], ["o", -2], ["g", -2], ["l", -2], ["e", -2], ["\u2581\u2581", -4]])";
    auto tokenizer = [&](const std::string& normalizer, const std::string& pre) {
        const std::string json = R"({"model": {"type": "Unigram", "unk_id": 0, "vocab": )" + vocab +
                                 R"(}, "normalizer": )" + normalizer + R"(, "pre_tokenizer": )" + pre + "}";
        auto r = ws::hf_tokenizer(reinterpret_cast<const uint8_t*>(json.data()), json.size(), nullptr, 0);
        INFO(ws::error_name(r.status().code) << " " << r.status().what);
        REQUIRE(r.ok());
        return std::move(r).value();
    };
    auto ids = [](const ws::Tokenizer& t, const std::string& text) {
        std::vector<int32_t> out;
        ws::TokenizeOptions o;
        o.add_special = false;
        REQUIRE(t.tokenize(text, o, &out).ok());
        return out;
    };
    const std::string pc = precompiled_json(charsmap_bytes());
    const std::string metaspace =
        R"({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": true}]})";
    auto t5 = tokenizer(pc, metaspace);
    // "ﬁ ™ ＡＢＣ 𝔾oogle é": fi, TM, ABC, Google, é after nmt_nfkc
    CHECK(ids(*t5, "\uFB01 \u2122 \uFF21\uFF22\uFF23 \xF0\x9D\x94\xBEoogle e\u0301") ==
          std::vector<int32_t>{2, 5, 6, 13, 14, 14, 15, 16, 17, 1, 12});
    auto xlmr =
        tokenizer(R"({"type": "Sequence", "normalizers": [)" + pc +
                      R"(, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]})",
                  R"({"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": true})");
    // U+3000 and tab become spaces, then the run collapses to one
    CHECK(ids(*xlmr, "\uFB01\u3000\t \u2122") == std::vector<int32_t>{2, 5});
}
