// SPDX-License-Identifier: MIT
// The metadata table (every key, its type and a one-line preview) and the value viewer beside it: long
// strings such as chat templates as readable text, long arrays (150k-token vocabularies) as a virtualized,
// searchable list.
import { el, clear } from "./dom.js";
import { formatInt, formatItem, previewValue } from "./format.js";
import { VirtualList } from "./virtual_list.js";

const ROW_HEIGHT = 30;
const ITEM_HEIGHT = 26;
// A string longer than this is shown cut (a hostile file may hold a string of hundreds of megabytes).
const MAX_TEXT = 1_000_000;
const SEARCH_DELAY_MS = 120;

function typeLabel(entry) {
    if (entry.type !== "array") return entry.type;
    const length = entry.length ?? (Array.isArray(entry.value) ? entry.value.length : 0);
    return `${entry.item_type ?? "?"}[${formatInt(length)}]`;
}

export class MetadataView {
    #entries = [];
    #shown = [];
    #filter;
    #countLabel;
    #viewport;
    #list;
    #viewer;
    #selected = null;
    #arrayList = null; // the VirtualList of the array on show
    #onOpenViewer;
    #onCloseViewer;

    /** onOpenViewer() / onCloseViewer(): the viewer was filled / closed (it is an overlay on narrow screens). */
    constructor(root, { onOpenViewer, onCloseViewer } = {}) {
        this.#onOpenViewer = onOpenViewer;
        this.#onCloseViewer = onCloseViewer;
        this.#filter = el("input", {
            type: "search",
            placeholder: "Filter keys and values",
            attrs: { "aria-label": "Filter metadata", "data-testid": "metadata-filter" },
            on: { input: () => this.#rebuild() },
        });
        this.#countLabel = el("span", { class: "count", attrs: { "aria-live": "polite" } });
        const header = el(
            "div",
            { class: "trow thead", attrs: { role: "row" } },
            el("span", { class: "cell m-key", text: "Key", attrs: { role: "columnheader" } }),
            el("span", { class: "cell m-type", text: "Type", attrs: { role: "columnheader" } }),
            el("span", { class: "cell m-value", text: "Value", attrs: { role: "columnheader" } }),
        );
        this.#viewport = el(
            "div",
            {
                class: "table-viewport metadata-grid",
                tabIndex: 0,
                attrs: { role: "table", "aria-label": "Metadata", "data-testid": "metadata-table" },
                on: { keydown: (e) => this.#onKey(e) },
            },
            header,
        );
        this.#viewer = el("section", {
            class: "value-viewer panel",
            attrs: { "data-testid": "metadata-value", "aria-label": "Metadata value" },
        });
        root.append(
            el("div", { class: "toolbar" }, this.#filter, this.#countLabel),
            el("div", { class: "split" }, this.#viewport, this.#viewer),
        );
        this.#list = new VirtualList(this.#viewport, {
            rowHeight: ROW_HEIGHT,
            createRow: () =>
                el("div", {
                    class: "trow",
                    attrs: { role: "row" },
                    on: { click: (e) => this.#show(this.#shown[e.currentTarget.vlistIndex]) },
                }),
            renderRow: (row, i) => this.#renderRow(row, i),
        });
    }

    setMetadata(entries) {
        this.#entries = entries;
        this.#filter.value = "";
        this.#selected = null;
        this.#viewport.scrollTop = 0;
        this.#placeholder();
        this.#rebuild();
    }

    #onKey(event) {
        if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
        event.preventDefault();
        const i = this.#shown.indexOf(this.#selected) + (event.key === "ArrowDown" ? 1 : -1);
        if (i < 0 || i >= this.#shown.length) return;
        this.#list.scrollToIndex(i);
        this.#show(this.#shown[i]);
    }

    #placeholder() {
        this.#arrayList?.dispose();
        this.#arrayList = null;
        clear(this.#viewer, el("p", { class: "muted", text: "Choose a key to see its whole value." }));
    }

    #rebuild() {
        const q = this.#filter.value.toLowerCase();
        this.#shown = q
            ? this.#entries.filter(
                  (e) =>
                      e.key.toLowerCase().includes(q) ||
                      (e.type !== "array" && String(e.value).toLowerCase().includes(q)),
              )
            : this.#entries;
        const n = this.#shown.length;
        this.#countLabel.textContent =
            n === this.#entries.length
                ? `${formatInt(n)} keys`
                : `${formatInt(n)} of ${formatInt(this.#entries.length)} keys`;
        this.#list.setCount(n);
    }

    #renderRow(row, i) {
        const entry = this.#shown[i];
        row.dataset.testid = "metadata-row";
        row.dataset.key = entry.key;
        row.classList.toggle("selected", entry === this.#selected);
        row.replaceChildren(
            el("span", { class: "cell m-key", text: entry.key, title: entry.key, attrs: { role: "cell" } }),
            el("span", { class: "cell m-type", text: typeLabel(entry), attrs: { role: "cell" } }),
            el("span", { class: "cell m-value", text: previewValue(entry), attrs: { role: "cell" } }),
        );
    }

    #show(entry) {
        if (!entry) return;
        this.#selected = entry;
        this.#list.refresh();
        this.#arrayList?.dispose();
        this.#arrayList = null;
        clear(this.#viewer);
        this.#viewer.append(
            el(
                "header",
                { class: "viewer-head" },
                el("h3", { class: "mono", text: entry.key }),
                el("span", { class: "muted", text: typeLabel(entry) }),
                el("button", {
                    type: "button",
                    class: "close",
                    text: "×",
                    title: "Close",
                    attrs: { "aria-label": "Close the value" },
                    on: { click: () => this.#close() },
                }),
            ),
        );
        if (entry.type === "array" && Array.isArray(entry.value)) this.#showArray(entry);
        else if (typeof entry.value === "string") this.#showString(entry.value);
        else this.#viewer.append(el("pre", { class: "value-text", text: previewValue(entry, Infinity) }));
        this.#onOpenViewer?.();
    }

    /** Closes the value viewer (Escape, Back). */
    closeViewer() {
        if (this.#selected !== null) this.#close();
    }

    #close() {
        this.#selected = null;
        this.#list.refresh();
        this.#placeholder();
        this.#onCloseViewer?.();
    }

    #showString(text) {
        const cut = text.length > MAX_TEXT;
        const lines = text.length < MAX_TEXT ? text.split("\n").length : undefined;
        const pre = el("pre", {
            class: "value-text wrap",
            text: cut ? text.slice(0, MAX_TEXT) : text,
            attrs: { "data-testid": "metadata-text" },
        });
        const wrap = el("input", {
            type: "checkbox",
            checked: true,
            on: { change: () => pre.classList.toggle("wrap", wrap.checked) },
        });
        const copy = el("button", {
            type: "button",
            text: "Copy",
            on: {
                click: () =>
                    navigator.clipboard?.writeText(text).then(
                        () => (copy.textContent = "Copied"),
                        () => (copy.textContent = "Copy failed"),
                    ),
            },
        });
        this.#viewer.append(
            el(
                "div",
                { class: "toolbar" },
                el("span", {
                    class: "muted",
                    text:
                        `${formatInt(text.length)} characters${lines ? `, ${formatInt(lines)} lines` : ""}` +
                        (cut ? ` (first ${formatInt(MAX_TEXT)} shown)` : ""),
                }),
                el("label", { class: "check" }, wrap, " Wrap"),
                copy,
            ),
            pre,
        );
    }

    #showArray(entry) {
        const length = entry.value.length;
        let matches = null; // indices of the items that match the search, or null for all
        const search = el("input", {
            type: "search",
            placeholder: "Search items",
            attrs: { "aria-label": "Search the array", "data-testid": "array-search" },
        });
        const count = el("span", { class: "count", attrs: { "aria-live": "polite" } });
        const viewport = el("div", {
            class: "table-viewport array-grid",
            attrs: { role: "table", "aria-label": "Array items", "data-testid": "array-items" },
        });
        this.#viewer.append(el("div", { class: "toolbar" }, search, count), viewport);
        const list = (this.#arrayList = new VirtualList(viewport, {
            rowHeight: ITEM_HEIGHT,
            createRow: () => el("div", { class: "trow", attrs: { role: "row" } }),
            renderRow: (row, i) => {
                const index = matches ? matches[i] : i;
                row.dataset.index = String(index);
                row.replaceChildren(
                    el("span", { class: "cell a-index num", text: formatInt(index), attrs: { role: "cell" } }),
                    el("span", {
                        class: "cell a-value",
                        text: formatItem(entry.value[index], entry.item_type),
                        attrs: { role: "cell" },
                    }),
                );
            },
        }));
        const update = () => {
            const n = matches ? matches.length : length;
            count.textContent = matches ? `${formatInt(n)} of ${formatInt(length)} items` : `${formatInt(n)} items`;
            viewport.scrollTop = 0;
            list.setCount(n);
        };
        let lowered = null;
        const find = (needle) => {
            lowered ??= entry.value.map((v) =>
                (typeof v === "string" ? v : formatItem(v, entry.item_type)).toLowerCase(),
            );
            const found = [];
            for (let i = 0; i < lowered.length; ++i) if (lowered[i].includes(needle)) found.push(i);
            return found;
        };
        let timer = 0;
        search.addEventListener("input", () => {
            clearTimeout(timer);
            timer = setTimeout(() => {
                const q = search.value;
                matches = q ? find(q.toLowerCase()) : null;
                update();
            }, SEARCH_DELAY_MS);
        });
        update();
    }
}
