// SPDX-License-Identifier: MIT
// The Unicode tables (include/weightstream/unicode.h, generated from Debian's unicode-data at build time):
// every code point's category against the UCD's own derived file, White_Space against llama.cpp's list, case
// mappings and the lossy UTF-8 decoding the regex engine uses.
#include "weightstream/unicode.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ws::UnicodeCategory;

const char* const kCategoryNames[] = {"Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd",
                                      "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm",
                                      "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};

}  // namespace

TEST_CASE("unicode categories agree with DerivedGeneralCategory.txt for every code point") {
    // extracted/DerivedGeneralCategory.txt is derived by the Unicode Consortium from UnicodeData.txt, with the
    // First/Last ranges expanded and unassigned code points listed as Cn: an independent statement of the same data.
    std::ifstream f(std::string(WS_UNICODE_DATA_DIR) + "/extracted/DerivedGeneralCategory.txt");
    REQUIRE(f.good());
    std::vector<int> want(0x110000, -1);
    std::string line;
    while (std::getline(f, line)) {
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        const size_t semi = line.find(';');
        if (semi == std::string::npos) continue;
        const std::string range = line.substr(0, semi);
        std::string cat = line.substr(semi + 1);
        cat.erase(0, cat.find_first_not_of(' '));
        cat.erase(cat.find_last_not_of(' ') + 1);
        const size_t dots = range.find("..");
        const uint32_t first = std::stoul(range.substr(0, dots), nullptr, 16);
        const uint32_t last = dots == std::string::npos ? first : std::stoul(range.substr(dots + 2), nullptr, 16);
        int index = -1;
        for (int k = 0; k < ws::kUnicodeCategoryCount; ++k) {
            if (cat == kCategoryNames[k]) index = k;
        }
        REQUIRE(index >= 0);
        for (uint32_t cp = first; cp <= last; ++cp) want[cp] = index;
    }
    size_t mismatches = 0;
    for (uint32_t cp = 0; cp < 0x110000; ++cp) {
        const int got = static_cast<int>(ws::unicode_category(cp));
        if (want[cp] != got && mismatches++ < 10) {
            INFO("U+" << std::hex << cp);
            CHECK(got == want[cp]);
        }
    }
    CHECK(mismatches == 0);
    CHECK(ws::unicode_category(0x110000) == UnicodeCategory::kCn);
    CHECK(ws::unicode_category(0xFFFFFFFF) == UnicodeCategory::kCn);
}

TEST_CASE("unicode categories of familiar code points") {
    CHECK(ws::unicode_category('A') == UnicodeCategory::kLu);
    CHECK(ws::unicode_category('z') == UnicodeCategory::kLl);
    CHECK(ws::unicode_category('7') == UnicodeCategory::kNd);
    CHECK(ws::unicode_category(' ') == UnicodeCategory::kZs);
    CHECK(ws::unicode_category('\n') == UnicodeCategory::kCc);
    CHECK(ws::unicode_category(0x0301) == UnicodeCategory::kMn);
    CHECK(ws::unicode_category(0x4E00) == UnicodeCategory::kLo);   // in a First/Last range
    CHECK(ws::unicode_category(0x2A6DF) == UnicodeCategory::kLo);  // the end of CJK extension B
    CHECK(ws::unicode_category(0xAC01) == UnicodeCategory::kLo);   // Hangul syllables
    CHECK(ws::unicode_category(0x1F600) == UnicodeCategory::kSo);  // an emoji
    CHECK(ws::unicode_category(0xFFFD) == UnicodeCategory::kSo);   // what invalid UTF-8 decodes to
    CHECK(ws::unicode_category(0xD800) == UnicodeCategory::kCs);
    CHECK(ws::unicode_category(0xE000) == UnicodeCategory::kCo);
    CHECK(ws::unicode_category(0x0378) == UnicodeCategory::kCn);
    CHECK(ws::unicode_category(0x01C5) == UnicodeCategory::kLt);
    CHECK(ws::unicode_category(0x2160) == UnicodeCategory::kNl);
    CHECK(ws::unicode_category(0x00AD) == UnicodeCategory::kCf);
    CHECK(ws::unicode_category(0x2028) == UnicodeCategory::kZl);
}

TEST_CASE("unicode White_Space is llama.cpp's unicode_set_whitespace, exactly") {
    const std::vector<uint32_t> llama = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,   0xA0,   0x1680,
                                         0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
                                         0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
    std::vector<uint32_t> got;
    for (uint32_t cp = 0; cp < 0x110000; ++cp) {
        if (ws::unicode_is_white_space(cp)) got.push_back(cp);
    }
    CHECK(got == llama);
    CHECK_FALSE(ws::unicode_is_white_space(0xFEFF));  // JavaScript's \s has it; White_Space does not
    CHECK_FALSE(ws::unicode_is_white_space(0x200B));
}

