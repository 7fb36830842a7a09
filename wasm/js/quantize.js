// SPDX-License-Identifier: MIT
// quantize(): llama-quantize's recipes as the core's QuantizeJob (include/weightstream/quantize_job.h) over a
// model opened as open() opens it, run by the package's one pump (pump.js); this file checks the options and
// reports. The job's plan gives the output's size and every tensor's place and type; its steps then read the
// stored bytes a row window (or a piece of a copied tensor) at a time and give the output in order. The stream
// is pulled: nothing is read before the consumer asks for bytes, and one step's bytes are held at a time.
import { configBytes, modelFolderName, splitConfig, tokenizerBytes } from "./checkpoint.js";
import { refusalError } from "./convert.js";
import { WeightstreamError, statusError, throwIfAborted } from "./errors.js";
import { MODEL_INTERNALS } from "./model.js";
import { namePattern } from "./name_pattern.js";
import { openModel } from "./parts.js";
import { generatorStream, pumpToFile, releaseJob } from "./pump.js";
import { readWhole } from "./sources.js";
import { loadWasm, wasmFailure } from "./wasm.js";

const OK = 0;
// An importance matrix is read whole (llama-quantize reads it whole too); beyond this it is not one.
const MAX_IMATRIX_BYTES = 1024 * 1024 * 1024;

function checkType(wasm, option, name) {
    if (name === undefined) return -1;
    const id = typeof name === "string" ? wasm.ggmlTypeFromName(name) : -1;
    if (id < 0) throw new TypeError(`${option}: expected a ggml type name ("q8_0", "Q4_K", "f16", ...), got ${name}`);
    return id;
}

function checkBoolean(option, value) {
    if (value !== undefined && typeof value !== "boolean")
        throw new TypeError(`${option}: expected a boolean, got ${value}`);
    return value ?? false;
}

// The overrides as the core takes them ({pattern, type}) and their matchers (name_pattern.js; the caller disposes
// them). A "NAME=TYPE" string
// is read as llama-quantize reads --tensor-type (NAME lowercased, a regular expression searched in names).
function checkOverrides(wasm, overrides) {
    if (overrides === undefined) return { list: [], regexps: [] };
    if (!Array.isArray(overrides)) throw new TypeError("overrides: expected an array");
    const list = [];
    for (const o of overrides) {
        let pattern;
        let type;
        if (typeof o === "string") {
            const parsed = wasm.parseTensorType(o);
            if (!parsed) throw new TypeError(`overrides: expected "REGEX=TYPE" with a ggml type, got ${o}`);
            ({ pattern, type } = parsed);
        } else if (
            o !== null &&
            typeof o === "object" &&
            (typeof o.pattern === "string" || o.pattern instanceof RegExp)
        ) {
            pattern = o.pattern;
            type = checkType(wasm, "overrides: type", o.type);
        } else {
            throw new TypeError('overrides: expected "REGEX=TYPE" strings or {pattern, type} objects');
        }
        list.push({ pattern, type });
    }
    // Compiled once every entry is checked, so that a TypeError leaves nothing to dispose.
    const regexps = [];
    try {
        for (const o of list) {
            const matcher = namePattern(wasm, "overrides", o.pattern);
            o.pattern = matcher.source;
            regexps.push(matcher);
        }
    } catch (e) {
        for (const m of regexps) m.dispose();
        throw e;
    }
    return { list, regexps };
}

/** quantize()'s options checked against the core's names; throws TypeError. */
function recipeOf(wasm, options) {
    if (typeof options.type !== "string") throw new TypeError("type: expected a llama-quantize file type, as Q4_K_M");
    const ftype = wasm.ftypeFromName(options.type);
    if (ftype < 0)
        throw new TypeError(
            `type: expected a llama-quantize file type (Q4_K_M, Q8_0, IQ2_XXS, ...), got ${options.type}`,
        );
    if (options.modelName !== undefined && typeof options.modelName !== "string")
        throw new TypeError(`modelName: expected the checkpoint folder's name, got ${options.modelName}`);
    checkBoolean("strictTokenizer", options.strictTokenizer);
    const { list, regexps } = checkOverrides(wasm, options.overrides);
    return {
        recipe: {
            ftype,
            pure: checkBoolean("pure", options.pure),
            leaveOutputTensor: checkBoolean("leaveOutputTensor", options.leaveOutputTensor),
            allowRequantize: checkBoolean("allowRequantize", options.allowRequantize),
            outputTensorType: checkType(wasm, "outputTensorType", options.outputTensorType),
            tokenEmbeddingType: checkType(wasm, "tokenEmbeddingType", options.tokenEmbeddingType),
            overrides: list,
        },
        regexps,
    };
}

// What quantize.imatrix.file records for an imatrix source: a path or URL as given (the CLI stores the path
// as typed), a File's or a {name, source} record's name, else "".
function imatrixName(input) {
    if (typeof input === "string") return input;
    if (input instanceof URL) return input.href;
    if (typeof File !== "undefined" && input instanceof File) return input.name;
    if (input !== null && typeof input === "object" && typeof input.name === "string" && "source" in input)
        return input.name;
    return "";
}

// The importance matrix's bytes (a source, or a {name, source} record); too_large beyond MAX_IMATRIX_BYTES.
async function readImatrix(input, options) {
    const named = input !== null && typeof input === "object" && typeof input.name === "string" && "source" in input;
    const bytes = await readWhole(named ? input.source : input, options, MAX_IMATRIX_BYTES);
    if (bytes === null)
        throw new WeightstreamError("too_large", `the importance matrix is larger than ${MAX_IMATRIX_BYTES} bytes`);
    return bytes;
}

