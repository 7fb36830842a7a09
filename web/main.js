// SPDX-License-Identifier: MIT
// The inspection page: opening (files, drag and drop, URL, ?url=), progress and cancel, the error banner,
// tabs and theme. Parsing and decoding run in the package's worker (weightstream/worker); the views are in
// their own modules.
import { WeightstreamWorker } from "weightstream/worker";
import { $, el, clear } from "./dom.js";
import { bannerParts } from "./errors.js";
import { absQuantile } from "./heatmap.js";
import { formatBytes, formatCount, formatDuration, formatInt } from "./format.js";
import { MetadataView } from "./metadata_view.js";
import { OPEN_OPTIONS, chooseFiles } from "./parts.js";
import { summarize } from "./summary.js";
import { renderSummary } from "./summary_view.js";
import { TensorDetail } from "./tensor_detail.js";
import { TensorTable } from "./tensor_table.js";

// One worker for the page's models. One that failed fails every request of its models with code "worker";
// the next open starts a new one.
let worker = null;
let model = null; // the model on show (open in `worker`)

const isAbort = (error) => error?.name === "AbortError";

/** Shows a failed request's error (none for a cancelled one); forgets a worker that failed. */
function failed(error, context) {
    if (error?.code === "worker") worker = null;
    if (!isAbort(error)) showError(error, context);
}

// ---------------------------------------------------------------- progress (one operation at a time)

const progressBox = $("#progress");
const progressBar = $("progress", progressBox);
let activeOperation = null; // {cancel(), started}

function startProgress(label, cancel) {
    activeOperation = { cancel, started: performance.now(), label };
    const op = activeOperation;
    $(".progress-label", progressBox).textContent = label;
    $(".progress-text", progressBox).textContent = "";
    progressBar.removeAttribute("value");
    progressBox.hidden = false;
    return {
        update({ loaded, total }) {
            if (activeOperation !== op) return;
            const seconds = (performance.now() - op.started) / 1000;
            const rate = seconds > 0.2 ? ` · ${formatBytes(loaded / seconds)}/s` : "";
            if (total) {
                progressBar.value = Math.min(1, loaded / total);
                $(".progress-text", progressBox).textContent = `${formatBytes(loaded)} of ${formatBytes(total)}${rate}`;
            } else {
                progressBar.removeAttribute("value");
                $(".progress-text", progressBox).textContent = `${formatBytes(loaded)}${rate}`;
            }
        },
        done() {
            if (activeOperation !== op) return;
            activeOperation = null;
            progressBox.hidden = true;
        },
    };
}

$(".progress-cancel", progressBox).addEventListener("click", () => activeOperation?.cancel());

// ---------------------------------------------------------------- error banner

const banner = $("#error-banner");

function showError(error, context = "") {
    const { code, offset, file, text } = bannerParts(error, context);
    $(".error-code", banner).textContent = code;
    $(".error-message", banner).textContent = text;
    $(".error-offset", banner).textContent = offset !== undefined ? `at byte ${formatInt(offset)}` : "";
    banner.dataset.code = code;
    if (offset !== undefined) banner.dataset.offset = String(offset);
    else delete banner.dataset.offset;
    // A model in several files: the file the problem is in.
    if (file) banner.dataset.file = file;
    else delete banner.dataset.file;
    banner.hidden = false;
}

function hideError() {
    banner.hidden = true;
}

$(".error-dismiss", banner).addEventListener("click", hideError);

// ---------------------------------------------------------------- views

const tabs = [...document.querySelectorAll('[role="tab"]')];

function selectTab(name) {
    for (const tab of tabs) {
        const selected = tab.dataset.tab === name;
        tab.setAttribute("aria-selected", String(selected));
        tab.tabIndex = selected ? 0 : -1;
        $(`#${tab.getAttribute("aria-controls")}`).hidden = !selected;
    }
}

for (const tab of tabs) {
    tab.addEventListener("click", () => selectTab(tab.dataset.tab));
    tab.addEventListener("keydown", (e) => {
        if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
        const i = tabs.indexOf(tab) + (e.key === "ArrowRight" ? 1 : tabs.length - 1);
        const next = tabs[i % tabs.length];
        selectTab(next.dataset.tab);
        next.focus();
    });
}

const detailRoot = $("#tensor-detail");
let reading = null; // the AbortController of the read in flight

