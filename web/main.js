// SPDX-License-Identifier: MIT
// The inspection page: opening (files, drag and drop, URL, ?url=), progress and cancel, the error banner,
// tabs, the address (?url=&compare=&tab=&tensor=: deep links, Back and Forward), keyboard shortcuts and
// theme. Parsing and decoding run in the package's worker (weightstream/worker); the views are in their own
// modules.
import { WeightstreamWorker } from "weightstream/worker";
import { $, el, clear } from "./dom.js";
import { bannerParts } from "./errors.js";
import { CompareDetail, CompareView } from "./compare_view.js";
import { ConvertView, checkpointUrls, droppedFolder } from "./convert_view.js";
import { EditView, editedName } from "./edit_view.js";
import { absQuantile } from "./heatmap.js";
import { formatBytes, formatCount, formatDuration, formatInt } from "./format.js";
import { LayerMap } from "./layer_map.js";
import { MetadataView } from "./metadata_view.js";
import { NetworkView } from "./network_view.js";
import { OPEN_OPTIONS, chooseFiles } from "./parts.js";
import { summarize } from "./summary.js";
import { saveAs } from "./save.js";
import { renderSummary } from "./summary_view.js";
import { QuantizeView } from "./quantize_view.js";
import {
    EXACT_TYPES,
    MAX_WINDOW_VALUES,
    TensorDetail,
    exactValues,
    firstWindow,
    rowGeometry,
} from "./tensor_detail.js";
import { TensorTable } from "./tensor_table.js";
import { TemplateView } from "./template_view.js";
import { TokenizePlayground } from "./tokenize_view.js";
import { TokenizerView } from "./tokenizer_view.js";

// One worker for the page's models. One that failed fails every request of its models with code "worker";
// the next open starts a new one.
let worker = null;
let model = null; // the model on show (open in `worker`)
let modelSource = null; // what `model` was opened from (compare() opens it again)
let modelLabel = "";
const network = new NetworkView($("#network"), () => (worker ??= new WeightstreamWorker()));

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
        // `note` (optional) leads the text, as "tensor 3 of 291".
        update({ loaded, total }, note = "") {
            if (activeOperation !== op) return;
            const seconds = (performance.now() - op.started) / 1000;
            const rate = seconds > 0.2 ? ` · ${formatBytes(loaded / seconds)}/s` : "";
            const lead = note ? `${note} · ` : "";
            if (total) {
                progressBar.value = Math.min(1, loaded / total);
                $(".progress-text", progressBox).textContent =
                    `${lead}${formatBytes(loaded)} of ${formatBytes(total)}${rate}`;
            } else {
                progressBar.removeAttribute("value");
                $(".progress-text", progressBox).textContent = `${lead}${formatBytes(loaded)}${rate}`;
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

// ---------------------------------------------------------------- the address

// What is on show is in the address's query, so that a link opens the same view and Back/Forward move
// between views: url (the model), compare (the model compared with), tab (absent: the summary), tensor (the
// tensor whose detail is open). ?url= and ?url=&compare= links of before keep working. The page changes
// the address (pushState) when a person opens a tab or a tensor; popstate applies an address (applyAddress).
let restoring = false; // applying the address: the views change without pushing

function setAddress(changes, { replace = false } = {}) {
    if (restoring) return;
    const params = new URLSearchParams(location.search);
    for (const [key, value] of Object.entries(changes)) {
        if (value === null || value === undefined || value === "") params.delete(key);
        else params.set(key, value);
    }
    const query = params.toString();
    const search = query ? `?${query}` : "";
    if (search === location.search) return;
    const href = `${location.pathname}${search}${location.hash}`;
    if (replace) history.replaceState(null, "", href);
    else history.pushState(null, "", href);
}

// ---------------------------------------------------------------- views

const tabs = [...document.querySelectorAll('[role="tab"]')];

/** Shows the tab `name` and puts it in the address. */
function showTab(name, options) {
    selectTab(name);
    setAddress({ tab: name === "summary" ? null : name }, options);
}

function selectTab(name) {
    if (name === "tokenizer") tokenizerView.show();
    if (name === "layers") layerMap.show();
    if (name === "template") templateView.show();
    for (const tab of tabs) {
        const selected = tab.dataset.tab === name;
        tab.setAttribute("aria-selected", String(selected));
        tab.tabIndex = selected ? 0 : -1;
        $(`#${tab.getAttribute("aria-controls")}`).hidden = !selected;
    }
}

for (const tab of tabs) {
    tab.addEventListener("click", () => showTab(tab.dataset.tab));
    tab.addEventListener("keydown", (e) => {
        if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
        const visible = tabs.filter((t) => !t.hidden);
        const i = visible.indexOf(tab) + (e.key === "ArrowRight" ? 1 : visible.length - 1);
        const next = visible[i % visible.length];
        showTab(next.dataset.tab, { replace: true });
        next.focus();
    });
}

const detailRoot = $("#tensor-detail");
let reading = null; // the AbortController of the read in flight

let nativeReads = true; // until the package refuses {as: "native"} (a version without it)

// The stored values of an integer or float64 tensor (EXACT_TYPES), exactly: {as: "native"} where the package
// has it, else its bytes ({as: "raw"}) as the typed array of its type.
async function readExact(tensor, options) {
    if (nativeReads) {
        try {
            return await model.read(tensor.name, { ...options, as: "native" });
        } catch (error) {
            if (!(error instanceof TypeError && /\bas\b/.test(error.message))) throw error;
            nativeReads = false;
        }
    }
    const bytes = await model.read(tensor.name, { ...options, as: "raw" });
    return exactValues(bytes, tensor.dtype, model.info.endian === "big");
}

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
        const scoped = rows ? { signal: controller.signal, rows } : { signal: controller.signal };
        const [values, stats, exact] = await Promise.all([
            model.read(tensor.name, options),
            model.stats(tensor.name, scoped),
            Object.hasOwn(EXACT_TYPES, tensor.dtype) ? readExact(tensor, scoped) : null,
        ]);
        const maxAbs = stats.min === null ? 0 : Math.max(Math.abs(stats.min), Math.abs(stats.max));
        const result = { values, stats, histogram: stats.histogram, scale: absQuantile(values, maxAbs), maxAbs };
        if (exact) result.exact = exact;
        return result;
    } catch (error) {
        failed(error, tensor.name);
        throw error;
    } finally {
        progress.done();
        if (reading === controller) reading = null;
        network.refresh();
    }
}

