// SPDX-License-Identifier: MIT
// The inspection page: opening (files, drag and drop, URL, ?url=), progress and cancel, the error banner,
// tabs and theme. Parsing and decoding run in the package's worker (weightstream/worker); the views are in
// their own modules.
import { WeightstreamWorker } from "weightstream/worker";
import { $, el, clear } from "./dom.js";
import { bannerParts } from "./errors.js";
import { CompareDetail, CompareView } from "./compare_view.js";
import { EditView, editedName, saveAs } from "./edit_view.js";
import { absQuantile } from "./heatmap.js";
import { formatBytes, formatCount, formatDuration, formatInt } from "./format.js";
import { MetadataView } from "./metadata_view.js";
import { OPEN_OPTIONS, chooseFiles } from "./parts.js";
import { summarize } from "./summary.js";
import { renderSummary } from "./summary_view.js";
import { MAX_WINDOW_VALUES, TensorDetail, firstWindow, rowGeometry } from "./tensor_detail.js";
import { TensorTable } from "./tensor_table.js";

// One worker for the page's models. One that failed fails every request of its models with code "worker";
// the next open starts a new one.
let worker = null;
let model = null; // the model on show (open in `worker`)
let modelSource = null; // what `model` was opened from (compare() opens it again)
let modelLabel = "";

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
    onSelect: (entry) => editView.pick(entry),
});
const editView = new EditView($("#metadata-root"), { onSave: (changes) => editAndSave(changes) });
metadataView.addToolbarItem(editView.button);

// Saves the model on show with the Edit… mode's changes: edit() in the worker (the core writes the header,
// the tensors are streamed from the model's source), through showSaveFilePicker or as a download.
async function editAndSave(changes) {
    if (!model) return;
    const name = editedName(modelLabel);
    editView.setStatus("running", `Saving ${name}…`);
    try {
        worker ??= new WeightstreamWorker();
        const saved = await saveAs(name, () => worker.edit(modelSource, changes, OPEN_OPTIONS));
        if (saved === null) editView.setStatus("cancelled", "Not saved.");
        else editView.setStatus("done", `Saved ${name}` + (saved === "download" ? " (downloaded)" : ""));
    } catch (error) {
        editView.setStatus("failed", error.message);
        if (error?.code === "worker") worker = null;
    }
}

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
    editView.setModel(info.metadata, info.format === "gguf" && !(info.files?.length > 1));
    detail.clear();
    detailRoot.classList.remove("open");
    $("#metadata-root").classList.remove("viewer-open");
    $("#tab-tensors").textContent = `Tensors (${formatInt(info.tensors.length)})`;
    $("#tab-metadata").textContent = `Metadata (${formatInt(info.metadata.length)})`;
    selectTab("summary");
}

// ---------------------------------------------------------------- comparing with a second model

let comparing = null; // the AbortController of the comparison in flight
let other = null; // the model compared with (open in `worker`), for the pair's detail
let report = null; // compare()'s result on show
const compareRoot = $("#compare-detail");
const compareTab = $("#tab-compare");

function endComparison() {
    comparing?.abort();
    other?.close();
    other = null;
    report = null;
    compareTab.hidden = true;
    compareView.clear();
    compareDetail.clear();
    compareRoot.classList.remove("open");
}

// convert_hf_to_gguf.py's Q/K permutation of rows (each head's [2, half] rows to [half, 2]) over a window of
// whole heads: what the comparison applied to the Hugging Face side before comparing.
function permuteRows(values, rows, cols, headRows) {
    const out = new Float32Array(values.length);
    const half = headRows / 2;
    for (let h = 0; h * headRows < rows; ++h) {
        for (let two = 0; two < 2; ++two) {
            for (let j = 0; j < half; ++j) {
                const from = h * headRows + two * half + j;
                const to = h * headRows + j * 2 + two;
                out.set(values.subarray(from * cols, (from + 1) * cols), to * cols);
            }
        }
    }
    return out;
}

