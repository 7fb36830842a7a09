// SPDX-License-Identifier: MIT
// The comparison of two models (compare() of the package, the object `weightstream diff --json` prints): a
// table of every pair with its verdict, dtypes, nmse, cosine and max |a - b|, sortable, worst first, with the
// hints; a pair's detail overlays the histograms of both sides and shows a heatmap of the difference over a
// window of rows.
import { el, clear, cssVar, fitCanvas } from "./dom.js";
import { formatFloat, formatInt, formatShape } from "./format.js";
import { Heatmap, absQuantile } from "./heatmap.js";

const HIST_HEIGHT = 150;
// Worst first, as the CLI sorts: incomparable, different (largest nmse first), only in A, only in B, identical.
const VERDICT_RANK = { incomparable: 0, non_finite: 1, different: 2, only_a: 3, only_b: 4, identical: 5 };

const metric = (row, key) => row.metrics?.[key] ?? null;
// null last in either direction
function byNumber(a, b) {
    if (a === null || b === null) return (a === null) - (b === null);
    return a - b;
}

const COLUMNS = [
    { key: "verdict", label: "Verdict", sort: (a, b) => VERDICT_RANK[a.verdict] - VERDICT_RANK[b.verdict] },
    { key: "name", label: "Tensor (A ↔ B)", sort: (a, b) => nameOf(a).localeCompare(nameOf(b)) },
    { key: "dtypes", label: "Types", sort: (a, b) => dtypes(a).localeCompare(dtypes(b)) },
    { key: "nmse", label: "nmse", num: true, sort: (a, b) => byNumber(metric(a, "nmse"), metric(b, "nmse")) },
    { key: "cosine", label: "cosine", num: true, sort: (a, b) => byNumber(metric(a, "cosine"), metric(b, "cosine")) },
    {
        key: "max_abs",
        label: "max |a−b|",
        num: true,
        sort: (a, b) => byNumber(metric(a, "max_abs"), metric(b, "max_abs")),
    },
];

function nameOf(row) {
    if (row.a !== null && row.b !== null && row.a !== row.b) return `${row.a} ↔ ${row.b}`;
    return row.a ?? row.b ?? "";
}

function dtypes(row) {
    return `${row.dtype_a ?? "–"} / ${row.dtype_b ?? "–"}`;
}

function number(v) {
    return v === null || v === undefined ? "–" : formatFloat(v, 3);
}

/** The rows worst first (the CLI's order): verdict rank, then nmse largest first, then report order. */
export function worstFirst(rows) {
    return rows
        .map((row, index) => ({ row, index }))
        .sort(
            (x, y) =>
                VERDICT_RANK[x.row.verdict] - VERDICT_RANK[y.row.verdict] ||
                byNumber(metric(y.row, "nmse"), metric(x.row, "nmse")) ||
                x.index - y.index,
        )
        .map((x) => x.row);
}

export class CompareView {
    #root;
    #summary;
    #body;
    #header;
    #report = null;
    #sort = null; // {key, dir}; null: worst first
    #selected = null;
    #onSelect;

