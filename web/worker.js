// SPDX-License-Identifier: MIT
// The page's worker: opens models with the weightstream package, decodes tensors and computes their
// statistics, so that parsing and decoding never block the page. Protocol (all messages carry `id`):
//   page -> worker  {type: "open", files: File[]} | {type: "open", url}   -> the model's description (info)
//                   {type: "read", name, rows: [start, count] | null}     -> values (transferred) + stats
//                   {type: "items", entry, start, count}   -> items of the long metadata array `entry` (an index)
//                   {type: "search", entry, query}         -> indices (Int32Array) of its items containing query
//                   {type: "close"}                                       -> null
//                   {type: "cancel", id}   aborts the request `id`
//   worker -> page  {type: "progress", loaded, total} | {type: "result", result} | {type: "error", error}
import { open } from "weightstream";
import { OPEN_OPTIONS, PageError, chooseFiles } from "./parts.js";
import { formatItem } from "./format.js";
import { absQuantile, computeStats, histogram } from "./stats.js";

const PROGRESS_INTERVAL_MS = 50;
// Metadata arrays longer than this reach the page as their first items only; the page asks for the rest
// page by page. A 150k-token vocabulary would otherwise be copied to the page's thread in one long task.
const PREVIEW_ITEMS = 100;

// {model, info, lowered: Map(entry -> strings)}
let current = null;
const controllers = new Map();

function serializeError(e) {
    if (e?.name === "AbortError") return { code: "aborted", message: "cancelled" };
    return {
        code: typeof e?.code === "string" ? e.code : "internal",
        message: String(e?.message ?? e),
        offset: typeof e?.offset === "number" || typeof e?.offset === "bigint" ? e.offset : undefined,
        what: typeof e?.what === "string" ? e.what : undefined,
        // A model in several files: the one the problem is in.
        file: typeof e?.file === "string" ? e.file : undefined,
    };
}

/** A throttled progress reporter for request `id`. */
function progressReporter(id) {
    let last = 0;
    return {
        report(loaded, total, force = false) {
            const now = performance.now();
            if (!force && now - last < PROGRESS_INTERVAL_MS) return;
            last = now;
            self.postMessage({ id, type: "progress", loaded, total });
        },
    };
}

// A URL naming any part of a split GGUF or a safetensors index opens the whole model (the package finds the
// other files next to it); several Files are the parts of one model.
async function handleOpen(message, signal, progress) {
    const source = message.url ?? chooseFiles(message.files);
    const model = await open(source, { ...OPEN_OPTIONS, signal, onProgress: (p) => progress.report(p.loaded, p.total) });
    const { info } = model; // as `weightstream info --json` prints it: `files` and tensors' `file` when split
    // The new model replaces the old one only once it opened: a bad file leaves the page on the last one.
    const previous = current;
    current = { model, info, lowered: new Map() };
    if (previous) await previous.model.close();
    const metadata = info.metadata.map((entry) =>
        Array.isArray(entry.value) && entry.value.length > PREVIEW_ITEMS ? { ...entry, value: entry.value.slice(0, PREVIEW_ITEMS), partial: true } : entry,
    );
    return { result: { info: { ...info, metadata } } };
}

function arrayEntry(index) {
    const entry = current?.info.metadata[index];
    if (!entry || !Array.isArray(entry.value)) throw new PageError("internal", `metadata entry ${index} is not an array`);
    return entry;
}

async function handleItems({ entry, start, count }) {
    return { result: { items: arrayEntry(entry).value.slice(start, start + count) } };
}

async function handleSearch({ entry, query }) {
    const e = arrayEntry(entry);
    let lowered = current.lowered.get(entry);
    if (!lowered) {
        lowered = e.value.map((v) => (typeof v === "string" ? v : formatItem(v, e.item_type)).toLowerCase());
        current.lowered.set(entry, lowered);
    }
    const needle = query.toLowerCase();
    const found = [];
    for (let i = 0; i < lowered.length; ++i) if (lowered[i].includes(needle)) found.push(i);
    const indices = Int32Array.from(found);
    return { result: { indices }, transfer: [indices.buffer] };
}

async function handleRead(message, signal, progress) {
    if (!current) throw new PageError("closed", "no model is open");
    const options = { signal, onProgress: (p) => progress.report(p.loaded, p.total) };
    if (message.rows) options.rows = message.rows;
    const values = await current.model.read(message.name, options);
    progress.report(values.byteLength, values.byteLength, true);
    const stats = computeStats(values);
    const hist = histogram(values, stats.min, stats.max);
    const maxAbs = Math.max(Math.abs(stats.min), Math.abs(stats.max));
    const scale = absQuantile(values, maxAbs);
    return { result: { values, stats, histogram: hist, scale, maxAbs }, transfer: [values.buffer, hist.counts.buffer] };
}

async function handleClose() {
    const previous = current;
    current = null;
    if (previous) await previous.model.close();
    return { result: null };
}

const handlers = { open: handleOpen, read: handleRead, close: handleClose, items: handleItems, search: handleSearch };

self.onmessage = async ({ data }) => {
    if (data.type === "cancel") {
        controllers.get(data.id)?.abort();
        return;
    }
    const { id } = data;
    const handler = handlers[data.type];
    const controller = new AbortController();
    controllers.set(id, controller);
    try {
        if (!handler) throw new PageError("internal", `unknown request ${data.type}`);
        const { result, transfer = [] } = await handler(data, controller.signal, progressReporter(id));
        self.postMessage({ id, type: "result", result }, transfer);
    } catch (e) {
        self.postMessage({ id, type: "error", error: serializeError(e) });
    } finally {
        controllers.delete(id);
    }
};
