// SPDX-License-Identifier: MIT
// Writes tests/data/text/llama_pretokenizer_pieces.json: the pieces llama.cpp's pre-tokenizers added after the
// 2025-02 snapshot cut texts into, as V8's RegExp (u flag) gives them, for tests/llama_tokenizer_test.cpp.
// Usage: node tests/text/pretokenizer_oracle.mjs > tests/data/text/llama_pretokenizer_pieces.json
//
// Each pre-tokenizer is llama.cpp's list of regex_exprs (src/llama-vocab.cpp, ggml-org/llama.cpp 00ad355),
// applied as unicode_regex_split() does: each inside the pieces of the last, the gaps between matches are pieces
// too (an empty match cuts the gap before it), empty pieces are dropped. The patterns are copied here from
// llama.cpp, not from weightstream's table, so that the two are independent. Modes:
//   "collapsed": a pattern with \p{..}, run as unicode_regex_split() runs it: over the "collapsed" text (each code
//           point above U+007F one character per category, White_Space as \v) with each \p{..} rewritten to its
//           collapsed character and llama.cpp's ASCII list for the category (k_ucat_map: no '~' in \p{S};
//           \p{Lu} .. \p{Lo} are letters), the rest of the pattern as is: std::regex's ECMAScript grammar is
//           JavaScript's, so V8 without the u flag runs it as std::regex does;
//   "onig": the pattern as Hugging Face's Oniguruma reads it, rewritten to JavaScript by regex_oracle.mjs's
//           translate() (\s is White_Space, ...);
//   "js":   the pattern as is: llama.cpp runs it with std::wregex in the C locale, whose \d and \b are ASCII, as
//           JavaScript's are (superbpe's and tiny_aya's digit patterns);
//   "emulated": a JavaScript pattern for what one of llama.cpp's hand-written splitters (src/unicode.cpp) does,
//           where the code differs from the regex its comment gives (written out in core/text/llama_pretokenizers.cpp).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { translate, utf8Offsets } from "./regex_oracle.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const data = join(here, "..", "data", "text");

const WS = "\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
// unicode_cpt_is_han: the CJK ideograph blocks
const HAN =
    "\\u4E00-\\u9FFF\\u3400-\\u4DBF\\u{20000}-\\u{2A6DF}\\u{2A700}-\\u{2EBEF}\\uF900-\\uFAFF\\u{2F800}-\\u{2FA1F}";

