// SPDX-License-Identifier: MIT
// weightstream/worker: the package run in a worker, so that parsing and decoding never block the calling
// thread. The models it opens have the Model interface of index.d.ts; every array a read returns was made
// in the worker and transferred (moved, not copied) to this thread.
//   import { openInWorker } from "weightstream/worker";
//   const model = await openInWorker(url);          // a worker of its own, ended by model.close()
//   const w = new WeightstreamWorker();              // or one worker for several models
//   const report = await compareInWorker(urlA, urlB); // compare() in a worker of its own
//   const gguf = w.convert(files, { to: "gguf" });     // quantize(), convert(), edit(): streams made there
// Browsers: a module Web Worker running worker_main.js (bundlers that follow `new Worker(new URL(...))`,
// such as Vite, bundle it). Node: a worker_threads Worker.
import { WeightstreamError } from "./errors.js";
import { ModelView } from "./model_view.js";
import { TokenTable, checkDetokenizeArguments, checkTokenizeArguments } from "./tokenizer.js";
import { unpackInfo } from "./worker_info.js";

export { WeightstreamError } from "./errors.js";

const REQUEST = "__weightstreamRequest";
const RESPONSE = "__weightstreamResponse";

async function spawn() {
    if (typeof Worker === "function") {
        return new Worker(new URL("./worker_main.js", import.meta.url), { type: "module", name: "weightstream" });
    }
    const moduleName = "node:worker_threads"; // variables: bundlers for the browser must not resolve these
    const script = "./worker_main.js";
    const { Worker: NodeWorker } = await import(/* @vite-ignore */ moduleName);
    return new NodeWorker(new URL(script, import.meta.url));
}

function reviveError(record) {
    if (record.kind === "abort") return new DOMException(record.message, "AbortError");
    if (record.kind === "type") return new TypeError(record.message);
    if (record.kind === "weightstream") {
        const error = new WeightstreamError(record.code, record.message, record);
        if (record.file !== undefined) error.file = record.file;
        return error;
    }
    return new WeightstreamError("worker", record.message);
}

// What open() was given, in a form postMessage can carry; streams (and a Response's body) are transferred.
function portable(source, transfer) {
    if (Array.isArray(source)) return source.map((s) => portable(s, transfer));
    if (source instanceof URL) return source.href;
    if (typeof Request !== "undefined" && source instanceof Request) {
        if (source.method !== "GET") throw new TypeError("openInWorker(): only GET requests can be read");
        return { [REQUEST]: true, url: source.url, headers: [...source.headers] };
    }
    if (typeof Response !== "undefined" && source instanceof Response) {
        if (source.body) transfer.push(source.body);
        return {
            [RESPONSE]: true,
            body: source.body,
            status: source.status,
            statusText: source.statusText,
            headers: [...source.headers],
        };
    }
    // Node's structured clone keeps a File's bytes but not its name, which a model in several files needs.
    if (typeof File !== "undefined" && source instanceof File) return { name: source.name, source };
    if (typeof ReadableStream !== "undefined" && source instanceof ReadableStream) {
        transfer.push(source);
        return source;
    }
    if (source !== null && typeof source === "object" && Object.getPrototypeOf(source) === Object.prototype) {
        return { name: source.name, source: portable(source.source, transfer) };
    }
    return source;
}

// open()'s options split into what stays here (signal, onProgress) and what crosses to the worker.
function checkOptions(options) {
    if (options.fetch) throw new TypeError("openInWorker(): a fetch function cannot be passed to a worker");
    const { signal, onProgress, ...rest } = options;
    delete rest.fetch;
    return { signal, onProgress, rest };
}

/** A worker running the package; opens models whose work it does. */
// A worker's arrays are made there and transferred: a caller's buffer on this thread cannot be written into.
function noInto(options) {
    if (options.into !== undefined)
        throw new TypeError("into: not available on a model opened in a worker (its arrays are transferred here)");
}

export class WeightstreamWorker {
    #worker = null;
    #ready;
    #pending = new Map(); // request id -> {resolve, reject, onProgress}
    #metrics = new Map(); // model id -> the metrics its latest answer carried
    #nextId = 1;
    #failure = null;

