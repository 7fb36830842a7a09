// SPDX-License-Identifier: MIT
// The regex engine (include/weightstream/regex.h): against std::regex on generated ASCII patterns, against
// V8's RegExp (tests/text/regex_oracle.mjs) on every real pre-tokenizer pattern over varied texts, linear time
// on the patterns that make backtracking engines explode, and errors (not crashes) for hostile patterns.
#include "weightstream/regex.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ws::Regex;
using ws::RegexMatch;

Regex must_compile(const std::string& pattern) {
    auto r = Regex::compile(pattern);
    INFO("pattern " << pattern << ": " << r.status().what << " at " << r.status().offset);
    REQUIRE(r.ok());
    return std::move(r).value();
}

// Flattened [begin, end, ...] of every match.
std::vector<size_t> all_matches(const Regex& re, const std::string& text) {
    std::vector<size_t> out;
    for (const RegexMatch& m : re.find_all(text.data(), text.size())) {
        out.push_back(m.begin);
        out.push_back(m.end);
    }
    return out;
}

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// A random ASCII pattern over a small alphabet, in the syntax std::regex's ECMAScript and this engine share.
// Quantifiers apply only to atoms that cannot match the empty string: where a loop's body can ((a*?)*),
// backtracking engines reject empty iterations and backtrack into the body, which a Pike VM does not model
// (regex.h says so), and where engines disagree among themselves (std::regex and V8 differ there too).
class PatternGenerator {
public:
    explicit PatternGenerator(uint32_t seed) : rng_(seed) {}

    std::string pattern() {
        depth_ = 0;
        std::string p;
        if (pick(8) == 0) p += '^';
        bool nullable = false;
        p += alternation(&nullable);
        if (pick(8) == 0) p += '$';
        return p;
    }

private:
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

    std::string single() {
        static const char* const kSingles[] = {"a",     "b",      "c",      " ",   ".",   "[ab]", "[^a]",
                                               "[a-c]", "[^b ]",  "\\d",    "\\w", "\\s", "\\S",  "\\W",
                                               "\\D",   "[\\d_]", "[^\\s]", "\\.", "_",   "1"};
        return kSingles[pick(20)];
    }

    std::string atom(bool* nullable) {
        const int k = pick(10);
        *nullable = false;
        if (k < 6 || depth_ >= 3) return single();
        if (k == 7) {
            *nullable = true;
            return pick(2) ? "\\b" : "\\B";
        }
        if (k == 8) {
            *nullable = true;
            return std::string(pick(2) ? "(?=" : "(?!") + single() + ")";
        }
        ++depth_;
        std::string g = (pick(2) ? "(" : "(?:") + alternation(nullable) + ")";
        --depth_;
        return g;
    }

    std::string quantified(bool* nullable) {
        std::string a = atom(nullable);
        if (*nullable) return a;
        static const char* const kQuantifiers[] = {"", "", "", "*", "+", "?", "{2}", "{1,}", "{0,2}", "{1,3}"};
        const int k = pick(10);
        std::string q = kQuantifiers[k];
        *nullable = k == 3 || k == 5 || k == 8;
        if (!q.empty() && pick(3) == 0) q += '?';
        return a + q;
    }

    std::string concatenation(bool* nullable) {
        std::string s;
        *nullable = true;
        const int n = 1 + pick(3);
        for (int i = 0; i < n; ++i) {
            bool kid = false;
            s += quantified(&kid);
            *nullable = *nullable && kid;
        }
        return s;
    }

    std::string alternation(bool* nullable) {
        std::string s = concatenation(nullable);
        while (pick(3) == 0) {
            bool kid = false;
            s += "|" + concatenation(&kid);
            *nullable = *nullable || kid;
        }
        return s;
    }

    std::mt19937 rng_;
    int depth_ = 0;
};

}  // namespace

