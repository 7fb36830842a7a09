// SPDX-License-Identifier: MIT
// The tensor detail panel: what the tensor is, then its decoded values (the whole tensor, or a window of
// rows for a huge one, saying which rows): statistics, histogram, heatmap, a table of raw values, .npy.
import { el, clear } from "./dom.js";
import { bannerParts } from "./errors.js";
import { HistogramChart } from "./histogram.js";
import { Heatmap } from "./heatmap.js";
import { encodeNpy } from "./npy.js";
import { download } from "./save.js";
import { formatBytes, formatF32, formatFloat, formatInt, formatShape } from "./format.js";

// Types whose stored values float32 cannot all hold (integers beyond 2^24, float64): their values are shown
// and saved as stored, read with {as: "native"} (or, from a package without it, {as: "raw"}). `descr` is
// the NumPy type of the .npy.
export const EXACT_TYPES = {
    BOOL: { array: Uint8Array, descr: "|b1", numpy: "bool" },
    I8: { array: Int8Array, descr: "|i1", numpy: "int8" },
    U8: { array: Uint8Array, descr: "|u1", numpy: "uint8" },
    I16: { array: Int16Array, descr: "<i2", numpy: "int16" },
    U16: { array: Uint16Array, descr: "<u2", numpy: "uint16" },
    I32: { array: Int32Array, descr: "<i4", numpy: "int32" },
    U32: { array: Uint32Array, descr: "<u4", numpy: "uint32" },
    I64: { array: BigInt64Array, descr: "<i8", numpy: "int64" },
    U64: { array: BigUint64Array, descr: "<u8", numpy: "uint64" },
    F64: { array: Float64Array, descr: "<f8", numpy: "float64" },
};

const GETTERS = {
    2: ["getInt16", "getUint16"],
    4: ["getInt32", "getUint32"],
    8: ["getBigInt64", "getBigUint64", "getFloat64"],
};

/** The stored values of an EXACT_TYPES tensor from its bytes (`bigEndian`: a big-endian GGUF's). */
export function exactValues(bytes, dtype, bigEndian = false) {
    const { array } = EXACT_TYPES[dtype];
    const size = array.BYTES_PER_ELEMENT;
    const count = Math.floor(bytes.byteLength / size);
    if (!bigEndian || size === 1) {
        const copy = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
        return new array(copy.buffer, copy.byteOffset, count);
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const getter =
        array === Float64Array
            ? "getFloat64"
            : GETTERS[size][array === BigInt64Array || array.name.startsWith("Int") ? 0 : 1];
    const out = new array(count);
    for (let i = 0; i < count; ++i) out[i] = view[getter](i * size, false);
    return out;
}

// Values decoded at most per window: 16 MiB of float32 keeps the page and the worker light.
export const MAX_WINDOW_VALUES = 1 << 22;
const TABLE_ROWS = 16;
const TABLE_COLS = 8;

/** Elements per row (the innermost dimension) and the number of rows of a tensor (the core's count). */
export function rowGeometry(tensor) {
    const shape = tensor.shape.map(Number);
    return { rowLength: shape.length ? shape[shape.length - 1] : 1, rows: Number(tensor.rows) };
}

/** The rows to decode at first: all of them, or a window from row 0. */
export function firstWindow(tensor, maxValues = MAX_WINDOW_VALUES) {
    const { rowLength, rows } = rowGeometry(tensor);
    const perWindow = Math.max(1, Math.floor(maxValues / Math.max(1, rowLength)));
    return rows <= perWindow ? null : [0, perWindow];
}

function safeFileName(name) {
    return name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 120) || "tensor";
}

/** A statistics record (model.stats()) as the detail's list of figures. */
function statsList(s, count, testId) {
    const stat = (key, label, text) =>
        el("div", { class: "stat" }, el("dt", { text: label }), el("dd", { text, dataset: { stat: key } }));
    return el(
        "dl",
        { class: "stats", attrs: { "data-testid": testId } },
        stat("count", "values", formatInt(count)),
        stat("min", "min", formatF32(s.min ?? NaN)),
        stat("max", "max", formatF32(s.max ?? NaN)),
        stat("mean", "mean", formatFloat(s.mean ?? NaN)),
        stat("std", "std", formatFloat(s.std ?? NaN)),
        stat("zeros", "zeros", formatInt(s.zeros)),
        stat("nan", "NaN", formatInt(s.nan)),
        stat("posinf", "+Inf", formatInt(s.pos_inf)),
        stat("neginf", "−Inf", formatInt(s.neg_inf)),
    );
}