/** Decodes `tensor` (or the window `rows` of it) in the worker; its values with their statistics. */
async function loadTensor(tensor, rows) {
    reading?.abort();
    const controller = (reading = new AbortController());
    const scope = rows ? ` (rows ${formatInt(rows[0])}–${formatInt(rows[0] + rows[1] - 1)})` : "";
    const progress = startProgress(`Decoding ${tensor.name}${scope}`, () => controller.abort());
    try {
        const options = { signal: controller.signal, onProgress: (p) => progress.update(p) };
        if (rows) options.rows = rows;
        // The values for the heatmap and the table; the statistics from the core (model.stats(), the CLI's).
        const [values, stats] = await Promise.all([
            model.read(tensor.name, options),
            model.stats(tensor.name, rows ? { signal: controller.signal, rows } : { signal: controller.signal }),
        ]);
        const maxAbs = stats.min === null ? 0 : Math.max(Math.abs(stats.min), Math.abs(stats.max));
        return { values, stats, histogram: stats.histogram, scale: absQuantile(values, maxAbs), maxAbs };
    } catch (error) {
        failed(error, tensor.name);
        throw error;
    } finally {
        progress.done();
        if (reading === controller) reading = null;
    }
}

const detail = new TensorDetail(detailRoot, {
    load: loadTensor,
    onClose: () => {
        reading?.abort();
        detail.clear();
        detailRoot.classList.remove("open");
        table.select(null);
    },
});

const table = new TensorTable($("#tensor-table-root"), {
    onSelect: (tensor) => {
        detailRoot.classList.add("open");
        detail.show(tensor);
    },
});

const metadataView = new MetadataView($("#metadata-root"), {
    onOpenViewer: () => $("#metadata-root").classList.add("viewer-open"),
    onCloseViewer: () => $("#metadata-root").classList.remove("viewer-open"),
});

function showModel(info, label) {
    const s = summarize(info, label);
    $("#welcome").hidden = true;
    $("#model").hidden = false;
    $("#model-title").textContent = s.name || label;
    $("#model-title").title = info.files?.join(", ") ?? label;
    const parts = [
        s.format === "gguf" ? `GGUF v${s.version}` : "safetensors",
        s.architecture,
        `${formatCount(s.parameters)} params`,
        s.fileSize !== null && s.fileSize !== undefined ? formatBytes(s.fileSize) : null,
        `${formatInt(s.tensorCount)} tensors`,
    ].filter(Boolean);
    $("#model-headline").textContent = parts.join(" · ");
    document.title = `${s.name || label} · weightstream`;
    renderSummary($("#summary"), s, info);
    table.setTensors(info.tensors);
    metadataView.setMetadata(info.metadata);
    detail.clear();
    detailRoot.classList.remove("open");
    $("#metadata-root").classList.remove("viewer-open");
    $("#tab-tensors").textContent = `Tensors (${formatInt(info.tensors.length)})`;
    $("#tab-metadata").textContent = `Metadata (${formatInt(info.metadata.length)})`;
    selectTab("summary");
}

// ---------------------------------------------------------------- opening

let opening = null; // the AbortController of the open in flight

// A URL naming any part of a split GGUF or a safetensors index opens the whole model (the package finds the
// other files next to it); several Files are the parts of one model. The new model replaces the one on show
// only once it opened: a bad file leaves the page on the last one.
async function openModel(source, label) {
    opening?.abort();
    reading?.abort();
    const controller = (opening = new AbortController());
    const progress = startProgress(`Opening ${label}`, () => controller.abort());
    const started = performance.now();
    try {
        worker ??= new WeightstreamWorker();
        const opened = await worker.open(source, {
            ...OPEN_OPTIONS,
            signal: controller.signal,
            onProgress: (p) => progress.update(p),
        });
        const previous = model;
        model = opened;
        previous?.close();
        hideError();
        const shown = performance.now();
        showModel(opened.info, label);
        performance.measure("weightstream: show model", { start: shown }); // visible in DevTools' Performance panel
        console.info(`weightstream: opened ${label} in ${formatDuration(performance.now() - started)}`);
    } catch (error) {
        failed(error, label);
    } finally {
        progress.done();
        if (opening === controller) opening = null;
    }
}

function openFiles(fileList) {
    const files = [...fileList];
    if (files.length === 0) return;
    const label = files.length === 1 ? files[0].name : `${files.length} files`;
    let source;
    try {
        source = chooseFiles(files);
    } catch (error) {
        showError(error, label);
        return;
    }
    openModel(source, label);
}