function metadataNumber(info, key) {
    const entry = info.metadata.find((m) => m.key === key);
    return entry && typeof entry.value !== "object" ? Number(entry.value) : null;
}

// The heads of a permuted pair, from the GGUF side's metadata (as the core takes them).
function headsOf(row, gguf) {
    const arch = gguf.info.metadata.find((m) => m.key === "general.architecture")?.value;
    const key = row.transform === "permute_q" ? "attention.head_count" : "attention.head_count_kv";
    return metadataNumber(gguf.info, `${arch}.${key}`) ?? metadataNumber(gguf.info, `${arch}.attention.head_count`);
}

/** Both sides' statistics and the difference (after the pair's transform) over a window of rows. */
async function loadPair(row) {
    reading?.abort();
    const controller = (reading = new AbortController());
    const signal = controller.signal;
    const progress = startProgress(`Decoding ${row.a} and ${row.b}`, () => controller.abort());
    try {
        const ta = model.tensor(row.a);
        const tb = other.tensor(row.b);
        const windowA = firstWindow(ta);
        const windowB = firstWindow(tb);
        const [statsA, statsB] = await Promise.all([
            model.stats(row.a, windowA ? { signal, rows: windowA } : { signal }),
            other.stats(row.b, windowB ? { signal, rows: windowB } : { signal }),
        ]);
        const sourceIsA = report.a.format === "safetensors" && report.b.format === "gguf";
        const ga = rowGeometry(ta);
        const gb = rowGeometry(tb);
        const whole = row.transform === null || row.transform === "plus_one" || row.transform.startsWith("permute");
        if (!whole || ga.rowLength !== gb.rowLength || ga.rows !== gb.rows || row.verdict === "incomparable") {
            return { statsA, statsB, diff: null, note: "No difference map: the pair is not compared row for row." };
        }
        let count = Math.min(ga.rows, Math.max(1, Math.floor(MAX_WINDOW_VALUES / Math.max(1, ga.rowLength))));
        let headRows = 0;
        if (row.transform?.startsWith("permute")) {
            const heads = headsOf(row, sourceIsA ? other : model);
            headRows = heads ? ga.rows / heads : 0;
            if (!Number.isInteger(headRows) || headRows % 2 !== 0) {
                return { statsA, statsB, diff: null, note: "No difference map: the head count is unknown." };
            }
            count = Math.max(headRows, Math.floor(count / headRows) * headRows);
        }
        const rows = [0, count];
        let [a, b] = await Promise.all([model.read(row.a, { signal, rows }), other.read(row.b, { signal, rows })]);
        if (headRows) {
            if (sourceIsA) a = permuteRows(a, count, ga.rowLength, headRows);
            else b = permuteRows(b, count, ga.rowLength, headRows);
        }
        const values = new Float32Array(a.length);
        const plus = row.transform === "plus_one" ? 1 : 0;
        for (let i = 0; i < values.length; ++i) {
            values[i] = sourceIsA ? a[i] + plus - b[i] : a[i] - (b[i] + plus);
        }
        const note = row.transform ? `after ${row.transform}` : "";
        return {
            statsA,
            statsB,
            diff: { values, rows: count, cols: ga.rowLength, firstRow: 0, totalRows: ga.rows },
            note,
        };
    } catch (error) {
        failed(error, row.a ?? row.b);
        throw error;
    } finally {
        progress.done();
        if (reading === controller) reading = null;
    }
}

const compareDetail = new CompareDetail(compareRoot, {
    load: loadPair,
    onClose: () => {
        reading?.abort();
        compareDetail.clear();
        compareRoot.classList.remove("open");
    },
});

const compareView = new CompareView($("#compare-root"), {
    onSelect: (row) => {
        compareRoot.classList.add("open");
        compareDetail.show(row);
    },
});

