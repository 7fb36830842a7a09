// SPDX-License-Identifier: MIT
// A parsed model over its source: the header is parsed by pushing the file's first bytes into the core's
// HeaderParser; tensors are read by pushing exactly their bytes into the core's BlockStream, which writes the
// values straight into an array JavaScript owns.
import { WeightstreamError, statusError, throwIfAborted } from "./errors.js";
import { readInfo } from "./info.js";
import { Metrics } from "./metrics.js";
import { ModelView } from "./model_view.js";
import { Slots } from "./sources.js";
import { dtypesOf, wasmFailure } from "./wasm.js";

const OK = 0;
const NEED_MORE_DATA = 1;

// The first read of a header, and the least read-ahead of every later one: a small header takes one read, and
// one request of this size over HTTP.
export const HEADER_READ_AHEAD = 64 * 1024;
// Values decoded per call into wasm: bounds the module's memory whatever the chunk or tensor size.
const MAX_VALUES_PER_FEED = 1 << 20;
// Decoders that keep their buffers (one piece's bytes and values: up to ~5 MB) from one chunk to the next; the
// others trim them after each chunk. Reads awaiting their next chunk at once (hundreds, under Promise.all)
// would otherwise each hold a piece's worth of wasm memory, which never shrinks: 600 of them reached the
// 2 GB limit. Feeding is synchronous, so at most one trimmed decoder holds buffers at any time.
const WARM_DECODERS = 4;
let warmDecoders = 0;
// stats() calls under way at once; the others wait their turn. A StatsDecoder's own state (a run of floats
// and the histogram's grid: 384 KiB) lives until its tensor ends, so only a queue bounds it.
const statsSlots = new Slots(8);

/** Claims a warm slot for one read's decoder: {keep(), release()}; keep() is true while it holds one. */
function warmth() {
    let held = false;
    return {
        keep() {
            if (!held && warmDecoders < WARM_DECODERS) {
                held = true;
                ++warmDecoders;
            }
            return held;
        },
        release() {
            if (held) --warmDecoders;
            held = false;
        },
    };
}

function* pieces(chunk, max) {
    if (chunk.length <= max) {
        yield chunk;
        return;
    }
    for (let i = 0; i < chunk.length; i += max) yield chunk.subarray(i, Math.min(chunk.length, i + max));
}

function truncated(offset, what) {
    return new WeightstreamError("truncated", `truncated: ${what} (byte ${offset})`, { offset, what });
}

/**
 * One read of the header, sent as soon as it is made (an HTTP request goes out before the read before it is
 * consumed). cancel() aborts it, the caller's signal aborts it too.
 */
class HeaderRead {
    constructor(source, offset, length, { signal, chunkSize }) {
        this.offset = offset;
        this.end = offset + length;
        this.controller = new AbortController();
        this.parent = signal;
        this.onAbort = () => this.controller.abort(signal.reason);
        if (signal?.aborted) this.controller.abort(signal.reason);
        else signal?.addEventListener("abort", this.onAbort, { once: true });
        const options = { signal: this.controller.signal, chunkSize, retain: true };
        this.iterator = source.read(offset, length, options)[Symbol.asyncIterator]();
        this.first = this.iterator.next();
        this.first.catch(() => {}); // a read cancelled unconsumed fails unobserved
    }

    async *chunks() {
        try {
            for (let step = await this.first; !step.done; step = await this.iterator.next()) yield step.value;
        } finally {
            this.parent?.removeEventListener("abort", this.onAbort);
            await this.iterator.return();
        }
    }

    cancel() {
        this.parent?.removeEventListener("abort", this.onAbort);
        this.controller.abort(new WeightstreamError("closed", "the header read was not needed"));
        this.iterator.return().catch(() => {});
    }
}

