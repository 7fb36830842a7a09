// SPDX-License-Identifier: MIT
// The tokenizer view, from the GGUF tokenizer keys (tokenizer.ggml.*): the playground (tokenize_view.js), the special
// tokens, a virtualized
// list of every token (id, text, score, type) searchable both ways (an id shows that token; text shows the
// tokens that hold it, exact matches first), and the merges. Token text is put in as text with visible
// escapes for control, whitespace and invisible characters (an escape is its own span, so a literal "\n" in
// a token and an escaped newline look different).
import { el, clear } from "./dom.js";
import { formatF32, formatInt } from "./format.js";
import { VirtualList } from "./virtual_list.js";

const ROW_HEIGHT = 26;
const SEARCH_DELAY_MS = 120;

// llama.cpp's llama_token_type (the values of tokenizer.ggml.token_type).
export const TOKEN_TYPES = {
    0: "undefined",
    1: "normal",
    2: "unknown",
    3: "control",
    4: "user-defined",
    5: "unused",
    6: "byte",
};

// The special token ids llama.cpp reads (llama-vocab.cpp, LLM_KV_TOKENIZER_*_ID), in the order shown.
const SPECIAL_IDS = [
    ["bos", "tokenizer.ggml.bos_token_id"],
    ["eos", "tokenizer.ggml.eos_token_id"],
    ["eot", "tokenizer.ggml.eot_token_id"],
    ["eom", "tokenizer.ggml.eom_token_id"],
    ["unk", "tokenizer.ggml.unknown_token_id"],
    ["sep", "tokenizer.ggml.seperator_token_id"],
    ["sep", "tokenizer.ggml.separator_token_id"],
    ["pad", "tokenizer.ggml.padding_token_id"],
    ["cls", "tokenizer.ggml.cls_token_id"],
    ["mask", "tokenizer.ggml.mask_token_id"],
    ["fim_pre", "tokenizer.ggml.fim_pre_token_id"],
    ["fim_suf", "tokenizer.ggml.fim_suf_token_id"],
    ["fim_mid", "tokenizer.ggml.fim_mid_token_id"],
];

// Characters shown as escapes: C0 and C1 controls, DEL, every Unicode space and line separator other than
// U+0020 (shown as the visible "␣"), and the invisible format characters (zero-width, bidi controls, BOM).
const ESCAPED = /[\u0000-\u0020\u007f-\u00a0\u00ad\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]/gu;
const NAMED = { "\n": "\\n", "\r": "\\r", "\t": "\\t", " ": "␣" };