TEST_CASE("regex matches as std::regex (ECMAScript) on generated ASCII patterns and texts") {
    PatternGenerator gen(20261205);
    std::mt19937 rng(7);
    const std::string alphabet = "abc 1_.";
    int compared = 0, skipped = 0;
    for (int p = 0; p < 3000; ++p) {
        const std::string pattern = gen.pattern();
        std::regex std_re;
        try {
            std_re = std::regex(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error&) {
            ++skipped;
            continue;
        }
        const Regex re = must_compile(pattern);
        ws::RegexScratch scratch;
        for (int t = 0; t < 12; ++t) {
            std::string text;
            const int len = std::uniform_int_distribution<int>(0, 10)(rng);
            for (int i = 0; i < len; ++i) text += alphabet[std::uniform_int_distribution<size_t>(0, 6)(rng)];
            for (size_t from = 0; from <= text.size(); ++from) {
                std::smatch m;
                bool std_found = false;
                try {
                    std_found = std::regex_search(
                        text.cbegin() + static_cast<std::ptrdiff_t>(from), text.cend(), m, std_re,
                        from > 0 ? std::regex_constants::match_prev_avail : std::regex_constants::match_default);
                } catch (const std::regex_error&) {
                    ++skipped;
                    continue;
                }
                RegexMatch mine;
                const bool found = re.find(text.data(), text.size(), from, &mine, &scratch);
                INFO("pattern /" << pattern << "/ text \"" << text << "\" from " << from);
                REQUIRE(found == std_found);
                if (found) {
                    const size_t begin = from + static_cast<size_t>(m.position(0));
                    CHECK(mine.begin == begin);
                    CHECK(mine.end == begin + static_cast<size_t>(m.length(0)));
                }
                ++compared;
            }
        }
    }
    CHECK(compared > 100000);
    CHECK(skipped < compared / 100);
}

TEST_CASE("regex gives V8's matches for every real pre-tokenizer pattern over varied texts") {
    const std::string dir = std::string(WS_TESTDATA) + "/text";
    const nlohmann::json patterns = nlohmann::json::parse(read_text(dir + "/pretokenizer_patterns.json"));
    const nlohmann::json texts = nlohmann::json::parse(read_text(dir + "/regex_texts.json"));
    // The oracle runs now, from the same files: nothing generated is committed, so nothing can go stale.
    const std::string command = "node " + std::string(WS_TESTDATA) + "/../text/regex_oracle.mjs " + dir +
                                "/pretokenizer_patterns.json " + dir + "/regex_texts.json";
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buf[65536];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    REQUIRE(pclose(pipe) == 0);
    const nlohmann::json oracle = nlohmann::json::parse(out);
    const nlohmann::json& results = oracle["results"];
    REQUIRE(results.size() == patterns.size());
    int checked = 0;
    for (size_t p = 0; p < patterns.size(); ++p) {
        const std::string pattern = patterns[p]["pattern"];
        INFO("pattern " << p << " (" << patterns[p]["source"].get<std::string>() << "): " << pattern);
        auto compiled = Regex::compile(pattern);
        if (patterns[p].value("unsupported", false)) {
            CHECK(compiled.status().code == ws::Error::kUnsupported);
            continue;
        }
        REQUIRE(compiled.ok());
        REQUIRE(results[p].is_array());
        for (size_t t = 0; t < texts.size(); ++t) {
            const std::string text = texts[t];
            INFO("text " << t << ": " << text);
            CHECK(all_matches(compiled.value(), text) == results[p][t].get<std::vector<size_t>>());
            ++checked;
        }
    }
    CHECK(checked > 900);
}

TEST_CASE("regex's failure memo changes no match and keeps a split loop linear") {
    // A split loop with one scratch (the memo of where threads died) against searches that each start afresh, on
    // every real pre-tokenizer pattern over texts of whitespace runs, newlines and words, and the generated
    // patterns of the std::regex comparison above.
    const nlohmann::json patterns =
        nlohmann::json::parse(read_text(std::string(WS_TESTDATA) + "/text/pretokenizer_patterns.json"));
    std::vector<std::string> sources;
    for (const auto& p : patterns) {
        if (!p.value("unsupported", false)) sources.push_back(p["pattern"]);
    }
    PatternGenerator gen(2026120501);
    for (int i = 0; i < 300; ++i) sources.push_back(gen.pattern());
    std::mt19937 rng(11);
    const std::vector<std::string> pieces = {" ",  "  ", "\n", "\r\n", "\t",           "a",
                                             "ab", "1",  "!",  "'s",   "\xE4\xB8\x80", "_"};
    std::vector<std::string> texts = {std::string(1500, ' ') + "x",
                                      std::string(1500, ' ') + "\n" + std::string(700, ' ')};
    for (int t = 0; t < 40; ++t) {
        std::string text;
        const int n = std::uniform_int_distribution<int>(0, 300)(rng);
        for (int i = 0; i < n; ++i) text += pieces[std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng)];
        texts.push_back(text);
    }
    int compared = 0;
    for (const std::string& source : sources) {
        auto compiled = Regex::compile(source);
        if (!compiled.ok()) continue;  // a generated pattern outside the syntax
        const Regex& re = compiled.value();
        for (const std::string& text : texts) {
            std::vector<size_t> fresh;
            RegexMatch m;
            size_t from = 0;
            while (from <= text.size() && re.find(text.data(), text.size(), from, &m)) {
                fresh.push_back(m.begin);
                fresh.push_back(m.end);
                if (m.end > m.begin) {
                    from = m.end;
                } else {
                    if (m.end >= text.size()) break;
                    from = m.end + 1;
                    while (from < text.size() && (uint8_t(text[from]) & 0xC0) == 0x80) ++from;
                }
            }
            INFO("pattern " << source << " text " << nlohmann::json(text).dump());
            REQUIRE(all_matches(re, text) == fresh);
            ++compared;
        }
    }
    CHECK(compared > 10000);

    // jais-2's cascade on 1 MiB of spaces: 2,048 pieces of 512, each search stopped where the last saw
    // \s*[\r\n]+ die (without the memo each scanned to the end: 2,048 x 1 MiB steps, over ten seconds).
    const Regex jais2 = must_compile(patterns[1]["pattern"].get<std::string>());
    REQUIRE(patterns[1]["source"] == "llama.cpp JAIS2");
    const std::string spaces(size_t(1) << 20, ' ');
    const auto start = std::chrono::steady_clock::now();
    const std::vector<RegexMatch> cut = jais2.find_all(spaces.data(), spaces.size());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    REQUIRE(cut.size() == 2048);
    CHECK(cut[0].end == 512);
    CHECK(cut[2047].begin == spaces.size() - 512);
}

