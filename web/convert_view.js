// SPDX-License-Identifier: MIT
// The Convert view: a Hugging Face checkpoint (a dropped or picked folder, picked files, or a URL: a repository, or
// its model.safetensors / model.safetensors.index.json) to GGUF as `weightstream convert` writes it, in a type
// (F32, F16, BF16, Q8_0), or quantized by a llama-quantize recipe in one pass as `weightstream quantize CHECKPOINT`
// writes it. The plan the core makes (convertPlan() or quantizePlan(): every tensor's GGUF name and type, the
// output's exact size, its general.name) is shown before anything is converted; main.js plans, runs convert() or
// quantize() in the package's worker, saves the output (save.js) and opens it. This view only shows what it is given: every name and
// message goes in as text (dom.js). Which files make the checkpoint is the package's to decide: every file of the
// folder is handed over.
import { clear, el } from "./dom.js";
import { bannerParts } from "./errors.js";
import { formatBytes, formatInt, formatShape } from "./format.js";

/** The types convert() writes a checkpoint in (its dtype option), the first the default. */
export const CONVERT_TYPES = ["F16", "BF16", "Q8_0", "F32"];
const DEFAULT_TYPE = "F16";
// The value of a llama-quantize recipe in the type list.
const RECIPE = "recipe:";

/**
 * The URLs to try for what was typed, in order: a file's URL as it is; a repository's (any URL without
 * /resolve/ whose last part is not a .json or .safetensors file: https://huggingface.co/ORG/REPO, .../tree/REV)
 * its index, then its single model.safetensors, at revision REV (else main). Throws TypeError for a text that is
 * not an http(s) URL.
 */
export function checkpointUrls(text, base) {
    const url = new URL(text.trim(), base);
    if (url.protocol !== "http:" && url.protocol !== "https:")
        throw new TypeError("only http: and https: URLs can be loaded");
    const path = url.pathname.replace(/\/+$/, "");
    const last = path.slice(path.lastIndexOf("/") + 1);
    if (path.includes("/resolve/") || /\.(json|safetensors)$/i.test(last)) return [url.href];
    const tree = /^(.*)\/tree\/([^/]+)$/.exec(path);
    const repo = tree ? tree[1] : path;
    const revision = tree ? tree[2] : "main";
    return ["model.safetensors.index.json", "model.safetensors"].map((name) => {
        const candidate = new URL(url.href);
        candidate.pathname = `${repo}/resolve/${revision}/${name}`;
        candidate.search = "";
        candidate.hash = "";
        return candidate.href;
    });
}

/**
 * The files of a folder picked with <input webkitdirectory>: those directly in it (not in its subfolders, such as
 * a repository's original/), with the folder's name.
 */
export function pickedFolder(fileList) {
    const files = [...fileList];
    const folder = files[0]?.webkitRelativePath?.split("/")[0] || undefined;
    const top = files.filter((f) => !f.webkitRelativePath || f.webkitRelativePath.split("/").length === 2);
    return { files: top, folder };
}

/**
 * What was dropped, taken during the drop event (its items are gone after it): a function that reads it, giving
 * {files, folder} (one folder dropped: its own files and its name), or null when no folder was dropped.
 */
export function droppedFolder(dataTransfer) {
    const entries = [...(dataTransfer?.items ?? [])]
        .filter((item) => item.kind === "file")
        .map((item) => item.webkitGetAsEntry?.() ?? null);
    if (entries.length !== 1 || !entries[0]?.isDirectory) return null;
    const dir = entries[0];
    return async () => ({ files: await directoryFiles(dir), folder: dir.name });
}

// Every file directly in a FileSystemDirectoryEntry (readEntries() answers in batches until an empty one).
async function directoryFiles(dir) {
    const reader = dir.createReader();
    const entries = [];
    for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (batch.length === 0) break;
        entries.push(...batch);
    }
    return Promise.all(
        entries.filter((e) => e.isFile).map((e) => new Promise((resolve, reject) => e.file(resolve, reject))),
    );
}

export class ConvertView {
    #typeSelect;
    #recipes;
    #source;
    #sourceKeys = []; // the data attributes the last setSource() put on #source
    #start;
    #summary;
    #mix;
    #body;
    #status;
    #statusKeys = []; // the data attributes the last setStatus() put on #status
    #plan = null;

