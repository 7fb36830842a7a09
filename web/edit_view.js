// SPDX-License-Identifier: MIT
// The metadata view's Edit… mode: a list of pending changes (keys to set, with an optional GGUF type, and keys
// to delete) and the chat template as an editable text, turned into edit()'s `changes` (wasm/js/edit.js). The
// rules (types, inference, what may not be edited) are the core's (include/weightstream/gguf_edit.h): this view only collects
// the changes and shows the core's error when saving fails. main.js saves the edited file.
import { el, clear } from "./dom.js";

const TYPES = ["", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool", "str"];
const CHAT_TEMPLATE = "tokenizer.chat_template";

// A value typed in the page, as edit() takes it. For a key the file has (and no type chosen) the text goes
// as it is: the core reads it as the key's type, as the CLI's --set does. For a new key: JSON arrays,
// true/false, integers (exact, as BigInt) and other numbers are read as such; anything else is a string.
export function valueOf(text, type, exists) {
    const t = text.trim();
    if (t.startsWith("[") && type !== "str") return JSON.parse(t);
    if (type || exists) return text;
    if (t === "true" || t === "false") return t === "true";
    if (/^[-+]?\d+$/.test(t)) return BigInt(t);
    if (t !== "" && Number.isFinite(Number(t))) return Number(t);
    return text;
}

export class EditView {
    #root;
    #panel;
    #list;
    #key;
    #value;
    #type;
    #template;
    #status;
    #save;
    #button;
    #entries = [];
    #changes = []; // [{op: "set", key, text, type} | {op: "delete", key}]
    #onSave;

    /** onSave(changes): save the edited file (a promise; the view shows its outcome via setStatus()). */
    constructor(root, { onSave }) {
        this.#root = root;
        this.#onSave = onSave;
        this.#button = el("button", {
            type: "button",
            class: "secondary",
            text: "Edit…",
            hidden: true,
            attrs: { "data-testid": "metadata-edit" },
            on: { click: () => this.toggle() },
        });
        this.#key = el("input", {
            type: "text",
            placeholder: "key",
            attrs: { "aria-label": "Key", "data-testid": "edit-key" },
        });
        this.#value = el("input", {
            type: "text",
            placeholder: 'value (arrays as JSON: [1, 2] or ["a", "b"])',
            attrs: { "aria-label": "Value", "data-testid": "edit-value" },
        });
        this.#type = el(
            "select",
            { attrs: { "aria-label": "Type", "data-testid": "edit-type" } },
            TYPES.map((t) => el("option", { value: t, text: t || "type: keep / infer" })),
        );
        this.#list = el("ul", { class: "edit-changes", attrs: { "data-testid": "edit-changes" } });
        this.#template = el("textarea", {
            class: "mono",
            rows: 8,
            spellcheck: false,
            attrs: { "aria-label": "Chat template", "data-testid": "edit-chat-template" },
        });
        this.#status = el("p", { class: "muted", attrs: { "aria-live": "polite", "data-testid": "edit-status" } });
        this.#save = el("button", {
            type: "button",
            text: "Save edited file…",
            attrs: { "data-testid": "edit-save" },
            on: { click: () => this.#saveClicked() },
        });
        this.#panel = el(
            "section",
            {
                class: "edit-panel panel",
                hidden: true,
                attrs: { "aria-label": "Edit metadata", "data-testid": "edit-panel" },
            },
            el("h3", { text: "Edit metadata" }),
            el(
                "div",
                { class: "toolbar" },
                this.#key,
                this.#value,
                this.#type,
                el("button", {
                    type: "button",
                    text: "Set",
                    attrs: { "data-testid": "edit-set" },
                    on: { click: () => this.#add("set") },
                }),
                el("button", {
                    type: "button",
                    class: "secondary",
                    text: "Delete key",
                    attrs: { "data-testid": "edit-delete" },
                    on: { click: () => this.#add("delete") },
                }),
            ),
            this.#list,
            el("label", { text: "Chat template (tokenizer.chat_template)" }),
            this.#template,
            el("div", { class: "toolbar" }, this.#save, this.#status),
        );
        root.append(this.#panel);
    }

    /** The Edit… button, for the metadata view's toolbar. */
    get button() {
        return this.#button;
    }

    /** A new model: its metadata; `editable` (a GGUF) shows the Edit… button. Pending changes are dropped. */
    setModel(entries, editable) {
        this.#entries = entries;
        this.#changes = [];
        this.#button.hidden = !editable;
        this.#panel.hidden = true;
        this.#template.value = this.#currentTemplate();
        this.#status.textContent = "";
        this.#render();
    }

    toggle() {
        this.#panel.hidden = !this.#panel.hidden;
        if (!this.#panel.hidden) this.#key.focus();
    }

    /** Fills the form from an entry (a row clicked in the table). */
    pick(entry) {
        if (this.#panel.hidden || !entry) return;
        this.#key.value = entry.key;
        const json = (v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x));
        this.#value.value =
            entry.type === "array"
                ? json(entry.value ?? [])
                : entry.type === "string"
                  ? entry.value
                  : String(entry.value);
    }

    /** The outcome of a save: state "running", "done", "cancelled" or "failed", with words. */
    setStatus(state, text) {
        this.#status.dataset.state = state;
        this.#status.textContent = text;
        this.#save.disabled = state === "running";
    }

    /** edit()'s `changes` for what is pending, or null when nothing is. */
    changes() {
        const set = {};
        const remove = [];
        for (const c of this.#changes) {
            if (c.op === "delete") {
                remove.push(c.key);
                continue;
            }
            const exists = this.#entries.some((e) => e.key === c.key);
            const value = valueOf(c.text, c.type, exists);
            set[c.key] = c.type ? { value, type: c.type } : value;
        }
        const out = {};
        if (Object.keys(set).length) out.set = set;
        if (remove.length) out.delete = remove;
        if (this.#template.value !== this.#currentTemplate()) out.chatTemplate = this.#template.value;
        return Object.keys(out).length ? out : null;
    }

    #currentTemplate() {
        const e = this.#entries.find((entry) => entry.key === CHAT_TEMPLATE);
        return typeof e?.value === "string" ? e.value : "";
    }

    #add(op) {
        const key = this.#key.value.trim();
        if (!key) {
            this.setStatus("failed", "Type a key first.");
            return;
        }
        if (op === "set") {
            try {
                valueOf(
                    this.#value.value,
                    this.#type.value,
                    this.#entries.some((e) => e.key === key),
                );
            } catch (error) {
                this.setStatus("failed", `${key}: the value is not valid JSON (${error.message})`);
                return;
            }
        }
        this.#changes = this.#changes.filter((c) => c.key !== key);
        this.#changes.push(op === "set" ? { op, key, text: this.#value.value, type: this.#type.value } : { op, key });
        this.#status.textContent = "";
        this.#render();
    }

    #render() {
        clear(
            this.#list,
            this.#changes.map((c, i) =>
                el(
                    "li",
                    { dataset: { key: c.key, op: c.op } },
                    el("span", {
                        class: "mono",
                        text:
                            c.op === "set" ? `${c.key} = ${c.text}${c.type ? ` : ${c.type}` : ""}` : `delete ${c.key}`,
                    }),
                    el("button", {
                        type: "button",
                        class: "close",
                        text: "×",
                        attrs: { "aria-label": `Drop the change to ${c.key}` },
                        on: {
                            click: () => {
                                this.#changes.splice(i, 1);
                                this.#render();
                            },
                        },
                    }),
                ),
            ),
        );
    }

    #saveClicked() {
        let changes;
        try {
            changes = this.changes();
        } catch (error) {
            this.setStatus("failed", error.message);
            return;
        }
        if (!changes) {
            this.setStatus("failed", "Nothing to change yet.");
            return;
        }
        this.#onSave(changes);
    }
}

// The name the edited file is offered under: the model's, with "-edited".
export function editedName(label) {
    const base = String(label)
        .replace(/^.*[\\/]/, "")
        .replace(/\.gguf$/i, "");
    return `${base || "model"}-edited.gguf`;
}
