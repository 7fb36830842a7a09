// SPDX-License-Identifier: MIT
// convert(): `weightstream convert` as the core's ConvertJob (include/weightstream/convert_job.h) over a model
// opened as open() opens it, run by the package's one pump (pump.js). GGUF <-> safetensors, and a Hugging Face
// checkpoint (with its config.json and tokenizer files, checkpoint.js) -> GGUF as convert_hf_to_gguf.py writes it. What each tensor
// becomes is the core's plan (convert_plan.h); this file checks the options, finds config.json, and moves bytes:
// the header, then every tensor copied in pieces or a window of rows at a time, so memory stays at about one step
// whatever the model's size. The stream is pulled: nothing past the header is read before the consumer asks.
import { configBytes, modelFolderName, splitConfig, tokenizerBytes } from "./checkpoint.js";
import { WeightstreamError, statusError, throwIfAborted } from "./errors.js";
import { MODEL_INTERNALS } from "./model.js";
import { openModel } from "./parts.js";
import { generatorStream, pumpToFile, releaseJob } from "./pump.js";
import { loadWasm, wasmFailure } from "./wasm.js";

const OK = 0;
const TARGETS = ["gguf", "safetensors"];

/**
 * convert()'s own options checked (TypeError): {to, dtype (a name or undefined), allowRequantize, modelName (a
 * string or undefined), strictTokenizer}. The dtype name
 * is checked against the core's table when the module is loaded (dtypeId()).
 */
export function checkConvertOptions(options) {
    if (options === null || typeof options !== "object")
        throw new TypeError('convert(): options with `to` ("gguf" or "safetensors")');
    const { to, dtype, allowRequantize, modelName, strictTokenizer } = options;
    if (!TARGETS.includes(to)) throw new TypeError(`to: expected "gguf" or "safetensors", got ${to}`);
    if (modelName !== undefined && typeof modelName !== "string")
        throw new TypeError(`modelName: expected the checkpoint folder's name, got ${modelName}`);
    if (strictTokenizer !== undefined && typeof strictTokenizer !== "boolean")
        throw new TypeError(`strictTokenizer: expected a boolean, got ${strictTokenizer}`);
    if (dtype !== undefined && typeof dtype !== "string")
        throw new TypeError(`dtype: expected a type name ("f16", "bf16", "q8_0", ...), got ${dtype}`);
    if (allowRequantize !== undefined && typeof allowRequantize !== "boolean")
        throw new TypeError(`allowRequantize: expected a boolean, got ${allowRequantize}`);
    return {
        to,
        dtype,
        allowRequantize: allowRequantize ?? false,
        modelName,
        strictTokenizer: strictTokenizer ?? false,
    };
}

// The dtype id of a name as the CLI's --dtype takes it (the core's ggml name table, any case), or -1 for none.
// Whether the core can encode as it is the plan's to say (refusalError()).
function dtypeId(wasm, name) {
    if (name === undefined) return -1;
    const id = wasm.ggmlTypeFromName(name);
    if (id < 0)
        throw new TypeError(`dtype: expected f32, f16, bf16 or a quantized ggml type (q8_0, q4_k, ...), got ${name}`);
    return id;
}

/**
 * The error of a refused conversion (job.refusal(): the ConvertJob's, or a one-pass QuantizeJob's), in the words the
 * CLI prints: a tensor's status then why, else why. A dtype the core cannot encode as (or not in the target format)
 * is a bad option, as it is the CLI's usage error.
 */
export function refusalError(job, status, model) {
    const { about, tensor, why } = job.refusal();
    if (about === "output" && status.what === "dtype") return new TypeError(`dtype: ${why}`);
    if (about === "tokenizer")
        return new WeightstreamError(status.name, `${status.what}: ${why}`, { what: status.what });
    if (about !== "tensor") return new WeightstreamError(status.name, why, { what: status.what });
    const error = statusError(status, `tensor "${model.tensors[tensor].name}"`);
    error.message += `: ${why}`;
    return error;
}

// The model opened and the job planned: {model, job, planned} (this closes and deletes what it made when it
// throws; the caller does after).
async function prepare(wasm, input, options, convert) {
    const dtype = dtypeId(wasm, convert.dtype);
    const side = splitConfig(input);
    const model = await openModel(wasm, side.model, { ...options, onProgress: undefined, keepMetadata: true });
    const job = new wasm.ConvertJob();
    try {
        // config.json is read as the CLI reads it: for a safetensors model converted to GGUF; and with it the
        // tokenizer files, and the folder's name for general.name.
        const config =
            model.format === "safetensors" && convert.to === "gguf" ? await configBytes(side, options) : null;
        const tokenizer = config !== null ? await tokenizerBytes(side, options) : {};
        const name = convert.modelName ?? modelFolderName(side) ?? "";
        const { handle } = model[MODEL_INTERNALS]();
        const status = job.plan(
            handle,
            convert.to,
            dtype,
            convert.allowRequantize,
            config,
            tokenizer,
            name,
            convert.strictTokenizer,
        );
        if (status.code !== OK) throw refusalError(job, status, model);
        return { model, job, planned: job.tensors() };
    } catch (e) {
        releaseJob(job);
        await model.close();
        throw e;
    }
}

// prepare() with the module loaded, after the signal is checked; its failures as the package reports them.
async function prepared(input, options, convert) {
    throwIfAborted(convert.signal);
    const wasm = await loadWasm();
    try {
        return await prepare(wasm, input, options, convert);
    } catch (e) {
        throw wasmFailure(e);
    }
}

// The output file, chunk by chunk: every chunk is a new Uint8Array the consumer owns.
async function* run(input, options, convert) {
    const { signal, onProgress } = convert;
    const { model, job, planned } = await prepared(input, options, convert);
    try {
        yield* pumpToFile(
            job,
            model,
            planned,
            planned.map((p) => p.name),
            { signal, onProgress },
        );
    } catch (e) {
        throw wasmFailure(e);
    } finally {
        releaseJob(job);
        await model.close();
    }
}

/**
 * See convertPlan() in index.d.ts: what convert() with the same options will write, from the same plan (the core's
 * plan_conversion()), before anything is converted. `options` and `convert` as for convertStream().
 */
export async function convertPlan(input, options, convert) {
    const { model, job, planned } = await prepared(input, options, convert);
    try {
        return {
            to: convert.to,
            fileSize: job.fileSize(),
            modelName: job.modelName() || null,
            inputSize: planned.reduce((sum, p) => sum + Number(model.tensors[p.input].nbytes), 0),
            warnings: job.warnings(),
            tensors: planned.map((p) => {
                const t = model.tensors[p.input];
                return {
                    name: p.name,
                    inName: t.name,
                    inType: t.dtype,
                    type: p.type,
                    shape: p.shape,
                    action: p.action,
                    offset: p.offset,
                    nbytes: p.nbytes,
                };
            }),
        };
    } finally {
        releaseJob(job);
        await model.close();
    }
}

/**
 * See convert() in index.d.ts. `options` are open()'s (normalized), `convert` checkConvertOptions()'s with the
 * caller's signal and onProgress.
 */
export function convertStream(input, options, convert) {
    return generatorStream(run(input, options, convert), convert.signal);
}