    /**
     * onFiles(files, folder): files or a folder were chosen; onUrl(text): a URL was given; onChange(): the type
     * changed (plan again); onStart(): convert and save.
     */
    constructor(root, { onFiles, onUrl, onChange, onStart }) {
        const folderInput = el("input", {
            id: "convert-folder-input",
            type: "file",
            class: "visually-hidden",
            webkitdirectory: true,
            attrs: { "data-testid": "convert-folder-input" },
            on: {
                change: () => {
                    const { files, folder } = pickedFolder(folderInput.files);
                    folderInput.value = "";
                    if (files.length) onFiles(files, folder);
                },
            },
        });
        const filesInput = el("input", {
            id: "convert-files-input",
            type: "file",
            multiple: true,
            class: "visually-hidden",
            attrs: { "data-testid": "convert-files-input" },
            on: {
                change: () => {
                    const files = [...filesInput.files];
                    filesInput.value = "";
                    if (files.length) onFiles(files, undefined);
                },
            },
        });
        const urlInput = el("input", {
            type: "text",
            placeholder: "https://huggingface.co/ORG/REPO",
            attrs: {
                "data-testid": "convert-url-input",
                "aria-label": "Checkpoint or repository URL",
                inputmode: "url",
                spellcheck: "false",
            },
        });
        const urlForm = el(
            "form",
            {
                class: "url-form",
                on: {
                    submit: (e) => {
                        e.preventDefault();
                        if (urlInput.value.trim()) onUrl(urlInput.value.trim());
                    },
                },
            },
            urlInput,
            el("button", { type: "submit", text: "Load", attrs: { "data-testid": "convert-url-load" } }),
        );
        this.#recipes = el("optgroup", { label: "llama-quantize recipes (one pass)" });
        this.#typeSelect = el(
            "select",
            {
                id: "convert-type",
                attrs: { "data-testid": "convert-type", "aria-label": "Output type" },
                on: { change: () => onChange() },
            },
            CONVERT_TYPES.map((t) => el("option", { value: t, text: t })),
            this.#recipes,
        );
        this.#typeSelect.value = DEFAULT_TYPE;
        this.#source = el("p", { class: "convert-source muted", attrs: { "data-testid": "convert-source" } });
        this.#start = el("button", {
            type: "button",
            class: "primary",
            text: "Convert and save…",
            disabled: true,
            attrs: { "data-testid": "convert-start" },
            on: { click: () => onStart() },
        });
        this.#summary = el("p", { class: "convert-summary", attrs: { "data-testid": "convert-summary" } });
        this.#mix = el("p", { class: "convert-mix muted", attrs: { "data-testid": "convert-mix" } });
        this.#status = el("p", { class: "convert-status", attrs: { "data-testid": "convert-status" } });
        this.#body = el("tbody");
        root.append(
            el(
                "p",
                { class: "muted" },
                "A Hugging Face checkpoint (config.json and model.safetensors, or its shards with " +
                    "model.safetensors.index.json) written as GGUF, as llama.cpp's convert_hf_to_gguf.py writes it, or " +
                    "quantized by a llama-quantize recipe in one pass (the two steps' file, without the intermediate). " +
                    "Drop its folder here, choose it, or give its URL. Files are read in this browser: nothing is uploaded.",
            ),
            el(
                "div",
                { class: "convert-form" },
                el("label", { class: "button", attrs: { for: "convert-folder-input" }, text: "Choose folder…" }),
                folderInput,
                el("label", { class: "button", attrs: { for: "convert-files-input" }, text: "Choose files…" }),
                filesInput,
                urlForm,
            ),
            this.#source,
            el(
                "div",
                { class: "convert-form" },
                el("label", { attrs: { for: "convert-type" }, text: "Type" }),
                this.#typeSelect,
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
                    { class: "compare-table convert-table", attrs: { "data-testid": "convert-plan" } },
                    el(
                        "thead",
                        {},
                        el(
                            "tr",
                            {},
                            el("th", { text: "Tensor" }),
                            el("th", { class: "c-from", text: "From" }),
                            el("th", { class: "num c-shape", text: "Shape" }),
                            el("th", { class: "c-stored", text: "Stored" }),
                            el("th", { text: "Written as" }),
                            el("th", { class: "num", text: "Size" }),
                        ),
                    ),
                    this.#body,
                ),
            ),
        );
    }

    /** llama-quantize's file types (quantizeFileTypes()), listed under the convert types. */
    setRecipes(types) {
        clear(
            this.#recipes,
            types
                .filter((t) => !CONVERT_TYPES.includes(t.name))
                .map((t) => el("option", { value: RECIPE + t.name, text: t.name })),
        );
    }

    /** The chosen type: {dtype} to convert to, or {recipe} (a llama-quantize file type). */
    get choice() {
        const v = this.#typeSelect.value;
        return v.startsWith(RECIPE) ? { recipe: v.slice(RECIPE.length) } : { dtype: v };
    }

    /** The plan on show (convertPlan()'s or quantizePlan()'s), or null. */
    get plan() {
        return this.#plan;
    }

    /** What will be converted, in words (its files or URL). */
    setSource(text, data = {}) {
        this.#source.textContent = text;
        for (const key of this.#sourceKeys) delete this.#source.dataset[key];
        this.#sourceKeys = Object.keys(data);
        Object.assign(this.#source.dataset, data);
        this.#clearPlan();
        this.setStatus("", "");
    }

    #clearPlan() {
        this.#plan = null;
        this.#start.disabled = true;
        clear(this.#summary);
        clear(this.#mix);
        clear(this.#body);
        for (const key of ["size", "type", "code", "state"]) delete this.#summary.dataset[key];
    }

    planning() {
        this.#clearPlan();
        this.#summary.textContent = "Planning…";
        this.#summary.dataset.state = "planning";
    }

    /**
     * The plan for `type`, before starting: convertPlan()'s (a convert type) or quantizePlan()'s (a recipe): the
     * output's size and every tensor's name and type.
     */
    setPlan(plan, type, running) {
        this.#clearPlan();
        this.#plan = plan;
        this.#start.disabled = running;
        // A tensor the output changes: re-encoded by the conversion, or quantized by the recipe.
        const recipe = plan.to === undefined;
        const changed = (t) => (recipe ? t.quantize : t.action !== "copy");
        const n = plan.tensors.filter(changed).length;
        Object.assign(this.#summary.dataset, { state: "planned", size: String(plan.fileSize), type });
        clear(
            this.#summary,
            el("strong", { text: `GGUF, ${type}: ${formatBytes(plan.fileSize)}` }),
            ` (${formatInt(plan.fileSize)} bytes) from ${formatBytes(plan.inputSize)} of tensors; ` +
                `${formatInt(plan.tensors.length)} tensors, ${formatInt(n)} ${recipe ? "quantized" : "re-encoded"}` +
                (recipe && plan.bitsPerWeight !== null ? `, ${plan.bitsPerWeight.toFixed(2)} bits per weight` : ""),
            plan.warnings.map((w) => [el("br"), el("span", { class: "muted", text: `warning: ${w}` })]),
        );
        const mix = new Map();
        for (const t of plan.tensors) mix.set(t.type, (mix.get(t.type) ?? 0) + 1);
        this.#mix.textContent = [...mix].map(([t, n]) => `${t} × ${formatInt(n)}`).join(" · ");
        this.#body.append(
            ...plan.tensors.map((t) =>
                el(
                    "tr",
                    {
                        dataset: {
                            name: t.name,
                            inName: t.inName,
                            type: t.type,
                            inType: t.inType,
                            offset: String(t.offset),
                            nbytes: String(t.nbytes),
                        },
                        attrs: { "data-testid": "convert-plan-row" },
                    },
                    el("td", { class: "c-name", text: t.name }),
                    el("td", { class: "c-name c-from muted", text: t.inName === t.name ? "" : t.inName }),
                    el("td", { class: "num c-shape", text: formatShape(t.shape) }),
                    el("td", { class: "mono c-stored", text: t.inType }),
                    el("td", { class: changed(t) ? "mono convert-to" : "mono", text: t.type }),
                    el("td", { class: "num", text: formatBytes(t.nbytes) }),
                ),
            ),
        );
    }

    /** A plan that failed: the package's error (its code, its words). */
    setPlanError(error) {
        this.#clearPlan();
        const { code } = bannerParts(error);
        Object.assign(this.#summary.dataset, { state: "failed", code });
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