    constructor() {
        this.#ready = spawn().then((worker) => {
            this.#worker = worker;
            const onMessage = (msg) => this.#receive(msg);
            const onFailure = (e) => this.#fail(e);
            if (typeof worker.on === "function") {
                worker.on("message", onMessage);
                worker.on("error", onFailure);
                worker.on("exit", (code) => onFailure(new Error(`the worker exited with code ${code}`)));
            } else {
                worker.addEventListener("message", (event) => onMessage(event.data));
                worker.addEventListener("error", (event) => {
                    event.preventDefault?.();
                    onFailure(event.error ?? new Error(event.message || "the worker script failed to load"));
                });
                worker.addEventListener("messageerror", () => onFailure(new Error("a message could not be read")));
            }
            return worker;
        });
        this.#ready.catch((e) => this.#fail(e));
    }

    #fail(cause) {
        if (this.#failure) return;
        this.#failure = new WeightstreamError("worker", `weightstream worker: ${cause?.message ?? cause}`, { cause });
        for (const { reject } of this.#pending.values()) reject(this.#failure);
        this.#pending.clear();
    }

    #receive(msg) {
        const request = this.#pending.get(msg.id);
        if (!request) return; // cancelled
        if (msg.type === "progress") {
            const { id, type, ...progress } = msg;
            request.onProgress?.(progress);
            return;
        }
        if (msg.type === "tensor") {
            request.onTensor?.(msg.row, msg.index);
            return;
        }
        this.#pending.delete(msg.id);
        if (msg.metrics && request.model !== undefined) this.#metrics.set(request.model, msg.metrics);
        if (msg.type === "result") request.resolve(msg.value);
        else request.reject(reviveError(msg.error));
    }

    /** @internal The metrics of model `id` as of the worker's latest answer about it. */
    metricsOf(id) {
        return this.#metrics.get(id);
    }

    /** @internal Forgets the metrics of a closed model. */
    forget(id) {
        this.#metrics.delete(id);
    }

    /** @internal A request id (also names a stream). */
    newId() {
        return this.#nextId++;
    }

    /** @internal Sends a message that gets no reply. */
    async post(message) {
        const worker = await this.#ready;
        if (!this.#failure) worker.postMessage(message);
    }

    /** @internal Sends a request; resolves with the worker's answer. */
    async call(message, { signal, onProgress, onTensor, transfer = [] } = {}) {
        const worker = await this.#ready;
        if (this.#failure) throw this.#failure;
        signal?.throwIfAborted();
        const id = message.id ?? this.newId();
        return new Promise((resolve, reject) => {
            const onAbort = () => {
                this.#pending.delete(id);
                worker.postMessage({ op: "cancel", target: id });
                reject(signal.reason);
            };
            const done = (fn) => (value) => {
                signal?.removeEventListener("abort", onAbort);
                fn(value);
            };
            // The model the request is about: its answer's metrics are that model's.
            const model = message.op === "open" ? id : message.model;
            this.#pending.set(id, { resolve: done(resolve), reject: done(reject), onProgress, onTensor, model });
            signal?.addEventListener("abort", onAbort, { once: true });
            worker.postMessage(
                { ...message, id, progress: Boolean(onProgress), tensorRows: Boolean(onTensor) },
                transfer,
            );
        });
    }

    /** Opens a model in this worker; see open() in index.d.ts (options.fetch cannot cross to a worker). */
    async open(source, options = {}) {
        const { signal, onProgress, rest } = checkOptions(options);
        const transfer = [];
        const message = { op: "open", source: portable(source, transfer), options: rest };
        const { model, info, layerData } = await this.call(message, { signal, onProgress, transfer });
        return new WorkerModel(this, model, await unpackInfo(info), layerData, false);
    }

    /** Compares two models in this worker; see compare() in index.d.ts (options.fetch cannot cross). */
    async compare(a, b, options = {}) {
        const { onTensor, ...others } = options;
        if (onTensor !== undefined && typeof onTensor !== "function")
            throw new TypeError("onTensor: expected a function");
        const { signal, onProgress, rest } = checkOptions(others);
        const transfer = [];
        const message = { op: "compare", a: portable(a, transfer), b: portable(b, transfer), options: rest };
        return this.call(message, { signal, onProgress, onTensor, transfer });
    }

    /** quantizePlan() of index.d.ts, run in this worker (the imatrix, when given, is read there). */
    async quantizePlan(source, options = {}) {
        if (options === null || typeof options !== "object") throw new TypeError("quantizePlan(): options with a type");
        const { signal, onProgress, rest } = checkOptions(options);
        const transfer = [];
        const message = { op: "quantizePlan", source: portable(source, transfer), options: rest };
        if (rest.imatrix !== undefined) rest.imatrix = portable(rest.imatrix, transfer);
        return this.call(message, { signal, onProgress, transfer });
    }

    /** convertPlan() of index.d.ts, run in this worker (its options are checked there). */
    async convertPlan(source, options) {
        if (options === null || typeof options !== "object")
            throw new TypeError('convertPlan(): options with `to` ("gguf" or "safetensors")');
        const { signal, onProgress, rest } = checkOptions(options);
        const transfer = [];
        const message = { op: "convertPlan", source: portable(source, transfer), options: rest };
        return this.call(message, { signal, onProgress, transfer });
    }

    /** tokenizer() of index.d.ts, made in this worker: a WorkerTokenizer (its tokenize() and detokenize() answer
     * asynchronously). */
    async tokenizer(source, options = {}) {
        const { signal, rest } = checkOptions(options);
        const transfer = [];
        const message = { op: "tokenizer", source: portable(source, transfer), options: rest };
        return new WorkerTokenizer(this, await this.call(message, { signal, transfer }));
    }

    /** cacheInfo() of index.d.ts: the range cache this worker's models use. */
    async cacheInfo(options = {}) {
        return this.call({ op: "cacheInfo", options });
    }

    /** clearCache() of index.d.ts, in this worker. */
    async clearCache(options = {}) {
        await this.call({ op: "clearCache", options });
    }

    /** quantizeFileTypes() of index.d.ts, answered by this worker's module. */
    async quantizeFileTypes() {
        return this.call({ op: "quantizeFileTypes" });
    }

    /**
     * quantize() of index.d.ts run in this worker: each chunk is made there and transferred. The stream pulls
     * one chunk per request, so the worker runs only as far ahead as the reader.
     */
    quantize(source, options = {}) {
        if (options === null || typeof options !== "object") throw new TypeError("quantize(): options with a type");
        const { signal, onProgress, rest } = checkOptions(options);
        const transfer = [];
        const first = { source: portable(source, transfer), options: rest };
        if (rest.imatrix !== undefined) rest.imatrix = portable(rest.imatrix, transfer);
        return this.#pulled("quantize", first, { signal, onProgress, transfer });
    }

    /**
     * convert() of index.d.ts run in this worker: each chunk is made there and transferred, one per pull. Its
     * options are checked there (a bad one errors the stream).
     */
    convert(source, options) {
        if (options === null || typeof options !== "object")
            throw new TypeError('convert(): options with `to` ("gguf" or "safetensors")');
        const { signal, onProgress, rest } = checkOptions(options);
        const transfer = [];
        const first = { source: portable(source, transfer), options: rest };
        return this.#pulled("convert", first, { signal, onProgress, transfer });
    }

    /** edit() of index.d.ts run in this worker: each chunk is made there and transferred, one per pull. */
    edit(source, changes, options = {}) {
        const { signal, rest } = checkOptions(options);
        const transfer = [];
        const first = { source: portable(source, transfer), changes, options: rest };
        return this.#pulled("edit", first, { signal, transfer });
    }

    // A stream of the worker's streaming op `op` (worker_main.js): each pull requests the next chunk, the first
    // one with `first` (what the stream is made of) and `transfer`; cancelling it ends the worker's stream.
    #pulled(op, first, { signal, onProgress, transfer }) {
        const stream = this.newId();
        let started = false;
        let done = false;
        return new ReadableStream(
            {
                pull: async (controller) => {
                    const message = started ? { op, stream } : { op, stream, ...first };
                    const step = await this.call(message, { signal, onProgress, transfer: started ? [] : transfer });
                    started = true;
                    if (!step.done) {
                        controller.enqueue(step.data);
                        return;
                    }
                    done = true;
                    controller.close();
                },
                cancel: () => {
                    if (started && !done) this.post({ op: "return", stream }).catch(() => {});
                },
            },
            { highWaterMark: 0 },
        );
    }

    /** Ends the worker: its models are gone, pending requests reject. */
    terminate() {
        this.#fail(new Error("terminated"));
        return this.#ready
            .then((worker) => worker.terminate())
            .then(
                () => undefined,
                () => undefined,
            );
    }
}

