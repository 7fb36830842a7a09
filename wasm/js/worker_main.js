// SPDX-License-Identifier: MIT
// The script weightstream/worker runs in its worker (a module Web Worker, or a Node worker_threads Worker):
// it opens models with the package and answers the requests of wasm/js/worker.js. Results go back
// transferred, never copied. Protocol (every request carries `id`; replies name it):
//   {op: "open", source, options}          -> {model: id, info}   (info packed: see worker_info.js)
//   {op: "read", model, name, options}     -> the array
//   {op: "stats", model, name, options}    -> the statistics (model.stats())
//   {op: "next", model, stream, options}   -> {done} | {done: false, name, data}   (stream: the client's id)
//   {op: "compare", a, b, options}         -> the report (compare()); rows as they are done when asked
//   {op: "close", model}                   -> null
//   {op: "edit", stream, source?, changes?, options?} -> the same, for edit()'s stream
//   {op: "quantize", stream, source?, options?} -> {done} | {done: false, data}   (the next chunk of quantize()'s
//                                             stream; the first request of a stream carries source and options)
//   {op: "convert", stream, source?, options?} -> the same, for convert()'s stream
//   {op: "quantizePlan", source, options}  -> quantizePlan()'s plan
//   {op: "quantizeFileTypes"}               -> quantizeFileTypes()'s list
//   {op: "convertPlan", source, options}   -> convertPlan()'s plan
//   {op: "tokenizer", model?, source?, options?} -> {tokenizer: id, size, description, table} (model.tokenizer() of
//                                             an open model, else tokenizer() of source; table: TokenTable's arrays)
//   {op: "tokenize", tokenizer, text, options} -> Int32Array;  {op: "detokenize", tokenizer, ids, options} -> string
//   {op: "tokenBytes", tokenizer, ids}     -> Uint8Array[]
//   {op: "disposeTokenizer", tokenizer}    -> null
//   {op: "return", stream}                 ends a stream early (no reply)
//   {op: "cancel", target}                 aborts request `target` (no reply)
// Replies: {id, type: "progress", loaded, total} | {id, type: "tensor", row, index} (compare's onTensor, when
// the request has tensorRows) | {id, type: "result", value} | {id, type: "error", error}.
import { WeightstreamError } from "./errors.js";
import {
    cacheInfo,
    clearCache,
    compare,
    convert,
    convertPlan,
    edit,
    open,
    quantize,
    quantizeFileTypes,
    quantizePlan,
    tokenizer,
} from "./index.js";
import { LAYER_DATA } from "./model_view.js";
import { packInfo } from "./worker_info.js";
import { isNode } from "./sources.js";

const REQUEST = "__weightstreamRequest";
const RESPONSE = "__weightstreamResponse";

const models = new Map(); // id -> Model
const tokenizers = new Map(); // id -> Tokenizer
const streams = new Map(); // stream id -> {model, controller, current, stop()} and {iterator} or {reader}
const controllers = new Map(); // request id -> the AbortController that cancels it

function errorRecord(e) {
    if (e?.name === "AbortError") return { kind: "abort", message: String(e.message ?? "aborted") };
    if (e instanceof WeightstreamError) {
        return {
            kind: "weightstream",
            code: e.code,
            message: String(e.message),
            offset: e.offset,
            what: e.what,
            status: e.status,
            file: e.file,
            description: e.description,
        };
    }
    if (e instanceof TypeError) return { kind: "type", message: e.message };
    return { kind: "error", message: String(e?.message ?? e) };
}

// Sources arrive as they were structured-cloned: Request and Response objects cannot be, so the client sent
// them as tagged records.
function reviveSource(source) {
    if (Array.isArray(source)) return source.map(reviveSource);
    if (source !== null && typeof source === "object") {
        if (source[REQUEST]) return new Request(source.url, { headers: source.headers });
        if (source[RESPONSE]) {
            return new Response(source.body, {
                status: source.status,
                statusText: source.statusText,
                headers: source.headers,
            });
        }
        if (Object.getPrototypeOf(source) === Object.prototype && "source" in source) {
            return { name: source.name, source: reviveSource(source.source) };
        }
    }
    return source;
}