const PRE = {
    // unicode_regex_split_custom_kimi_k2: a word is any run of non-Han letters (no case split, no marks),
    // unassigned code points are no punctuation, a code point nothing matches is a piece of its own.
    "kimi-k2": [
        [
            "emulated",
            `[${HAN}]+|[^\\r\\n\\p{L}\\p{N}]?(?:(?![${HAN}])\\p{L})+(?:'[sS]|'[tT]|'[mM]|'[dD]|'[rR][eE]|'[vV][eE]|'[lL][lL])?` +
                `|\\p{N}{1,3}| ?[^${WS}\\p{L}\\p{N}\\p{Cn}]+[\\r\\n]*|[${WS}]*[\\r\\n]+|[${WS}]+(?![^${WS}])|[${WS}]+|[^]`,
        ],
    ],
    // unicode_regex_split_custom_afmoe: the text before a digit run joins the run's first piece
    afmoe: [
        ["emulated", "\\P{N}*\\p{N}{1,3}(?=(?:\\p{N}{3})*(?!\\p{N}))"],
        [
            "onig",
            "[\\u4E00-\\u9FFF\\u3400-\\u4DBF\\uF900-\\uFAFF\\u3040-\\u309F\\u30A0-\\u30FF\\uFF65-\\uFF9F\\u2F00-\\u2FDF\\u0E40-\\u0E7F" +
                "\\u0E80-\\u0EFF\\u1780-\\u17FF\\u1000-\\u109F\\uAA60-\\uAA7F\\uA9E0-\\uA9FF\\uAC00-\\uD7AF\\u1100-\\u11FF]+",
        ],
        [
            "collapsed",
            "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        ],
    ],
    superbpe: [
        ["collapsed", "\\p{N}+"],
        ["js", "(?=(\\d{3})+(?!\\d))"],
    ],
    // llama.cpp's \d{1,3}(?=(?:\d{3})*\b) as libstdc++ runs it: at the start of the text its first attempt has no
    // character before the look-ahead, so a \b where the look-ahead starts holds before a word character (the
    // ^ alternatives); elsewhere the pattern as JavaScript runs it (tests/llama_tokenizer_test.cpp checks this
    // splitter against std::wregex itself).
    tiny_aya: [
        [
            "emulated",
            "^\\d{3}(?=\\d)|^\\d{1,3}(?=[A-Za-z_])|^\\d{1,2}(?=\\d(?![0-9A-Za-z_]))|(?!^)\\d{1,3}(?=(?:\\d{3})*\\b)",
        ],
        [
            "collapsed",
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        ],
    ],
    spark2_5: [
        ["collapsed", "\\p{N}{1,3}"],
        ["onig", "[\\u4E00-\\u9FA5\\u3040-\\u309F\\u30A0-\\u30FF]+"],
        [
            "collapsed",
            "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
        ],
        ["collapsed", "\\p{N}"],
    ],
    ufakzeka: [
        [
            "collapsed",
            "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        ],
    ],
};

// Texts: the regex and tokenizer corpora, and runs these pre-tokenizers treat specially.
const EXTRA = [
    "1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890",
    "x1234 1234x 1234_ _1234 1234. 1234-5678 3.14159 1,000,000 $1234567.89",
    "٠١٢٣٤٥٦٧ १२३४५ ¹²³⁴ ½¾ 12٣45 Ⅻ 12Ⅻ",
    "中文文本12345汉字。日本語のテキスト、カタカナ123 한국어 텍스트 〇々〆 ⺀⺁ 𠀀𠀁 豈更",
    "HelloWorld camelCaseWord XMLHttpRequest iPhone McDonald's DON'T we'RE they'll I'M",
    "naïve café résumé e\u0301 a\u0300\u0301b Ελληνικά Русский текст עברית العربية हिन्दी ไทย",
    "emoji 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ ✨✨ 1️⃣",
    "tabs\t\tand  spaces   and\n\n\nnewlines \r\n\r\n  \u00a0\u3000 end   ",
    "for (int i = 0; i < 10000; ++i) { x[i] = y ~ z ** 2; } // 1000000 ~/path a~b",
    "unassigned \ufdd0\ufdd0 x\ufdd0y \ufdd0! !\ufdd0 \u0378a",
    "'s 's 'S 're 'RE abc'def 1'2 中's ''",
    "2024年1月15日 第123456号 ১২৩ 12ab 12 ab 12_ab",
];

// unicode_regex_split's collapsed text and patterns (src/unicode.cpp): category -> its character and ASCII list.
const COLLAPSED = {
    N: ["\uE001", "0-9"],
    L: ["\uE002", "A-Za-z"],
    P: ["\uE003", "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"],
    M: ["\uE004", ""],
    S: ["\uE005", "\\$\\+<->\\^`\\|"],
};
for (const sub of ["Lu", "Ll", "Lt", "Lm", "Lo"]) COLLAPSED[sub] = COLLAPSED.L;
const WHITE_SPACE = new RegExp(`[${WS}]`, "u");
const CATEGORY = Object.entries({ N: /\p{N}/u, L: /\p{L}/u, P: /\p{P}/u, M: /\p{M}/u, S: /\p{S}/u });

// The collapsed text: one UTF-16 unit per code point of text, and at[k] the UTF-16 index in text of unit k.
function collapse(text) {
    let s = "";
    const at = [];
    for (let k = 0; k < text.length;) {
        const cp = text.codePointAt(k);
        const ch = String.fromCodePoint(cp);
        at.push(k);
        if (cp < 128) s += ch;
        else if (WHITE_SPACE.test(ch)) s += "\v";
        else s += String.fromCharCode(0xe000 + (CATEGORY.findIndex(([, re]) => re.test(ch)) + 1));
        k += ch.length;
    }
    at.push(text.length);
    return { s, at };
}

// A pattern as unicode_regex_split() rewrites it for the collapsed text.
function collapsePattern(pattern) {
    let out = "";
    let inside = false;
    for (let i = 0; i < pattern.length; ++i) {
        const c = pattern[i];
        if (c === "[" && pattern[i - 1] !== "\\") inside = true;
        else if (c === "]" && inside && pattern[i - 1] !== "\\") inside = false;
        const m = c === "\\" ? /^\\p\{(L[ultmo]?|N|P|M|S)\}/.exec(pattern.slice(i)) : null;
        if (!m) {
            out += c;
            continue;
        }
        const [ch, ascii] = COLLAPSED[m[1]];
        out += inside ? ch + ascii : `[${ch}${ascii}]`;
        i += m[0].length - 1;
    }
    return out;
}

const read = (name) => JSON.parse(readFileSync(join(data, name), "utf8"));
const texts = [...read("regex_texts.json"), ...read("tokenizer_corpus.json"), ...EXTRA];

function compile([mode, pattern]) {
    if (mode === "collapsed") return { collapsed: new RegExp(collapsePattern(pattern), "g") };
    return new RegExp(mode === "onig" ? translate(pattern) : pattern, "gu");
}

// The pieces of text as UTF-16 [begin, end) ranges.
function split(text, steps) {
    let pieces = text.length > 0 ? [[0, text.length]] : [];
    for (const re of steps) {
        const next = [];
        for (const [b, e] of pieces) {
            const sub = text.slice(b, e);
            // A collapsed step matches over the collapsed piece; its ends map back to the text.
            const { s, at } = re.collapsed ? collapse(sub) : { s: sub, at: null };
            const to = (k) => b + (at ? at[k] : k);
            let gap = 0;
            for (const m of s.matchAll(re.collapsed ?? re)) {
                if (m.index > gap) next.push([to(gap), to(m.index)]);
                if (m[0].length > 0) next.push([to(m.index), to(m.index + m[0].length)]);
                gap = m.index + m[0].length;
            }
            if (gap < s.length) next.push([to(gap), e]);
        }
        pieces = next;
    }
    return pieces;
}

const pieces = {};
for (const [name, steps] of Object.entries(PRE)) {
    const compiled = steps.map(compile);
    pieces[name] = texts.map((text) => {
        const offsets = utf8Offsets(text);
        return split(text, compiled).map(([, e]) => offsets[e]);
    });
}
const out = {
    about: "tests/text/pretokenizer_oracle.mjs: per pre-tokenizer, per text, the UTF-8 byte offset where each piece ends",
    node: process.version,
    unicode: process.versions.unicode,
    texts,
    pieces,
};
process.stdout.write(JSON.stringify(out) + "\n");
