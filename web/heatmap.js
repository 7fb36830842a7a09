// SPDX-License-Identifier: MIT
// A heatmap of a 2-D window of values: a diverging colour scale symmetric around zero (blue negative, red
// positive, green NaN), zoom with the wheel or the buttons, pan by dragging, a readout under the pointer.
// Each frame samples the values directly for the pixels on screen, so a window of millions of values
// costs no more to draw than a small one.
import { el, fitCanvas } from "./dom.js";
import { formatF32, formatInt, formatFloat } from "./format.js";

const HEIGHT = 300;
const MAX_CELL_PX = 48;
// ColorBrewer RdBu, from -1 to +1.
const STOPS = [
    [-1, [33, 102, 172]],
    [-0.5, [103, 169, 207]],
    [0, [247, 247, 247]],
    [0.5, [239, 138, 98]],
    [1, [178, 24, 43]],
];
const NAN_RGB = [0, 170, 60];

function colourAt(t) {
    for (let i = 1; i < STOPS.length; ++i) {
        const [t1, c1] = STOPS[i];
        if (t <= t1) {
            const [t0, c0] = STOPS[i - 1];
            const f = (t - t0) / (t1 - t0);
            return c0.map((c, k) => Math.round(c + f * (c1[k] - c)));
        }
    }
    return STOPS[STOPS.length - 1][1];
}

const packRgb = ([r, g, b]) => (255 << 24) | (b << 16) | (g << 8) | r; // ImageData bytes, little-endian
const LUT = new Uint32Array(256).map((_, i) => packRgb(colourAt((i / 255) * 2 - 1)));
const NAN_PIXEL = packRgb(NAN_RGB);

const ABS_BINS = 4096;

/**
 * An upper bound of |x| for the fraction `q` of the finite values (from a fine histogram of |x|, exact to
 * 1/4096 of the largest |x|). The heatmap's colour scale uses it so that a few outliers do not wash out
 * the rest.
 */
export function absQuantile(values, maxAbs, q = 0.995) {
    if (!(maxAbs > 0)) return 0;
    const counts = new Float64Array(ABS_BINS);
    const scale = ABS_BINS / maxAbs;
    let n = 0;
    for (let i = 0; i < values.length; ++i) {
        const v = values[i];
        if (v - v !== 0) continue;
        let b = Math.floor(Math.abs(v) * scale);
        if (b >= ABS_BINS) b = ABS_BINS - 1;
        ++counts[b];
        ++n;
    }
    const target = q * n;
    let seen = 0;
    for (let b = 0; b < ABS_BINS; ++b) {
        seen += counts[b];
        if (seen >= target) return ((b + 1) / ABS_BINS) * maxAbs;
    }
    return maxAbs;
}

export class Heatmap {
    #canvas;
    #readout;
    #legend;
    #legendLabels;
    #scaleMode;
    #onPick;
    #data = null; // {values, rows, cols, firstRow, scale, maxAbs}
    #view = { cellW: 1, cellH: 1, x0: 0, y0: 0 };
    #image = null;
    #drag = null;
    #frame = 0;
    #observer;

