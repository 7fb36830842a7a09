// SPDX-License-Identifier: MIT
// The inspection page: opening (files, drag and drop, URL, ?url=), progress and cancel, the error banner,
// tabs and theme. Parsing and decoding run in the worker (worker.js); the views are in their own modules.
import { WorkerClient } from "./client.js";
import { $, el, clear } from "./dom.js";
import { formatBytes, formatCount, formatDuration, formatInt } from "./format.js";
import { MetadataView } from "./metadata_view.js";
import { summarize } from "./summary.js";
import { renderSummary } from "./summary_view.js";
import { TensorDetail } from "./tensor_detail.js";
import { TensorTable } from "./tensor_table.js";

const client = new WorkerClient(new URL("./worker.js", import.meta.url));

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

// What each code means to someone who just opened a file (the message says where and which field).
const EXPLAIN = {
    bad_magic: "not a GGUF or safetensors file",
    unsupported_version: "a format version this page does not read",
    truncated: "the file ends too early",
    too_large: "a size in the file is beyond the limits",
    overflow: "a size in the file overflows",
    bad_type: "an unknown type",
    bad_shape: "an impossible tensor shape",
    bad_alignment: "misaligned data",
    bad_offset: "tensor data outside the file or overlapping",
    duplicate_name: "two entries with the same name",
    bad_json: "a malformed JSON header",
    bad_key: "a malformed metadata key",
    trailing_data: "unexpected bytes after the data",
    unsupported: "not supported",
    bad_split: "the parts do not form one model",
    http: "the server answered with an error",
    network: "the URL could not be fetched (network or CORS)",
    cors: "the server does not expose Content-Range (CORS)",
    not_seekable: "the source cannot be read out of order",
    wasm_load: "the WebAssembly module could not be loaded",
    worker: "the page's worker stopped",
};

function showError(error, context = "") {
    const code = error.code ?? "error";
    const offset = error.offset;
    // The package's messages repeat the code and the offset, which the banner shows apart.
    let message = String(error.message ?? error).replace(`${code}: `, "");
    if (offset !== undefined && offset !== null) message = message.replace(/\s*\(byte \d+\)$/, "");
    const explained = EXPLAIN[code] ? `${EXPLAIN[code]}: ` : "";
    $(".error-code", banner).textContent = code;
    $(".error-message", banner).textContent = `${context ? `${context}: ` : ""}${explained}${message}`;
    $(".error-offset", banner).textContent = offset !== undefined && offset !== null ? `at byte ${formatInt(offset)}` : "";
    banner.dataset.code = error.code ?? "error";
    if (offset !== undefined && offset !== null) banner.dataset.offset = String(offset);
    else delete banner.dataset.offset;
    // A model in several files: the file the problem is in (the message names it too).
    if (error.file) banner.dataset.file = error.file;
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
let readRequest = null;

function loadTensor(tensor, rows) {
    readRequest?.cancel();
    const label = `Decoding ${tensor.name}${rows ? ` (rows ${formatInt(rows[0])}–${formatInt(rows[0] + rows[1] - 1)})` : ""}`;
    let progress;
    const request = client.request("read", { name: tensor.name, rows }, { onProgress: (p) => progress.update(p) });
    progress = startProgress(label, request.cancel);
    readRequest = request;
    return request.promise.then(
        (result) => {
            progress.done();
            return result;
        },
        (error) => {
            progress.done();
            if (error.code !== "aborted") showError(error);
            throw error;
        },
    );
}

const detail = new TensorDetail(detailRoot, {
    load: loadTensor,
    onClose: () => {
        readRequest?.cancel();
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
    fetchItems: (entry, start, count) => client.request("items", { entry, start, count }).promise.then((r) => r.items),
    searchItems: (entry, query) => client.request("search", { entry, query }).promise.then((r) => r.indices),
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

let openRequest = null;

async function openModel(payload, label) {
    openRequest?.cancel();
    readRequest?.cancel();
    let progress;
    const request = client.request("open", payload, { onProgress: (p) => progress.update(p) });
    progress = startProgress(`Opening ${label}`, request.cancel);
    openRequest = request;
    const started = performance.now();
    try {
        const { info } = await request.promise;
        hideError();
        const shown = performance.now();
        showModel(info, label);
        performance.measure("weightstream: show model", { start: shown }); // visible in DevTools' Performance panel
        console.info(`weightstream: opened ${label} in ${formatDuration(performance.now() - started)}`);
    } catch (error) {
        if (error.code !== "aborted") showError(error, label);
    } finally {
        progress.done();
        if (openRequest === request) openRequest = null;
    }
}

function openFiles(fileList) {
    const files = [...fileList];
    if (files.length === 0) return;
    const label = files.length === 1 ? files[0].name : `${files.length} files`;
    openModel({ files }, label);
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
    const name = decodeURIComponent(url.pathname.slice(url.pathname.lastIndexOf("/") + 1)) || url.host;
    openModel({ url: url.href }, name);
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
            el("li", {},
                el("a", { href, text: sample.name, on: { click: (e) => {
                    e.preventDefault();
                    history.pushState(null, "", href);
                    urlInput.value = `samples/${sample.name}`;
                    openUrl(urlInput.value);
                } } }),
                typeof sample.size === "number" ? el("span", { class: "muted", text: ` ${formatBytes(sample.size)}` }) : null,
                typeof sample.description === "string" ? el("span", { class: "muted", text: ` · ${sample.description}` }) : null),
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