function openUrl(text) {
    let url;
    try {
        url = new URL(text.trim(), location.href);
    } catch {
        showError({ code: "bad_source", message: `not a URL: ${text}` });
        return;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
        showError({ code: "bad_source", message: "only http: and https: URLs can be loaded" });
        return;
    }
    let name;
    try {
        name = decodeURIComponent(url.pathname.slice(url.pathname.lastIndexOf("/") + 1)) || url.host;
    } catch {
        // URIError: a malformed %-escape (such as "%E0%A4%A") names no file.
        showError({ code: "bad_source", message: `a malformed %-escape in the URL: ${text}` });
        return;
    }
    openModel(url.href, name);
}

const fileInput = $("#file-input");
fileInput.addEventListener("change", () => {
    const files = [...fileInput.files];
    fileInput.value = ""; // choosing the same file again opens it again
    openFiles(files);
});

const urlInput = $("#url-input");
$("#url-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = urlInput.value.trim();
    if (!text) return;
    const params = new URLSearchParams(location.search);
    params.set("url", text);
    history.replaceState(null, "", `?${params}`);
    openUrl(text);
});

// Drag and drop anywhere on the page.
const overlay = $("#drop-overlay");
let dragDepth = 0;
const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes("Files");
window.addEventListener("dragenter", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    ++dragDepth;
    overlay.hidden = false;
});
window.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
});
window.addEventListener("dragleave", () => {
    if (--dragDepth <= 0) {
        dragDepth = 0;
        overlay.hidden = true;
    }
});
window.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    dragDepth = 0;
    overlay.hidden = true;
    openFiles(e.dataTransfer.files);
});

// ---------------------------------------------------------------- theme

const THEMES = ["auto", "light", "dark"];
const themeButton = $("#theme-toggle");
const systemDark = window.matchMedia("(prefers-color-scheme: dark)");

// The page's colours follow html[data-theme] only (style.css); "auto" resolves to the system's choice here.
function applyTheme(choice) {
    document.documentElement.dataset.theme = choice === "auto" ? (systemDark.matches ? "dark" : "light") : choice;
    themeButton.textContent = `Theme: ${choice}`;
}

function storedTheme() {
    let stored = null;
    try {
        stored = localStorage.getItem("weightstream-theme");
    } catch {
        // no storage (private mode)
    }
    return THEMES.includes(stored) ? stored : "auto";
}

let theme = storedTheme();
themeButton.addEventListener("click", () => {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
    try {
        localStorage.setItem("weightstream-theme", theme);
    } catch {
        // private mode: the theme lasts for this page only
    }
    applyTheme(theme);
    window.dispatchEvent(new Event("weightstream-theme")); // charts redraw with the new colours
});
systemDark.addEventListener("change", () => {
    applyTheme(theme);
    window.dispatchEvent(new Event("weightstream-theme"));
});
applyTheme(theme);

// ---------------------------------------------------------------- samples and ?url=

async function listSamples() {
    let list;
    try {
        const response = await fetch("samples/index.json");
        if (!response.ok) return;
        list = await response.json();
    } catch {
        return;
    }
    if (!Array.isArray(list) || list.length === 0) return;
    const ul = clear($("#sample-list"));
    for (const sample of list) {
        if (typeof sample?.name !== "string") continue;
        const href = `?url=${encodeURIComponent(`samples/${sample.name}`)}`;
        ul.append(
            el(
                "li",
                {},
                el("a", {
                    href,
                    text: sample.name,
                    on: {
                        click: (e) => {
                            e.preventDefault();
                            history.pushState(null, "", href);
                            urlInput.value = `samples/${sample.name}`;
                            openUrl(urlInput.value);
                        },
                    },
                }),
                typeof sample.size === "number"
                    ? el("span", { class: "muted", text: ` ${formatBytes(sample.size)}` })
                    : null,
                typeof sample.description === "string"
                    ? el("span", { class: "muted", text: ` · ${sample.description}` })
                    : null,
            ),
        );
    }
    $("#samples").hidden = false;
}

function openFromAddress() {
    const url = new URLSearchParams(location.search).get("url");
    if (url && url !== shownUrl) {
        shownUrl = url;
        urlInput.value = url;
        openUrl(url);
    }
}

let shownUrl = null;
window.addEventListener("popstate", openFromAddress); // Back/Forward between ?url= addresses
openFromAddress();
listSamples();
