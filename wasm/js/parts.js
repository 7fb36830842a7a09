// SPDX-License-Identifier: MIT
// Models stored in several files, opened as one: llama.cpp's split GGUF (`name-00001-of-00003.gguf`) and
// Hugging Face's sharded safetensors (`model.safetensors.index.json` naming the shard of every tensor). As the
// CLI does, any part of a split or the index found at a URL or path brings in its siblings next to it; several
// sources given together (Files from a file picker, paths, URLs, {name, source} records) are sorted into the
// parts of one model by their names. Each part's header is parsed like a single file's; the core checks that
// the parts fit together and merges them (core/split.h), so tensors carry `file` as in `info --json`.
import { WeightstreamError, statusError } from "./errors.js";
import { makeModel, parseHeader } from "./model.js";
import { isNode, makeSource } from "./sources.js";

const INDEX_SUFFIX = ".index.json";
// The safetensors crate's cap on a header; an index is far smaller (a few hundred KB for the largest models).
const MAX_INDEX_BYTES = 100_000_000;
const URL_SCHEME = /^[a-z][a-z\d+.-]*:/i;

/** The format a file name announces, as the CLI reads it from a path's extension. */
export function formatHint(name) {
    if (name?.endsWith(".gguf")) return "gguf";
    if (name?.endsWith(".safetensors")) return "safetensors";
    return "";
}

function isRecord(input) {
    return (
        input !== null &&
        typeof input === "object" &&
        Object.getPrototypeOf(input) === Object.prototype &&
        typeof input.name === "string" &&
        "source" in input
    );
}

function urlFileName(href) {
    const { pathname } = new URL(href);
    const last = pathname.slice(pathname.lastIndexOf("/") + 1);
    try {
        return decodeURIComponent(last);
    } catch {
        return last;
    }
}

// The URL of file `name` in the folder of `href`, keeping its query (a download flag, say).
function siblingUrl(href, name) {
    const url = new URL(href);
    url.pathname = url.pathname.slice(0, url.pathname.lastIndexOf("/") + 1) + encodeURIComponent(name);
    return url.href;
}

/**
 * What is known of a source from where it is: {name, input, sibling} where `name` is its file name (or
 * undefined) and `sibling(name)`, for sources with a location (a URL, a Request, a Node path), gives the
 * source of another file in the same folder.
 */
export function locate(input) {
    if (isRecord(input)) return { name: input.name, input: input.source };
    if (typeof File !== "undefined" && input instanceof File) return { name: input.name, input };
    let href = null;
    if (input instanceof URL) href = input.href;
    else if (typeof Request !== "undefined" && input instanceof Request) {
        return {
            name: urlFileName(input.url),
            input,
            sibling: (name) => new Request(siblingUrl(input.url, name), input),
        };
    } else if (typeof input === "string") {
        const isUrl = URL_SCHEME.test(input) && !/^[a-z]:[\\/]/i.test(input);
        if (isUrl) href = input;
        else if (!isNode) href = new URL(input, globalThis.location?.href).href;
        else {
            const dir = input.slice(0, Math.max(input.lastIndexOf("/"), input.lastIndexOf("\\")) + 1);
            return { name: input.slice(dir.length), input, sibling: (name) => dir + name };
        }
    }
    if (href !== null) return { name: urlFileName(href), input, sibling: (name) => siblingUrl(href, name) };
    return { name: undefined, input };
}

function badSplit(message) {
    return new WeightstreamError("bad_split", message, { offset: 0 });
}

function badSource(message) {
    return new WeightstreamError("bad_source", message);
}

/** An error of one file of a model stored in several: says which. */
function inFile(error, name) {
    if (!(error instanceof WeightstreamError) || error.file !== undefined) return error;
    error.file = name;
    error.message = `${name}: ${error.message}`;
    return error;
}

async function readWhole(input, options) {
    const source = await makeSource(input, options);
    try {
        const chunks = [];
        let size = 0;
        for await (const chunk of source.read(0, MAX_INDEX_BYTES + 1, options)) {
            chunks.push(chunk);
            size += chunk.length;
            if (size > MAX_INDEX_BYTES) {
                throw new WeightstreamError("too_large", `larger than ${MAX_INDEX_BYTES} bytes`, { offset: 0 });
            }
        }
        const bytes = new Uint8Array(size);
        let at = 0;
        for (const chunk of chunks) {
            bytes.set(chunk, at);
            at += chunk.length;
        }
        return bytes;
    } finally {
        await source.close();
    }
}

function setIndex(parts, bytes, name) {
    const status = parts.setIndex(bytes);
    if (status.code !== 0) throw inFile(statusError(status), name);
    return parts.shardFiles();
}

