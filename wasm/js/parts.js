// SPDX-License-Identifier: MIT
// Models stored in several files, opened as one: llama.cpp's split GGUF (`name-00001-of-00003.gguf`) and
// Hugging Face's sharded safetensors (`model.safetensors.index.json` naming the shard of every tensor). Which
// files make up the model is the core's plan (include/weightstream/model_plan.h), the same as the CLI's: any part of a split
// or the index found at a URL or path brings in its siblings next to it, and several sources given together
// (Files from a file picker, paths, URLs, {name, source} records) are sorted into the parts of one model by
// their names. This file only reads: the index, and each part's header once; the core merges the parts, so
// tensors carry `file` as in `info --json`.
import { WeightstreamError, statusError } from "./errors.js";
import { Metrics } from "./metrics.js";
import { makeModel, parseHeader } from "./model.js";
import { isNode, makeSource } from "./sources.js";

const OK = 0;
const URL_SCHEME = /^[a-z][a-z\d+.-]*:/i;

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

// An error of the plan (about the names of the sources, not their bytes), in the core's words. bad_source, as
// the package's other errors about what was given, has no byte offset.
function planError(plan, status) {
    const message = plan.message();
    if (!message) return statusError(status);
    return new WeightstreamError(status.name, message, {
        offset: status.name === "bad_source" ? undefined : status.offset,
    });
}

/** An error of one file of a model stored in several: says which. */
function inFile(error, name) {
    if (!(error instanceof WeightstreamError) || error.file !== undefined) return error;
    error.file = name;
    error.message = `${name}: ${error.message}`;
    return error;
}

// The bytes of an index, refused past the core's cap without reading further.
async function readIndex(wasm, plan, input, options) {
    const source = await makeSource(input, options);
    try {
        const chunks = [];
        let size = 0;
        for await (const chunk of source.read(0, wasm.maxIndexBytes + 1, options)) {
            chunks.push(chunk);
            size += chunk.length;
            const status = plan.checkIndexSize(size);
            if (status.code !== OK) throw planError(plan, status);
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

// Reads the index the plan wants (the source `i` of `given`) and gives it to the plan, which then lists the
// shards.
async function readPlannedIndex(wasm, plan, given, i, options) {
    const { name, input } = given[i];
    let bytes;
    try {
        bytes = await readIndex(wasm, plan, input, options);
    } catch (e) {
        throw inFile(e, name);
    }
    const status = plan.setIndex(bytes);
    // The index's own errors are in that file; the plan's (shards not given, ...) name the files themselves.
    if (status.code !== OK) throw plan.message() ? planError(plan, status) : inFile(statusError(status), name);
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

// Opens one part and parses its header: {source, handle} (handle: the core's Model of that file).
async function openPart(wasm, part, options, onProgress) {
    const source = await makeSource(part.input, options).catch((e) => {
        throw inFile(e, part.name);
    });
    let parser = null;
    try {
        parser = await parseHeader(wasm, source, { ...options, onProgress }, part.format);
        return { source, handle: parser.takeModel() };
    } catch (e) {
        await source.close();
        throw inFile(e, part.name);
    } finally {
        parser?.delete();
    }
}

// Opens every part (in file order, options.concurrency at a time) into {source, handle}. After a failure no
// further part is started; those under way finish (a header is small), and the failure of the first part in
// file order is reported, as the CLI, which reads them in order, would report it.
async function openAll(wasm, parts, options) {
    const progress = progressOf(parts.length, options.onProgress);
    const opened = [];
    const failures = [];
    let next = 0;
    const run = async () => {
        while (next < parts.length && failures.length === 0) {
            const i = next++;
            try {
                opened[i] = await openPart(wasm, parts[i], options, progress(i));
            } catch (e) {
                failures.push({ i, e });
            }
        }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency, parts.length) }, run));
    if (failures.length) {
        await closeAll(opened.filter(Boolean));
        throw failures.reduce((a, b) => (b.i < a.i ? b : a)).e;
    }
    return opened;
}

async function closeAll(opened) {
    for (const o of opened) {
        if (!o.handle.isDeleted()) o.handle.delete();
    }
    await Promise.all(opened.map((o) => o.source.close()));
}

// Merges the opened parts (in file order) into one Model, or throws the core's verdict naming the file it is
// in, as the CLI does: a part, else the index.
async function combine(wasm, plan, opened, parts, options, indexName) {
    for (const { source, handle } of opened) {
        plan.add(handle, source.size ?? -1);
        handle.delete();
    }
    const status = plan.merge();
    if (status.code !== OK) {
        const failed = plan.failedPart();
        const file = failed >= 0 ? parts[failed].name : indexName;
        const error = planError(plan, status);
        throw file === undefined ? error : inFile(error, file);
    }
    // Shards given without an index: one holding no tensor is not among the model's files.
    const kept = plan.kept();
    const model = makeModel(
        wasm,
        plan.takeModel(),
        kept.map((i) => opened[i].source),
        options,
    );
    await Promise.all(opened.filter((o, i) => !kept.includes(i)).map((o) => o.source.close()));
    return model;
}

async function openSingle(wasm, { input, format }, options) {
    const source = await makeSource(input, options);
    let parser = null;
    try {
        parser = await parseHeader(wasm, source, options, format);
        return makeModel(wasm, parser.takeModel(), [source], options);
    } catch (e) {
        await source.close();
        throw e;
    } finally {
        parser?.delete();
    }
}

/** Opens `input` (one source, or several: see index.d.ts) as one model. */
export async function openModel(wasm, input, opts) {
    if (Array.isArray(input) && input.length === 0) throw new TypeError("open(): an empty list of sources");
    // What this model costs, from its index and headers on (the sources of all its files count there).
    const options = { ...opts, metrics: new Metrics() };
    const given = (Array.isArray(input) ? input : [input]).map(locate);
    const plan = new wasm.Plan(
        options.maxSplitParts ?? wasm.defaultMaxSplitParts,
        options.split,
        options.modelFilesOnly,
    );
    try {
        const status = plan.plan(given.map((g) => ({ name: g.name, siblings: g.sibling !== undefined })));
        if (status.code !== OK) {
            const failed = plan.failedSource();
            throw failed >= 0 ? inFile(planError(plan, status), given[failed].name) : planError(plan, status);
        }
        const indexSource = plan.indexSource();
        if (indexSource >= 0) await readPlannedIndex(wasm, plan, given, indexSource, options);
        const planned = plan.parts();
        // Files not given are next to the one source that was: a split's part, or the index.
        const anchor = given[planned.find((p) => p.source >= 0)?.source ?? indexSource];
        const parts = planned.map((p) => ({
            name: p.name,
            format: p.format,
            input: p.source >= 0 ? given[p.source].input : anchor.sibling(p.name),
        }));
        if (plan.kind() === "single") return await openSingle(wasm, parts[0], options);
        const opened = await openAll(wasm, parts, options);
        try {
            return await combine(wasm, plan, opened, parts, options, given[indexSource]?.name);
        } catch (e) {
            await closeAll(opened);
            throw e;
        }
    } finally {
        plan.delete();
    }
}