function check(status, context) {
    if (status.code !== OK) throw statusError(status, context);
}

// The model opened and planned: {model, quantizer, planned} (the caller closes the model and deletes the
// job, also when this throws: it closes and deletes what it made before failing).
async function prepare(wasm, source, options, quantizeOptions) {
    const { recipe, regexps } = recipeOf(wasm, quantizeOptions);
    try {
        return await openAndPlan(wasm, source, options, quantizeOptions, recipe, regexps);
    } finally {
        for (const m of regexps) m.dispose(); // names are matched by plan() only
    }
}

async function openAndPlan(wasm, source, options, quantizeOptions, recipe, regexps) {
    const imatrixBytes =
        quantizeOptions.imatrix === undefined ? null : await readImatrix(quantizeOptions.imatrix, options);
    const side = splitConfig(source);
    const model = await openModel(wasm, side.model, { ...options, onProgress: undefined, keepMetadata: true });
    const quantizer = new wasm.QuantizeJob();
    try {
        if (imatrixBytes) check(quantizer.setImatrix(imatrixBytes, imatrixName(quantizeOptions.imatrix)), "imatrix");
        const { handle } = model[MODEL_INTERNALS]();
        const matcher = (i, name) => regexps[i].test(name);
        let status;
        if (model.format === "safetensors") {
            // Perhaps a Hugging Face checkpoint: its side files are read as convert() reads them, and the core
            // decides whether it is quantized through its conversion (the one pass) or as it is.
            const config = await configBytes(side, options);
            const tokenizer = config !== null ? await tokenizerBytes(side, options) : {};
            const name = quantizeOptions.modelName ?? modelFolderName(side) ?? "";
            status = quantizer.planCheckpoint(
                handle,
                recipe,
                matcher,
                config,
                tokenizer,
                name,
                quantizeOptions.strictTokenizer ?? false,
            );
            if (status.code !== OK && quantizer.refused()) throw refusalError(quantizer, status, model);
        } else {
            status = quantizer.plan(handle, recipe, matcher);
        }
        if (status.code !== OK) {
            const tensor = quantizer.failedTensor();
            throw statusError(status, tensor ? `tensor "${tensor}"` : "");
        }
        return { model, quantizer, planned: quantizer.tensors() };
    } catch (e) {
        releaseJob(quantizer);
        await model.close();
        throw e;
    }
}

/** See quantizePlan() in index.d.ts. `options` are open()'s (normalized), `quantizeOptions` the caller's. */
export async function quantizePlan(source, options, quantizeOptions) {
    throwIfAborted(quantizeOptions.signal);
    const wasm = await loadWasm();
    let prepared;
    try {
        prepared = await prepare(wasm, source, options, quantizeOptions);
    } catch (e) {
        throw wasmFailure(e);
    }
    const { model, quantizer, planned } = prepared;
    try {
        const ftype = wasm.ftypeFromName(quantizeOptions.type);
        const inputSize = planned.reduce((sum, p) => sum + Number(model.tensors[p.input].nbytes), 0);
        return {
            type: wasm.ftypeList().find((f) => f.id === ftype)?.name ?? quantizeOptions.type,
            fileSize: quantizer.fileSize(),
            bitsPerWeight: Number.isNaN(quantizer.bitsPerWeight()) ? null : quantizer.bitsPerWeight(),
            headerSize: quantizer.headerSize(),
            inputSize: planned.reduce((sum, p) => sum + p.inputBytes, 0),
            modelName: quantizer.modelName() || null,
            fallbacks: quantizer.fallbacks(),
            warnings: quantizer.warnings(),
            tensors: planned.map((p) => ({
                name: p.name,
                inName: model.tensors[p.input].name,
                shape: p.shape,
                inType: p.inType,
                type: p.type,
                quantize: p.quantize,
                wanted: p.wanted,
                fallback: p.fallback,
                requantize: p.requantize,
                imatrix: p.imatrix,
                inputBytes: p.inputBytes,
                offset: p.offset,
                nbytes: p.nbytes,
            })),
        };
    } finally {
        releaseJob(quantizer);
        await model.close();
    }
}

/** See quantizeFileTypes() in index.d.ts: the core's list (include/weightstream/quant_recipe.h ftype_list). */
export async function quantizeFileTypes() {
    return (await loadWasm()).ftypeList();
}

// The output GGUF, chunk by chunk: every chunk is a new Uint8Array the consumer owns.
async function* run(source, options, quantizeOptions) {
    const { signal, onProgress } = quantizeOptions;
    throwIfAborted(signal);
    const wasm = await loadWasm();
    let prepared;
    try {
        prepared = await prepare(wasm, source, options, quantizeOptions);
    } catch (e) {
        throw wasmFailure(e);
    }
    const { model, quantizer, planned } = prepared;
    try {
        yield* pumpToFile(
            quantizer,
            model,
            planned,
            planned.map((p) => p.name),
            { signal, onProgress },
        );
    } catch (e) {
        throw wasmFailure(e);
    } finally {
        releaseJob(quantizer);
        await model.close();
    }
}

/** See quantize() in index.d.ts. `options` are open()'s (normalized), `quantizeOptions` the caller's. */
export function quantizeStream(source, options, quantizeOptions) {
    const { signal } = quantizeOptions;
    const steps = run(source, options, quantizeOptions);
    return generatorStream(steps, signal);
}