/**
 * What to open: {kind: "single", part} | {kind: "split", parts} | {kind: "shards", parts, index} with parts as
 * {name, input} in the model's file order and index the index's bytes (null: made from the shards).
 */
async function plan(wasm, input, options) {
    if (Array.isArray(input)) {
        if (input.length === 0) throw new TypeError("open(): an empty list of sources");
        if (input.length === 1) return plan(wasm, input[0], options);
        return planList(wasm, input.map(locate), options);
    }
    const located = locate(input);
    const { name, sibling } = located;
    if (!sibling || options.split === false) return { kind: "single", part: located };
    const split = wasm.parseSplitName(name);
    if (split && split.count > 1) {
        const parts = [];
        for (let i = 1; i <= split.count; ++i) {
            const partName = wasm.splitPartName(split.prefix, i, split.count);
            parts.push({ name: partName, input: i === split.part ? input : sibling(partName) });
        }
        return { kind: "split", parts };
    }
    if (name.endsWith(INDEX_SUFFIX)) {
        let bytes;
        try {
            bytes = await readWhole(input, options);
        } catch (e) {
            throw inFile(e, name);
        }
        return {
            kind: "shards",
            index: { name, bytes },
            parts: (files) => files.map((f) => ({ name: f, input: sibling(f) })),
        };
    }
    return { kind: "single", part: located };
}

// Several sources given together: every part of one split GGUF, or safetensors shards with or without
// their index.
async function planList(wasm, located, options) {
    const unnamed = located.filter((p) => p.name === undefined).length;
    if (unnamed) {
        throw badSource(
            `open(): ${unnamed} of the ${located.length} sources have no file name: give each as a File, a URL, ` +
                "a path or a {name, source} record, so that the parts of the model can be told apart",
        );
    }
    const names = new Set();
    for (const p of located) {
        if (names.has(p.name)) throw badSplit(`the file ${p.name} was given twice`);
        names.add(p.name);
    }
    const indexes = located.filter((p) => p.name.endsWith(INDEX_SUFFIX));
    const rest = located.filter((p) => !p.name.endsWith(INDEX_SUFFIX));
    if (indexes.length > 1) throw badSplit(`several indexes: ${indexes.map((p) => p.name).join(", ")}`);
    if (indexes.length === 1) {
        const byName = new Map(rest.map((p) => [p.name, p]));
        let bytes;
        try {
            bytes = await readWhole(indexes[0].input, options);
        } catch (e) {
            throw inFile(e, indexes[0].name);
        }
        return {
            kind: "shards",
            index: { name: indexes[0].name, bytes },
            parts: (files) => {
                const missing = files.filter((f) => !byName.has(f));
                if (missing.length) throw badSplit(`${indexes[0].name} names shards not given: ${missing.join(", ")}`);
                const unused = rest.filter((p) => !files.includes(p.name));
                if (unused.length) {
                    throw badSplit(`${indexes[0].name} does not name ${unused.map((p) => p.name).join(", ")}`);
                }
                return files.map((f) => byName.get(f));
            },
        };
    }
    if (rest.every((p) => p.name.endsWith(".safetensors"))) {
        return {
            kind: "shards",
            index: null,
            parts: [...rest].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
        };
    }
    const splits = rest.map((p) => ({ part: p, split: wasm.parseSplitName(p.name) }));
    const notSplit = splits.filter((s) => !s.split).map((s) => s.part.name);
    if (notSplit.length) {
        throw badSource(
            `open(): several files that are not the parts of one model (${notSplit.join(", ")}): give every part ` +
                "of a split GGUF (name-00001-of-0000N.gguf), or safetensors shards with or without their index",
        );
    }
    const { prefix, count } = splits[0].split;
    if (splits.some((s) => s.split.prefix !== prefix || s.split.count !== count)) {
        throw badSplit("the files are parts of different split models");
    }
    const byPart = new Map(splits.map((s) => [s.split.part, s.part]));
    const parts = [];
    const missing = [];
    for (let i = 1; i <= count; ++i) {
        if (byPart.has(i)) parts.push(byPart.get(i));
        else missing.push(wasm.splitPartName(prefix, i, count));
    }
    if (missing.length) throw badSplit(`missing parts of the split model: ${missing.join(", ")}`);
    return { kind: "split", parts };
}

// Progress of several parts as one: bytes loaded summed, total known once every part's size is.
function progressOf(n, onProgress) {
    if (!onProgress) return () => undefined;
    const loaded = new Array(n).fill(0);
    const totals = new Array(n).fill(undefined);
    return (i) =>
        ({ loaded: l, total }) => {
            loaded[i] = l;
            totals[i] = total;
            const sum = loaded.reduce((a, b) => a + b, 0);
            onProgress({
                loaded: sum,
                total: totals.includes(undefined) ? undefined : totals.reduce((a, b) => a + b, 0),
            });
        };
}

