// SPDX-License-Identifier: MIT
// A histogram of decoded values on a canvas: bars over [min, max], linear or log counts, hover readout.
import { el, cssVar, fitCanvas } from "./dom.js";
import { formatFloat, formatInt } from "./format.js";

const HEIGHT = 150;

export class HistogramChart {
    #canvas;
    #readout;
    #axis;
    #log;
    #data = null;
    #observer;
    #onTheme = () => this.draw();

    constructor(root) {
        this.#canvas = el("canvas", {
            class: "chart",
            attrs: { "data-testid": "tensor-histogram", role: "img", "aria-label": "Histogram of the values" },
        });
        this.#readout = el("div", { class: "readout muted", text: "\u00a0" });
        this.#axis = el("div", { class: "axis" });
        this.#log = el("input", { type: "checkbox", on: { change: () => this.draw() } });
        root.append(
            el("div", { class: "toolbar compact" }, el("label", { class: "check" }, this.#log, " Log scale")),
            this.#canvas,
            this.#axis,
            this.#readout,
        );
        this.#canvas.addEventListener("pointermove", (e) => this.#hover(e));
        this.#canvas.addEventListener("pointerleave", () => (this.#readout.textContent = "\u00a0"));
        this.#observer = new ResizeObserver(() => this.draw());
        this.#observer.observe(this.#canvas);
        window.addEventListener("weightstream-theme", this.#onTheme); // bar colours follow the theme
    }

    /** Stops observing (the chart is being replaced). */
    dispose() {
        this.#observer.disconnect();
        window.removeEventListener("weightstream-theme", this.#onTheme);
    }

    /** {min, max, counts, edges}: the histogram of model.stats() (min and max null without finite values). */
    set(data) {
        this.#data = data;
        const { min, max } = data;
        this.#canvas.dataset.counts = Array.from(data.counts).join(","); // what the bars show, for tests
        const labels = Number.isFinite(min)
            ? [formatFloat(min, 4), min < 0 && max > 0 ? "0" : "", formatFloat(max, 4)]
            : ["no finite values", "", ""];
        this.#axis.replaceChildren(...labels.map((text) => el("span", { text })));
        if (min < 0 && max > 0) {
            this.#axis.children[1].style.left = `${(100 * -min) / (max - min)}%`;
            this.#axis.children[1].classList.add("zero");
        }
        this.draw();
    }

    draw() {
        const canvas = this.#canvas;
        const { width, height, dpr } = fitCanvas(canvas, canvas.clientWidth, HEIGHT);
        const ctx = canvas.getContext("2d");
        ctx.clearRect(0, 0, width, height);
        if (!this.#data) return;
        const { counts } = this.#data;
        let peak = 0;
        for (const c of counts) peak = Math.max(peak, c);
        if (!peak) return;
        const log = this.#log.checked;
        const scale = (c) => (log ? Math.log1p(c) / Math.log1p(peak) : c / peak);
        const barWidth = width / counts.length;
        ctx.fillStyle = cssVar("--accent", "#3b6fd6");
        for (let i = 0; i < counts.length; ++i) {
            if (!counts[i]) continue;
            const h = Math.max(1 * dpr, scale(counts[i]) * (height - 2 * dpr));
            ctx.fillRect(
                Math.floor(i * barWidth),
                height - h,
                Math.max(1, Math.ceil(barWidth) - (barWidth > 3 ? 1 : 0)),
                h,
            );
        }
        ctx.fillStyle = cssVar("--border", "#999");
        ctx.fillRect(0, height - dpr, width, dpr);
    }

    #hover(event) {
        if (!this.#data) return;
        const { min, max, counts } = this.#data;
        const rect = this.#canvas.getBoundingClientRect();
        const i = Math.min(
            counts.length - 1,
            Math.max(0, Math.floor(((event.clientX - rect.left) / rect.width) * counts.length)),
        );
        const w = (max - min) / counts.length;
        const close = i === counts.length - 1 ? "]" : ")";
        const bin = `[${formatFloat(min + i * w, 4)}, ${formatFloat(min + (i + 1) * w, 4)}${close}`;
        this.#readout.textContent = `${bin}: ${formatInt(counts[i])}`;
    }
}
