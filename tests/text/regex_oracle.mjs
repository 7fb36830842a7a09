// SPDX-License-Identifier: MIT
// The independent oracle of tests/regex_test.cpp: every pattern of PATTERNS.json over every text of
// TEXTS.json, matched by V8's RegExp with the u flag (leftmost-first, like weightstream's engine), printed as
// JSON: {node, unicode, results: [per pattern: {error} or [per text: [begin, end, begin, end, ...] in UTF-8
// bytes]]}. Usage: node regex_oracle.mjs PATTERNS.json TEXTS.json
//
// The patterns use Oniguruma's (Hugging Face's) syntax; where ECMAScript means something else it is rewritten
// to the same meaning first: \s is White_Space (JavaScript's \s adds U+FEFF and lacks U+0085), \d is \p{Nd}
// and \w is [\p{L}\p{M}\p{Nd}\p{Pc}] (ASCII-only in JavaScript), \b is a boundary of that \w, . excludes only
// \n, \p{Han} is \p{Script=Han}, and (?i:...) (not in Node 20) becomes classes of the case variants of each
// letter (JavaScript's /iu uses the same simple case folding).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const WS = "\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const W = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}";
const CATEGORIES = new Set(
    (
        "L LC Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So " +
        "Z Zs Zl Zp C Cc Cf Cs Co Cn Any Letter Mark Number Punctuation Symbol Separator Other"
    ).split(" "),
);

const variantsCache = new Map();
function caseVariants(ch) {
    if (variantsCache.has(ch)) return variantsCache.get(ch);
    const re = new RegExp("^" + ch.replace(/[\\^$.*+?()[\]{}|\/-]/g, "\\$&") + "$", "iu");
    const out = [];
    for (let cp = 0; cp <= 0x1ffff; ++cp) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        const s = String.fromCodePoint(cp);
        if (re.test(s)) out.push(s);
    }
    variantsCache.set(ch, out);
    return out;
}
const classEscape = (s) => s.replace(/[\\\]\[^-]/g, "\\$&");

function property(name, negated) {
    const p = negated ? "\\P" : "\\p";
    return CATEGORIES.has(name) ? `${p}{${name}}` : `${p}{Script=${name}}`;
}

// Rewrites an Oniguruma-syntax pattern to an equivalent JavaScript /u pattern (also used by
// pretokenizer_oracle.mjs).
export function translate(src) {
    const cps = Array.from(src);
    let out = "";
    let inClass = false;
    const groups = []; // per open group: was the enclosing (?i) state
    let icase = false;
    for (let i = 0; i < cps.length; ++i) {
        const c = cps[i];
        if (c === "\\") {
            const e = cps[++i];
            if (e === "p" || e === "P") {
                let name;
                if (cps[i + 1] === "{") {
                    const close = cps.indexOf("}", i);
                    name = cps.slice(i + 2, close).join("");
                    i = close;
                } else {
                    name = cps[++i];
                }
                out += property(name, e === "P");
            } else if (e === "s") {
                out += inClass ? WS : `[${WS}]`;
            } else if (e === "S") {
                if (inClass) throw new Error("\\S inside a class");
                out += `[^${WS}]`;
            } else if (e === "d") {
                out += "\\p{Nd}";
            } else if (e === "D") {
                out += "\\P{Nd}";
            } else if (e === "w") {
                out += inClass ? W : `[${W}]`;
            } else if (e === "W") {
                if (inClass) throw new Error("\\W inside a class");
                out += `[^${W}]`;
            } else if (e === "b" && !inClass) {
                out += `(?:(?<=[${W}])(?![${W}])|(?<![${W}])(?=[${W}]))`;
            } else {
                out += "\\" + e;
            }
            continue;
        }
        if (inClass) {
            if (c === "]") {
                inClass = false;
                out += c;
            } else if (icase && /\p{L}/u.test(c)) {
                out += caseVariants(c).map(classEscape).join("");
            } else {
                out += c;
            }
            continue;
        }
        if (c === "[") {
            inClass = true;
            out += c;
            if (cps[i + 1] === "^") out += cps[++i];
            if (cps[i + 1] === "]") out += "\\" + cps[++i];
            continue;
        }
        if (c === "(") {
            groups.push(icase);
            if (cps[i + 1] === "?" && cps[i + 2] === "i" && cps[i + 3] === ":") {
                icase = true;
                i += 3;
                out += "(?:";
                continue;
            }
            out += c;
            continue;
        }
        if (c === ")") {
            icase = groups.pop();
            out += c;
            continue;
        }
        if (c === ".") {
            out += "[^\\n]";
            continue;
        }
        if (icase && /\p{L}/u.test(c)) {
            out += "[" + caseVariants(c).map(classEscape).join("") + "]";
            continue;
        }
        out += c;
    }
    return out;
}

export function utf8Offsets(text) {
    // offsets[k] = the UTF-8 byte offset of UTF-16 index k
    const offsets = new Array(text.length + 1);
    let bytes = 0;
    for (let k = 0; k < text.length;) {
        const cp = text.codePointAt(k);
        const units = cp > 0xffff ? 2 : 1;
        offsets[k] = bytes;
        if (units === 2) offsets[k + 1] = bytes;
        bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        k += units;
    }
    offsets[text.length] = bytes;
    return offsets;
}

function main() {
    const patterns = JSON.parse(readFileSync(process.argv[2], "utf8"));
    const texts = JSON.parse(readFileSync(process.argv[3], "utf8"));
    const results = patterns.map(({ pattern }) => {
        let re;
        try {
            re = new RegExp(translate(pattern), "gu");
        } catch (e) {
            return { error: String(e.message) };
        }
        return texts.map((text) => {
            const offsets = utf8Offsets(text);
            const flat = [];
            for (const m of text.matchAll(re)) flat.push(offsets[m.index], offsets[m.index + m[0].length]);
            return flat;
        });
    });
    process.stdout.write(JSON.stringify({ node: process.version, unicode: process.versions.unicode, results }) + "\n");
}

// Run as a program (not when imported).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