function tokenizerOf(id) {
    const made = tokenizers.get(id);
    if (!made) throw new WeightstreamError("closed", "the tokenizer was disposed");
    return made;
}

function modelOf(id) {
    const model = models.get(id);
    if (!model) throw new WeightstreamError("closed", "the model was closed");
    return model;
}

async function next(msg, post) {
    let entry = streams.get(msg.stream);
    if (!entry) {
        const model = modelOf(msg.model);
        const controller = new AbortController();
        entry = { model: msg.model, controller, current: msg.id, iterator: null, stop: () => entry.iterator.return() };
        entry.iterator = model.stream({
            as: msg.options?.as,
            signal: controller.signal,
            onProgress: (p) => entry.wantsProgress && post({ ...p, id: entry.current, type: "progress" }),
        });
        streams.set(msg.stream, entry);
    }
    entry.current = msg.id;
    entry.wantsProgress = msg.progress;
    controllers.set(msg.id, entry.controller);
    const step = await entry.iterator.next();
    if (step.done) {
        streams.delete(msg.stream);
        return { value: { done: true } };
    }
    const { tensor, data } = step.value;
    return { value: { done: false, name: tensor.name, data, shape: data.shape }, transfer: [data.buffer] };
}

// The next chunk of a quantize(), convert() or edit() stream, transferred. start(signal, onProgress) makes the stream on
// the first request of `msg.stream`.
async function streamNext(msg, post, start) {
    let entry = streams.get(msg.stream);
    if (!entry) {
        const controller = new AbortController();
        entry = { controller, current: msg.id, reader: null, stop: () => entry.reader.cancel() };
        const onProgress = (p) => entry.wantsProgress && post({ ...p, id: entry.current, type: "progress" });
        entry.reader = start(controller.signal, onProgress).getReader();
        streams.set(msg.stream, entry);
    }
    entry.current = msg.id;
    entry.wantsProgress = msg.progress;
    controllers.set(msg.id, entry.controller);
    let step;
    try {
        step = await entry.reader.read();
    } catch (e) {
        streams.delete(msg.stream);
        throw e;
    }
    if (step.done) {
        streams.delete(msg.stream);
        return { value: { done: true } };
    }
    return { value: { done: false, data: step.value }, transfer: [step.value.buffer] };
}

function quantizeNext(msg, post) {
    return streamNext(msg, post, (signal, onProgress) => {
        const options = msg.options ?? {};
        return quantize(reviveSource(msg.source), {
            ...options,
            imatrix: options.imatrix === undefined ? undefined : reviveSource(options.imatrix),
            signal,
            onProgress,
        });
    });
}

function convertNext(msg, post) {
    return streamNext(msg, post, (signal, onProgress) =>
        convert(reviveSource(msg.source), { ...msg.options, signal, onProgress }),
    );
}

function editNext(msg, post) {
    return streamNext(msg, post, (signal) => edit(reviveSource(msg.source), msg.changes, { ...msg.options, signal }));
}