export class TensorDetail {
    #root;
    #load;
    #onClose;
    #tensor = null;
    #generation = 0;
    #result = null; // {values, stats, histogram, scale, maxAbs, firstRow, rows, cols}
    #body;
    #charts = []; // the histogram and heatmap on show, disposed when replaced
    #wholeStats;
    #wholeBox;
    #whole = null; // the AbortController of the whole-tensor statistics in flight

    /**
     * load(tensor, rows) -> Promise of {values, stats, histogram, scale, maxAbs, exact} (exact: the stored
     * values of an EXACT_TYPES tensor, else absent; rejects with an AbortError when cancelled); onClose(): the close button; wholeStats(tensor, {signal, onProgress}) -> Promise of
     * the statistics of every value of the tensor (model.stats() without rows), for a windowed tensor.
     */
    constructor(root, { load, onClose, wholeStats }) {
        this.#root = root;
        this.#load = load;
        this.#onClose = onClose;
        this.#wholeStats = wholeStats;
    }

    /** The tensor on show, or null. */
    get tensor() {
        return this.#tensor;
    }

    #disposeCharts() {
        for (const chart of this.#charts) chart.dispose();
        this.#charts = [];
    }

    clear() {
        this.#whole?.abort();
        this.#whole = null;
        this.#disposeCharts();
        this.#tensor = null;
        this.#result = null;
        ++this.#generation;
        clear(
            this.#root,
            el("p", { class: "muted placeholder", text: "Choose a tensor to decode it and see its values." }),
        );
    }