/**
 * Feeds the first bytes of `source` to a new core Parser until the header is complete, and returns that
 * parser (the caller deletes it). `formatHint` ("gguf", "safetensors" or "") comes from the file's name, as
 * the CLI takes it from the path: it only picks which parser explains bytes that announce neither format.
 *
 * Each read asks for what the parser expects the rest of the header to take (core: bytes_expected(), a
 * string array extrapolated from its items so far, at least bytes_needed()) plus 1/32 of that, plus a
 * read-ahead that doubles with every read, up to a tenth of the bytes read so far (at least 64 KiB). On a
 * source that reads any range at once (HTTP with Range), the next read is sent as soon as the parser's lower
 * bound passes the end of the read under way, before that read is consumed. So a small header costs one
 * request of 64 KiB, a 4 MB vocabulary without tensors two (the core guesses that such a file is all
 * header), and reading past the header stays within 64 KiB + 10 % of it.
 */
export async function parseHeader(wasm, source, options, formatHint = "") {
    const { signal, onProgress, chunkSize } = options;
    let parser = null;
    let status = null;
    let fed = 0;
    const feed = (chunk) => {
        for (const piece of pieces(chunk, chunkSize)) {
            status = parser.feed(piece);
            fed += piece.length;
            if (status.code !== NEED_MORE_DATA) return true;
        }
        return false;
    };
    // A local source reads ahead a chunk: fewer, larger reads, and nothing is downloaded in vain.
    const minAhead = source.local ? Math.max(HEADER_READ_AHEAD, chunkSize) : HEADER_READ_AHEAD;
    let readAhead = minAhead;
    const issue = (from) => {
        const expected = parser.bytesExpected();
        let end = fed + Math.max(parser.bytesNeeded(), expected + Math.floor(expected / 32)) + readAhead;
        if (source.size !== undefined) end = Math.min(end, source.size);
        end = Math.min(Math.max(end, from + 1), Number.MAX_SAFE_INTEGER);
        readAhead = Math.min(readAhead * 2, Math.max(minAhead, Math.floor(end / 10)));
        return new HeaderRead(source, from, end - from, { signal, chunkSize });
    };
    let reading = new HeaderRead(source, 0, minAhead, { signal, chunkSize });
    let next = null;
    try {
        // The parser is made after the first read, when an HTTP source knows the file size: the size lets the
        // core check every tensor range against the file.
        const first = [];
        for (;;) {
            let got = 0;
            let done = false;
            for await (const chunk of reading.chunks()) {
                got += chunk.length;
                if (!parser) {
                    first.push(chunk);
                    continue;
                }
                if (feed(chunk)) {
                    done = true;
                    break;
                }
                // Bytes past this read are surely needed: ask for them now.
                if (!next && source.ranged && fed + parser.bytesNeeded() > reading.end) next = issue(reading.end);
            }
            if (!parser) {
                parser = new wasm.Parser(source.size ?? -1, formatHint);
                for (const chunk of first) {
                    if (feed(chunk)) {
                        done = true;
                        break;
                    }
                }
                first.length = 0;
            }
            onProgress?.({ loaded: fed, total: source.size });
            if (done) break;
            if (got === 0) throw truncated(fed, "header");
            // A read that ended early (the file is shorter) leaves a gap before the one sent ahead.
            if (next && next.offset !== fed) {
                next.cancel();
                next = null;
            }
            reading = next ?? issue(fed);
            next = null;
        }
        if (status.code !== OK) throw statusError(status);
        const result = parser;
        parser = null;
        return result;
    } finally {
        next?.cancel();
        parser?.delete();
    }
}

/**
 * The Model of a parsed header: `handle` is the core's model (it becomes the Model's), `sources` the files
 * it reads (one, or one per file of a split or sharded model, in the order of info.files).
 */
export function makeModel(wasm, handle, sources, options) {
    let info, layerData;
    try {
        info = readInfo(handle);
        layerData = handle.layerGroups();
        // compare() pairs and diffs models, and quantize() plans, from the core's copy of the metadata.
        if (!options.keepMetadata) handle.releaseMetadata();
    } catch (e) {
        handle.delete();
        throw e;
    }
    const sizes = sources.map((s) => s.size);
    info.file_size = sizes.every((n) => n !== undefined) ? sizes.reduce((a, b) => a + b, 0) : null;
    return new Model(wasm, sources, handle, info, layerData, options);
}