async function handle(msg, post) {
    const controller = new AbortController();
    controllers.set(msg.id, controller);
    const signal = controller.signal;
    const onProgress = msg.progress ? (p) => post({ ...p, id: msg.id, type: "progress" }) : undefined;
    switch (msg.op) {
        case "open": {
            const model = await open(reviveSource(msg.source), { ...msg.options, signal, onProgress });
            models.set(msg.id, model);
            const { info, transfer } = packInfo(model.info);
            return { value: { model: msg.id, info, layerData: model[LAYER_DATA] }, transfer };
        }
        case "read": {
            const data = await modelOf(msg.model).read(msg.name, { ...msg.options, signal, onProgress });
            // A structured clone keeps a typed array's elements, not its own properties: shape goes beside.
            return { value: { data, shape: data.shape }, transfer: [data.buffer] };
        }
        case "stats":
            return { value: await modelOf(msg.model).stats(msg.name, { ...msg.options, signal, onProgress }) };
        case "next":
            return next(msg, post);
        case "compare": {
            const onTensor = msg.tensorRows
                ? (row, index) => post({ id: msg.id, type: "tensor", row, index })
                : undefined;
            const options = { ...msg.options, signal, onProgress, onTensor };
            return { value: await compare(reviveSource(msg.a), reviveSource(msg.b), options) };
        }
        case "quantize":
            return quantizeNext(msg, post);
        case "convert":
            return convertNext(msg, post);
        case "quantizePlan": {
            const options = msg.options ?? {};
            const imatrix = options.imatrix === undefined ? undefined : reviveSource(options.imatrix);
            return { value: await quantizePlan(reviveSource(msg.source), { ...options, imatrix, signal }) };
        }
        case "convertPlan":
            return { value: await convertPlan(reviveSource(msg.source), { ...msg.options, signal }) };
        case "cacheInfo":
            return { value: await cacheInfo(msg.options) };
        case "clearCache":
            await clearCache(msg.options);
            return { value: null };
        case "quantizeFileTypes":
            return { value: await quantizeFileTypes() };
        case "edit":
            return editNext(msg, post);
        case "tokenizer": {
            const made =
                msg.model !== undefined
                    ? modelOf(msg.model).tokenizer()
                    : await tokenizer(reviveSource(msg.source), { ...msg.options, signal });
            tokenizers.set(msg.id, made);
            // Copied, not transferred: the worker's tokenizer keeps its table.
            return {
                value: { tokenizer: msg.id, size: made.size, description: made.description, table: made.tableArrays() },
            };
        }
        case "tokenize": {
            const ids = tokenizerOf(msg.tokenizer).tokenize(msg.text, msg.options);
            return { value: ids, transfer: [ids.buffer] };
        }
        case "detokenize":
            return { value: tokenizerOf(msg.tokenizer).detokenize(msg.ids, msg.options) };
        case "tokenBytes":
            return { value: tokenizerOf(msg.tokenizer).tokenBytes(msg.ids) };
        case "disposeTokenizer":
            tokenizers.get(msg.tokenizer)?.dispose();
            tokenizers.delete(msg.tokenizer);
            return { value: null };
        case "close": {
            const model = models.get(msg.model);
            models.delete(msg.model);
            for (const [id, entry] of streams) {
                if (entry.model !== msg.model) continue;
                streams.delete(id);
                entry.controller.abort();
            }
            await model?.close();
            return { value: null };
        }
        default:
            throw new TypeError(`weightstream worker: unknown request ${msg.op}`);
    }
}

function serve(post, listen) {
    listen(async (msg) => {
        if (msg.op === "cancel") {
            controllers.get(msg.target)?.abort();
            return;
        }
        if (msg.op === "return") {
            const entry = streams.get(msg.stream);
            streams.delete(msg.stream);
            entry?.controller.abort();
            entry?.stop().catch(() => {});
            return;
        }
        // Every answer about a model carries its metrics, for the WorkerModel's `metrics`.
        const metrics = () => models.get(msg.op === "open" ? msg.id : msg.model)?.metrics;
        try {
            const { value, transfer = [] } = await handle(msg, post);
            post({ id: msg.id, type: "result", value, metrics: metrics() }, transfer);
        } catch (e) {
            post({ id: msg.id, type: "error", error: errorRecord(e), metrics: metrics() });
        } finally {
            controllers.delete(msg.id);
        }
    });
}

if (isNode) {
    const name = "node:worker_threads"; // a variable: bundlers for the browser must not resolve it
    import(/* @vite-ignore */ name).then(({ parentPort }) => {
        serve(
            (msg, transfer) => parentPort.postMessage(msg, transfer),
            (fn) => parentPort.on("message", fn),
        );
    });
} else {
    serve(
        (msg, transfer) => self.postMessage(msg, transfer),
        (fn) => self.addEventListener("message", (event) => fn(event.data)),
    );
}
