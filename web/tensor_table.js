// SPDX-License-Identifier: MIT
// The tensor table: sort by any column, filter by name and dtype, group by layer; virtualized, so that
// thousands of tensors scroll as fluidly as ten. Keyboard: arrows, Page Up/Down, Home/End move the cursor
// row, Enter opens it (or folds a layer). The number columns are as wide as the model's widest value, so
// that a shape such as 151,936 x 16,384 or a 12-digit offset is never cut.
import { el, clear } from "./dom.js";
import { formatBytes, formatCount, formatInt, formatShape } from "./format.js";
import { keyedLayers } from "./summary.js";
import { VirtualList } from "./virtual_list.js";

const ROW_HEIGHT = 30;
// On a phone a row takes two lines: the name, then type, shape and size (style.css, max-width 700px).
const ROW_HEIGHT_NARROW = 48;
const NARROW = "(max-width: 700px)";
const COLLATOR = new Intl.Collator("en", { numeric: true });
// The group of the tensors in no layer, listed first.
const NOT_IN_LAYER = { key: "-1", label: "not in a layer" };

const COLUMNS = [
    { key: "name", label: "Name", className: "c-name" },
    { key: "dtype", label: "Type", className: "c-dtype" },
    { key: "shape", label: "Shape", className: "c-shape num" },
    { key: "params", label: "Params", className: "c-params num" },
    { key: "size", label: "Size", className: "c-size num" },
    { key: "offset", label: "Offset", className: "c-offset num" },
    { key: "file", label: "File", className: "c-file", multiFile: true },
];

function compareShapes(a, b) {
    for (let i = 0; i < Math.min(a.length, b.length); ++i) {
        const d = Number(a[i]) - Number(b[i]);
        if (d) return d;
    }
    return a.length - b.length;
}

const COMPARE = {
    name: (a, b) => COLLATOR.compare(a.name, b.name),
    dtype: (a, b) => COLLATOR.compare(a.dtype, b.dtype),
    shape: (a, b) => compareShapes(a.shape, b.shape),
    params: (a, b) => Number(a.n_elements) - Number(b.n_elements),
    size: (a, b) => Number(a.nbytes) - Number(b.nbytes),
    offset: (a, b) => COLLATOR.compare(a.file ?? "", b.file ?? "") || Number(a.offset) - Number(b.offset),
    file: (a, b) => COLLATOR.compare(a.file ?? "", b.file ?? ""),
};

export class TensorTable {
    #root;
    #viewport;
    #header;
    #list;
    #nameFilter;
    #dtypeFilter;
    #groupToggle;
    #countLabel;
    #tensors = [];
    #groups = []; // NOT_IN_LAYER, then the core's layers in its order: {key, label}
    #groupOf = new Map(); // tensor -> its entry of #groups
    #multiFile = false;
    #items = [];
    #sort = { key: null, dir: 1 };
    #collapsed = new Set();
    #selected = null;
    #cursor = -1; // position in #items of the keyboard's row
    #onSelect;

