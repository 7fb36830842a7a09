// SPDX-License-Identifier: MIT
// The page's worker: opens models with the weightstream package, decodes tensors and computes their
// statistics, so that parsing and decoding never block the page. Protocol (all messages carry `id`):
//   page -> worker  {type: "open", files: File[]} | {type: "open", url}   -> the model's description
//                   {type: "read", name, rows: [start, count] | null}     -> values (transferred) + stats
//                   {type: "items", entry, start, count}   -> items of the long metadata array `entry` (an index)
//                   {type: "search", entry, query}         -> indices (Int32Array) of its items containing query
//                   {type: "close"}                                       -> null
//                   {type: "cancel", id}   aborts the request `id`
//   worker -> page  {type: "progress", loaded, total} | {type: "result", result} | {type: "error", error}
import { open } from "weightstream";
import { PageError, indexShards, mergeParts, parseSplitName, planFiles, splitPartName } from "./parts.js";
import { formatItem } from "./format.js";
import { absQuantile, computeStats, histogram } from "./stats.js";

const PROGRESS_INTERVAL_MS = 50;
// Metadata arrays longer than this reach the page as their first items only; the page asks for the rest
// page by page. A 150k-token vocabulary would otherwise be copied to the page's thread in one long task.
const PREVIEW_ITEMS = 100;

// {parts: [{model, name}], partOf: Map(tensor name -> part index), info, lowered: Map(entry -> strings)}
let current = null;
const controllers = new Map();

function serializeError(e) {
    if (e?.name === "AbortError") return { code: "aborted", message: "cancelled" };
    return {
        code: typeof e?.code === "string" ? e.code : "internal",
        message: String(e?.message ?? e),
        offset: typeof e?.offset === "number" || typeof e?.offset === "bigint" ? e.offset : undefined,
        what: typeof e?.what === "string" ? e.what : undefined,
    };
}

/** A throttled progress reporter for request `id`; parts add up through `base`. */
function progressReporter(id) {
    let last = 0;
    const reporter = {
        base: 0,
        total: undefined,
        report(loaded, total, force = false) {
            const now = performance.now();
            if (!force && now - last < PROGRESS_INTERVAL_MS) return;
            last = now;
            self.postMessage({ id, type: "progress", loaded: reporter.base + loaded, total: reporter.total ?? total });
        },
    };
    return reporter;
}

const fileName = (url) => {
    const path = new URL(url).pathname;
    try {
        return decodeURIComponent(path.slice(path.lastIndexOf("/") + 1)) || url;
    } catch {
        return path.slice(path.lastIndexOf("/") + 1);
    }
};

/** URL sources as {name, source} records, with every part of a split or sharded model. */
async function planUrl(url, signal) {
    const name = fileName(url);
    const split = parseSplitName(name);
    if (split) {
        const parts = [];
        for (let i = 1; i <= split.count; ++i) {
            const partName = splitPartName(split.prefix, i, split.count);
            parts.push({ name: partName, source: new URL(encodeURIComponent(partName), url).href });
        }
        return { kind: "split", parts };
    }
    if (name.toLowerCase().endsWith(".json")) {
        const response = await fetch(url, { signal });
        if (!response.ok) throw new PageError("http", `${name}: HTTP ${response.status}`);
        const index = parseIndex(await response.text(), name);
        const shards = indexShards(index).map((file) => ({ name: file, source: new URL(file, url).href }));
        return { kind: "shards", index, shards };
    }
    return { kind: "single", file: { name, source: url } };
}

function parseIndex(text, name) {
    try {
        return JSON.parse(text);
    } catch (e) {
        throw new PageError("bad_json", `${name}: ${e.message}`);
    }
}

async function planLocal(files) {
    const plan = planFiles(files.map((f) => ({ name: f.name, source: f })));
    if (plan.kind === "shards" && plan.index) {
        const index = parseIndex(await plan.index.source.text(), plan.index.name);
        const wanted = indexShards(index);
        const chosen = new Set(plan.shards.map((s) => s.name));
        const missing = wanted.filter((w) => !chosen.has(w.slice(w.lastIndexOf("/") + 1)));
        if (missing.length) throw new PageError("bad_split", `the index names shards that were not chosen: ${missing.join(", ")}`);
        plan.index = index;
    }
    return plan;
}

async function openParts(list, signal, progress) {
    const opened = [];
    try {
        for (const part of list) {
            const model = await open(part.source, { signal, onProgress: (p) => progress.report(p.loaded, p.total) });
            opened.push({ model, name: part.name });
            progress.base += Number(model.info.data_offset) || 0;
        }
    } catch (e) {
        for (const p of opened) await p.model.close();
        throw e;
    }
    return opened;
}

async function handleOpen(message, signal, progress) {
    const plan = message.url ? await planUrl(message.url, signal) : await planLocal(message.files);
    let parts;
    let info;
    if (plan.kind === "single") {
        parts = await openParts([plan.file], signal, progress);
        info = { ...parts[0].model.info, files: [plan.file.name] };
    } else {
        const list = plan.kind === "split" ? plan.parts : plan.shards;
        parts = await openParts(list, signal, progress);
        try {
            info = mergeParts(plan.kind, parts.map((p) => p.model.info), parts.map((p) => p.name), plan.index ?? null);
        } catch (e) {
            for (const p of parts) await p.model.close();
            throw e;
        }
    }
    progress.report(0, undefined, true);
    // The new model replaces the old one only once it opened: a bad file leaves the page on the last one.
    const previous = current;
    const partOf = new Map();
    parts.forEach((p, i) => {
        for (const t of p.model.tensors) partOf.set(t.name, i);
    });
    current = { parts, partOf, info, lowered: new Map() };
    if (previous) for (const p of previous.parts) await p.model.close();
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
    const part = current.partOf.get(message.name);
    if (part === undefined) throw new PageError("no_such_tensor", `no tensor named "${message.name}"`);
    const options = { signal, onProgress: (p) => progress.report(p.loaded, p.total) };
    if (message.rows) options.rows = message.rows;
    const values = await current.parts[part].model.read(message.name, options);
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
    if (previous) for (const p of previous.parts) await p.model.close();
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