function allocate(ArrayType, length, tensor) {
    if (typeof length === "bigint" || length > Number.MAX_SAFE_INTEGER) length = Infinity;
    try {
        return new ArrayType(length);
    } catch (e) {
        if (!(e instanceof RangeError)) throw e;
        throw new WeightstreamError(
            "too_large",
            `tensor "${tensor.name}": ${length} values do not fit in one ${ArrayType.name}; read it by row ` +
                "windows ({rows: [start, count]})",
            { offset: tensor.offset, cause: e },
        );
    }
}

// binary16 values: for "f16" the runtime's Float16Array when it has one, else (and always for "f16-bits")
// their bits in a Uint16Array.
function halves(buffer, length, as) {
    const Float16 = as === "f16" ? globalThis.Float16Array : undefined;
    return Float16 ? new Float16(buffer, 0, length) : new Uint16Array(buffer, 0, length);
}

// Frees a core object; a trapped module cannot free, and is discarded anyway.
function freeHandle(handle) {
    try {
        handle.delete();
    } catch {
        // nothing to do
    }
}

function checkRows(rows) {
    if (!Array.isArray(rows) || rows.length !== 2 || !rows.every((n) => Number.isSafeInteger(n) && n >= 0)) {
        throw new TypeError("rows: expected [start, count], two non-negative integers");
    }
    return rows;
}

/**
 * @internal What quantize.js and compare.js need of a Model: model[MODEL_INTERNALS]() -> {handle (the core's
 * model), chunks(index, signal) (the tensor's bytes as they arrive), readBytes(index, offset, nbytes, signal)
 * (the bytes [offset, offset + nbytes) of the file holding tensor `index`, in one array)}.
 */
export const MODEL_INTERNALS = Symbol("weightstream.modelInternals");

export class Model extends ModelView {
    #wasm;
    #sources;
    #fileOf; // tensor index -> index into #sources
    #handle;
    #options;
    #byName;
    #metrics;
    #closed = false;

    constructor(wasm, sources, handle, info, layerData, options) {
        super(info, layerData);
        this.#wasm = wasm;
        this.#sources = sources;
        const files = new Map((info.files ?? []).map((name, i) => [name, i]));
        this.#fileOf = info.tensors.map((t) => (t.file === undefined ? 0 : files.get(t.file)));
        this.#handle = handle;
        this.#options = options;
        this.#metrics = options.metrics ?? new Metrics();
        this.#byName = new Map(info.tensors.map((t, i) => [t.name, i]));
    }

    get closed() {
        return this.#closed;
    }

    /** What the model cost so far (open() included), a snapshot: see index.d.ts. */
    get metrics() {
        return this.#metrics.snapshot();
    }

    /** The tensor record of `name` (as in `tensors`), or undefined. */
    tensor(name) {
        const i = this.#byName.get(name);
        return i === undefined ? undefined : this.tensors[i];
    }

    #checkOpen() {
        if (this.#closed) throw new WeightstreamError("closed", "the model was closed");
    }

    async read(name, options = {}) {
        this.#checkOpen();
        const i = this.#byName.get(name);
        if (i === undefined) throw new WeightstreamError("no_such_tensor", `no tensor named "${name}"`);
        return this.#read(i, options);
    }

