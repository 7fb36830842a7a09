// SPDX-License-Identifier: MIT
// weightstream: GGUF and safetensors weights into typed arrays, from URLs (HTTP Range), Blobs/Files,
// ReadableStreams, bytes and (in Node) files, through the same C++ core as the native CLI.
import { rangeCacheFor } from "./cache.js";
import { compareModels } from "./compare.js";
import { checkConvertOptions, convertPlan as planConversion, convertStream } from "./convert.js";
import { editStream } from "./edit.js";
import { WeightstreamError, throwIfAborted } from "./errors.js";
import { openModel } from "./parts.js";
import { quantizeFileTypes, quantizePlan as planQuantization, quantizeStream } from "./quantize.js";
import { Slots } from "./sources.js";
import { tokenizerFromFiles } from "./tokenizer.js";
import { dtypesOf, loadWasm, wasmFailure } from "./wasm.js";

export { cacheInfo, clearCache } from "./cache.js";
export { WeightstreamError } from "./errors.js";
export { Tokenizer } from "./tokenizer.js";

const DEFAULTS = {
    chunkSize: 1 << 20,
    concurrency: 4,
    retries: 4,
    retryDelay: 250,
    stallTimeout: 30000,
};

function positiveInteger(name, value, fallback) {
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < 1)
        throw new TypeError(`${name}: expected a positive integer, got ${value}`);
    return value;
}

function normalize(options) {
    const fetchFn = options.fetch ?? globalThis.fetch?.bind(globalThis);
    const concurrency = positiveInteger("concurrency", options.concurrency, DEFAULTS.concurrency);
    for (const name of ["split", "modelFilesOnly"]) {
        if (options[name] !== undefined && typeof options[name] !== "boolean")
            throw new TypeError(`${name}: expected a boolean, got ${options[name]}`);
    }
    return {
        signal: options.signal,
        onProgress: options.onProgress,
        chunkSize: positiveInteger("chunkSize", options.chunkSize, DEFAULTS.chunkSize),
        concurrency,
        // One cap on requests in flight for all the files of a model.
        slots: new Slots(concurrency),
        split: options.split ?? true,
        // The range cache of URLs (cache.js), or null: off, or none in this runtime.
        cache: rangeCacheFor(options.cache),
        modelFilesOnly: options.modelFilesOnly ?? false,
        // undefined: the core's default
        maxSplitParts: positiveInteger("maxSplitParts", options.maxSplitParts, undefined),
        retries: options.retries === 0 ? 0 : positiveInteger("retries", options.retries, DEFAULTS.retries),
        retryDelay:
            options.retryDelay === 0 ? 0 : positiveInteger("retryDelay", options.retryDelay, DEFAULTS.retryDelay),
        // 0: no limit
        stallTimeout:
            options.stallTimeout === 0
                ? 0
                : positiveInteger("stallTimeout", options.stallTimeout, DEFAULTS.stallTimeout),
        fetch: fetchFn
            ? fetchFn
            : () => {
                  throw new WeightstreamError("network", "no fetch() in this runtime: pass options.fetch");
              },
    };
}

/** Opens a model: reads and parses its header (the headers of all its files) only. See index.d.ts. */
export async function open(source, options = {}) {
    const opts = normalize(options);
    throwIfAborted(opts.signal);
    const wasm = await loadWasm();
    try {
        return await openModel(wasm, source, opts);
    } catch (e) {
        throw wasmFailure(e);
    }
}

/** Compares two models tensor by tensor: the object `weightstream diff --json` prints. See index.d.ts. */
export async function compare(a, b, options = {}) {
    const { tensors, onTensor, ...rest } = options;
    const opts = normalize(rest);
    throwIfAborted(opts.signal);
    const wasm = await loadWasm();
    return compareModels(wasm, a, b, { ...opts, tensors, onTensor });
}

/** Every element type this build knows, with its block layout and whether it decodes to float32. */
export async function dtypes() {
    return [...dtypesOf(await loadWasm()).values()];
}