    /** onPick(row, col): a cell was clicked (row counts from the tensor's first row). */
    constructor(root, { onPick }) {
        this.#onPick = onPick;
        this.#canvas = el("canvas", {
            class: "chart heatmap",
            attrs: {
                "data-testid": "tensor-heatmap",
                role: "img",
                "aria-label": "Heatmap of the values; drag to pan, wheel to zoom",
            },
        });
        this.#readout = el("div", {
            class: "readout muted",
            text: "Hover for values; drag to pan; wheel or +/− to zoom; click to list values",
        });
        this.#scaleMode = el(
            "select",
            { attrs: { "aria-label": "Colour scale" }, on: { change: () => this.#changed() } },
            el("option", { value: "robust", text: "Scale: 99.5% of |x|" }),
            el("option", { value: "max", text: "Scale: max |x|" }),
        );
        const button = (text, label, fn) =>
            el("button", { type: "button", text, title: label, attrs: { "aria-label": label }, on: { click: fn } });
        this.#legend = el("canvas", { class: "legend", width: 256, height: 1 });
        this.#legendLabels = el("div", { class: "axis" });
        root.append(
            el(
                "div",
                { class: "toolbar compact" },
                button("−", "Zoom out", () => this.#zoomAtCentre(1 / 2)),
                button("+", "Zoom in", () => this.#zoomAtCentre(2)),
                button("Fit", "Show the whole window", () => this.#fit()),
                this.#scaleMode,
            ),
            this.#canvas,
            this.#readout,
            this.#legend,
            this.#legendLabels,
        );
        this.#drawLegend();
        const c = this.#canvas;
        c.addEventListener("wheel", (e) => this.#wheel(e), { passive: false });
        c.addEventListener("pointerdown", (e) => this.#pointerDown(e));
        c.addEventListener("pointermove", (e) => this.#pointerMove(e));
        c.addEventListener("pointerup", (e) => this.#pointerUp(e));
        c.addEventListener("pointerleave", () => (this.#readout.textContent = "\u00a0"));
        this.#observer = new ResizeObserver(() => {
            if (this.#data) this.#fit(); // keep the whole window in view when the panel changes size
        });
        this.#observer.observe(c);
    }

    /** Stops observing (the heatmap is being replaced). */
    dispose() {
        this.#observer.disconnect();
        cancelAnimationFrame(this.#frame);
        this.#data = null;
    }

    /** values: Float32Array of rows × cols (row-major); firstRow: the tensor row of the first row. */
    setData(data) {
        this.#data = data;
        this.#changed();
        this.#fit();
    }

    #scale() {
        const d = this.#data;
        if (!d) return 1;
        const s = this.#scaleMode.value === "max" ? d.maxAbs : d.scale;
        return s > 0 && Number.isFinite(s) ? s : 1;
    }

    #changed() {
        const s = this.#scale();
        this.#legendLabels.replaceChildren(
            el("span", { text: formatFloat(-s, 3) }),
            el("span", { class: "zero", text: "0" }),
            el("span", { text: formatFloat(s, 3) }),
        );
        this.#legendLabels.children[1].style.left = "50%";
        this.#request();
    }

    #drawLegend() {
        const ctx = this.#legend.getContext("2d");
        const img = ctx.createImageData(256, 1);
        new Uint32Array(img.data.buffer).set(LUT);
        ctx.putImageData(img, 0, 0);
    }

    #size() {
        return { w: this.#canvas.clientWidth || 1, h: this.#canvas.clientHeight || HEIGHT };
    }

    #fit() {
        if (!this.#data) return;
        const { w, h } = this.#size();
        this.#view = { cellW: w / this.#data.cols, cellH: h / this.#data.rows, x0: 0, y0: 0 };
        this.#request();
    }

    #zoomAt(factor, px, py) {
        const d = this.#data;
        if (!d) return;
        const { w, h } = this.#size();
        const v = this.#view;
        const fitW = w / d.cols;
        const fitH = h / d.rows;
        const cellW = Math.min(Math.max(fitW, v.cellW * factor), Math.max(fitW, MAX_CELL_PX));
        const cellH = Math.min(Math.max(fitH, v.cellH * factor), Math.max(fitH, MAX_CELL_PX));
        const cx = v.x0 + px / v.cellW;
        const cy = v.y0 + py / v.cellH;
        this.#view = { cellW, cellH, x0: cx - px / cellW, y0: cy - py / cellH };
        this.#clamp();
        this.#request();
    }

    #zoomAtCentre(factor) {
        const { w, h } = this.#size();
        this.#zoomAt(factor, w / 2, h / 2);
    }

    #clamp() {
        const d = this.#data;
        const { w, h } = this.#size();
        const v = this.#view;
        v.x0 = Math.min(Math.max(0, v.x0), Math.max(0, d.cols - w / v.cellW));
        v.y0 = Math.min(Math.max(0, v.y0), Math.max(0, d.rows - h / v.cellH));
    }

    #wheel(event) {
        if (!this.#data) return;
        event.preventDefault();
        const rect = this.#canvas.getBoundingClientRect();
        this.#zoomAt(Math.exp(-event.deltaY * 0.002), event.clientX - rect.left, event.clientY - rect.top);
    }

    #cellAt(event) {
        const rect = this.#canvas.getBoundingClientRect();
        const v = this.#view;
        const col = Math.floor(v.x0 + (event.clientX - rect.left) / v.cellW);
        const row = Math.floor(v.y0 + (event.clientY - rect.top) / v.cellH);
        const d = this.#data;
        return row >= 0 && row < d.rows && col >= 0 && col < d.cols ? { row, col } : null;
    }

    #pointerDown(event) {
        if (!this.#data) return;
        this.#canvas.setPointerCapture(event.pointerId);
        this.#drag = { x: event.clientX, y: event.clientY, x0: this.#view.x0, y0: this.#view.y0, moved: false };
    }

    #pointerMove(event) {
        if (!this.#data) return;
        const drag = this.#drag;
        if (drag) {
            const dx = event.clientX - drag.x;
            const dy = event.clientY - drag.y;
            if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
            this.#view.x0 = drag.x0 - dx / this.#view.cellW;
            this.#view.y0 = drag.y0 - dy / this.#view.cellH;
            this.#clamp();
            this.#request();
        }
        const cell = this.#cellAt(event);
        const d = this.#data;
        if (!cell) {
            this.#readout.textContent = "\u00a0";
            return;
        }
        const value = formatF32(d.values[cell.row * d.cols + cell.col]);
        this.#readout.textContent = `row ${formatInt(d.firstRow + cell.row)}, col ${formatInt(cell.col)}: ${value}`;
    }

    #pointerUp(event) {
        const drag = this.#drag;
        this.#drag = null;
        if (!drag || drag.moved) return;
        const cell = this.#cellAt(event);
        if (cell) this.#onPick(this.#data.firstRow + cell.row, cell.col);
    }

    #request() {
        if (this.#frame) return;
        this.#frame = requestAnimationFrame(() => {
            this.#frame = 0;
            this.render();
        });
    }

    /** Draws the visible part of the window now. */
    render() {
        const d = this.#data;
        const canvas = this.#canvas;
        const { w, h } = this.#size();
        const { width, height, dpr, resized } = fitCanvas(canvas, w, h);
        if (resized) this.#image = null;
        const ctx = canvas.getContext("2d");
        if (!d) {
            ctx.clearRect(0, 0, width, height);
            return;
        }
        this.#image ??= ctx.createImageData(width, height);
        const pixels = new Uint32Array(this.#image.data.buffer);
        const v = this.#view;
        const colOf = new Int32Array(width);
        for (let x = 0; x < width; ++x) {
            const c = Math.floor(v.x0 + (x + 0.5) / dpr / v.cellW);
            colOf[x] = c < d.cols ? c : -1;
        }
        const half = 127.5 / this.#scale();
        const values = d.values;
        for (let y = 0; y < height; ++y) {
            const r = Math.floor(v.y0 + (y + 0.5) / dpr / v.cellH);
            const line = y * width;
            if (r >= d.rows) {
                pixels.fill(0, line, line + width);
                continue;
            }
            const base = r * d.cols;
            for (let x = 0; x < width; ++x) {
                const c = colOf[x];
                if (c < 0) {
                    pixels[line + x] = 0;
                    continue;
                }
                const value = values[base + c];
                if (value !== value) {
                    pixels[line + x] = NAN_PIXEL;
                    continue;
                }
                let i = Math.round(value * half + 127.5);
                i = i < 0 ? 0 : i > 255 ? 255 : i;
                pixels[line + x] = LUT[i];
            }
        }
        ctx.putImageData(this.#image, 0, 0);
    }
}