    /** root: the element to fill; onSelect(tensor): a tensor row was chosen. */
    constructor(root, { onSelect }) {
        this.#root = root;
        this.#onSelect = onSelect;
        this.#nameFilter = el("input", {
            type: "search",
            placeholder: "Filter by name",
            attrs: { "aria-label": "Filter tensors by name", "data-testid": "tensor-filter" },
            on: { input: () => this.#rebuild() },
        });
        this.#dtypeFilter = el("select", {
            attrs: { "aria-label": "Filter tensors by type", "data-testid": "tensor-dtype-filter" },
            on: { change: () => this.#rebuild() },
        });
        this.#groupToggle = el("input", {
            type: "checkbox",
            on: { change: () => this.#rebuild() },
            attrs: { "data-testid": "tensor-group-toggle" },
        });
        this.#countLabel = el("span", { class: "count", attrs: { "aria-live": "polite" } });
        const toolbar = el(
            "div",
            { class: "toolbar" },
            this.#nameFilter,
            this.#dtypeFilter,
            el("label", { class: "check" }, this.#groupToggle, " Group by layer"),
            this.#countLabel,
        );
        this.#header = el("div", { class: "trow thead", attrs: { role: "row" } });
        this.#viewport = el(
            "div",
            {
                class: "table-viewport tensor-grid",
                tabIndex: 0,
                attrs: {
                    role: "table",
                    "aria-label": "Tensors (arrows move, Enter opens)",
                    "data-testid": "tensor-table",
                },
                on: { keydown: (e) => this.#onKey(e) },
            },
            this.#header,
        );
        root.append(toolbar, this.#viewport);
        this.#list = new VirtualList(this.#viewport, {
            rowHeight: ROW_HEIGHT,
            createRow: () =>
                el("div", { class: "trow", attrs: { role: "row" }, on: { click: (e) => this.#onRowClick(e) } }),
            renderRow: (row, i) => this.#renderRow(row, i),
        });
        const narrow = window.matchMedia(NARROW);
        const fit = () => this.#list.setRowHeight(narrow.matches ? ROW_HEIGHT_NARROW : ROW_HEIGHT);
        narrow.addEventListener("change", fit);
        fit();
    }

    /**
     * Shows the tensors of a model (resets sort, filters and selection), grouped by layer as the core groups them
     * (Model.layers: the same tensor objects, each layer {name, index, tensors}).
     */
    setTensors(tensors, layers) {
        this.#tensors = tensors;
        this.#groups = [NOT_IN_LAYER];
        this.#groupOf = new Map();
        for (const layer of keyedLayers(layers)) {
            const group = { key: layer.key, label: `layer ${layer.key}` };
            this.#groups.push(group);
            for (const t of layer.tensors) this.#groupOf.set(t, group);
        }
        this.#multiFile = new Set(tensors.map((t) => t.file ?? "")).size > 1;
        this.#viewport.classList.toggle("multi-file", this.#multiFile);
        this.#sort = { key: null, dir: 1 };
        this.#collapsed.clear();
        this.#selected = null;
        this.#cursor = -1;
        this.#nameFilter.value = "";
        this.#groupToggle.checked = false;
        const counts = new Map();
        for (const t of tensors) counts.set(t.dtype, (counts.get(t.dtype) ?? 0) + 1);
        clear(
            this.#dtypeFilter,
            el("option", { value: "", text: "All types" }),
            ...[...counts.keys()]
                .sort(COLLATOR.compare)
                .map((d) => el("option", { value: d, text: `${d} (${counts.get(d)})` })),
        );
        this.#renderHeader();
        this.#fitColumns();
        this.#viewport.scrollTop = 0;
        this.#rebuild();
    }

    /** Marks `name` as the selected tensor (without calling onSelect). */
    select(name) {
        this.#selected = name;
        this.#list.refresh();
    }

    /** Selects `name`, puts the cursor on it and scrolls it into view (a deep link, the layer map). */
    reveal(name) {
        this.#selected = name;
        let pos = this.#positionOf(name);
        if (pos < 0 && (this.#nameFilter.value || this.#dtypeFilter.value || this.#groupToggle.checked)) {
            // Hidden by a filter or a folded layer: show every tensor again.
            this.#nameFilter.value = "";
            this.#dtypeFilter.value = "";
            this.#collapsed.clear();
            this.#rebuild();
            pos = this.#positionOf(name);
        }
        if (pos >= 0) {
            this.#cursor = pos;
            this.#list.scrollToIndex(pos);
        }
        this.#list.refresh();
    }

    /** Focuses the table (its keyboard cursor). */
    focus() {
        this.#viewport.focus();
    }

    /** Focuses the name filter (the page's "/" key). */
    focusFilter() {
        this.#nameFilter.focus();
        this.#nameFilter.select();
    }

    #positionOf(name) {
        return this.#items.findIndex((item) => typeof item === "number" && this.#tensors[item].name === name);
    }

    // Column widths (CSS variables of the grid) from the widest text of each number column over all
    // tensors, measured in the cells' own font: rows are separate grids, so the widths must be fixed.
    #fitColumns() {
        const probe = el("span", { class: "cell c-shape num", attrs: { role: "cell" } });
        const row = el("div", { class: "trow measure", attrs: { "aria-hidden": "true" } }, probe);
        this.#viewport.append(row);
        const context = document.createElement("canvas").getContext("2d");
        const style = getComputedStyle(probe);
        context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        context.fontVariantNumeric = "tabular-nums";
        const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
        row.remove();
        // The widest of the longest texts (digits are of one width, tabular-nums; separators narrower): a
        // few measurements for thousands of tensors.
        const widest = (texts, least) => {
            let longest = 0;
            for (const t of texts) longest = Math.max(longest, t.length);
            let w = least;
            for (const t of texts) if (t.length >= longest - 1) w = Math.max(w, context.measureText(t).width);
            return `${Math.ceil(w + padding + 2)}px`;
        };
        const distinct = (f) => new Set(this.#tensors.map(f));
        const set = (name, value) => this.#viewport.style.setProperty(name, value);
        set(
            "--w-dtype",
            widest(
                distinct((t) => t.dtype),
                context.measureText("Type ").width + 14,
            ),
        );
        set(
            "--w-shape",
            widest(
                distinct((t) => formatShape(t.shape)),
                context.measureText("Shape ▲").width,
            ),
        );
        set(
            "--w-params",
            widest(
                distinct((t) => formatInt(t.n_elements)),
                context.measureText("Params ▲").width,
            ),
        );
        set(
            "--w-size",
            widest(
                distinct((t) => formatBytes(t.nbytes)),
                context.measureText("Size ▲").width,
            ),
        );
        set(
            "--w-offset",
            widest(
                distinct((t) => formatInt(t.offset)),
                context.measureText("Offset ▲").width,
            ),
        );
    }

    #renderHeader() {
        clear(this.#header);
        for (const col of COLUMNS) {
            if (col.multiFile && !this.#multiFile) continue;
            const active = this.#sort.key === col.key;
            const arrow = active ? (this.#sort.dir > 0 ? " ▲" : " ▼") : "";
            this.#header.append(
                el(
                    "span",
                    {
                        class: `cell ${col.className}`,
                        attrs: {
                            role: "columnheader",
                            "aria-sort": active ? (this.#sort.dir > 0 ? "ascending" : "descending") : "none",
                        },
                    },
                    el("button", {
                        type: "button",
                        class: "sort",
                        text: col.label + arrow,
                        on: { click: () => this.#toggleSort(col.key) },
                    }),
                ),
            );
        }
    }

    #toggleSort(key) {
        if (this.#sort.key !== key) this.#sort = { key, dir: 1 };
        else if (this.#sort.dir > 0) this.#sort = { key, dir: -1 };
        else this.#sort = { key: null, dir: 1 };
        this.#renderHeader();
        this.#rebuild();
    }

    #rebuild() {
        const terms = this.#nameFilter.value.toLowerCase().split(/\s+/).filter(Boolean);
        const dtype = this.#dtypeFilter.value;
        let indices = [];
        for (let i = 0; i < this.#tensors.length; ++i) {
            const t = this.#tensors[i];
            if (dtype && t.dtype !== dtype) continue;
            if (terms.length) {
                const name = t.name.toLowerCase();
                if (!terms.every((term) => name.includes(term))) continue;
            }
            indices.push(i);
        }
        if (this.#sort.key) {
            const compare = COMPARE[this.#sort.key];
            const dir = this.#sort.dir;
            indices.sort((a, b) => dir * compare(this.#tensors[a], this.#tensors[b]) || a - b);
        }
        const shown = indices.length;
        if (this.#groupToggle.checked) {
            const groups = new Map();
            for (const i of indices) {
                const group = this.#groupOf.get(this.#tensors[i]) ?? NOT_IN_LAYER;
                let g = groups.get(group);
                if (!g) groups.set(group, (g = []));
                g.push(i);
            }
            const items = [];
            for (const group of this.#groups) {
                const members = groups.get(group);
                if (!members) continue;
                let bytes = 0;
                let params = 0;
                for (const i of members) {
                    bytes += Number(this.#tensors[i].nbytes);
                    params += Number(this.#tensors[i].n_elements);
                }
                const key = group.key;
                items.push({
                    group: key,
                    label: group.label,
                    count: members.length,
                    bytes,
                    params,
                });
                if (!this.#collapsed.has(key)) for (const i of members) items.push(i);
            }
            this.#items = items;
        } else {
            this.#items = indices;
        }
        this.#cursor = this.#selected === null ? -1 : this.#positionOf(this.#selected);
        this.#countLabel.textContent =
            shown === this.#tensors.length
                ? `${formatInt(shown)} tensors`
                : `${formatInt(shown)} of ${formatInt(this.#tensors.length)} tensors`;
        this.#list.setCount(this.#items.length);
    }

    /** The row's cells, made once: scrolling re-fills rows every frame, so it only changes their text. */
    #cellsOf(row) {
        if (row.cells?.multiFile === this.#multiFile) return row.cells;
        const cell = (className) => el("span", { class: `cell ${className}`, attrs: { role: "cell" } });
        const c = {
            multiFile: this.#multiFile,
            twisty: el("span", { class: "twisty" }),
            label: el("strong"),
            summary: el("span", { class: "muted" }),
            tag: el("span", { class: "dtype-tag" }),
            name: cell("c-name"),
            dtype: cell("c-dtype"),
            shape: cell("c-shape num"),
            params: cell("c-params num"),
            size: cell("c-size num"),
            offset: cell("c-offset num"),
            file: this.#multiFile ? cell("c-file") : null,
        };
        c.dtype.append(c.tag);
        const group = el("span", { class: "cell group-cell" }, c.twisty, c.label, c.summary);
        clear(row, group, c.name, c.dtype, c.shape, c.params, c.size, c.offset, c.file);
        row.cells = c;
        return c;
    }

    #renderRow(row, index) {
        const item = this.#items[index];
        const c = this.#cellsOf(row);
        const cursor = index === this.#cursor;
        row.toggleAttribute("data-cursor", cursor);
        if (cursor) row.id = "tensor-cursor";
        else row.removeAttribute("id");
        if (typeof item === "object") {
            row.className = cursor ? "trow group cursor" : "trow group";
            row.removeAttribute("data-name");
            row.removeAttribute("aria-selected");
            row.dataset.testid = "tensor-group";
            row.dataset.group = item.group;
            const collapsed = this.#collapsed.has(item.group);
            row.setAttribute("aria-expanded", String(!collapsed));
            c.twisty.textContent = collapsed ? "▸" : "▾";
            c.label.textContent = item.label;
            c.summary.textContent =
                ` ${formatInt(item.count)} tensors · ${formatCount(item.params)} params · ` + formatBytes(item.bytes);
            return;
        }
        const t = this.#tensors[item];
        const selected = t.name === this.#selected;
        row.className = `trow${selected ? " selected" : ""}${cursor ? " cursor" : ""}`;
        row.removeAttribute("data-group");
        row.removeAttribute("aria-expanded");
        row.dataset.testid = "tensor-row";
        row.dataset.name = t.name;
        row.setAttribute("aria-selected", String(selected));
        c.name.textContent = t.name;
        c.name.title = t.name;
        c.tag.textContent = t.dtype;
        c.tag.dataset.dtype = t.dtype;
        c.shape.textContent = formatShape(t.shape);
        c.params.textContent = formatInt(t.n_elements);
        c.size.textContent = formatBytes(t.nbytes);
        c.size.title = `${formatInt(t.nbytes)} bytes`;
        c.size.dataset.bytes = String(t.nbytes);
        c.offset.textContent = formatInt(t.offset);
        c.offset.title = `0x${BigInt(t.offset).toString(16)}`;
        if (c.file) {
            c.file.textContent = t.file ?? "";
            c.file.title = t.file ?? "";
        }
    }

    #onRowClick(event) {
        const row = event.currentTarget;
        const item = this.#items[row.vlistIndex];
        if (item === undefined) return;
        if (typeof item === "object") {
            this.#cursor = row.vlistIndex;
            this.#toggleGroup(item.group);
            return;
        }
        this.#cursor = row.vlistIndex;
        this.#choose(item);
    }

    #toggleGroup(group) {
        if (this.#collapsed.has(group)) this.#collapsed.delete(group);
        else this.#collapsed.add(group);
        const cursor = this.#cursor;
        this.#rebuild();
        this.#cursor = Math.min(cursor, this.#items.length - 1);
        this.#list.refresh();
    }

    #choose(tensorIndex) {
        const t = this.#tensors[tensorIndex];
        this.#selected = t.name;
        this.#list.refresh();
        this.#onSelect(t);
    }

    #onKey(event) {
        if (event.altKey || event.ctrlKey || event.metaKey) return;
        const count = this.#items.length;
        if (count === 0) return;
        const page = Math.max(1, Math.floor(this.#viewport.clientHeight / ROW_HEIGHT) - 1);
        const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page, Home: -count, End: count };
        if (event.key === "Enter") {
            const item = this.#items[this.#cursor];
            if (item === undefined) return;
            event.preventDefault();
            if (typeof item === "object") this.#toggleGroup(item.group);
            else this.#choose(item);
            return;
        }
        if (!Object.hasOwn(moves, event.key)) return;
        event.preventDefault();
        const from = this.#cursor < 0 ? (moves[event.key] > 0 ? -1 : count) : this.#cursor;
        this.#cursor = Math.min(count - 1, Math.max(0, from + moves[event.key]));
        this.#viewport.setAttribute("aria-activedescendant", "tensor-cursor");
        this.#list.scrollToIndex(this.#cursor);
        this.#list.refresh();
    }
}