/** A model open in a worker: the Model interface of index.d.ts. */
class WorkerModel extends ModelView {
    #worker;
    #id;
    #owned;
    #byName;
    #lastMetrics;
    #closed = false;

    constructor(worker, id, info, layerData, owned) {
        super(info, layerData);
        this.#worker = worker;
        this.#id = id;
        this.#owned = owned;
        this.#byName = new Map(info.tensors.map((t) => [t.name, t]));
    }

    /** @internal */
    own() {
        this.#owned = true;
        return this;
    }

    get closed() {
        return this.#closed;
    }

    /**
     * What the model cost (see index.d.ts), as of the worker's latest answer about it: after an await of
     * open(), read(), stats() or a stream's step, it includes that call. A copy: the snapshot is not updated.
     */
    get metrics() {
        return { ...(this.#lastMetrics = this.#worker.metricsOf(this.#id) ?? this.#lastMetrics) };
    }

    tensor(name) {
        return this.#byName.get(name);
    }

    #checkOpen() {
        if (this.#closed) throw new WeightstreamError("closed", "the model was closed");
    }

    async read(name, options = {}) {
        this.#checkOpen();
        const { signal, onProgress, ...rest } = options;
        noInto(rest);
        const { data, shape } = await this.#worker.call(
            { op: "read", model: this.#id, name, options: rest },
            { signal, onProgress },
        );
        data.shape = shape;
        return data;
    }

    async stats(name, options = {}) {
        this.#checkOpen();
        const { signal, onProgress, ...rest } = options;
        return this.#worker.call({ op: "stats", model: this.#id, name, options: rest }, { signal, onProgress });
    }

    /** model.tokenizer() of index.d.ts, made in the worker: a WorkerTokenizer. */
    async tokenizer() {
        this.#checkOpen();
        return new WorkerTokenizer(this.#worker, await this.#worker.call({ op: "tokenizer", model: this.#id }));
    }

    async *stream(options = {}) {
        this.#checkOpen();
        const { signal, onProgress, ...rest } = options;
        noInto(rest);
        const stream = this.#worker.newId();
        let done = false;
        try {
            for (;;) {
                const step = await this.#worker.call(
                    { op: "next", model: this.#id, stream, options: rest },
                    { signal, onProgress },
                );
                if (step.done) {
                    done = true;
                    return;
                }
                step.data.shape = step.shape;
                yield { tensor: this.#byName.get(step.name), data: step.data };
            }
        } finally {
            if (!done) this.#worker.post({ op: "return", stream }).catch(() => {});
        }
    }

    async close() {
        if (this.#closed) return;
        this.#closed = true;
        try {
            await this.#worker.call({ op: "close", model: this.#id });
            this.#lastMetrics = this.#worker.metricsOf(this.#id) ?? this.#lastMetrics;
            this.#worker.forget(this.#id);
        } catch {
            // a failed or terminated worker holds nothing any more
        } finally {
            if (this.#owned) await this.#worker.terminate();
        }
    }
}

/**
 * A tokenizer in a worker: index.d.ts's Tokenizer, but tokenize() and detokenize() return promises. The token table
 * is here (piece() and kind() answer at once); the arguments are checked here as the Tokenizer checks them.
 */
class WorkerTokenizer {
    #worker;
    #id;
    #table;
    #disposed = false;

    constructor(worker, { tokenizer, size, description, table }) {
        this.#worker = worker;
        this.#id = tokenizer;
        this.#table = new TokenTable(table);
        this.size = size;
        this.description = description;
    }

    #checkLive() {
        if (this.#disposed) throw new WeightstreamError("closed", "the tokenizer was disposed");
    }

    async tokenize(text, options = {}) {
        this.#checkLive();
        const checked = checkTokenizeArguments(text, options);
        return this.#worker.call({ op: "tokenize", tokenizer: this.#id, text, options: checked });
    }

    async detokenize(ids, options = {}) {
        this.#checkLive();
        const checked = checkDetokenizeArguments(ids, options, this.size);
        return this.#worker.call({ op: "detokenize", tokenizer: this.#id, ids, options: checked });
    }

    async tokenBytes(ids) {
        this.#checkLive();
        checkDetokenizeArguments(ids, {}, this.size);
        return this.#worker.call({ op: "tokenBytes", tokenizer: this.#id, ids });
    }

    piece(id) {
        return this.#table.piece(id);
    }

    kind(id) {
        return this.#table.kind(id);
    }

    dispose() {
        if (this.#disposed) return;
        this.#disposed = true;
        this.#worker.post({ op: "disposeTokenizer", tokenizer: this.#id, id: this.#worker.newId() }).catch(() => {});
    }
}

/** Opens a model in a worker of its own, ended when the model is closed (or when opening fails). */
export async function openInWorker(source, options = {}) {
    const worker = new WeightstreamWorker();
    try {
        return (await worker.open(source, options)).own();
    } catch (e) {
        await worker.terminate();
        throw e;
    }
}

/** Compares two models in a worker of its own, ended when the comparison is done. */
export async function compareInWorker(a, b, options = {}) {
    const worker = new WeightstreamWorker();
    try {
        return await worker.compare(a, b, options);
    } finally {
        await worker.terminate();
    }
}