    /** Shows `tensor` and decodes its first window. */
    show(tensor) {
        this.#whole?.abort();
        this.#whole = null;
        this.#tensor = tensor;
        this.#result = null;
        const { rowLength, rows } = rowGeometry(tensor);
        const bpw = Number(tensor.n_elements) ? (Number(tensor.nbytes) * 8) / Number(tensor.n_elements) : 0;
        const facts = [
            ["Type", tensor.dtype],
            ["Shape", formatShape(tensor.shape)],
            tensor.ne ? ["ne (file order)", `[${tensor.ne.map(String).join(", ")}]`] : null,
            ["Parameters", formatInt(tensor.n_elements)],
            ["Size", `${formatBytes(tensor.nbytes)} (${formatInt(tensor.nbytes)} bytes)`],
            ["Bits per weight", bpw ? formatFloat(bpw, 4) : "–"],
            ["Offset", `${formatInt(tensor.offset)} (0x${BigInt(tensor.offset).toString(16)})`],
            tensor.file ? ["File", tensor.file] : null,
        ].filter(Boolean);
        this.#body = el("div", { class: "detail-body" });
        this.#wholeBox = el("section", { class: "whole-stats", attrs: { "data-testid": "whole-stats" } });
        clear(
            this.#root,
            el(
                "header",
                { class: "detail-head" },
                el("h2", { class: "mono", text: tensor.name, title: tensor.name }),
                el("button", {
                    type: "button",
                    class: "close",
                    text: "×",
                    title: "Close",
                    attrs: { "aria-label": "Close the tensor detail" },
                    on: { click: () => this.#onClose() },
                }),
            ),
            el(
                "dl",
                { class: "facts" },
                facts.map(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]),
            ),
            this.#wholeBox,
            this.#body,
        );
        const first = firstWindow(tensor);
        if (first && this.#wholeStats) this.#offerWholeStats();
        this.#decode(first, { rowLength, rows });
    }

    // The statistics of every row of a windowed tensor: on request (it reads the whole tensor), with
    // progress and cancel; the result stays above the window's figures until another tensor is shown.
    #offerWholeStats() {
        const box = this.#wholeBox;
        clear(
            box,
            el("button", {
                type: "button",
                text: "Statistics of the whole tensor",
                title: "Reads and decodes every row (the window below is a part of the tensor)",
                attrs: { "data-testid": "whole-stats-start" },
                on: { click: () => this.#runWholeStats() },
            }),
        );
        delete box.dataset.state;
    }

    #runWholeStats() {
        const tensor = this.#tensor;
        const box = this.#wholeBox;
        const controller = (this.#whole = new AbortController());
        const text = el("span", { class: "muted", text: "Reading the whole tensor…" });
        const bar = el("progress", { max: 1, attrs: { "aria-label": "Whole-tensor statistics" } });
        box.dataset.state = "running";
        clear(
            box,
            el(
                "div",
                { class: "toolbar compact", attrs: { "data-testid": "whole-stats-progress" } },
                bar,
                text,
                el("button", {
                    type: "button",
                    text: "Cancel",
                    attrs: { "data-testid": "whole-stats-cancel" },
                    on: { click: () => controller.abort() },
                }),
            ),
        );
        const onProgress = ({ loaded, total }) => {
            if (this.#whole !== controller) return;
            if (total) bar.value = Math.min(1, loaded / total);
            text.textContent = total
                ? `${formatBytes(loaded)} of ${formatBytes(total)}`
                : `${formatBytes(loaded)} read`;
        };
        this.#wholeStats(tensor, { signal: controller.signal, onProgress }).then(
            (stats) => {
                if (this.#whole !== controller) return;
                this.#whole = null;
                box.dataset.state = "done";
                clear(
                    box,
                    el("h3", { text: `Statistics of the whole tensor (${formatInt(tensor.rows)} rows)` }),
                    statsList(stats, Number(tensor.n_elements), "tensor-whole-stats"),
                );
                box.dataset.counts = stats.histogram?.counts?.join(",") ?? "";
            },
            (error) => {
                if (this.#whole !== controller) return;
                this.#whole = null;
                if (error?.name === "AbortError") {
                    this.#offerWholeStats();
                    box.dataset.state = "cancelled";
                    box.append(el("span", { class: "muted", text: " Cancelled." }));
                    return;
                }
                const { code, text: message } = bannerParts(error);
                box.dataset.state = "failed";
                clear(box, el("p", { class: "inline-error", text: `Could not compute: ${code}: ${message}` }));
            },
        );
    }

    #decode(window, geometry) {
        this.#disposeCharts();
        const generation = ++this.#generation;
        const tensor = this.#tensor;
        clear(this.#body, el("p", { class: "muted", text: "Decoding…", attrs: { "data-testid": "tensor-loading" } }));
        this.#load(tensor, window).then(
            (result) => {
                if (generation !== this.#generation) return;
                const firstRow = window ? window[0] : 0;
                const rows = window ? window[1] : geometry.rows;
                const cols = rows ? result.values.length / rows : 0;
                this.#result = { ...result, firstRow, rows, cols };
                this.#render(geometry);
            },
            (error) => {
                if (generation !== this.#generation) return;
                if (error?.name === "AbortError") {
                    clear(this.#body, el("p", { class: "muted", text: "Cancelled." }));
                    return;
                }
                const { code, offset, text } = bannerParts(error);
                const where = offset !== undefined ? ` at byte ${formatInt(offset)}` : "";
                clear(
                    this.#body,
                    el("p", { class: "inline-error", text: `Could not decode: ${code}${where}: ${text}` }),
                );
            },
        );
    }

    #render(geometry) {
        const r = this.#result;
        const tensor = this.#tensor;
        const windowed = r.rows < geometry.rows;
        const body = clear(this.#body);

        if (windowed) {
            const start = el("input", {
                type: "number",
                min: 0,
                max: geometry.rows - 1,
                value: r.firstRow,
                attrs: { "aria-label": "First row", "data-testid": "window-start" },
            });
            const go = (first) => {
                const f = Math.min(Math.max(0, Math.floor(first)), geometry.rows - 1);
                this.#decode([f, Math.min(r.rows, geometry.rows - f)], geometry);
            };
            body.append(
                el(
                    "div",
                    { class: "window-bar", attrs: { "data-testid": "tensor-window" } },
                    el("span", {
                        text:
                            `Rows ${formatInt(r.firstRow)}–${formatInt(r.firstRow + r.rows - 1)} ` +
                            `of ${formatInt(geometry.rows)} ` +
                            `(a window of ${formatInt(r.rows)} rows; the tensor is too large to decode at once)`,
                    }),
                    el(
                        "span",
                        { class: "toolbar compact" },
                        el("button", {
                            type: "button",
                            text: "◀ Previous",
                            disabled: r.firstRow === 0,
                            on: { click: () => go(r.firstRow - r.rows) },
                        }),
                        el("label", {}, "from row ", start),
                        el("button", { type: "button", text: "Go", on: { click: () => go(Number(start.value)) } }),
                        el("button", {
                            type: "button",
                            text: "Next ▶",
                            disabled: r.firstRow + r.rows >= geometry.rows,
                            on: { click: () => go(r.firstRow + r.rows) },
                        }),
                    ),
                ),
            );
        }

        const scope = windowed ? ` (rows ${formatInt(r.firstRow)}–${formatInt(r.firstRow + r.rows - 1)})` : "";
        body.append(el("h3", { text: `Statistics${scope}` }), statsList(r.stats, r.values.length, "tensor-stats"));

        const histogramBox = el("section", { class: "chart-box" }, el("h3", { text: "Histogram" }));
        body.append(histogramBox);
        const histogram = new HistogramChart(histogramBox);
        histogram.set(r.histogram);

        const heatmapBox = el(
            "section",
            { class: "chart-box" },
            el("h3", { text: `Heatmap: ${formatInt(r.rows)} rows × ${formatInt(r.cols)} columns` }),
        );
        body.append(heatmapBox);
        const valuesBox = el("section", { class: "values-box" });
        const table = this.#valuesTable(valuesBox);
        const heatmap = new Heatmap(heatmapBox, { onPick: (row, col) => table.moveTo(row, col) });
        heatmap.setData({
            values: r.values,
            rows: r.rows,
            cols: r.cols,
            firstRow: r.firstRow,
            scale: r.scale,
            maxAbs: r.maxAbs,
        });
        this.#charts = [histogram, heatmap];
        body.append(valuesBox);

        const shape = windowed ? [r.rows, r.cols] : tensor.shape.map(String);
        const complex = tensor.dtype === "C64"; // decoded as (real, imaginary) float32 pairs
        const exact = r.exact ? EXACT_TYPES[tensor.dtype] : null;
        const rowsPart = windowed ? `.rows${r.firstRow}-${r.firstRow + r.rows - 1}` : "";
        const npyName = `${safeFileName(tensor.name)}${rowsPart}.npy`;
        body.append(
            el(
                "div",
                { class: "toolbar" },
                el("button", {
                    type: "button",
                    class: "primary",
                    text: `Download ${windowed ? "these rows" : "tensor"} as .npy (${exact ? exact.numpy : "float32"})`,
                    attrs: { "data-testid": "download-npy" },
                    on: {
                        click: () => {
                            const npyShape = complex && windowed ? [r.rows, r.cols / 2] : shape;
                            const bytes = exact
                                ? encodeNpy(r.exact, npyShape, { descr: exact.descr })
                                : encodeNpy(r.values, npyShape, { complex });
                            download(new Blob([bytes], { type: "application/octet-stream" }), npyName);
                        },
                    },
                }),
            ),
        );
    }

    /** The raw values table: TABLE_ROWS × TABLE_COLS values from a chosen row and column. */
    #valuesTable(box) {
        const r = this.#result;
        const rowInput = el("input", {
            type: "number",
            min: r.firstRow,
            max: r.firstRow + r.rows - 1,
            value: r.firstRow,
            attrs: { "aria-label": "First row", "data-testid": "values-row" },
        });
        const colInput = el("input", {
            type: "number",
            min: 0,
            max: Math.max(0, r.cols - 1),
            value: 0,
            attrs: { "aria-label": "First column", "data-testid": "values-col" },
        });
        const grid = el("div", { class: "values-scroll" });
        const draw = () => {
            const row0 = Math.min(
                Math.max(r.firstRow, Math.floor(Number(rowInput.value) || 0)),
                r.firstRow + Math.max(0, r.rows - 1),
            );
            const col0 = Math.min(Math.max(0, Math.floor(Number(colInput.value) || 0)), Math.max(0, r.cols - 1));
            const rows = Math.min(TABLE_ROWS, r.firstRow + r.rows - row0);
            const cols = Math.min(TABLE_COLS, r.cols - col0);
            const head = el("tr", {}, el("th", { text: "row \\ col" }));
            for (let c = 0; c < cols; ++c) head.append(el("th", { class: "num", text: formatInt(col0 + c) }));
            const tbody = el("tbody");
            for (let i = 0; i < rows; ++i) {
                const tr = el("tr", {}, el("th", { class: "num", text: formatInt(row0 + i) }));
                const base = (row0 - r.firstRow + i) * r.cols + col0;
                for (let c = 0; c < cols; ++c) {
                    const text = r.exact ? String(r.exact[base + c]) : formatF32(r.values[base + c]);
                    tr.append(el("td", { class: "num", text }));
                }
                tbody.append(tr);
            }
            grid.replaceChildren(
                el(
                    "table",
                    { class: "values", attrs: { "data-testid": "tensor-values" } },
                    el("thead", {}, head),
                    tbody,
                ),
            );
        };
        rowInput.addEventListener("input", draw);
        colInput.addEventListener("input", draw);
        box.append(
            el("h3", { text: "Values" }),
            el(
                "div",
                { class: "toolbar compact" },
                el("label", {}, "from row ", rowInput),
                el("label", {}, "column ", colInput),
                el("span", { class: "muted", text: "(click the heatmap to jump)" }),
            ),
            grid,
        );
        draw();
        return {
            moveTo(row, col) {
                rowInput.value = String(row);
                colInput.value = String(col);
                draw();
            },
        };
    }
}