/**
 * Quantizes a model as llama-quantize does: a ReadableStream of the output GGUF, the bytes of
 * `weightstream quantize` for the same options. See index.d.ts.
 */
export function quantize(source, options) {
    if (options === null || typeof options !== "object") throw new TypeError("quantize(): options with a type");
    const { opts, recipe } = splitQuantizeOptions(options);
    return quantizeStream(source, opts, { ...recipe, signal: options.signal, onProgress: options.onProgress });
}

/**
 * What quantize() with the same options will write, before it starts: every tensor's type, place and size and
 * the output's size, from the core's plan (the one `weightstream quantize` follows). See index.d.ts.
 */
export async function quantizePlan(source, options) {
    if (options === null || typeof options !== "object") throw new TypeError("quantizePlan(): options with a type");
    const { opts, recipe } = splitQuantizeOptions(options);
    return planQuantization(source, opts, { ...recipe, signal: options.signal });
}

export { quantizeFileTypes };

// quantize()'s options split into open()'s (normalized) and the recipe's (with a checkpoint's: modelName,
// strictTokenizer). A checkpoint given as its folder's files brings config.json and its tokenizer along, which are
// not model files.
function splitQuantizeOptions(options) {
    const {
        type,
        imatrix,
        overrides,
        pure,
        leaveOutputTensor,
        allowRequantize,
        outputTensorType,
        tokenEmbeddingType,
        modelName,
        strictTokenizer,
        onProgress, // quantize()'s own, not open()'s
        ...openOptions
    } = options;
    return {
        opts: normalize({ ...openOptions, modelFilesOnly: openOptions.modelFilesOnly ?? true }),
        recipe: {
            type,
            imatrix,
            overrides,
            pure,
            leaveOutputTensor,
            allowRequantize,
            outputTensorType,
            tokenEmbeddingType,
            modelName,
            strictTokenizer,
        },
    };
}

/**
 * Converts a model (GGUF <-> safetensors, a Hugging Face checkpoint -> GGUF): a ReadableStream of the output file,
 * the bytes of `weightstream convert IN OUT.<to>` for the same options. See index.d.ts.
 */
export function convert(source, options) {
    const convertOptions = checkConvertOptions(options);
    const { opts } = splitConvertOptions(options);
    return convertStream(source, opts, { ...convertOptions, signal: opts.signal, onProgress: options.onProgress });
}

/**
 * What convert() with the same options will write, before anything is converted: every tensor's output name, type,
 * place and size and the output's size, from the core's plan (the one `weightstream convert` follows). See
 * index.d.ts.
 */
export async function convertPlan(source, options) {
    const convertOptions = checkConvertOptions(options);
    const { opts } = splitConvertOptions(options);
    return planConversion(source, opts, { ...convertOptions, signal: opts.signal });
}

// convert()'s options: open()'s (normalized) without convert()'s own. A checkpoint given as its folder's files
// brings its tokenizer along, which is not a model file.
function splitConvertOptions(options) {
    const { to, dtype, allowRequantize, onProgress, modelName, strictTokenizer, ...openOptions } = options;
    return { opts: normalize({ ...openOptions, modelFilesOnly: openOptions.modelFilesOnly ?? true }) };
}

/**
 * Edits a GGUF's metadata: a ReadableStream of the new file, the bytes of `weightstream edit` for the same
 * changes. See index.d.ts.
 */
export function edit(source, changes, options = {}) {
    const opts = normalize(options);
    return editStream(source, opts, changes);
}

/**
 * A tokenizer from Hugging Face files (tokenizer.json, tokenizer.model, tokenizer_config.json): Hugging Face's ids
 * for a tokenizer.json, `weightstream tokenize`'s for the same files. A model's own: model.tokenizer(). See
 * index.d.ts.
 */
export async function tokenizer(source, options = {}) {
    const opts = normalize(options);
    throwIfAborted(opts.signal);
    try {
        return await tokenizerFromFiles(source, opts);
    } catch (e) {
        throw wasmFailure(e);
    }
}
