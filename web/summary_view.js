// SPDX-License-Identifier: MIT
// The summary: headline facts, the dtype mix (share of bytes per dtype) and the other general.* and
// <arch>.* keys.
import { el, clear } from "./dom.js";
import { formatBytes, formatCount, formatFloat, formatInt, previewValue } from "./format.js";

// Stable colours per dtype family, so the same dtype looks the same in every model.
const PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
];

export function dtypeColour(dtype) {
    let h = 0;
    for (let i = 0; i < dtype.length; ++i) h = (h * 31 + dtype.charCodeAt(i)) >>> 0;
    return PALETTE[h % PALETTE.length];
}

/** Fills `root` (the model-summary element) from summarize()'s result. */
export function renderSummary(root, s, info) {
    const card = (key, label, value, sub) =>
        el(
            "div",
            { class: `card card-${key}`, dataset: { fact: key }, title: value },
            el("div", { class: "label", text: label }),
            el("div", { class: "value", text: value }),
            sub ? el("div", { class: "sub muted", text: sub }) : null,
        );
    const format = s.format === "gguf" ? `GGUF v${s.version}` : "safetensors";
    const files = info.files?.length > 1 ? ` in ${info.files.length} files` : "";
    const cards = [
        card("format", "Format", format + files),
        card("architecture", "Architecture", s.architecture ?? "–"),
        card("name", "Name", s.name || "–"),
        card("parameters", "Parameters", formatCount(s.parameters), formatInt(s.parameters)),
        card(
            "file-size",
            "File size",
            s.fileSize === null || s.fileSize === undefined ? "unknown" : formatBytes(s.fileSize),
            s.fileSize ? `${formatInt(s.fileSize)} bytes` : undefined,
        ),
        card(
            "bits-per-weight",
            "Bits per weight",
            s.bitsPerWeight === undefined ? "–" : formatFloat(s.bitsPerWeight, 4),
            `${formatBytes(s.tensorBytes)} of tensors`,
        ),
        card("tensors", "Tensors", formatInt(s.tensorCount)),
        card(
            "layers",
            "Layers",
            s.layers === undefined ? "–" : `${formatInt(s.layers)}${s.layersFromNames ? " (from names)" : ""}`,
        ),
        card("context-length", "Context length", s.contextLength === undefined ? "–" : formatInt(s.contextLength)),
    ];
    if (s.vocabSize !== undefined) cards.push(card("vocab-size", "Vocabulary", formatInt(s.vocabSize)));
    if (s.fileType !== undefined) cards.push(card("file-type", "File type", s.fileType));

    const bar = el("div", { class: "mix-bar", attrs: { role: "img", "aria-label": "Share of bytes per dtype" } });
    const legend = el("ul", { class: "mix-legend" });
    for (const d of s.dtypeMix) {
        const pct = `${(d.share * 100).toFixed(1)}%`;
        const segment = el("span", { class: "segment", title: `${d.dtype}: ${pct} of the bytes` });
        segment.style.width = `${d.share * 100}%`;
        segment.style.background = dtypeColour(d.dtype);
        bar.append(segment);
        const swatch = el("span", { class: "swatch" });
        swatch.style.background = dtypeColour(d.dtype);
        legend.append(
            el(
                "li",
                { dataset: { dtype: d.dtype } },
                swatch,
                el("strong", { text: d.dtype }),
                el("span", {
                    class: "muted",
                    text:
                        ` ${pct} · ${formatBytes(d.bytes)} · ` +
                        `${formatInt(d.count)} tensor${d.count === 1 ? "" : "s"}`,
                }),
            ),
        );
    }

    const facts = el("dl", { class: "facts wide" });
    for (const entry of s.facts) {
        facts.append(
            el("dt", { class: "mono", text: entry.key, title: entry.key }),
            el("dd", { text: previewValue(entry, 200) }),
        );
    }
    const warnings = (info.warnings ?? []).map((w) =>
        el("li", { text: `${w.code}${w.offset !== undefined ? ` (byte ${formatInt(w.offset)})` : ""}: ${w.message}` }),
    );
    clear(
        root,
        el("div", { class: "cards" }, cards),
        el("section", { class: "mix" }, el("h3", { text: "Share of bytes per dtype" }), bar, legend),
        warnings.length
            ? el("section", { class: "warnings" }, el("h3", { text: "Warnings" }), el("ul", {}, warnings))
            : null,
        s.facts.length ? el("section", {}, el("h3", { text: "More facts" }), facts) : null,
    );
}