// Opens every part and parses its header, all at once, into {source, handle} (handle: the core's Model of
// that file). When one fails, the others still finish (a header is small) and the failure of the first part
// in file order is reported, as the CLI, which reads them in order, would report it.
async function openAll(wasm, parts, options) {
    const progress = progressOf(parts.length, options.onProgress);
    const outcomes = await Promise.allSettled(
        parts.map(async (part, i) => {
            const source = await makeSource(part.input, options).catch((e) => {
                throw inFile(e, part.name);
            });
            let parser = null;
            try {
                const partOptions = { ...options, onProgress: progress(i) };
                parser = await parseHeader(wasm, source, partOptions, formatHint(part.name));
                return { source, handle: parser.takeModel() };
            } catch (e) {
                await source.close();
                throw inFile(e, part.name);
            } finally {
                parser?.delete();
            }
        }),
    );
    const failed = outcomes.find((o) => o.status === "rejected");
    if (failed) {
        await closeAll(outcomes.filter((o) => o.status === "fulfilled").map((o) => o.value));
        throw failed.reason;
    }
    return outcomes.map((o) => o.value);
}

async function closeAll(opened) {
    for (const o of opened) {
        if (!o.handle.isDeleted()) o.handle.delete();
    }
    await Promise.all(opened.map((o) => o.source.close()));
}

// An index for shards given without one: each tensor in the shard that holds it, shards in name order.
// The JSON is written by hand: a JavaScript object would move integer-like tensor names to the front.
function indexFromShards(opened, parts) {
    const entries = [];
    opened.forEach(({ handle }, i) => {
        for (const t of JSON.parse(handle.infoJson()).tensors) {
            entries.push(`${JSON.stringify(t.name)}:${JSON.stringify(parts[i].name)}`);
        }
    });
    return new TextEncoder().encode(`{"weight_map":{${entries.join(",")}}}`);
}

// Merges the opened parts (in file order) into one Model, or throws the core's verdict.
function combine(wasm, kind, opened, parts, options, index) {
    const merger = new wasm.Parts();
    try {
        if (kind === "shards") {
            const files = setIndex(merger, index.bytes, index.name);
            if (files.length !== parts.length || files.some((f, i) => f !== parts[i].name)) {
                throw inFile(badSplit(`weight_map: the shards are ${files.join(", ")}`), index.name);
            }
        }
        opened.forEach(({ source, handle }, i) => {
            merger.add(handle, parts[i].name, source.size ?? -1);
            handle.delete();
        });
        const status = kind === "split" ? merger.combineGguf() : merger.combineSafetensors();
        if (status.code !== 0) {
            // Name the file the error is in, as the CLI does: a part, else the index.
            const failed = merger.failedPart();
            const file = failed >= 0 ? parts[failed].name : kind === "shards" ? index.name : undefined;
            throw file === undefined ? statusError(status) : inFile(statusError(status), file);
        }
        return makeModel(
            wasm,
            merger.takeModel(),
            opened.map((o) => o.source),
            options,
        );
    } finally {
        merger.delete();
    }
}

/** Opens `input` (one source, or several: see index.d.ts) as one model. */
export async function openModel(wasm, input, options) {
    const p = await plan(wasm, input, options);
    if (p.kind === "single") {
        const { name, input: single } = p.part;
        const source = await makeSource(single, options);
        let parser = null;
        try {
            parser = await parseHeader(wasm, source, options, formatHint(name));
            return makeModel(wasm, parser.takeModel(), [source], options);
        } catch (e) {
            await source.close();
            throw e;
        } finally {
            parser?.delete();
        }
    }
    let parts = p.parts;
    let index = p.index;
    if (p.kind === "shards" && index) {
        // The index says which files, in which order.
        const probe = new wasm.Parts();
        try {
            parts = p.parts(setIndex(probe, index.bytes, index.name));
        } finally {
            probe.delete();
        }
    }
    const opened = await openAll(wasm, parts, options);
    try {
        if (p.kind === "shards" && !index) {
            // Shards without their index: made from the shards; one holding no tensor is left out (an index
            // could not name it).
            const keep = opened.map((o, i) => i).filter((i) => opened[i].handle.tensorCount() > 0);
            for (const [i, o] of opened.entries()) {
                if (!keep.includes(i)) await closeAll([o]);
            }
            const kept = keep.map((i) => opened[i]);
            parts = keep.map((i) => parts[i]);
            index = { name: "the shards", bytes: indexFromShards(kept, parts) };
            return combine(wasm, p.kind, kept, parts, options, index);
        }
        return combine(wasm, p.kind, opened, parts, options, index);
    } catch (e) {
        await closeAll(opened);
        throw e;
    }
}