/** The statistics of every value of `tensor` (beyond the detail's window), with progress and cancel. */
async function wholeStats(tensor, { signal, onProgress }) {
    const controller = new AbortController();
    const progress = startProgress(`Statistics of ${tensor.name} (whole tensor)`, () => controller.abort());
    const abort = () => controller.abort();
    signal.addEventListener("abort", abort);
    try {
        return await model.stats(tensor.name, {
            signal: controller.signal,
            onProgress: (p) => {
                progress.update(p);
                onProgress(p);
            },
        });
    } catch (error) {
        failed(error, tensor.name);
        throw error;
    } finally {
        signal.removeEventListener("abort", abort);
        progress.done();
    }
}

const detail = new TensorDetail(detailRoot, { load: loadTensor, onClose: () => closeTensor(), wholeStats });

/** Opens the detail of `tensor` (and puts it in the address unless `push` is false). */
function openTensor(tensor, { push = true } = {}) {
    detailRoot.classList.add("open");
    if (detail.tensor?.name !== tensor.name) detail.show(tensor);
    table.select(tensor.name);
    if (push) setAddress({ tab: "tensors", tensor: tensor.name });
}

function closeTensor({ push = true } = {}) {
    reading?.abort();
    detail.clear();
    detailRoot.classList.remove("open");
    table.select(null);
    if (push) setAddress({ tensor: null });
}

const table = new TensorTable($("#tensor-table-root"), { onSelect: (tensor) => openTensor(tensor) });

