// SPDX-License-Identifier: MIT
// The tokenizer playground (top of the Tokenizer tab): text typed or pasted is tokenized in the worker by the model's
// tokenizer (the core's, llama.cpp's ids: the CLI's `weightstream tokenize`), shown as coloured spans with their ids
// and counts; special tokens and byte-fallback tokens stand out, invisible characters are escapes. A second tokenizer
// (a tokenizer.json, tokenizer.model or another GGUF, opened beside it) tokenizes the same text, and the first token
// where the two differ is named. Nothing leaves the page: text and files stay in the worker.
import { el, clear } from "./dom.js";
import { formatInt } from "./format.js";
import { tokenParts } from "./tokenizer_view.js";

const DELAY_MS = 120;
const COLOURS = 6; // .tok.c0 ... .c5
const MAX_SHOWN = 5000; // spans drawn; the counts and ids cover every token

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** What a token stands for, as text to show: its bytes as UTF-8, else each byte as \xNN (a split character). */
export function tokenDisplay(bytes) {
    try {
        return strictUtf8.decode(bytes);
    } catch {
        return Array.from(bytes, (b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
    }
}

/** The first index where two id lists differ, or -1 when they are equal. */
export function firstDifference(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; ++i) if (a[i] !== b[i]) return i;
    return a.length === b.length ? -1 : n;
}

// One tokenization's output: the spans and the id list.
class TokenOutput {
    constructor(testid) {
        this.summary = el("div", { class: "tok-summary", attrs: { "data-testid": `${testid}-count` } });
        this.spans = el("div", { class: "tok-spans", attrs: { "data-testid": testid, "aria-live": "polite" } });
        this.ids = el("code", { class: "tok-ids", attrs: { "data-testid": `${testid}-ids` } });
        this.node = el(
            "div",
            { class: "tok-output" },
            this.summary,
            this.spans,
            el("details", {}, el("summary", { text: "ids" }), this.ids),
        );
    }

    clear(message = "") {
        this.summary.textContent = message;
        clear(this.spans);
        this.ids.textContent = "";
    }

    show(tokenizer, text, ids, bytes, differsAt) {
        const chars = [...text].length;
        this.summary.textContent = `${formatInt(ids.length)} tokens · ${formatInt(chars)} characters`;
        this.summary.dataset.tokens = String(ids.length);
        const shown = Math.min(ids.length, MAX_SHOWN);
        const spans = [];
        for (let i = 0; i < shown; ++i) {
            const id = ids[i];
            const kind = tokenizer.kind(id);
            const special = kind === "control" || kind === "user_defined" || kind === "unknown";
            const shownText = kind === "byte" || special ? tokenizer.piece(id) : tokenDisplay(bytes[i]);
            const classes = ["tok", `c${i % COLOURS}`];
            if (special) classes.push("special");
            if (kind === "byte") classes.push("byte");
            if (i === differsAt) classes.push("differs");
            spans.push(
                el(
                    "span",
                    {
                        class: classes.join(" "),
                        title: `${i}: id ${id} · ${kind} · ${JSON.stringify(tokenizer.piece(id))}`,
                        dataset: { id: String(id), index: String(i) },
                    },
                    tokenParts(shownText).map((p) => (p.escape ? el("span", { class: "esc", text: p.text }) : p.text)),
                ),
            );
        }
        if (shown < ids.length)
            spans.push(el("span", { class: "muted", text: ` … ${formatInt(ids.length - shown)} more` }));
        clear(this.spans, spans);
        this.ids.textContent = `[${Array.from(ids).join(", ")}]`;
        // Which text these ids are of, for a reader that must not take the last text's (a test): short texts only.
        if (text.length <= 4096) this.ids.dataset.text = text;
        else delete this.ids.dataset.text;
    }
}

export class TokenizePlayground {
    #openModelTokenizer = null; // () => Promise<WorkerTokenizer> of the model on show
    #openOther; // (files) => Promise<{tokenizer, label, close}>
    #tokenizer = null; // the model's, once made
    #other = null; // {tokenizer, label, close} opened beside it
    #generation = 0;
    #timer = 0;
    #input;
    #addSpecial;
    #parseSpecial;
    #status;
    #own;
    #second;
    #otherLabel;
    #verdict;
    #fileInput;
    node;

    /** openOther(files): a second tokenizer from files the user picked ({tokenizer, label, close()}). */
    constructor({ openOther }) {
        this.#openOther = openOther;
        this.#input = el("textarea", {
            class: "tok-input",
            rows: 4,
            placeholder: "Type or paste text to tokenize",
            spellcheck: false,
            attrs: { "aria-label": "Text to tokenize", "data-testid": "tokenize-input" },
            on: { input: () => this.#schedule() },
        });
        const checkbox = (label, testid, checked) => {
            const box = el("input", {
                type: "checkbox",
                checked,
                attrs: { "data-testid": testid },
                on: { change: () => this.#run() },
            });
            return { box, label: el("label", {}, box, ` ${label}`) };
        };
        const add = checkbox("add special tokens", "tokenize-add-special", true);
        const parse = checkbox("parse special tokens in the text", "tokenize-parse-special", true);
        this.#addSpecial = add.box;
        this.#parseSpecial = parse.box;
        this.#status = el("span", { class: "muted", attrs: { "data-testid": "tokenize-status" } });
        this.#own = new TokenOutput("tokenize-tokens");
        this.#second = new TokenOutput("tokenize-tokens-b");
        this.#fileInput = el("input", {
            type: "file",
            multiple: true,
            accept: ".json,.model,.gguf",
            hidden: true,
            attrs: { "data-testid": "tokenize-compare-file" },
            on: { change: () => this.#pickOther() },
        });
        this.#otherLabel = el("span", { class: "muted", attrs: { "data-testid": "tokenize-compare-label" } });
        this.#verdict = el("div", {
            class: "tok-verdict",
            attrs: { "data-testid": "tokenize-diff", "aria-live": "polite" },
        });
        const compareButton = el("button", {
            type: "button",
            text: "Compare with…",
            title: "A tokenizer.json (with its tokenizer_config.json), a tokenizer.model or another GGUF",
            attrs: { "data-testid": "tokenize-compare" },
            on: { click: () => this.#fileInput.click() },
        });
        this.#second.node.hidden = true;
        this.node = el(
            "section",
            { class: "tok-playground", attrs: { "data-testid": "tokenize-playground" } },
            el(
                "div",
                { class: "toolbar" },
                el("h3", { text: "Tokenize" }),
                add.label,
                parse.label,
                compareButton,
                this.#fileInput,
                this.#status,
            ),
            this.#input,
            this.#own.node,
            el("div", { class: "tok-compare" }, this.#otherLabel, this.#verdict),
            this.#second.node,
        );
    }

    /** The model on show: its tokenizer is made (in the worker) when text is first tokenized. */
    setModel(openModelTokenizer) {
        this.#tokenizer?.dispose();
        this.#tokenizer = null;
        this.#openModelTokenizer = openModelTokenizer;
        this.#closeOther();
        this.#own.clear();
        this.#status.textContent = "";
        if (this.#input.value) this.#schedule();
    }

    /** Sets the text and tokenizes it now (the tests, and a text passed to the page). */
    async tokenize(text) {
        this.#input.value = text;
        await this.#run();
    }

    #closeOther() {
        this.#other?.close();
        this.#other = null;
        this.#otherLabel.textContent = "";
        this.#verdict.textContent = "";
        this.#second.node.hidden = true;
        this.#second.clear();
    }

    async #pickOther() {
        const files = [...this.#fileInput.files];
        this.#fileInput.value = "";
        if (files.length === 0) return;
        this.#closeOther();
        this.#otherLabel.textContent = `Opening ${files.map((f) => f.name).join(", ")}…`;
        try {
            this.#other = await this.#openOther(files);
            this.#otherLabel.textContent = `Beside it: ${this.#other.label} (${this.#other.tokenizer.description})`;
            this.#second.node.hidden = false;
            await this.#run();
        } catch (error) {
            this.#otherLabel.textContent = `Cannot tokenize with ${files.map((f) => f.name).join(", ")}: ${error.message}`;
        }
    }

    #schedule() {
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => this.#run(), DELAY_MS);
    }

    async #run() {
        clearTimeout(this.#timer);
        const generation = ++this.#generation;
        const text = this.#input.value;
        const options = { addSpecial: this.#addSpecial.checked, parseSpecial: this.#parseSpecial.checked };
        try {
            if (!this.#tokenizer) {
                if (!this.#openModelTokenizer) return;
                this.#status.textContent = "Loading the tokenizer…";
                this.#tokenizer = await this.#openModelTokenizer();
                if (generation !== this.#generation) return;
                this.#status.textContent = `tokenizer: ${this.#tokenizer.description}`;
            }
            const own = this.#tokenizer;
            const other = this.#other?.tokenizer ?? null;
            const ids = await own.tokenize(text, options);
            const bytes = await own.tokenBytes(ids.subarray(0, MAX_SHOWN));
            const otherIds = other ? await other.tokenize(text, options) : null;
            const otherBytes = other ? await other.tokenBytes(otherIds.subarray(0, MAX_SHOWN)) : null;
            if (generation !== this.#generation) return; // a newer text is on its way
            const at = other ? firstDifference(ids, otherIds) : -1;
            this.#own.show(own, text, ids, bytes, at);
            if (!other) return;
            this.#second.show(other, text, otherIds, otherBytes, at);
            this.#verdict.dataset.differsAt = String(at);
            if (at < 0) {
                this.#verdict.textContent = `Same ${formatInt(ids.length)} ids.`;
            } else {
                const side = (t, list) =>
                    at < list.length ? `${list[at]} ${JSON.stringify(t.piece(list[at]))}` : "(no more tokens)";
                this.#verdict.textContent =
                    `First difference at token ${formatInt(at)}: ${side(own, ids)} here, ` +
                    `${side(other, otherIds)} beside it (${formatInt(ids.length)} vs ${formatInt(otherIds.length)} tokens).`;
            }
        } catch (error) {
            if (generation !== this.#generation) return;
            this.#own.clear(`Cannot tokenize: ${error.message}`);
        }
    }
}