TEST_CASE("regex splits the llama-3 pattern as expected on a hand-checked text") {
    const Regex re = must_compile(
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
        "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+");
    const std::string text = "Hello WORLD'S 12345   x\n\n 你好!";
    std::vector<std::string> pieces;
    for (const RegexMatch& m : re.find_all(text.data(), text.size())) {
        pieces.push_back(text.substr(m.begin, m.end - m.begin));
    }
    const std::vector<std::string> want = {"Hello", " WORLD", "'S", " ", "123", "45", "  ", " x", "\n\n", " 你好", "!"};
    CHECK(pieces == want);
}

TEST_CASE("regex decodes invalid UTF-8 as one U+FFFD per byte, as llama.cpp does") {
    const Regex symbols = must_compile("[^\\s\\p{L}\\p{N}]+");  // U+FFFD is So
    const Regex letters = must_compile("\\p{L}+");
    // A lone continuation byte, a truncated sequence, an overlong form, a surrogate, a byte above F4.
    const std::string text = std::string("ab\x80") + "c\xE2\x82" + "d\xC0\xAF" + "e\xED\xA0\x80" + "f\xF5\x80";
    const std::vector<size_t> want_symbols = {2, 3, 4, 6, 7, 9, 10, 13, 14, 16};
    CHECK(all_matches(symbols, text) == want_symbols);
    const std::vector<size_t> want_letters = {0, 2, 3, 4, 6, 7, 9, 10, 13, 14};
    CHECK(all_matches(letters, text) == want_letters);
    // Every match boundary falls between the code points so decoded, and . consumes one invalid byte.
    const Regex dot = must_compile(".");
    CHECK(dot.find_all(text.data(), text.size()).size() == 16);  // 6 letters and 10 bytes that do not decode
}