TEST_CASE("unicode simple case mappings and folding") {
    CHECK(ws::unicode_to_lower('A') == 'a');
    CHECK(ws::unicode_to_lower('a') == 'a');
    CHECK(ws::unicode_to_upper('a') == 'A');
    CHECK(ws::unicode_to_lower(0x0130) == 'i');     // simple mapping; the full one adds U+0307
    CHECK(ws::unicode_to_upper(0x00DF) == 0x00DF);  // sharp s: no simple uppercase
    CHECK(ws::unicode_to_title(0x01C6) == 0x01C5);
    CHECK(ws::unicode_to_lower(0x0416) == 0x0436);    // Cyrillic
    CHECK(ws::unicode_to_lower(0x10400) == 0x10428);  // Deseret, outside the BMP
    CHECK(ws::unicode_simple_fold(0x212A) == 'k');    // Kelvin sign
    CHECK(ws::unicode_simple_fold(0x017F) == 's');    // long s
    CHECK(ws::unicode_simple_fold(0x1E9E) == 0x00DF);
    CHECK(ws::unicode_simple_fold('Q') == 'q');
    CHECK(ws::unicode_simple_fold('7') == '7');
}

TEST_CASE("unicode property and script names") {
    ws::UnicodeCategoryMask mask = 0;
    REQUIRE(ws::unicode_category_mask_from_name("L", 1, &mask));
    CHECK(mask == (ws::unicode_category_bit(UnicodeCategory::kLu) | ws::unicode_category_bit(UnicodeCategory::kLl) |
                   ws::unicode_category_bit(UnicodeCategory::kLt) | ws::unicode_category_bit(UnicodeCategory::kLm) |
                   ws::unicode_category_bit(UnicodeCategory::kLo)));
    REQUIRE(ws::unicode_category_mask_from_name("Decimal_Number", 14, &mask));
    CHECK(mask == ws::unicode_category_bit(UnicodeCategory::kNd));
    CHECK_FALSE(ws::unicode_category_mask_from_name("Han", 3, &mask));
    const int han = ws::unicode_script_from_name("Han", 3);
    REQUIRE(han >= 0);
    bool has_4e00 = false;
    ws::unicode_script_ranges(han,
                              [&](uint32_t first, uint32_t last) { has_4e00 |= first <= 0x4E00 && 0x4E00 <= last; });
    CHECK(has_4e00);
    CHECK(ws::unicode_script_from_name("Klingon", 7) == -1);
    // Scripts.txt 15.0's lines, at both ends of its ranges.
    auto script = [](const char* name) { return ws::unicode_script_from_name(name, std::strlen(name)); };
    CHECK(ws::unicode_script(0x0000) == script("Common"));    // 0000..001F Common
    CHECK(ws::unicode_script('A') == script("Latin"));        // 0041..005A
    CHECK(ws::unicode_script(0x4E00) == han);                 // 4E00..9FFF
    CHECK(ws::unicode_script(0x3042) == script("Hiragana"));  // 3041..3096
    CHECK(ws::unicode_script(0x30FC) == script("Common"));    // the prolonged sound mark: Common
    CHECK(ws::unicode_script(0x0589) == script("Armenian"));  // Common before Unicode 12
    CHECK(ws::unicode_script(0x0301) == script("Inherited"));
    CHECK(ws::unicode_script(0xE01EF) == script("Inherited"));  // the last code point Scripts.txt lists
    CHECK(ws::unicode_script(0x0378) == -1);                    // unassigned
    CHECK(ws::unicode_script(0xE000) == -1);                    // private use: not listed (Unknown)
    CHECK(ws::unicode_script(0x10FFFF) == -1);
    CHECK(ws::unicode_script(0x110000) == -1);
    CHECK(ws::unicode_script(0xFFFFFFFF) == -1);
}