// Compares the model on show (A) with `source` (B): compare() in the worker, which reads each header and then
// the compared tensors a window at a time; B stays open for the pairs' details.
async function compareWith(source, label) {
    if (!model) return;
    comparing?.abort();
    const controller = (comparing = new AbortController());
    const progress = startProgress(`Comparing ${modelLabel} with ${label}`, () => controller.abort());
    try {
        worker ??= new WeightstreamWorker();
        const signal = controller.signal;
        const [result, opened] = await Promise.all([
            worker.compare(modelSource, source, {
                ...OPEN_OPTIONS,
                signal,
                onProgress: (p) => progress.update(p),
            }),
            worker.open(source, { ...OPEN_OPTIONS, signal }),
        ]);
        if (comparing !== controller) {
            opened.close();
            return;
        }
        other?.close();
        other = opened;
        report = result;
        hideError();
        compareView.setReport(result, modelLabel, label);
        compareDetail.clear();
        compareRoot.classList.remove("open");
        compareTab.hidden = false;
        compareTab.textContent = `Compare (${formatInt(result.tensors.length)})`;
        $("#compare-open").open = false;
        selectTab("compare");
    } catch (error) {
        failed(error, label);
    } finally {
        progress.done();
        if (comparing === controller) comparing = null;
    }
}

function compareWithUrl(text) {
    const url = checkUrl(text);
    if (url) compareWith(url.href, url.name);
}

const compareFileInput = $("#compare-file-input");
compareFileInput.addEventListener("change", () => {
    const files = [...compareFileInput.files];
    compareFileInput.value = "";
    if (files.length === 0) return;
    const label = files.length === 1 ? files[0].name : `${files.length} files`;
    let source;
    try {
        // config.json among the files is compare()'s (it names the architecture and head counts).
        source = chooseFiles(files.filter((f) => f.name !== "config.json"));
        const config = files.find((f) => f.name === "config.json");
        if (config) source = [...(Array.isArray(source) ? source : [source]), config];
    } catch (error) {
        showError(error, label);
        return;
    }
    compareWith(source, label);
});

const compareUrlInput = $("#compare-url-input");
$("#compare-url-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = compareUrlInput.value.trim();
    if (!text) return;
    const params = new URLSearchParams(location.search);
    params.set("compare", text);
    history.replaceState(null, "", `?${params}`);
    compareWithUrl(text);
});

// ---------------------------------------------------------------- opening

let opening = null; // the AbortController of the open in flight

// A URL naming any part of a split GGUF or a safetensors index opens the whole model (the package finds the
// other files next to it); several Files are the parts of one model. The new model replaces the one on show
// only once it opened: a bad file leaves the page on the last one.
async function openModel(source, label) {
    comparing?.abort();
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
        modelSource = source;
        modelLabel = label;
        previous?.close();
        endComparison();
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

// {href, name} of a URL the page can load, or null after showing why not.
function checkUrl(text) {
    let url;
    try {
        url = new URL(text.trim(), location.href);
    } catch {
        showError({ code: "bad_source", message: `not a URL: ${text}` });
        return null;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
        showError({ code: "bad_source", message: "only http: and https: URLs can be loaded" });
        return null;
    }
    try {
        // URIError: a malformed %-escape (such as "%E0%A4%A") names no file.
        return {
            href: url.href,
            name: decodeURIComponent(url.pathname.slice(url.pathname.lastIndexOf("/") + 1)) || url.host,
        };
    } catch {
        showError({ code: "bad_source", message: `a malformed %-escape in the URL: ${text}` });
        return null;
    }
}

function openUrl(text) {
    const url = checkUrl(text);
    return url ? openModel(url.href, url.name) : Promise.resolve();
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

async function openFromAddress() {
    const params = new URLSearchParams(location.search);
    const url = params.get("url");
    if (url && url !== shownUrl) {
        shownUrl = url;
        urlInput.value = url;
        await openUrl(url);
        const other = params.get("compare");
        if (other && model) {
            compareUrlInput.value = other;
            compareWithUrl(other);
        }
    }
}

let shownUrl = null;
window.addEventListener("popstate", openFromAddress); // Back/Forward between ?url= addresses
openFromAddress();
listSamples();