TEST_CASE("regex search finds a match anywhere, for name filters") {
    const Regex re = must_compile("blk\\.[0-9]+\\.attn_(q|k)\\.weight$");
    CHECK(re.search(std::string("model.blk.12.attn_q.weight")));
    CHECK_FALSE(re.search(std::string("blk.12.attn_v.weight")));
    CHECK_FALSE(re.search(std::string("blk.12.attn_q.weight.bak")));
    const Regex anchored = must_compile("^token_embd");
    CHECK(anchored.search(std::string("token_embd.weight")));
    CHECK_FALSE(anchored.search(std::string("x.token_embd.weight")));
    const Regex icase = Regex::compile("ATTN", ws::RegexOptions{true}).value();
    CHECK(icase.search(std::string("blk.0.attn_q")));
}

TEST_CASE("regex supports the syntax of the tokenizers' patterns") {
    struct Case {
        const char* pattern;
        const char* text;
        std::vector<size_t> want;
    };
    const std::vector<Case> cases = {
        {"\\p{Lu}+", "abcDEFghi", {3, 6}},
        {"\\P{L}+", "ab12cd", {2, 4}},
        {"\\pN+", "ab12cd", {2, 4}},
        {"\\p{Han}+", "abc\xe4\xbd\xa0\xe5\xa5\xbd!", {3, 9}},
        {"[\\p{Script=Hiragana}]+", "a\xe3\x81\x82\xe3\x81\x84z", {1, 7}},
        {"\\x41\\u0042\\x{43}", "zABC", {1, 4}},
        {"a{2,3}?", "aaaa", {0, 2, 2, 4}},
        {"a{2,}", "aaaaa a", {0, 5}},
        {"x{,2}", "x{,2}", {0, 5}},  // not a quantifier: literal braces
        {"(?i)abc", "xAbC", {1, 4}},
        {"a(?i)b|c", "aBC", {0, 2, 2, 3}},                 // (?i) lasts to the end of the group, across |
        {"(?i:k)", "k\xe2\x84\xaaK", {0, 1, 1, 4, 4, 5}},  // the Kelvin sign folds to k
        {"(?i:[a-c])+", "xABCabc", {1, 7}},
        {"(?i:[a-z])", "\xc5\xbf\xe2\x84\xaa", {0, 2, 2, 5}},               // long s and the Kelvin sign
        {"(?i:\xcf\x83)", "\xce\xa3\xcf\x82\xcf\x83", {0, 2, 2, 4, 4, 6}},  // sigma: capital, final, small
        {"(?i:[\xce\xb1-\xcf\x89])+", "\xce\x91\xce\xa9!", {0, 4}},         // [alpha-omega] takes capitals
        {"(?i:\xc3\x9f)", "\xe1\xba\x9e", {0, 3}},                          // sharp s: capital U+1E9E
        {"(?i:[^a])", "Aab", {2, 3}},                                       // negation after folding
        {"\\s+(?!\\S)|\\s+", "a   b  ", {1, 3, 3, 4, 5, 7}},
        {"\\bab\\b", "ab cab ab_ ab", {0, 2, 11, 13}},
        {"(?<name>a)(?P<n2>b)", "ab", {0, 2}},
        {"\\Aa|b\\z", "aab", {0, 1, 2, 3}},
        {"[\\]\\-^]+", "a]-^b", {1, 4}},
        {"[a-]+", "a-b", {0, 2}},
        {"", "ab", {0, 0, 1, 1, 2, 2}},
        {"x*", "\xc3\xa9x", {0, 0, 2, 3, 3, 3}},  // after an empty match, one code point further
    };
    for (const Case& c : cases) {
        INFO("pattern " << c.pattern << " text " << c.text);
        CHECK(all_matches(must_compile(c.pattern), c.text) == c.want);
    }
}

