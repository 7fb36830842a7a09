// SPDX-License-Identifier: MIT
// Writes tests/data/text/precompiled_normalized.json: what Hugging Face's Precompiled normalizer makes of texts
// with SentencePiece's nmt_nfkc charsmap (tests/data/text/nmt_nfkc.charsmap), for tests/precompiled_test.cpp and
// tests/js/tokenizer.test.mjs.
// Usage: node tests/text/precompiled_oracle.mjs > tests/data/text/precompiled_normalized.json
//
// An independent reimplementation from the Rust sources, sharing no code with core/: the double array of
// spm_precompiled (huggingface/spm_precompiled 3795b14, src/lib.rs: common_prefix_search, transform) and the loop
// of tokenizers' normalizers/precompiled.rs (huggingface/tokenizers 3ba8ad0): per extended grapheme cluster, one
// of under 6 UTF-8 bytes is looked up whole and replaced by the FIRST (shortest) key's string when some key
// prefixes it; otherwise each character is looked up alone and kept when no key prefixes it. Graphemes are
// Intl.Segmenter's (ICU; Node 20.20 has ICU 78.2, Unicode 17, with GB9c), where the crate uses unicode-segmentation
// (tokenizers asks for "1.11": today's resolution is 1.13, Unicode 17, GB9c too). weightstream segments by
// Unicode 15.0 without GB9c (the 15.0 database has no InCB), so each case says whether it may differ there:
// "gb9c" when it holds an InCB=Linker virama (a conjunct may be one cluster here and two there), "age" when it
// holds a code point assigned after 15.0 (DerivedAge.txt).
// Each case: the text, the normalized text, and the UTF-8 end offsets of Intl.Segmenter's graphemes.
// "tokenizers": Unigram tokenizer.json pipelines with a hand-built vocabulary (no npm package ships a T5 or XLM-R
// tokenizer.json): T5's (Precompiled; WhitespaceSplit + Metaspace) and XLM-R's (Sequence[Precompiled, Replace
// " {2,}" -> " "]; Metaspace). The ids of each text are @huggingface/tokenizers' (the JavaScript port, whose own
// Precompiled is an NFKC approximation, so it is given the text normalized here and the pipeline without it).
// The tests build the tokenizer.json as {"model": model, "normalizer": Precompiled, or Sequence[Precompiled,
// ...after], "pre_tokenizer": pre_tokenizer}.
import { readFileSync } from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const data = join(here, "..", "data", "text");
const blob = readFileSync(join(data, "nmt_nfkc.charsmap"));

// [u32 trie bytes][units][strings]
const trieBytes = blob.readUInt32LE(0);
const units = [];
for (let i = 0; i < trieBytes / 4; ++i) units.push(blob.readUInt32LE(4 + i * 4));
const strings = blob.subarray(4 + trieBytes);

const hasLeaf = (u) => ((u >>> 8) & 1) === 1;
const value = (u) => u & 0x7fffffff;
const label = (u) => (u & 0x800000ff) >>> 0;
const offset = (u) => (u >>> 10) << ((u & (1 << 9)) >>> 6);

function commonPrefixSearch(key) {
    let pos = 0;
    const results = [];
    let unit = units[pos];
    pos ^= offset(unit);
    for (const c of key) {
        if (c === 0) break;
        pos ^= c;
        unit = units[pos];
        if (label(unit) !== c) return results;
        pos ^= offset(unit);
        if (hasLeaf(unit)) results.push(value(units[pos]));
    }
    return results;
}

function transform(chunk) {
    const results = commonPrefixSearch(Buffer.from(chunk, "utf8"));
    if (results.length === 0) return null;
    const start = results[0];
    let end = start;
    while (end < strings.length && strings[end] !== 0) ++end;
    return strings.subarray(start, end).toString("utf8");
}

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" });
function normalize(text) {
    let out = "";
    const ends = [];
    let at = 0;
    for (const { segment } of segmenter.segment(text)) {
        at += Buffer.byteLength(segment, "utf8");
        ends.push(at);
        if (Buffer.byteLength(segment, "utf8") < 6) {
            const norm = transform(segment);
            if (norm !== null) {
                out += norm;
                continue;
            }
        }
        for (const c of segment) {
            const norm = transform(c);
            out += norm === null ? c : norm;
        }
    }
    return { normalized: out, graphemes: ends };
}

// Code points assigned after Unicode 15.0.
const late = [];
for (const line of readFileSync("/usr/share/unicode/DerivedAge.txt", "utf8").split("\n")) {
    const m = /^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*([0-9.]+)/.exec(line);
    if (m && parseFloat(m[3]) > 15.0) late.push([parseInt(m[1], 16), parseInt(m[2] ?? m[1], 16)]);
}
const LINKERS = [0x94d, 0x9cd, 0xacd, 0xb4d, 0xc4d, 0xd4d];
function mark(text) {
    for (const ch of text) {
        const cp = ch.codePointAt(0);
        if (LINKERS.includes(cp)) return "gb9c";
    }
    for (const ch of text) {
        const cp = ch.codePointAt(0);
        if (late.some(([a, b]) => cp >= a && cp <= b)) return "age";
    }
    return null;
}

