// SPDX-License-Identifier: MIT
// The layer map: one row per layer as the core groups them (Model.layers: blk.N, or layers.N of a safetensors
// checkpoint; the towers of a multimodal model apart), one column per tensor role (attn_q, attn_k, ...,
// ffn_down: the name after the layer, without ".weight"), each cell coloured by the tensor's stored type, with
// a legend; a cell opens its tensor. A mixed quantization (Q4_K_M's Q6_K
// ffn_down in some layers, an i-quant recipe's exceptions) shows as a pattern at a glance.
import { el, clear } from "./dom.js";
import { formatBytes, formatInt, formatShape } from "./format.js";
import { keyedLayers } from "./summary.js";

// The usual order of a transformer block's tensors (llama.cpp's names); other roles follow in file order.
const ROLE_ORDER = [
    "attn_norm",
    "attn_q",
    "attn_k",
    "attn_v",
    "attn_qkv",
    "attn_q_norm",
    "attn_k_norm",
    "attn_output",
    "attn_post_norm",
    "ffn_norm",
    "ffn_gate_inp",
    "ffn_gate",
    "ffn_up",
    "ffn_down",
    "ffn_gate_exps",
    "ffn_up_exps",
    "ffn_down_exps",
    "ffn_post_norm",
];

// Colours told apart in light and dark themes; one per type of the model, narrowest type first.
const PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#b07aa1",
    "#edc948",
    "#76b7b2",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#2f4b7c",
    "#d45087",
];

/**
 * The map of a model's layers (Model.layers): {layers: [key...], roles: [role...], cells: Map("key/role" ->
 * tensor), dtypes} or null when no tensor is in a layer.
 */
export function layerMap(layers) {
    const cells = new Map();
    const keys = [];
    const roles = [];
    const seen = new Set();
    for (const layer of keyedLayers(layers)) {
        keys.push(layer.key);
        for (const t of layer.tensors) {
            const role = t.name.slice(layer.name.length + 1).replace(/\.weight$/, "");
            if (!seen.has(role)) {
                seen.add(role);
                roles.push(role);
            }
            cells.set(`${layer.key}/${role}`, t);
        }
    }
    if (cells.size === 0) return null;
    const rank = (role) => {
        const base = role.replace(/\.bias$/, "");
        const i = ROLE_ORDER.indexOf(base);
        return (i < 0 ? ROLE_ORDER.length : i) * 2 + (role.endsWith(".bias") ? 1 : 0);
    };
    const order = new Map(roles.map((r, i) => [r, i]));
    roles.sort((a, b) => rank(a) - rank(b) || order.get(a) - order.get(b));
    const bits = new Map();
    for (const t of cells.values()) {
        if (!bits.has(t.dtype)) bits.set(t.dtype, Number(t.n_elements) ? Number(t.nbytes) / Number(t.n_elements) : 0);
    }
    const dtypes = [...bits.keys()].sort((a, b) => bits.get(a) - bits.get(b) || a.localeCompare(b));
    return { layers: keys, roles, cells, dtypes };
}

function swatch(colour) {
    const node = el("span", { class: "swatch" });
    node.style.background = colour;
    return node;
}

export class LayerMap {
    #root;
    #onOpen;
    #map = null; // layerMap() of the model on show, drawn when the tab is first shown
    #drawn = false;

    /** onOpen(tensor): a cell was chosen. */
    constructor(root, { onOpen }) {
        this.#root = root;
        this.#onOpen = onOpen;
    }

    /** Takes the layers of a model (Model.layers); false when none has a tensor. The map is drawn by show(). */
    setLayers(layers) {
        this.#map = layerMap(layers);
        this.#drawn = false;
        clear(this.#root);
        return this.#map !== null;
    }

    /** Draws the map (once per model: a 500-layer model is 5,000 cells, not made until asked for). */
    show() {
        if (this.#drawn || !this.#map) return;
        this.#drawn = true;
        const map = this.#map;
        const colour = new Map(map.dtypes.map((d, i) => [d, PALETTE[i % PALETTE.length]]));
        const counts = new Map();
        for (const t of map.cells.values()) counts.set(t.dtype, (counts.get(t.dtype) ?? 0) + 1);
        const legend = el(
            "ul",
            { class: "layer-legend", attrs: { "data-testid": "layer-map-legend" } },
            map.dtypes.map((d) =>
                el("li", { dataset: { dtype: d } }, swatch(colour.get(d)), `${d} (${formatInt(counts.get(d))})`),
            ),
        );
        const head = el(
            "tr",
            {},
            el("th", { class: "corner", text: "layer" }),
            map.roles.map((r) => el("th", { class: "role", title: r }, el("span", { text: r }))),
        );
        const body = el("tbody");
        for (const layer of map.layers) {
            const tr = el("tr", { dataset: { layer } }, el("th", { class: "num", text: layer }));
            for (const role of map.roles) {
                const t = map.cells.get(`${layer}/${role}`);
                if (!t) {
                    tr.append(el("td", { class: "empty" }));
                    continue;
                }
                const cell = el("button", {
                    type: "button",
                    class: "cell-button",
                    title: `${t.name}\n${t.dtype} · ${formatShape(t.shape)} · ${formatBytes(t.nbytes)}`,
                    attrs: {
                        "data-testid": "layer-cell",
                        "aria-label": `${t.name}: ${t.dtype}`,
                    },
                    dataset: { tensor: t.name, dtype: t.dtype, layer, role },
                    on: { click: () => this.#onOpen(t) },
                });
                cell.style.background = colour.get(t.dtype); // CSSOM: the page's CSP refuses style attributes
                tr.append(el("td", {}, cell));
            }
            body.append(tr);
        }
        clear(
            this.#root,
            el("p", {
                class: "muted",
                text:
                    `${formatInt(map.layers.length)} layers × ${formatInt(map.roles.length)} tensor roles, ` +
                    "coloured by stored type. Choose a cell to open its tensor.",
            }),
            legend,
            el(
                "div",
                { class: "layer-map-scroll" },
                el("table", { class: "layer-map", attrs: { "data-testid": "layer-map" } }, el("thead", {}, head), body),
            ),
        );
    }
}