    /** onSelect(row): a pair was chosen. */
    constructor(root, { onSelect }) {
        this.#root = root;
        this.#onSelect = onSelect;
        this.#summary = el("p", { class: "compare-summary", attrs: { "data-testid": "compare-summary" } });
        this.#header = el("tr");
        this.#body = el("tbody");
        root.append(
            this.#summary,
            el(
                "div",
                { class: "compare-scroll" },
                el(
                    "table",
                    { class: "compare-table", attrs: { "data-testid": "compare-table" } },
                    el("thead", {}, this.#header),
                    this.#body,
                ),
            ),
        );
        this.#renderHeader();
    }

    /** report: compare()'s result; labelA, labelB: how the page names the two models. */
    setReport(report, labelA, labelB) {
        this.#report = report;
        this.#sort = null;
        this.#selected = null;
        const s = report.summary;
        clear(
            this.#summary,
            el("strong", { text: "A " }),
            labelA,
            el("strong", { text: " · B " }),
            labelB,
            el("br"),
            `paired by ${report.mapping}: ${formatInt(s.identical)} identical, ${formatInt(s.different)} different, ` +
                `${formatInt(s.non_finite)} non-finite, ${formatInt(s.only_a)} only in A, ${formatInt(s.only_b)} only in B, ` +
                `${formatInt(s.incomparable)} incomparable`,
        );
        this.#renderHeader();
        this.#renderRows();
    }

    clear() {
        this.#report = null;
        clear(this.#summary);
        clear(this.#body);
    }

    #renderHeader() {
        clear(
            this.#header,
            COLUMNS.map((c) => {
                const sorted = this.#sort?.key === c.key;
                const arrow = sorted ? (this.#sort.dir > 0 ? " ▲" : " ▼") : "";
                return el(
                    "th",
                    {
                        class: c.num ? "num" : "",
                        attrs: { "aria-sort": sorted ? (this.#sort.dir > 0 ? "ascending" : "descending") : "none" },
                    },
                    el("button", {
                        type: "button",
                        class: "sort",
                        text: c.label + arrow,
                        dataset: { sort: c.key },
                        on: { click: () => this.#sortBy(c.key) },
                    }),
                );
            }),
        );
    }

    #sortBy(key) {
        this.#sort = this.#sort?.key === key ? { key, dir: -this.#sort.dir } : { key, dir: 1 };
        this.#renderHeader();
        this.#renderRows();
    }

    #ordered() {
        const rows = worstFirst(this.#report.tensors);
        if (!this.#sort) return rows;
        const column = COLUMNS.find((c) => c.key === this.#sort.key);
        const dir = this.#sort.dir;
        // stable: ties keep the worst-first order
        return rows
            .map((row, i) => ({ row, i }))
            .sort((x, y) => dir * column.sort(x.row, y.row) || x.i - y.i)
            .map((x) => x.row);
    }

    #renderRows() {
        if (!this.#report) return;
        const rows = this.#ordered().map((row) => {
            const cells = [
                el("td", {}, el("span", { class: `verdict verdict-${row.verdict}`, text: row.verdict })),
                el(
                    "td",
                    { class: "c-name" },
                    el("span", { text: nameOf(row) }),
                    row.transform ? el("span", { class: "muted", text: ` [${row.transform}]` }) : null,
                    row.hint
                        ? el("div", { class: "hint", text: row.hint, attrs: { "data-testid": "compare-hint" } })
                        : null,
                ),
                el("td", { text: dtypes(row) }),
                el("td", { class: "num", text: number(metric(row, "nmse")) }),
                el("td", { class: "num", text: number(metric(row, "cosine")) }),
                el("td", { class: "num", text: number(metric(row, "max_abs")) }),
            ];
            const tr = el(
                "tr",
                {
                    tabIndex: 0,
                    dataset: { a: row.a ?? "", b: row.b ?? "", verdict: row.verdict },
                    attrs: { "data-testid": "compare-row", "aria-selected": String(row === this.#selected) },
                    on: {
                        click: () => this.#choose(row),
                        keydown: (e) => {
                            if (e.key === "Enter" || e.key === " ") {
                                e.preventDefault();
                                this.#choose(row);
                            }
                        },
                    },
                },
                cells,
            );
            return tr;
        });
        clear(this.#body, rows);
    }

    #choose(row) {
        this.#selected = row;
        for (const tr of this.#body.children) {
            tr.setAttribute("aria-selected", String(tr.dataset.a === (row.a ?? "") && tr.dataset.b === (row.b ?? "")));
        }
        this.#onSelect(row);
    }
}

/** Two histograms (model.stats() of each side) on one axis: A and B in their own colours, overlaid. */
class OverlayHistogram {
    #canvas;
    #axis;
    #data = null;
    #observer;
    #onTheme = () => this.draw();

    constructor(root) {
        this.#canvas = el("canvas", {
            class: "chart",
            attrs: { "data-testid": "compare-histogram", role: "img", "aria-label": "Histograms of A and B" },
        });
        this.#axis = el("div", { class: "axis" });
        root.append(
            el(
                "div",
                { class: "legend-keys" },
                el("span", { class: "key key-a", text: "A" }),
                el("span", { class: "key key-b", text: "B" }),
            ),
            this.#canvas,
            this.#axis,
        );
        this.#observer = new ResizeObserver(() => this.draw());
        this.#observer.observe(this.#canvas);
        window.addEventListener("weightstream-theme", this.#onTheme);
    }

    dispose() {
        this.#observer.disconnect();
        window.removeEventListener("weightstream-theme", this.#onTheme);
    }

    /** a, b: the histograms ({min, max, counts}) of model.stats() of each side. */
    set(a, b) {
        const finite = [a, b].filter((h) => h && Number.isFinite(h.min));
        const min = Math.min(...finite.map((h) => h.min));
        const max = Math.max(...finite.map((h) => h.max));
        this.#data = { a, b, min, max };
        this.#canvas.dataset.countsA = Array.from(a.counts).join(",");
        this.#canvas.dataset.countsB = Array.from(b.counts).join(",");
        const labels = finite.length ? [formatFloat(min, 4), formatFloat(max, 4)] : ["no finite values", ""];
        this.#axis.replaceChildren(...labels.map((text) => el("span", { text })));
        this.draw();
    }

    draw() {
        const canvas = this.#canvas;
        const { width, height, dpr } = fitCanvas(canvas, canvas.clientWidth, HIST_HEIGHT);
        const ctx = canvas.getContext("2d");
        ctx.clearRect(0, 0, width, height);
        const d = this.#data;
        if (!d || !(d.max >= d.min)) return;
        const span = d.max - d.min || 1;
        const x = (v) => ((v - d.min) / span) * width;
        // Densities (count per unit of value), so that bins of different widths compare.
        const density = (h) => {
            const w = (h.max - h.min) / h.counts.length || 1;
            return Array.from(h.counts, (c) => c / w);
        };
        const sides = [
            [d.a, cssVar("--compare-a", "rgba(59, 111, 214, 0.55)")],
            [d.b, cssVar("--compare-b", "rgba(214, 96, 59, 0.55)")],
        ].filter(([h]) => Number.isFinite(h.min));
        const peak = Math.max(...sides.map(([h]) => Math.max(...density(h))));
        if (!(peak > 0)) return;
        ctx.globalAlpha = 0.6;
        for (const [h, colour] of sides) {
            const dens = density(h);
            const w = (h.max - h.min) / h.counts.length;
            ctx.fillStyle = colour;
            for (let i = 0; i < dens.length; ++i) {
                if (!dens[i]) continue;
                const x0 = w > 0 ? x(h.min + i * w) : x(h.min) - dpr;
                const x1 = w > 0 ? x(h.min + (i + 1) * w) : x(h.min) + dpr;
                const bar = Math.max(dpr, (dens[i] / peak) * (height - 2 * dpr));
                ctx.fillRect(Math.floor(x0), height - bar, Math.max(1, Math.ceil(x1 - x0)), bar);
            }
        }
        ctx.globalAlpha = 1;
        ctx.fillStyle = cssVar("--border", "#999");
        ctx.fillRect(0, height - dpr, width, dpr);
    }
}

export class CompareDetail {
    #root;
    #load;
    #onClose;
    #generation = 0;
    #charts = [];

    /**
     * load(row) -> Promise of {statsA, statsB, diff: {values, rows, cols, firstRow} | null, note}: both sides'
     * statistics and the difference over a window of rows; onClose(): the close button.
     */
    constructor(root, { load, onClose }) {
        this.#root = root;
        this.#load = load;
        this.#onClose = onClose;
    }

    clear() {
        ++this.#generation;
        for (const c of this.#charts) c.dispose();
        this.#charts = [];
        clear(this.#root);
    }

    async show(row) {
        this.clear();
        const generation = this.#generation;
        const closeButton = el("button", {
            type: "button",
            class: "close",
            text: "×",
            attrs: { "aria-label": "Close the pair's detail" },
            on: { click: () => this.#onClose() },
        });
        const facts = el(
            "dl",
            { class: "facts" },
            el("dt", { text: "A" }),
            el("dd", { text: row.a === null ? "–" : `${row.a} · ${row.dtype_a} · ${formatShape(row.shape_a)}` }),
            el("dt", { text: "B" }),
            el("dd", { text: row.b === null ? "–" : `${row.b} · ${row.dtype_b} · ${formatShape(row.shape_b)}` }),
            el("dt", { text: "Verdict" }),
            el("dd", { text: row.verdict + (row.transform ? ` (after ${row.transform})` : "") }),
            row.metrics ? el("dt", { text: "Metrics" }) : null,
            row.metrics
                ? el("dd", {
                      text:
                          `nmse ${number(row.metrics.nmse)} · rmse ${number(row.metrics.rmse)} · cosine ` +
                          `${number(row.metrics.cosine)} · max |a−b| ${number(row.metrics.max_abs)} at element ` +
                          `${formatInt(row.metrics.max_abs_index)} · ${formatInt(row.metrics.n_diff)} values differ`,
                  })
                : null,
            row.hint ? el("dt", { text: "Hint" }) : null,
            row.hint ? el("dd", { text: row.hint }) : null,
        );
        const body = el("div", { class: "detail-body", text: "Decoding both sides…" });
        this.#root.append(
            el("div", { class: "detail-head" }, el("h2", { text: nameOf(row) }), closeButton),
            facts,
            body,
        );
        if (row.a === null || row.b === null) {
            clear(body, "Only one side has this tensor.");
            return;
        }
        let result;
        try {
            result = await this.#load(row);
        } catch (error) {
            if (generation === this.#generation) {
                clear(body, error?.name === "AbortError" ? "Cancelled." : `Cannot decode: ${error?.message ?? error}`);
            }
            return;
        }
        if (generation !== this.#generation) return;
        clear(body);
        const hist = el("section", { class: "chart-box" }, el("h3", { text: "Histograms of A and B" }));
        body.append(hist);
        const overlay = new OverlayHistogram(hist);
        overlay.set(result.statsA.histogram, result.statsB.histogram);
        this.#charts.push(overlay);
        const heat = el("section", { class: "chart-box" }, el("h3", { text: "Difference A − B" }));
        body.append(heat);
        if (!result.diff) {
            heat.append(el("p", { class: "muted", text: result.note }));
            return;
        }
        const d = result.diff;
        let maxAbs = 0;
        for (const v of d.values) if (Math.abs(v) > maxAbs) maxAbs = Math.abs(v);
        heat.append(
            el("p", {
                class: "muted",
                dataset: { maxAbs: String(maxAbs) },
                attrs: { "data-testid": "compare-diff-window" },
                text:
                    `rows ${formatInt(d.firstRow)}–${formatInt(d.firstRow + d.rows - 1)} of ${formatInt(d.totalRows)}, ` +
                    `${formatInt(d.cols)} columns${result.note ? ` · ${result.note}` : ""}`,
            }),
        );
        const map = new Heatmap(heat, { onPick: () => {} });
        map.setData({
            values: d.values,
            rows: d.rows,
            cols: d.cols,
            firstRow: d.firstRow,
            scale: absQuantile(d.values, maxAbs),
            maxAbs,
        });
        this.#charts.push(map);
    }
}