    /** Statistics of one tensor (or some of its rows): the object `weightstream stats --json` prints for it. */
    async stats(name, options = {}) {
        this.#checkOpen();
        const i = this.#byName.get(name);
        if (i === undefined) throw new WeightstreamError("no_such_tensor", `no tensor named "${name}"`);
        const { rows, bins = 32, signal, onProgress } = options;
        if (!Number.isSafeInteger(bins) || bins < 1 || bins > 4096)
            throw new TypeError(`bins: expected an integer from 1 to 4096, got ${bins}`);
        throwIfAborted(signal);
        const tensor = this.tensors[i];
        const { offset, nbytes, elements } = this.#window(i, rows);
        const dtype = this.#decodable(tensor);
        const release = await statsSlots.acquire();
        let decoder;
        try {
            throwIfAborted(signal);
            this.#checkOpen();
            decoder = new this.#wasm.StatsDecoder(dtype.id, elements, this.info.endian === "big");
        } catch (e) {
            release();
            throw e;
        }
        const warm = warmth();
        let result;
        try {
            let status = decoder.status();
            if (status.code !== OK) throw statusError(status, `tensor "${tensor.name}"`);
            let loaded = 0;
            for await (const chunk of this.#chunks(i, offset, nbytes, signal)) {
                this.#checkOpen();
                for (const piece of pieces(chunk, this.#feedBytes(dtype))) {
                    const t0 = performance.now();
                    status = decoder.feed(piece);
                    this.#metrics.decoded(piece.length, performance.now() - t0);
                    if (status.code !== OK) throw this.#decodeError(tensor, offset, status);
                }
                if (!warm.keep()) decoder.trim();
                loaded += chunk.length;
                onProgress?.({ loaded, total: Number(nbytes) });
            }
            result = decoder.finish(bins);
            if (result.status.code !== OK) throw this.#decodeError(tensor, offset, result.status);
        } catch (e) {
            throw wasmFailure(e);
        } finally {
            warm.release();
            release();
            freeHandle(decoder);
        }
        // As the CLI's JSON: statistics of no finite value are null.
        const number = (x) => (result.finite > 0 ? x : null);
        const entry = {
            name: tensor.name,
            dtype: tensor.dtype,
            n_elements: tensor.n_elements,
            min: number(result.min),
            max: number(result.max),
            mean: number(result.mean),
            std: number(result.std),
            nan: result.nan,
            pos_inf: result.posInf,
            neg_inf: result.negInf,
            zeros: result.zeros,
            histogram: {
                min: number(result.min),
                max: number(result.max),
                counts: Array.from(result.histogram),
                edges: Array.from(result.edges),
            },
        };
        if (rows !== undefined) entry.rows = [...rows];
        return entry;
    }

    async *stream(options = {}) {
        this.#checkOpen();
        // File by file (in info.files order), each in offset order: one forward pass over every source.
        const order = this.tensors.map((_, i) => i);
        const fileOf = this.#fileOf;
        order.sort(
            (a, b) => fileOf[a] - fileOf[b] || Number(this.tensors[a].offset) - Number(this.tensors[b].offset) || a - b,
        );
        const total = this.tensors.reduce((sum, t) => sum + Number(t.nbytes), 0);
        let done = 0;
        for (const i of order) {
            const onProgress = options.onProgress && ((p) => options.onProgress({ loaded: done + p.loaded, total }));
            const data = await this.#read(i, { as: options.as, signal: options.signal, onProgress });
            done += Number(this.tensors[i].nbytes);
            yield { tensor: this.tensors[i], data };
        }
    }

    close() {
        if (this.#closed) return Promise.resolve();
        this.#closed = true;
        this.#handle.delete();
        this.#handle = null;
        return Promise.all(this.#sources.map((s) => s.close())).then(() => {});
    }

    /** @internal */
    [MODEL_INTERNALS]() {
        this.#checkOpen();
        return {
            handle: this.#handle,
            chunks: (index, signal) =>
                this.#chunks(index, this.tensors[index].offset, this.tensors[index].nbytes, signal),
            readBytes: async (index, offset, nbytes, signal) => {
                const out = new Uint8Array(nbytes);
                let filled = 0;
                for await (const chunk of this.#chunks(index, offset, nbytes, signal)) {
                    this.#checkOpen();
                    if (filled + chunk.length > nbytes) break;
                    out.set(chunk, filled);
                    filled += chunk.length;
                }
                if (filled < nbytes) throw truncated(offset + filled, `tensor "${this.tensors[index].name}" data`);
                return out;
            },
        };
    }

    // The byte range and element count of tensor `index`, or of rows [start, start + count) of it.
    #window(index, rows) {
        const tensor = this.tensors[index];
        if (rows === undefined) return { offset: tensor.offset, nbytes: tensor.nbytes, elements: tensor.n_elements };
        const [start, count] = checkRows(rows);
        const w = this.#handle.rowWindow(index, start, count);
        if (w.status.code !== OK) throw statusError(w.status, `tensor "${tensor.name}" rows`);
        return { offset: w.offset, nbytes: w.nbytes, elements: w.nElements };
    }

    #chunks(index, offset, nbytes, signal) {
        return this.#sources[this.#fileOf[index]].read(offset, Number(nbytes), {
            signal,
            chunkSize: this.#options.chunkSize,
        });
    }

    #decodable(tensor) {
        const dtype = dtypesOf(this.#wasm).get(tensor.dtype);
        if (!dtype?.decodable) {
            throw new WeightstreamError(
                "unsupported",
                `tensor "${tensor.name}": no decoder for dtype ${tensor.dtype}; read its bytes with {as: "raw"}`,
                { offset: tensor.offset },
            );
        }
        return dtype;
    }

    // Bytes per call into wasm: whole blocks, at most MAX_VALUES_PER_FEED values.
    #feedBytes(dtype) {
        const blockValues = dtype.blockElements * dtype.floatsPerElement;
        return Math.max(1, Math.floor(MAX_VALUES_PER_FEED / blockValues)) * dtype.blockBytes;
    }

    #decodeError(tensor, offset, status) {
        const error = statusError({ ...status, offset: offset + status.offset }, `tensor "${tensor.name}"`);
        return status.name === "truncated" ? truncated(error.offset, `tensor "${tensor.name}" data`) : error;
    }

    async #read(index, { as = "f32", rows, signal, onProgress }) {
        if (as !== "f32" && as !== "f16" && as !== "f16-bits" && as !== "raw")
            throw new TypeError(`as: expected "f32", "f16", "f16-bits" or "raw", got ${as}`);
        const half = as === "f16" || as === "f16-bits";
        throwIfAborted(signal);
        const tensor = this.tensors[index];
        const { offset, nbytes, elements } = this.#window(index, rows);
        const report = (loaded) => onProgress?.({ loaded, total: Number(nbytes) });
        const chunks = () => this.#chunks(index, offset, nbytes, signal);

        if (as === "raw" || (half && tensor.dtype === "F16")) {
            const out = allocate(Uint8Array, nbytes, tensor);
            let filled = 0;
            for await (const chunk of chunks()) {
                this.#checkOpen();
                out.set(chunk, filled);
                filled += chunk.length;
                report(filled);
            }
            if (filled < out.length) throw truncated(offset + filled, `tensor "${tensor.name}" data`);
            return as === "raw" ? out : halves(out.buffer, out.length / 2, as);
        }

        const dtype = this.#decodable(tensor);
        const values = allocate(as === "f32" ? Float32Array : Uint16Array, elements * dtype.floatsPerElement, tensor);
        const feedBytes = this.#feedBytes(dtype);
        const decoder = new this.#wasm.Decoder(dtype.id, elements, half, this.info.endian === "big");
        const warm = warmth();
        try {
            let status = decoder.status();
            if (status.code !== OK) throw statusError(status, `tensor "${tensor.name}"`);
            let written = 0;
            let loaded = 0;
            for await (const chunk of chunks()) {
                this.#checkOpen();
                for (const piece of pieces(chunk, feedBytes)) {
                    const t0 = performance.now();
                    status = decoder.feed(piece, values, written);
                    this.#metrics.decoded(piece.length, performance.now() - t0);
                    if (status.code !== OK) throw this.#decodeError(tensor, offset, status);
                    written += decoder.written();
                }
                if (!warm.keep()) decoder.trim();
                loaded += chunk.length;
                report(loaded);
            }
            status = decoder.finish();
            if (status.code !== OK) throw this.#decodeError(tensor, offset, status);
        } catch (e) {
            throw wasmFailure(e);
        } finally {
            warm.release();
            freeHandle(decoder);
        }
        return as === "f32" ? values : halves(values.buffer, values.length, as);
    }
}