// A second tokenizer for the playground, from files the user picked: another GGUF's (opened in the worker, closed with
// it), or Hugging Face files' (tokenizer.json / tokenizer.model with tokenizer_config.json).
async function openOtherTokenizer(files) {
    worker ??= new WeightstreamWorker();
    const label = files.map((f) => f.name).join(", ");
    if (files.length === 1 && files[0].name.toLowerCase().endsWith(".gguf")) {
        const other = await worker.open(files[0], OPEN_OPTIONS);
        try {
            const tokenizer = await other.tokenizer();
            return { tokenizer, label, close: () => (tokenizer.dispose(), other.close()) };
        } catch (error) {
            other.close();
            throw error;
        }
    }
    const tokenizer = await worker.tokenizer(files);
    return { tokenizer, label, close: () => tokenizer.dispose() };
}
const playground = new TokenizePlayground({ openOther: openOtherTokenizer });
const tokenizerView = new TokenizerView($("#tokenizer-root"), playground);
const templateView = new TemplateView($("#template-root"));
const layerMap = new LayerMap($("#layers-root"), {
    onOpen: (tensor) => {
        selectTab("tensors");
        table.reveal(tensor.name);
        openTensor(tensor);
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

// Shows the model just opened (a worker Model: its info, and the core's layer grouping).
function showModel(opened, label) {
    const info = opened.info;
    const s = summarize(info, label);
    $("#welcome").hidden = true;
    $("#convert").hidden = true;
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
    table.setTensors(info.tensors, opened.layers);
    metadataView.setMetadata(info.metadata);
    $("#tab-tokenizer").hidden = !tokenizerView.setMetadata(info.metadata);
    playground.setModel(() => opened.tokenizer());
    $("#tab-template").hidden = !templateView.setMetadata(info.metadata);
    $("#tab-layers").hidden = !layerMap.setLayers(opened.layers);
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

let comparedUrl = null; // the compare= of the address on show

function endComparison() {
    comparedUrl = null;
    comparing?.abort();
    other?.close();
    other = null;
    report = null;
    compareTab.hidden = true;
    compareView.clear();
    compareDetail.clear();
    compareRoot.classList.remove("open");
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
        // The Q/K permutation mixes rows within a head: a window of whole heads (a 1-D bias is one row).
        const headRows = row.heads && ta.shape.length > 1 ? ga.rows / row.heads : 1;
        count = Math.max(headRows, Math.floor(count / headRows) * headRows);
        const rows = [0, count];
        // The Hugging Face side as convert_hf_to_gguf.py writes it: the package applies the pair's transform (the
        // core's, with the converter's rounding), so the difference is the conversion's own.
        const converted = { signal, rows, transform: row.transform, heads: row.heads ?? undefined };
        const [a, b] = await Promise.all([
            model.read(row.a, sourceIsA ? converted : { signal, rows }),
            other.read(row.b, sourceIsA ? { signal, rows } : converted),
        ]);
        const values = new Float32Array(a.length);
        for (let i = 0; i < values.length; ++i) values[i] = a[i] - b[i];
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
        setAddress({ tab: "compare", tensor: null }, { replace: true });
    } catch (error) {
        failed(error, label);
    } finally {
        progress.done();
        if (comparing === controller) comparing = null;
    }
}

function compareWithUrl(text) {
    const url = checkUrl(text);
    if (!url) return Promise.resolve();
    const started = compareWith(url.href, url.name);
    comparedUrl = text;
    return started;
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
    setAddress({ compare: text });
    compareWithUrl(text);
});

// ---------------------------------------------------------------- quantizing the model on show

let planning = null; // the AbortController of the plan in flight
let quantizing = null; // the AbortController of the run in flight
let fileTypes = null; // quantizeFileTypes(), once
const quantizeTab = $("#tab-quantize");

const quantizeView = new QuantizeView($("#quantize-root"), {
    onChange: () => planQuantization(),
    onStart: () => quantizeAndSave(),
});

function quantizeOptions(signal) {
    const options = { ...OPEN_OPTIONS, type: quantizeView.type, signal };
    if (quantizeView.imatrix) options.imatrix = quantizeView.imatrix;
    return options;
}

// The core's plan for the chosen recipe (every tensor's type, the output's size), made in the worker from the
// model's header and the importance matrix: shown before anything is quantized.
async function planQuantization() {
    if (!model) return;
    planning?.abort();
    const controller = (planning = new AbortController());
    quantizeView.planning();
    try {
        worker ??= new WeightstreamWorker();
        const plan = await worker.quantizePlan(modelSource, quantizeOptions(controller.signal));
        if (planning === controller) quantizeView.setPlan(plan, quantizing !== null);
    } catch (error) {
        if (error?.code === "worker") worker = null;
        if (planning === controller && !isAbort(error)) quantizeView.setPlanError(error);
    } finally {
        if (planning === controller) planning = null;
    }
}

async function showQuantize() {
    if (!model) return;
    quantizeTab.hidden = false;
    selectTab("quantize");
    try {
        worker ??= new WeightstreamWorker();
        fileTypes ??= await worker.quantizeFileTypes();
    } catch (error) {
        failed(error, "quantize");
        return;
    }
    quantizeView.setTypes(fileTypes);
    if (!quantizeView.plan && !planning) planQuantization();
}

$("#quantize-open").addEventListener("click", showQuantize);

function endQuantize() {
    planning?.abort();
    quantizing?.abort();
    quantizeView.reset();
    quantizeTab.hidden = true;
}

// The output's name: the model's (without .gguf / .safetensors and a split's -00001-of-00003) and the type.
function outputName(type) {
    const base = modelLabel
        .replace(/(-\d{5}-of-\d{5})?\.(gguf|safetensors)$/i, "")
        .replace(/\.safetensors\.index\.json$/i, "");
    return `${base || "model"}-${type}.gguf`;
}

// Quantizes the model on show with the plan's recipe in the worker and saves the output (save.js: through the
// File System Access API as it is made, else as a download of the whole output; a cancel saves nothing).
async function quantizeAndSave() {
    const plan = quantizeView.plan;
    if (!model || !plan || quantizing) return;
    const name = outputName(plan.type);
    const controller = (quantizing = new AbortController());
    const signal = controller.signal;
    let progress = null;
    let started = 0;
    let written = 0;
    try {
        const saved = await saveAs(
            name,
            () => {
                progress = startProgress(`Quantizing ${modelLabel} to ${plan.type}`, () => controller.abort());
                started = performance.now();
                quantizeView.setRunning(true);
                quantizeView.setStatus("running", `Quantizing to ${plan.type}…`);
                worker ??= new WeightstreamWorker();
                return worker.quantize(modelSource, {
                    ...quantizeOptions(signal),
                    type: plan.type,
                    onProgress: (p) => {
                        written = p.written;
                        const tensor = Math.min(p.tensor + 1, p.tensors);
                        progress.update(p, `tensor ${formatInt(tensor)} of ${formatInt(p.tensors)}`);
                        quantizeView.setStatus(
                            "running",
                            `${formatInt(p.tensor)} of ${formatInt(p.tensors)} tensors done · ` +
                                `${formatBytes(p.written)} of ${formatBytes(p.outputSize)} written`,
                            { tensor: String(p.tensor), tensors: String(p.tensors), written: String(p.written) },
                        );
                    },
                });
            },
            { signal },
        );
        if (saved === null) return; // the picker was dismissed
        const ms = performance.now() - started;
        quantizeView.setStatus(
            "done",
            `Saved ${name}: ${formatBytes(plan.fileSize)} in ${formatDuration(ms)}` +
                (saved === "file" ? "" : " (downloaded)"),
            { name, bytes: String(plan.fileSize), saved },
        );
    } catch (error) {
        if (isAbort(error) || signal.aborted) {
            quantizeView.setStatus("cancelled", `Cancelled after ${formatBytes(written)}: nothing was saved.`);
        } else {
            quantizeView.setStatus("failed", `Not saved: ${String(error?.message ?? error)}`, {
                code: typeof error?.code === "string" ? error.code : "error",
            });
            failed(error, name);
        }
    } finally {
        progress?.done();
        if (quantizing === controller) quantizing = null;
        quantizeView.setRunning(false);
    }
}

// ---------------------------------------------------------------- converting a checkpoint (the Convert view)

const convertSection = $("#convert");
// What the Convert view converts: {sources (to try in order: a repository's index, then its model.safetensors;
// one once planned), label, name (the checkpoint folder's name when the files do not say it, or undefined: a URL's
// is the package's to find)}.
let checkpoint = null;
let convertPlanning = null; // the AbortController of the plan in flight
let converting = null; // the AbortController of the run in flight
let recipesListed = false;

const convertView = new ConvertView($("#convert-root"), {
    onFiles: (files, folder) => setCheckpointFiles(files, folder),
    onUrl: (text) => setCheckpointUrl(text),
    onChange: () => planCheckpoint(),
    onStart: () => convertAndSave(),
});

async function showConvert() {
    convertSection.hidden = false;
    $("#welcome").hidden = true;
    $("#model").hidden = true;
    if (recipesListed) return;
    try {
        worker ??= new WeightstreamWorker();
        convertView.setRecipes(await worker.quantizeFileTypes());
        recipesListed = true;
    } catch (error) {
        failed(error, "convert");
    }
}

function hideConvert() {
    convertPlanning?.abort();
    converting?.abort();
    convertSection.hidden = true;
    if (model) $("#model").hidden = false;
    else $("#welcome").hidden = false;
}

$("#convert-open").addEventListener("click", () => showConvert());
$("#convert-close").addEventListener("click", () => hideConvert());

// Files of a checkpoint (a folder's, with its name): every one is handed to the package, which takes the model
// files and the side files it reads (config.json, the tokenizer) and leaves the rest.
function setCheckpointFiles(files, folder) {
    if (files.length === 0) return;
    const names = files.map((f) => f.name).join(", ");
    const label = folder ?? (files.length === 1 ? files[0].name : `${files.length} files`);
    checkpoint = { sources: [files], label, name: folder };
    const count = `${formatInt(files.length)} file${files.length === 1 ? "" : "s"}`;
    convertView.setSource(`${folder ? `Folder ${folder}: ` : ""}${count} (${names})`, {
        files: String(files.length),
    });
    planCheckpoint();
}

function setCheckpointUrl(text) {
    let sources;
    try {
        sources = checkpointUrls(text, location.href);
    } catch (error) {
        showError({ code: "bad_source", message: `not a checkpoint URL: ${text}: ${error.message}` });
        return;
    }
    checkpoint = { sources, label: text, name: undefined };
    convertView.setSource(sources.length > 1 ? `Repository ${text}` : `URL ${text}`, { url: sources[0] });
    planCheckpoint();
}

// The package's options for the chosen type (the view's choice): convert() to a dtype, or quantize() by a recipe,
// the one pass.
function checkpointOptions(target, choice, signal) {
    const common = { ...OPEN_OPTIONS, modelName: target.name, signal };
    if (choice.recipe) return { ...common, type: choice.recipe };
    return { ...common, to: "gguf", dtype: choice.dtype.toLowerCase() };
}

// The name the saved file is given: llama.cpp's naming of a converted model (its general.name with "-" for spaces
// and slashes, then the type), from the general.name the core will write.
function checkpointOutputName(plan, target, type) {
    const name = (plan.modelName ?? target.name ?? "").trim().replace(/[\s/\\]+/g, "-");
    return `${name || "model"}-${type}.gguf`;
}

// The plan of the first of the checkpoint's sources that is there (an HTTP 404 moves on to the next); the
// checkpoint keeps that one.
async function planFirstFound(target, choice, signal) {
    const repository = target.sources.length > 1;
    for (;;) {
        const [source, ...rest] = target.sources;
        try {
            const options = checkpointOptions(target, choice, signal);
            const plan = await (choice.recipe
                ? worker.quantizePlan(source, options)
                : worker.convertPlan(source, options));
            target.sources = [source];
            return plan;
        } catch (error) {
            if (!(error?.code === "http" && error.status === 404)) throw error;
            if (rest.length === 0) {
                const tried = repository ? "neither model.safetensors.index.json nor " : "";
                error.message = `${tried}${source} was found: HTTP 404`;
                throw error;
            }
            target.sources = rest;
        }
    }
}

// The core's plan for the chosen type or recipe (every tensor's GGUF name and type, the output's size), made in the
// worker from the checkpoint's headers and config.json: shown before anything is converted.
async function planCheckpoint() {
    if (!checkpoint) return;
    convertPlanning?.abort();
    const choice = convertView.choice;
    const controller = (convertPlanning = new AbortController());
    convertView.planning();
    try {
        worker ??= new WeightstreamWorker();
        const plan = await planFirstFound(checkpoint, choice, controller.signal);
        if (convertPlanning === controller)
            convertView.setPlan(plan, choice.recipe ?? choice.dtype, converting !== null);
    } catch (error) {
        if (error?.code === "worker") worker = null;
        if (convertPlanning === controller && !isAbort(error)) convertView.setPlanError(error);
    } finally {
        if (convertPlanning === controller) convertPlanning = null;
    }
}

// Converts the checkpoint in the worker (to a dtype, or quantized by a recipe in one pass), saves the output (save.js:
// through the File System Access API as it is made, else as a download; a cancel saves nothing), then opens what was
// saved in the page.
async function convertAndSave() {
    const plan = convertView.plan;
    const target = checkpoint;
    const choice = convertView.choice;
    const type = choice.recipe ?? choice.dtype;
    if (!plan || !target || converting) return;
    const name = checkpointOutputName(plan, target, type);
    const controller = (converting = new AbortController());
    const signal = controller.signal;
    let progress = null;
    let started = 0;
    let written = 0;
    let result = null;
    try {
        const saved = await saveAs(
            name,
            () => {
                const doing = choice.recipe ? "Quantizing" : "Converting";
                progress = startProgress(`${doing} ${target.label} to ${type}`, () => controller.abort());
                started = performance.now();
                convertView.setRunning(true);
                convertView.setStatus("running", `${doing} to ${type}…`);
                worker ??= new WeightstreamWorker();
                const run = choice.recipe ? worker.quantize.bind(worker) : worker.convert.bind(worker);
                return run(target.sources[0], {
                    ...checkpointOptions(target, choice, signal),
                    onProgress: (p) => {
                        written = p.written;
                        progress.update(
                            p,
                            `tensor ${formatInt(Math.min(p.tensor + 1, p.tensors))} of ${formatInt(p.tensors)}`,
                        );
                        convertView.setStatus(
                            "running",
                            `${formatInt(p.tensor)} of ${formatInt(p.tensors)} tensors done · ` +
                                `${formatBytes(p.written)} of ${formatBytes(p.outputSize)} written`,
                            { tensor: String(p.tensor), tensors: String(p.tensors), written: String(p.written) },
                        );
                    },
                });
            },
            { signal, onSaved: (file) => (result = file) },
        );
        if (saved === null) return; // the picker was dismissed
        convertView.setStatus(
            "done",
            `Saved ${name}: ${formatBytes(plan.fileSize)} in ${formatDuration(performance.now() - started)}` +
                (saved === "file" ? "" : " (downloaded)"),
            { name, bytes: String(plan.fileSize), saved },
        );
    } catch (error) {
        result = null;
        if (isAbort(error) || signal.aborted) {
            convertView.setStatus("cancelled", `Cancelled after ${formatBytes(written)}: nothing was saved.`);
        } else {
            convertView.setStatus("failed", `Not saved: ${String(error?.message ?? error)}`, {
                code: typeof error?.code === "string" ? error.code : "error",
            });
            failed(error, name);
        }
    } finally {
        progress?.done();
        if (converting === controller) converting = null;
        convertView.setRunning(false);
    }
    if (result) await openModel(result, name, null);
}

// ---------------------------------------------------------------- opening

let opening = null; // the AbortController of the open in flight

// A URL naming any part of a split GGUF or a safetensors index opens the whole model (the package finds the
// other files next to it); several Files are the parts of one model. The new model replaces the one on show
// only once it opened: a bad file leaves the page on the last one.
// `address`: the url= to put in the address once it opened (null for files); undefined when the address
// already says what to open (applyAddress).
async function openModel(source, label, address) {
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
        endQuantize();
        hideError();
        const shown = performance.now();
        showModel(opened, label);
        network.setModel(opened);
        if (address !== undefined) {
            shownUrl = address;
            setAddress({ url: address, compare: null, tab: null, tensor: null });
        }
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
    openModel(source, label, null);
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

function openUrl(text, address) {
    const url = checkUrl(text);
    return url ? openModel(url.href, url.name, address) : Promise.resolve();
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
    openUrl(text, text);
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
// A folder dropped is a checkpoint to convert; files dropped on the Convert view are one too; else they are opened.
window.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    dragDepth = 0;
    overlay.hidden = true;
    const folder = droppedFolder(e.dataTransfer);
    if (folder) {
        showConvert();
        folder().then(
            ({ files, folder: name }) => setCheckpointFiles(files, name),
            (error) => showError({ code: "io", message: `the dropped folder cannot be read: ${error?.message}` }),
        );
    } else if (!convertSection.hidden) {
        setCheckpointFiles([...e.dataTransfer.files], undefined);
    } else {
        openFiles(e.dataTransfer.files);
    }
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
                            urlInput.value = `samples/${sample.name}`;
                            openUrl(urlInput.value, urlInput.value);
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

// Applies the address: opens its model and the compared one when they are not on show, then its tab and
// tensor (closing the detail sheets it does not name). Back and Forward come here.
async function applyAddress() {
    const params = new URLSearchParams(location.search);
    const url = params.get("url");
    if (url && url !== shownUrl) {
        shownUrl = url;
        urlInput.value = url;
        await openUrl(url);
    }
    if (!model) return;
    const compare = params.get("compare");
    if (compare && compare !== comparedUrl) {
        compareUrlInput.value = compare;
        await compareWithUrl(compare);
    } else if (!compare && comparedUrl) {
        endComparison();
    }
    if (new URLSearchParams(location.search).toString() !== params.toString()) return; // moved on meanwhile
    restoring = true;
    try {
        restoreView(params);
    } finally {
        restoring = false;
    }
}

function restoreView(params) {
    const name = params.get("tensor");
    let tab = params.get("tab") ?? (name !== null ? "tensors" : "summary");
    if (!tabs.some((t) => t.dataset.tab === tab && !t.hidden)) tab = "summary";
    selectTab(tab);
    const tensor = name === null ? undefined : model.info.tensors.find((t) => t.name === name);
    if (tensor) {
        if (tab === "tensors") table.reveal(tensor.name);
        openTensor(tensor);
    } else if (detail.tensor) {
        closeTensor();
    }
    compareDetail.clear();
    compareRoot.classList.remove("open");
    metadataView.closeViewer();
}

// ---------------------------------------------------------------- keyboard

// Escape closes the detail sheet on show (the tensor's, a pair's, a metadata value); "/" focuses the
// filter of the tab on show (not while typing in a field).
function typing(target) {
    return (
        target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))
    );
}

function selectedTab() {
    return tabs.find((t) => t.getAttribute("aria-selected") === "true")?.dataset.tab;
}

document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || $("#model").hidden) return;
    if (e.key === "Escape") {
        const tab = selectedTab();
        if (tab === "tensors" && detail.tensor) {
            e.preventDefault();
            closeTensor();
            table.focus();
        } else if (tab === "compare" && compareRoot.classList.contains("open")) {
            e.preventDefault();
            compareDetail.clear();
            compareRoot.classList.remove("open");
        } else if (tab === "metadata" && $("#metadata-root").classList.contains("viewer-open")) {
            e.preventDefault();
            metadataView.closeViewer();
        }
        return;
    }
    if (e.key === "/" && !typing(e.target)) {
        const tab = selectedTab();
        const filter =
            tab === "metadata"
                ? $('[data-testid="metadata-filter"]')
                : tab === "tokenizer"
                  ? $('[data-testid="token-search"]')
                  : null;
        e.preventDefault();
        if (filter) {
            filter.focus();
            filter.select();
        } else {
            if (tab !== "tensors") showTab("tensors");
            table.focusFilter();
        }
    }
});

let shownUrl = null; // the url= of the model on show
window.addEventListener("popstate", () => applyAddress());
applyAddress();
listSamples();
