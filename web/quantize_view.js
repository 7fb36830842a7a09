// SPDX-License-Identifier: MIT
// The Quantize tab: the recipe (llama-quantize's file types, as the package lists them from the core), an
// optional importance matrix, and the plan the core makes for them before anything runs (every tensor's type
// and size, the output's size), then the run's state. Every rule is the core's: this view only shows
// quantizePlan()'s answer (wasm/js/quantize.js). main.js does the work in the package's worker and saves it.
import { clear, el } from "./dom.js";
import { bannerParts } from "./errors.js";
import { formatBytes, formatInt, formatShape } from "./format.js";

const DEFAULT_TYPE = "Q4_K_M";

export class QuantizeView {
    #typeSelect;
    #imatrixInput;
    #imatrixName;
    #imatrixClear;
    #start;
    #summary;
    #mix;
    #body;
    #status;
    #statusKeys = []; // the data attributes the last setStatus() put on #status
    #plan = null;
    #imatrix = null; // the chosen File, or null

    /** onChange(): the recipe or the importance matrix changed (plan again); onStart(): save the output. */
    constructor(root, { onChange, onStart }) {
        this.#typeSelect = el("select", {
            id: "quantize-type",
            attrs: { "data-testid": "quantize-type", "aria-label": "File type (llama-quantize's recipe)" },
            on: { change: () => onChange() },
        });
        this.#imatrixInput = el("input", {
            id: "quantize-imatrix-input",
            type: "file",
            class: "visually-hidden",
            accept: ".gguf,.dat,application/octet-stream",
            attrs: { "data-testid": "quantize-imatrix-input" },
            on: {
                change: () => {
                    const file = this.#imatrixInput.files[0] ?? null;
                    this.#imatrixInput.value = "";
                    if (!file) return;
                    this.#setImatrix(file);
                    onChange();
                },
            },
        });
        this.#imatrixName = el("span", { class: "muted mono", attrs: { "data-testid": "quantize-imatrix-name" } });
        this.#imatrixClear = el("button", {
            type: "button",
            text: "Clear",
            hidden: true,
            attrs: { "data-testid": "quantize-imatrix-clear" },
            on: {
                click: () => {
                    this.#setImatrix(null);
                    onChange();
                },
            },
        });
        this.#start = el("button", {
            type: "button",
            class: "primary",
            text: "Quantize and save…",
            disabled: true,
            attrs: { "data-testid": "quantize-start" },
            on: { click: () => onStart() },
        });
        this.#summary = el("p", { class: "quantize-summary", attrs: { "data-testid": "quantize-summary" } });
        this.#mix = el("p", { class: "quantize-mix muted", attrs: { "data-testid": "quantize-mix" } });
        this.#status = el("p", { class: "quantize-status", attrs: { "data-testid": "quantize-status" } });
        this.#body = el("tbody");
        root.append(
            el(
                "div",
                { class: "quantize-form" },
                el("label", { attrs: { for: "quantize-type" }, text: "Recipe" }),
                this.#typeSelect,
                el("span", { class: "muted", text: "Importance matrix" }),
                el("label", { class: "button", attrs: { for: "quantize-imatrix-input" }, text: "Choose…" }),
                this.#imatrixInput,
                this.#imatrixName,
                this.#imatrixClear,
                this.#start,
            ),
            this.#summary,
            this.#mix,
            this.#status,
            el(
                "div",
                { class: "compare-scroll" },
                el(
                    "table",
                    { class: "compare-table quantize-table", attrs: { "data-testid": "quantize-plan" } },
                    el(
                        "thead",
                        {},
                        el(
                            "tr",
                            {},
                            el("th", { text: "Tensor" }),
                            el("th", { class: "num q-shape", text: "Shape" }),
                            el("th", { class: "q-stored", text: "Stored" }),
                            el("th", { text: "Written as" }),
                            el("th", { class: "num", text: "Size" }),
                            el("th", { text: "" }),
                        ),
                    ),
                    this.#body,
                ),
            ),
        );
        this.#setImatrix(null);
    }

    /** The file types to choose from (quantizeFileTypes()); keeps the current choice when it is listed. */
    setTypes(types) {
        const current = this.#typeSelect.value || DEFAULT_TYPE;
        clear(
            this.#typeSelect,
            types.map((t) =>
                el("option", { value: t.name, text: t.name, title: `ordinary tensors: ${t.defaultType}` }),
            ),
        );
        this.#typeSelect.value = types.some((t) => t.name === current) ? current : types[0]?.name;
    }

    get type() {
        return this.#typeSelect.value;
    }

    get imatrix() {
        return this.#imatrix;
    }

    /** The plan on show (quantizePlan()'s), or null while planning or after a plan failed. */
    get plan() {
        return this.#plan;
    }

    #setImatrix(file) {
        this.#imatrix = file;
        this.#imatrixName.textContent = file ? file.name : "none";
        this.#imatrixClear.hidden = !file;
    }

    /** A new model: no importance matrix, no plan, no run. */
    reset() {
        this.#setImatrix(null);
        this.#clearPlan();
        this.setStatus("", "");
    }

    #clearPlan() {
        this.#plan = null;
        this.#start.disabled = true;
        clear(this.#summary);
        clear(this.#mix);
        clear(this.#body);
        delete this.#summary.dataset.size;
        delete this.#summary.dataset.type;
        delete this.#summary.dataset.code;
    }

    planning() {
        this.#clearPlan();
        this.#summary.textContent = "Planning…";
        this.#summary.dataset.state = "planning";
    }

    /** quantizePlan()'s answer: the output's size and every tensor's type, before starting. */
    setPlan(plan, running) {
        this.#clearPlan();
        this.#plan = plan;
        this.#start.disabled = running;
        const quantized = plan.tensors.filter((t) => t.quantize).length;
        const bpw = plan.bitsPerWeight === null ? "–" : plan.bitsPerWeight.toFixed(2);
        this.#summary.dataset.state = "planned";
        this.#summary.dataset.size = String(plan.fileSize);
        this.#summary.dataset.type = plan.type;
        clear(
            this.#summary,
            el("strong", { text: `${plan.type}: ${formatBytes(plan.fileSize)}` }),
            ` (${formatInt(plan.fileSize)} bytes, ${bpw} bits per weight) from ${formatBytes(plan.inputSize)} of ` +
                `tensors; ${formatInt(quantized)} of ${formatInt(plan.tensors.length)} tensors quantized`,
            plan.fallbacks > 0 ? `, ${formatInt(plan.fallbacks)} with a fallback type (rows not whole blocks)` : "",
            plan.warnings.length ? el("br") : null,
            plan.warnings.map((w) => el("span", { class: "muted", text: `warning: ${w} ` })),
        );
        const mix = new Map();
        for (const t of plan.tensors) mix.set(t.type, (mix.get(t.type) ?? 0) + 1);
        this.#mix.textContent = [...mix].map(([type, n]) => `${type} × ${formatInt(n)}`).join(" · ");
        const rows = plan.tensors.map((t) =>
            el(
                "tr",
                {
                    dataset: {
                        name: t.name,
                        type: t.type,
                        inType: t.inType,
                        offset: String(t.offset),
                        nbytes: String(t.nbytes),
                    },
                    attrs: { "data-testid": "quantize-plan-row" },
                },
                el("td", { class: "c-name", text: t.name }),
                el("td", { class: "num q-shape", text: formatShape(t.shape) }),
                el("td", { class: "mono q-stored", text: t.inType }),
                el("td", { class: t.quantize ? "mono quantize-to" : "mono", text: t.type }),
                el("td", { class: "num", text: formatBytes(t.nbytes) }),
                el("td", { class: "hint", text: note(t) }),
            ),
        );
        this.#body.append(...rows);
    }

    /** A plan that failed: the core's reason (a type that needs an importance matrix, one of the wrong size...). */
    setPlanError(error) {
        this.#clearPlan();
        const { code } = bannerParts(error);
        this.#summary.dataset.state = "failed";
        this.#summary.dataset.code = code;
        clear(this.#summary, el("strong", { class: "error-code", text: code }), " ", String(error?.message ?? error));
    }

    /** Whether Start can be pressed: a plan on show and nothing running. */
    setRunning(running) {
        this.#start.disabled = running || !this.#plan;
        this.#typeSelect.disabled = running;
    }

    /** state: "running" | "done" | "cancelled" | "failed" | "" (nothing to say). */
    setStatus(state, text, data = {}) {
        this.#status.dataset.state = state;
        for (const key of this.#statusKeys) delete this.#status.dataset[key];
        this.#statusKeys = Object.keys(data);
        Object.assign(this.#status.dataset, data);
        this.#status.textContent = text;
    }
}

function note(t) {
    if (!t.quantize) return t.inType === t.type ? "copied" : "";
    const parts = [];
    if (t.fallback) parts.push(`fallback from ${t.wanted}`);
    if (t.requantize) parts.push("requantized");
    if (t.imatrix) parts.push("imatrix");
    return parts.join(", ");
}