TEST_CASE("regex rejects unsupported and malformed patterns with an error and its offset") {
    struct Case {
        const char* pattern;
        ws::Error code;
        size_t offset;
    };
    const std::vector<Case> cases = {
        {"(a)\\1", ws::Error::kUnsupported, 3},        // backreference
        {"x(?<=a)b", ws::Error::kUnsupported, 1},      // look-behind
        {"x(?<!a)b", ws::Error::kUnsupported, 1},      // look-behind
        {"a(?=bc)", ws::Error::kUnsupported, 1},       // look-ahead of two code points
        {"(?>a)", ws::Error::kUnsupported, 0},         // atomic group
        {"a++", ws::Error::kUnsupported, 2},           // possessive
        {"a**", ws::Error::kUnsupported, 2},           // nested quantifier
        {"*a", ws::Error::kUnsupported, 0},            // nothing to repeat
        {"a{3,2}", ws::Error::kUnsupported, 1},        // m < n
        {"\\q", ws::Error::kUnsupported, 0},           // unknown escape
        {"ab\\", ws::Error::kUnsupported, 2},          // trailing backslash
        {"[abc", ws::Error::kUnsupported, 0},          // unterminated class
        {"x[z-a]", ws::Error::kUnsupported, 3},        // range out of order
        {"(ab", ws::Error::kUnsupported, 0},           // unterminated group
        {"ab)", ws::Error::kUnsupported, 2},           // unmatched )
        {"\\p{Klingon}", ws::Error::kUnsupported, 0},  // unknown property
        {"\\p{L", ws::Error::kUnsupported, 0},
        {"\\p{scx=Han}", ws::Error::kUnsupported, 0},  // Script_Extensions: not in the tables
        {"a\xff", ws::Error::kUnsupported, 1},         // invalid UTF-8 in the pattern
        {"(?x)a", ws::Error::kUnsupported, 0},         // unsupported flag
        {"\\x4", ws::Error::kUnsupported, 0},
        {"[[:alpha:]]", ws::Error::kUnsupported, 1},
    };
    for (const Case& c : cases) {
        INFO("pattern " << c.pattern);
        auto r = Regex::compile(c.pattern);
        REQUIRE_FALSE(r.ok());
        CHECK(r.status().code == c.code);
        CHECK(r.status().offset == c.offset);
        CHECK(std::string(r.status().what).rfind("regex: ", 0) == 0);
    }
}