/** A token's text as parts [{text, escape}]: plain runs, and one escape per invisible character. */
export function tokenParts(text) {
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(ESCAPED)) {
        if (match.index > last) parts.push({ text: text.slice(last, match.index), escape: false });
        const c = match[0];
        const code = c.codePointAt(0);
        const escape =
            NAMED[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`);
        parts.push({ text: escape, escape: true });
        last = match.index + c.length;
    }
    if (last < text.length) parts.push({ text: text.slice(last), escape: false });
    if (parts.length === 0) parts.push({ text: "(empty)", escape: true });
    return parts;
}

/** Fills `node` with a token's text (escapes as spans of class "esc"). */
export function renderToken(node, text) {
    clear(
        node,
        tokenParts(text).map((p) => (p.escape ? el("span", { class: "esc", text: p.text }) : p.text)),
    );
    node.title = JSON.stringify(text);
}

/** The tokenizer facts of a model's metadata, or null when it has no tokenizer.ggml.tokens. */
export function tokenizerOf(metadata) {
    const get = (key) => metadata.find((m) => m.key === key);
    const tokens = get("tokenizer.ggml.tokens")?.value;
    if (!Array.isArray(tokens)) return null;
    const array = (key) => (Array.isArray(get(key)?.value) ? get(key).value : null);
    const special = [];
    for (const [name, key] of SPECIAL_IDS) {
        const value = get(key)?.value;
        if (typeof value === "number" || typeof value === "bigint") special.push({ name, key, id: Number(value) });
    }
    const flags = ["add_bos_token", "add_eos_token", "add_space_prefix"]
        .map((name) => ({ name, value: get(`tokenizer.ggml.${name}`)?.value }))
        .filter((f) => typeof f.value === "boolean");
    return {
        model: get("tokenizer.ggml.model")?.value ?? null,
        pre: get("tokenizer.ggml.pre")?.value ?? null,
        tokens,
        scores: array("tokenizer.ggml.scores"),
        types: array("tokenizer.ggml.token_type"),
        merges: array("tokenizer.ggml.merges"),
        special,
        flags,
    };
}

/**
 * The ids a search shows, in order: for a number, that id; then the tokens equal to the query, then those
 * that contain it (case-insensitively). `lowered`: the tokens in lower case.
 */
export function searchTokens(tokens, query, lowered) {
    const q = query;
    if (q === "") return null;
    const out = [];
    const seen = new Set();
    const add = (i) => {
        if (!seen.has(i)) {
            seen.add(i);
            out.push(i);
        }
    };
    if (/^\s*\d+\s*$/.test(q)) {
        const id = Number(q);
        if (id < tokens.length) add(id);
    }
    for (let i = 0; i < tokens.length; ++i) if (tokens[i] === q) add(i);
    const needle = q.toLowerCase();
    for (let i = 0; i < tokens.length; ++i) if (lowered[i].includes(needle)) add(i);
    return out;
}

export class TokenizerView {
    #root;
    #playground; // the TokenizePlayground shown above the table (tokenize_view.js)
    #tokenizer = null;
    #lowered = null;
    #shown = null; // ids on show (null: all)
    #search;
    #count;
    #viewport;
    #list;
    #mergeList = null;
    #timer = 0;
    #drawn = false;

    constructor(root, playground) {
        this.#root = root;
        this.#playground = playground;
        this.#search = el("input", {
            type: "search",
            placeholder: "Token id or text",
            attrs: { "aria-label": "Find a token by id or text", "data-testid": "token-search" },
            on: { input: () => this.#scheduleSearch() },
        });
        this.#count = el("span", { class: "count", attrs: { "aria-live": "polite", "data-testid": "token-count" } });
        this.#viewport = el(
            "div",
            {
                class: "table-viewport token-grid",
                tabIndex: 0,
                attrs: { role: "table", "aria-label": "Tokens", "data-testid": "token-table" },
            },
            el(
                "div",
                { class: "trow thead", attrs: { role: "row" } },
                ["id", "text", "score", "type"].map((h) =>
                    el("span", { class: `cell t-${h}`, text: h, attrs: { role: "columnheader" } }),
                ),
            ),
        );
        this.#list = new VirtualList(this.#viewport, {
            rowHeight: ROW_HEIGHT,
            createRow: () => {
                const row = el("div", { class: "trow", attrs: { role: "row", "data-testid": "token-row" } });
                row.cells = ["id", "text", "score", "type"].map((h) =>
                    el("span", { class: `cell t-${h}`, attrs: { role: "cell" } }),
                );
                row.append(...row.cells);
                return row;
            },
            renderRow: (row, i) => this.#renderRow(row, i),
        });
    }

    /** Takes the tokenizer of `metadata` (tokenizerOf()); false when it has none. show() draws it. */
    setMetadata(metadata) {
        this.#tokenizer = tokenizerOf(metadata);
        this.#lowered = null;
        this.#shown = null;
        this.#search.value = "";
        clearTimeout(this.#timer);
        this.#mergeList?.dispose();
        this.#mergeList = null;
        this.#drawn = false;
        clear(this.#root);
        return this.#tokenizer !== null;
    }

    /** Draws the view (once per model, when its tab is first shown). */
    show() {
        if (this.#drawn || !this.#tokenizer) return;
        this.#drawn = true;
        const t = this.#tokenizer;
        const facts = [
            ["model", t.model ?? "–"],
            t.pre ? ["pre-tokenizer", t.pre] : null,
            ["tokens", formatInt(t.tokens.length)],
            ["merges", t.merges ? formatInt(t.merges.length) : "none"],
            ...t.flags.map((f) => [f.name, String(f.value)]),
        ].filter(Boolean);
        const specials = el(
            "ul",
            { class: "special-tokens", attrs: { "data-testid": "special-tokens" } },
            t.special.map((s) => {
                const text = el("code", { class: "token-text" });
                if (s.id >= 0 && s.id < t.tokens.length) renderToken(text, t.tokens[s.id]);
                else text.textContent = "(no such token)";
                return el(
                    "li",
                    { dataset: { special: s.name, id: String(s.id) }, title: s.key },
                    el("span", { class: "muted", text: `${s.name} ` }),
                    el("button", {
                        type: "button",
                        class: "link",
                        text: formatInt(s.id),
                        on: { click: () => this.find(String(s.id)) },
                    }),
                    " ",
                    text,
                );
            }),
        );
        // The added tokens: control and user-defined ones (llama.cpp's special tokens), at most 200 listed.
        const added = [];
        if (t.types) {
            for (let i = 0; i < t.types.length && added.length < 200; ++i) {
                if (t.types[i] === 3 || t.types[i] === 4) added.push(i);
            }
        }
        const addedList = el(
            "ul",
            { class: "added-tokens", attrs: { "data-testid": "added-tokens" } },
            added.map((i) => {
                const text = el("code", { class: "token-text" });
                renderToken(text, t.tokens[i]);
                return el(
                    "li",
                    { dataset: { id: String(i) } },
                    el("button", {
                        type: "button",
                        class: "link",
                        text: formatInt(i),
                        on: { click: () => this.find(String(i)) },
                    }),
                    " ",
                    text,
                );
            }),
        );
        const tokensBox = el(
            "section",
            { class: "tokens-box" },
            el("div", { class: "toolbar" }, this.#search, this.#count),
            this.#viewport,
        );
        const side = el(
            "section",
            { class: "tokenizer-side" },
            el(
                "dl",
                { class: "facts" },
                facts.map(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]),
            ),
            el("h3", { text: "Special tokens" }),
            t.special.length ? specials : el("p", { class: "muted", text: "No special token ids in the file." }),
            added.length ? el("h3", { text: "Control and added tokens" }) : null,
            added.length ? addedList : null,
            t.merges ? this.#mergesBox(t.merges) : null,
        );
        clear(this.#root, this.#playground.node, el("div", { class: "tokenizer-layout" }, tokensBox, side));
        this.#apply();
    }

    /** Searches for `query` (an id or text). */
    find(query) {
        this.show();
        this.#search.value = query;
        this.#runSearch();
    }

    focusSearch() {
        this.#search.focus();
        this.#search.select();
    }

    #mergesBox(merges) {
        const viewport = el("div", {
            class: "table-viewport merge-grid",
            attrs: { role: "list", "aria-label": "Merges", "data-testid": "merge-table" },
        });
        const box = el(
            "section",
            { class: "merges-box" },
            el("h3", { text: `Merges (${formatInt(merges.length)}, by rank)` }),
            viewport,
        );
        this.#mergeList = new VirtualList(viewport, {
            rowHeight: ROW_HEIGHT,
            createRow: () => {
                const row = el("div", { class: "trow", attrs: { role: "listitem", "data-testid": "merge-row" } });
                row.cells = [el("span", { class: "cell t-id" }), el("code", { class: "cell token-text" })];
                row.append(...row.cells);
                return row;
            },
            renderRow: (row, i) => {
                row.dataset.rank = String(i);
                row.cells[0].textContent = formatInt(i);
                renderToken(row.cells[1], merges[i]);
            },
        });
        this.#mergeList.setCount(merges.length);
        return box;
    }

    #scheduleSearch() {
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => this.#runSearch(), SEARCH_DELAY_MS);
    }

    #runSearch() {
        clearTimeout(this.#timer);
        const t = this.#tokenizer;
        if (!t) return;
        const query = this.#search.value;
        if (query && !this.#lowered) this.#lowered = t.tokens.map((s) => String(s).toLowerCase());
        this.#shown = query ? searchTokens(t.tokens, query, this.#lowered) : null;
        this.#viewport.scrollTop = 0;
        this.#apply();
    }

    #apply() {
        const total = this.#tokenizer.tokens.length;
        const n = this.#shown ? this.#shown.length : total;
        this.#count.textContent = this.#shown
            ? `${formatInt(n)} of ${formatInt(total)} tokens`
            : `${formatInt(total)} tokens`;
        this.#count.dataset.query = this.#shown ? this.#search.value : "";
        this.#list.setCount(n);
    }

    #renderRow(row, i) {
        const t = this.#tokenizer;
        const id = this.#shown ? this.#shown[i] : i;
        const [idCell, textCell, scoreCell, typeCell] = row.cells;
        row.dataset.id = String(id);
        idCell.textContent = formatInt(id);
        renderToken(textCell, String(t.tokens[id]));
        const score = t.scores?.[id];
        scoreCell.textContent = typeof score === "number" ? formatF32(Math.fround(score)) : "";
        const type = t.types?.[id];
        typeCell.textContent = type === undefined ? "" : (TOKEN_TYPES[type] ?? String(type));
        typeCell.dataset.type = type === undefined ? "" : String(type);
    }
}