TEST_CASE("unicode age: DerivedAge.txt's code points of 9.0 or older") {
    // DerivedAge.txt's lines, at both ends of their ranges.
    CHECK(ws::unicode_age_at_most_9_0(0x0000));    // 0000..001F ; 1.1
    CHECK(ws::unicode_age_at_most_9_0(0x08B6));    // 08B6..08BD ; 9.0
    CHECK(ws::unicode_age_at_most_9_0(0x08E2));    // 08E2 ; 9.0
    CHECK(!ws::unicode_age_at_most_9_0(0x0860));   // 0860..086A ; 10.0
    CHECK(!ws::unicode_age_at_most_9_0(0x086A));   // its last
    CHECK(ws::unicode_age_at_most_9_0(0xD800));    // D800..DFFF ; 2.0 (surrogates)
    CHECK(ws::unicode_age_at_most_9_0(0xE000));    // E000..F8FF ; 1.1 (private use)
    CHECK(ws::unicode_age_at_most_9_0(0x2A6D6));   // 20000..2A6D6 ; 3.1
    CHECK(!ws::unicode_age_at_most_9_0(0x2A6D7));  // 2A6D7..2A6DD ; 13.0
    CHECK(!ws::unicode_age_at_most_9_0(0x1B170));  // 1B170..1B2FB ; 10.0 (Nushu)
    CHECK(!ws::unicode_age_at_most_9_0(0x30000));  // 30000..3134A ; 13.0
    CHECK(ws::unicode_age_at_most_9_0(0x10FFFF));  // 10FFFE..10FFFF ; 2.0 (noncharacters)
    CHECK(!ws::unicode_age_at_most_9_0(0x0378));   // in no line: unassigned
    CHECK(!ws::unicode_age_at_most_9_0(0x110000));
    CHECK(!ws::unicode_age_at_most_9_0(0xFFFFFFFF));
}

TEST_CASE("unicode lossy decoding: one U+FFFD per byte that does not start a well-formed sequence") {
    struct Case {
        std::string bytes;
        uint32_t cp;
        size_t len;
    };
    const std::vector<Case> cases = {
        {"a", 'a', 1},
        {"\xC3\xA9", 0xE9, 2},
        {"\xE4\xBD\xA0", 0x4F60, 3},
        {"\xF0\x9F\x98\x80", 0x1F600, 4},
        {"\x80", 0xFFFD, 1},              // a lone continuation byte
        {"\xC0\xAF", 0xFFFD, 1},          // overlong (llama.cpp decodes it as '/')
        {"\xED\xA0\x80", 0xFFFD, 1},      // a surrogate (llama.cpp: U+D800)
        {"\xF5\x80\x80\x80", 0xFFFD, 1},  // beyond U+10FFFF
        {"\xE4\xBD", 0xFFFD, 1},          // truncated
        {"\xE4\xBDx", 0xFFFD, 1},         // a sequence cut by an ASCII byte
    };
    for (const Case& c : cases) {
        size_t len = 0;
        INFO("bytes of " << c.bytes.size());
        CHECK(ws::unicode_next_lossy(reinterpret_cast<const uint8_t*>(c.bytes.data()), c.bytes.size(), &len) == c.cp);
        CHECK(len == c.len);
    }
}

TEST_CASE("unicode grapheme clusters pass the UCD's GraphemeBreakTest.txt, every line") {
    // Read from the installed package at test time rather than copied: the tables are generated from that same
    // package, so the conformance file always has the version of the data under test (15.0.0 on Debian 12).
    std::ifstream f(std::string(WS_UNICODE_DATA_DIR) + "/auxiliary/GraphemeBreakTest.txt");
    REQUIRE(f.good());
    std::string line;
    size_t lines = 0, failed = 0;
    while (std::getline(f, line)) {
        line = line.substr(0, line.find('#'));
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        // "÷ 0020 × 0308 ÷ ...": the text, and a cluster ends before each inner "÷" and at the end.
        std::istringstream in(line);
        std::string tok, text;
        std::vector<size_t> want;
        while (in >> tok) {
            if (tok == "\xC3\xB7") {  // ÷
                if (!text.empty()) want.push_back(text.size());
            } else if (tok != "\xC3\x97") {  // not ×: a code point
                const uint32_t cp = uint32_t(std::stoul(tok, nullptr, 16));
                if (cp < 0x80) {
                    text.push_back(char(cp));
                } else if (cp < 0x800) {
                    text.push_back(char(0xC0 | cp >> 6));
                    text.push_back(char(0x80 | (cp & 0x3F)));
                } else if (cp < 0x10000) {
                    text.push_back(char(0xE0 | cp >> 12));
                    text.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
                    text.push_back(char(0x80 | (cp & 0x3F)));
                } else {
                    text.push_back(char(0xF0 | cp >> 18));
                    text.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
                    text.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
                    text.push_back(char(0x80 | (cp & 0x3F)));
                }
            }
        }
        std::vector<size_t> got;
        const uint8_t* p = reinterpret_cast<const uint8_t*>(text.data());
        for (size_t at = 0; at < text.size();) {
            at += ws::unicode_grapheme_length(p + at, text.size() - at);
            got.push_back(at);
        }
        ++lines;
        if (got != want) {
            ++failed;
            UNSCOPED_INFO("GraphemeBreakTest: " << line);
        }
    }
    CHECK(lines == 602);  // the 15.0.0 file's test lines
    CHECK(failed == 0);
}