const EXTRA = [
    "\uFB01 \uFB02 \uFB03 of\uFB01ce",
    "\u2122 \u2120 \u2121 \u00A9 \u00AE",
    "\uFF21\uFF22\uFF23\u3000\uFF11\uFF12\uFF13\uFF01 \uFF5E \u301C",
    "\u2460\u2461\u2462 \u337B \u3300 \u00BD \u00B2 \u2075",
    "a\u0001b\u0002c\u007Fd\u008Fe\u009Ff\u000Bg\u001Eh",
    "a  \t\n  b\u3000\u00A0c\u2028d\u2029e \u200B f\u200Dg\uFEFFh\u2581i\uFFFDj",
    "\u200D",
    "\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67\u200D\uD83D\uDC66 \uD83D\uDC4D\uD83C\uDFFD 1\uFE0F\u20E3 \u2764\uFE0F",
    "\uD83C\uDDFA\uD83C\uDDF8\uD83C\uDDEB\uD83C\uDDF7\uD83C\uDDFA",
    "\uD55C\uAD6D\uC5B4 \u1100\u1161\u11A8 \u1100\u1161 \u3131\u314F",
    "e\u0301 a\u0300\u0316 n\u0303 A\u030A e\u0301\u0302\u0303 \uFF41\u0301 \uFF41\u0301\u0302",
    "\uD835\uDD3E\uD835\uDD60\uD835\uDD60\uD835\uDD58\uD835\uDD5D\uD835\uDD56",
    "\u0E40\u0E02\u0E32\u0E44\u0E21\u0E48\u0E44\u0E14\u0E49\u0E1E\u0E39\u0E14\u0E2A\u0E31\u0E01\u0E04\u0E33",
    "\u0921\u093C\u0940 \u0926\u0941\u0916 \u0915\u094D\u0937 \u0915\u094D\u0937\u093F",
    "\u0627\u0653 \u0622 \uFEF5 \uFDFA",
    "a\u0000b",
    "\uFF76\uFF9E\uFF77\uFF9E \uFF8A\uFF9F \uFF71\uFF72\uFF73",
    "\r\n \r \n\r",
    "\u00C5ngstr\u00F6m \u212B \u2126 \u00B5 \u03BC",
    "\u1E9B\u0323 \u0130 \u0131 \u00DF \u1E9E",
    "\u3000\u3000x\u3000",
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F",
    "\u0F00\u0F73\u0F75\u0F77\u0F79\u0F81",
    "\uD83E\uDEF8\uD83C\uDFFF \uD83E\uDEE8",
];

const VOCAB = [
    ["<unk>", 0],
    ["\u2581", -2],
    ["\u2581fi", -1],
    ["fi", -1.5],
    ["TM", -1],
    ["\u2581TM", -0.5],
    ["\u2581ABC", -1],
    ["A", -3],
    ["B", -3],
    ["C", -3],
    ["\u2581a", -2],
    ["a", -2.5],
    ["\u00e9", -2],
    ["\u2581G", -2],
    ["o", -2],
    ["g", -2],
    ["l", -2],
    ["e", -2],
    ["\u2581\u2581", -4],
    ["1", -2],
    ["2", -2],
    ["3", -2],
    ["\u25811", -2.5],
    ["\u30ac", -2],
    ["\u2581\u30ac", -1.5],
    ["\u2581\u5e73\u6210", -1],
];
const METASPACE = { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true };
const PIPELINES = [
    {
        name: "t5",
        model: { type: "Unigram", unk_id: 0, vocab: VOCAB },
        after: [],
        pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "WhitespaceSplit" }, METASPACE] },
    },
    {
        name: "xlm-r",
        model: { type: "Unigram", unk_id: 0, vocab: VOCAB },
        after: [{ type: "Replace", pattern: { Regex: " {2,}" }, content: " " }],
        pre_tokenizer: METASPACE,
    },
];
const TOKENIZER_TEXTS = [
    "\uFB01 \u2122 \uFF21\uFF22\uFF23 \uD835\uDD3Eoogle e\u0301",
    "\uFB01\u3000\t \u2122",
    "\u2460\u2461\u2462 \u337B \uFF76\uFF9E",
    "a\u0001a\u200Da  \u00A0 \uFF41\u0301",
    "\r\n\r\nfi\uFB01",
    "",
    "   ",
    "zzz \uD83D\uDC4D\uD83C\uDFFD",
];
function pipelineIds(p) {
    const json = { model: p.model, normalizer: p.after.length ? { type: "Sequence", normalizers: p.after } : null };
    json.pre_tokenizer = p.pre_tokenizer;
    Object.assign(json, { decoder: null, post_processor: null, added_tokens: [] });
    const tokenizer = new Tokenizer(json, {});
    return TOKENIZER_TEXTS.map((text) => ({
        text,
        ids: tokenizer.encode(normalize(text).normalized, { add_special_tokens: false }).ids,
    }));
}
const tokenizers = PIPELINES.map((p) => ({ ...p, cases: pipelineIds(p) }));

const texts = [...JSON.parse(readFileSync(join(data, "tokenizer_corpus.json"), "utf8")), ...EXTRA];
const cases = texts.map((text) => ({ text, ...normalize(text), mark: mark(text) }));
const out = {
    charsmap: "nmt_nfkc.charsmap",
    node: process.versions.node,
    icu: process.versions.icu,
    unicode: process.versions.unicode,
    cases,
    tokenizers,
};
process.stdout.write(JSON.stringify(out, null, 0).replace(/\{"text"/g, '\n{"text"') + "\n");