TEST_CASE("regex bounds hostile patterns: deep nesting, huge counts, compiled size") {
    // 100,000 nested groups: an error, not a stack overflow.
    const std::string deep = std::string(100000, '(') + "a" + std::string(100000, ')');
    auto r1 = Regex::compile(deep);
    CHECK(r1.status().code == ws::Error::kTooLarge);
    CHECK(r1.status().offset == ws::kRegexMaxNesting);
    // Deep, but within the limit: fine.
    const std::string ok_deep = std::string(150, '(') + "a" + std::string(150, ')');
    CHECK(must_compile(ok_deep).search(std::string("xa")));
    // Counted repetition past the program limit, directly and nested (which would be exponential).
    for (const char* p : {"a{100000}", "a{1000000000}", "(a{1000}){1000}", "((a{100}){100}){100}", "\\p{L}{99999,}",
                          "(?:[a-z]{50}|x){3000}"}) {
        INFO(p);
        const auto start = std::chrono::steady_clock::now();
        auto r = Regex::compile(p);
        CHECK(r.status().code == ws::Error::kTooLarge);
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    }
    // Long patterns: refused while parsing, before their nodes and classes take memory in proportion.
    for (const std::string& p : {std::string(2000000, 'a'), [] {
                                     std::string s;
                                     for (int i = 0; i < 200000; ++i) s += "(?i:[a-z\\p{Lu}])";
                                     return s;
                                 }()}) {
        const auto start = std::chrono::steady_clock::now();
        auto r = Regex::compile(p);
        CHECK(r.status().code == ws::Error::kTooLarge);
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    }
    // Just inside the limit compiles, and the program is bounded.
    const Regex big = must_compile("a{90000}");
    CHECK(big.program_size() <= ws::kRegexMaxProgram);
    // JAIS2's cascade of \s{512}(?!\S)... is well inside.
    CHECK(must_compile("\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{1,2}(?!\\S)").program_size() < 2000);
}

TEST_CASE("regex random patterns never crash, and matching them stays bounded") {
    std::mt19937 rng(99);
    const std::string alphabet = "ab()[]{}|*+?^$\\.-,0123456789:=!<>PpdsSwWbBkxu";
    const std::string text = "aab[]{}0123 ab\xc3\xa9\xe4\xbd\xa0 \xff\n";
    int compiled = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string p;
        const int len = std::uniform_int_distribution<int>(1, 16)(rng);
        for (int k = 0; k < len; ++k) p += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
        auto r = Regex::compile(p);
        if (!r.ok()) {
            CHECK(r.status().offset <= p.size());
            continue;
        }
        ++compiled;
        for (const RegexMatch& m : r.value().find_all(text.data(), text.size())) {
            REQUIRE(m.begin <= m.end);
            REQUIRE(m.end <= text.size());
        }
    }
    CHECK(compiled > 1000);
}

TEST_CASE("regex runs in linear time on patterns that make backtracking engines explode") {
    const std::string as(100000, 'a');
    struct Case {
        const char* pattern;
        bool want;
    };
    for (const Case& c : {Case{"(.*)*x", false}, Case{"(a|a)*b", false}, Case{"(a*)*b", false}, Case{"(a|aa)*c", false},
                          Case{"^(a+)+$", true}, Case{"(\\w+\\s?)*$", true}}) {
        INFO(c.pattern);
        const Regex re = must_compile(c.pattern);
        const auto start = std::chrono::steady_clock::now();
        CHECK(re.search(as) == c.want);
        // Quadratic would be ~10^10 steps; linear is a few million (ASan included, on a shared machine).
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    }
}

TEST_CASE("regex handles a 1 MB text and a 50 KB token-like name without recursion") {
    // A tensor name of 50 KB (valid in safetensors) inside a 1 MB text: std::regex recurses per character here.
    std::string name = "model.layers.0.";
    while (name.size() < 50000) name += "very_long_component.";
    name += "weight";
    std::string text;
    while (text.size() < 1000000) text += name + "\n";
    for (const char* p : {"\\.weight$", "^model\\.(\\w+\\.)*weight", "layers\\.[0-9]+\\..*weight", "(.*)*x"}) {
        INFO(p);
        const Regex re = must_compile(p);
        RegexMatch m;
        const bool found = re.find(name.data(), name.size(), 0, &m);
        CHECK(found == (std::string(p) != "(.*)*x"));
        CHECK_NOTHROW(re.find_all(text.data(), text.size()));
    }
    const Regex llama3 = must_compile(
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
        "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+");
    size_t covered = 0;
    for (const RegexMatch& m : llama3.find_all(text.data(), text.size())) covered += m.end - m.begin;
    CHECK(covered == text.size());  // this pattern splits any text without gaps
}