TEST_CASE("unicode normalization passes the UCD's NormalizationTest.txt (NFC, NFD, NFKC, NFKD)") {
    // The conformance file ships compressed in Debian's unicode-data; Python (a build dependency) unpacks it.
    const std::string command = "python3 -c \"import bz2,sys; sys.stdout.buffer.write(bz2.open('" +
                                std::string(WS_UNICODE_DATA_DIR) + "/NormalizationTest.txt.bz2').read())\"";
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string text;
    char buf[65536];
    size_t got = 0;
    while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, got);
    REQUIRE(pclose(pipe) == 0);

    using Seq = std::vector<uint32_t>;
    auto parse = [](const std::string& field) {
        Seq out;
        std::istringstream in(field);
        std::string hex;
        while (in >> hex) out.push_back(static_cast<uint32_t>(std::stoul(hex, nullptr, 16)));
        return out;
    };
    auto norm = [](const Seq& s, ws::UnicodeNormalization form) {
        Seq out;
        ws::unicode_normalize(s.data(), s.size(), form, &out);
        return out;
    };
    using F = ws::UnicodeNormalization;
    std::istringstream lines(text);
    std::string line;
    int part = -1;
    size_t checked = 0, failures = 0;
    std::vector<uint8_t> in_part1(0x110000, 0);
    while (std::getline(lines, line)) {
        if (line.rfind("@Part", 0) == 0) {
            part = line[5] - '0';
            continue;
        }
        if (line.empty() || line[0] == '#') continue;
        Seq c[5];
        std::istringstream fields(line);
        for (Seq& s : c) {
            std::string field;
            std::getline(fields, field, ';');
            s = parse(field);
        }
        if (part == 1 && c[0].size() == 1) in_part1[c[0][0]] = 1;
        const bool ok = c[1] == norm(c[0], F::kNFC) && c[1] == norm(c[1], F::kNFC) && c[1] == norm(c[2], F::kNFC) &&
                        c[3] == norm(c[3], F::kNFC) && c[3] == norm(c[4], F::kNFC) && c[2] == norm(c[0], F::kNFD) &&
                        c[2] == norm(c[1], F::kNFD) && c[2] == norm(c[2], F::kNFD) && c[4] == norm(c[3], F::kNFD) &&
                        c[4] == norm(c[4], F::kNFD) && c[3] == norm(c[0], F::kNFKC) && c[3] == norm(c[1], F::kNFKC) &&
                        c[3] == norm(c[2], F::kNFKC) && c[3] == norm(c[3], F::kNFKC) && c[3] == norm(c[4], F::kNFKC) &&
                        c[4] == norm(c[0], F::kNFKD) && c[4] == norm(c[1], F::kNFKD) && c[4] == norm(c[2], F::kNFKD) &&
                        c[4] == norm(c[3], F::kNFKD) && c[4] == norm(c[4], F::kNFKD);
        if (!ok && failures++ < 10) {
            INFO(line);
            CHECK(ok);
        }
        ++checked;
    }
    CHECK(checked > 19000);
    CHECK(failures == 0);
    // Part 1's rule: every code point it does not list is its own normalization in all four forms.
    size_t unchanged_failures = 0;
    for (uint32_t cp = 0; cp < 0x110000; ++cp) {
        if (in_part1[cp] || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
        const Seq x = {cp};
        for (F form : {F::kNFC, F::kNFD, F::kNFKC, F::kNFKD}) {
            if (norm(x, form) != x && unchanged_failures++ < 5) {
                INFO("U+" << std::hex << cp);
                CHECK(false);
            }
        }
    }
    CHECK(unchanged_failures == 0);
}

TEST_CASE("unicode normalization stays O(n log n) on a million combining marks") {
    std::vector<uint32_t> text = {'a'};
    for (int i = 0; i < 1000000; ++i) text.push_back(i % 2 ? 0x0301 : 0x0316);  // classes 230 and 220
    std::vector<uint32_t> out;
    ws::unicode_normalize(text.data(), text.size(), ws::UnicodeNormalization::kNFC, &out);
    REQUIRE(out.size() == text.size() - 1);  // a + one acute compose; the rest sorted, below before above
    CHECK(out[0] == 0x00E1);
    CHECK(out[1] == 0x0316);
    CHECK(out.back() == 0x0301);
}
