// SPDX-License-Identifier: MIT
// A parsed model over its source: the header is parsed by pushing the file's first bytes into the core's
// HeaderParser; tensors are read by pushing exactly their bytes into the core's BlockStream, which writes the
// values straight into an array JavaScript owns.
import { WeightstreamError, statusError, throwIfAborted } from "./errors.js";
import { readInfo } from "./info.js";
import { Metrics } from "./metrics.js";
import { ModelView } from "./model_view.js";
import { Slots } from "./sources.js";
import { pump } from "./pump.js";
import { modelTokenizer } from "./tokenizer.js";
import { dtypesOf, wasmFailure } from "./wasm.js";

const OK = 0;
const NEED_MORE_DATA = 1;

// Values decoded per call into wasm: bounds the module's memory whatever the chunk or tensor size.
const MAX_VALUES_PER_FEED = 1 << 20;
// stream() over a remote source reads neighbouring tensors (at most this many bytes apart: GGUF's alignment
// padding) in one request of up to STREAM_GROUP_BYTES: one request per tensor costs a round trip each.
const STREAM_GROUP_BYTES = 16 << 20;
const STREAM_GROUP_GAP = 4096;
// An N-D slice over a remote source reads the wanted blocks of neighbouring rows in one request when at most
// this many bytes lie between them; a local source reads each row's blocks alone.
const SLICE_REMOTE_GAP = 4096;
// Decoders that keep their buffers (one piece's bytes and values: up to ~5 MB) from one chunk to the next; the
// others trim them after each chunk. Reads awaiting their next chunk at once (hundreds, under Promise.all)
// would otherwise each hold a piece's worth of wasm memory, which never shrinks: 600 of them reached the
// 2 GB limit. Feeding is synchronous, so at most one trimmed decoder holds buffers at any time.
const WARM_DECODERS = 4;
let warmDecoders = 0;
// stats() calls under way at once; the others wait their turn. A StatsJob's own state (a run of floats and a
// histogram's grid, the accumulator's: about 640 KiB) and a step's input (up to 4 MiB: JsStatsJob::kStepBytes)
// live until its tensor ends, so only a queue bounds them.
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
 * Feeds the first bytes of `source` to a new core Parser until the header is complete, and returns that
 * parser (the caller deletes it). `formatHint` ("gguf", "safetensors" or "") comes from the file's name, as
 * the CLI takes it from the path: it only picks which parser explains bytes that announce neither format.
 *
 * The reads are the core's (HeaderReads, include/weightstream/header_reads.h), the CLI's too: each is decided
 * once the read before it has been fed, so the same file costs the same requests in both. A local source reads
 * at least a chunk at a time (reading ahead costs no download there).
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
    const reads = new wasm.HeaderReads(source.local ? chunkSize : 0);
    try {
        // The parser is made after the first read, when an HTTP source knows the file size: the size lets the
        // core check every tensor range against the file.
        const first = [];
        for (let range = reads.first(); ; range = reads.next(parser, source.size ?? -1)) {
            let got = 0;
            let done = false;
            // Returning from the loop ends the read: bytes past the header are not downloaded.
            for await (const chunk of source.read(range.offset, range.length, { signal, chunkSize, retain: true })) {
                got += chunk.length;
                if (!parser) {
                    first.push(chunk);
                    continue;
                }
                if (feed(chunk)) {
                    done = true;
                    break;
                }
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
        }
        if (status.code !== OK) throw statusError(status);
        const result = parser;
        parser = null;
        return result;
    } finally {
        reads.delete();
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

// The array type of as: "native" per dtype: the stored integer or float type, bits for BF16 (and for F16 where
// the runtime has no Float16Array); C64 as interleaved (real, imaginary) float32 pairs.
const NATIVE_TYPES = {
    F32: Float32Array,
    F64: Float64Array,
    C64: Float32Array,
    I8: Int8Array,
    I16: Int16Array,
    I32: Int32Array,
    I64: BigInt64Array,
    U8: Uint8Array,
    BOOL: Uint8Array,
    U16: Uint16Array,
    U32: Uint32Array,
    U64: BigUint64Array,
    BF16: Uint16Array,
};

function nativeType(tensor) {
    if (tensor.dtype === "F16") return globalThis.Float16Array ?? Uint16Array;
    const type = NATIVE_TYPES[tensor.dtype];
    if (!type) {
        throw new WeightstreamError(
            "unsupported",
            `tensor "${tensor.name}" is ${tensor.dtype}: no typed array holds it exactly; read it with ` +
                '{as: "f32"} (decoded) or {as: "raw"} (its bytes)',
            { offset: tensor.offset },
        );
    }
    return type;
}

// A view of `array`'s memory as ArrayType (same byte offset): how bits are written into a Float16Array.
function viewAs(ArrayType, array) {
    if (array instanceof ArrayType) return array;
    return new ArrayType(array.buffer, array.byteOffset, array.byteLength / ArrayType.BYTES_PER_ELEMENT);
}

// The caller's `into`, checked against what a read writes: `types` are the array types it may be, `length` the
// elements the read needs.
function checkInto(into, types, length, tensor) {
    if (!types.some((T) => into instanceof T)) {
        const got = ArrayBuffer.isView(into) ? into.constructor.name : typeof into;
        throw new TypeError(
            `into: tensor "${tensor.name}" reads into a ${types.map((T) => T.name).join(" or ")}, got a ${got}`,
        );
    }
    if (into.length < length) {
        throw new RangeError(
            `into: tensor "${tensor.name}" needs ${length} elements, the ${into.constructor.name} has ${into.length}`,
        );
    }
}

// Reverses the bytes of every element of size `size` in place (a big-endian GGUF's integers).
function swapBytes(bytes, size) {
    for (let i = 0; i + size <= bytes.length; i += size) {
        for (let a = i, b = i + size - 1; a < b; ++a, --b) {
            const x = bytes[a];
            bytes[a] = bytes[b];
            bytes[b] = x;
        }
    }
}

function withShape(array, shape) {
    array.shape = shape;
    return array;
}

function checkSlice(slice, tensor) {
    const rank = tensor.shape.length;
    if (!Array.isArray(slice) || slice.length > rank) {
        throw new TypeError(`slice: expected up to ${rank} ranges [start, end] (outermost dimension first)`);
    }
    const begins = [];
    const ends = [];
    slice.forEach((range, k) => {
        const size = Number(tensor.shape[k]);
        if (range === null) {
            begins.push(0);
            ends.push(size);
            return;
        }
        if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isSafeInteger(n) && n >= 0)) {
            throw new TypeError(`slice[${k}]: expected [start, end], two non-negative integers, or null (all)`);
        }
        if (range[0] > range[1] || range[1] > size) {
            throw new RangeError(`slice[${k}]: [${range[0]}, ${range[1]}) is not inside dimension ${k} (size ${size})`);
        }
        begins.push(range[0]);
        ends.push(range[1]);
    });
    return { begins, ends };
}

/**
 * Hands out the bytes of one forward read over [start, ...) as the reads of the tensors inside it, in order:
 * take(offset, nbytes) yields the chunks of [offset, offset + nbytes), skipping what lies before offset.
 */
class SharedRead {
    #iterator;
    #pos;
    #pending = null; // the part of the last chunk not handed out yet

    constructor(iterable, start) {
        this.#iterator = iterable[Symbol.asyncIterator]();
        this.#pos = start;
    }

    async *take(offset, nbytes) {
        const end = offset + nbytes;
        while (this.#pos < end) {
            let chunk = this.#pending;
            this.#pending = null;
            if (!chunk) {
                const next = await this.#iterator.next();
                if (next.done) return;
                chunk = next.value;
            }
            if (this.#pos < offset) {
                const skip = Math.min(chunk.length, offset - this.#pos);
                this.#pos += skip;
                chunk = chunk.subarray(skip);
                if (chunk.length === 0) continue;
            }
            if (chunk.length > end - this.#pos) {
                this.#pending = chunk.subarray(end - this.#pos);
                chunk = chunk.subarray(0, end - this.#pos);
            }
            this.#pos += chunk.length;
            yield chunk;
        }
    }

    close() {
        return this.#iterator.return?.();
    }
}

// Frees a core object; a trapped module cannot free, and is discarded anyway.
function freeHandle(handle) {
    try {
        handle.delete();
    } catch {
        // nothing to do
    }
}

// read()'s transform options, before anything is read.
function checkTransform(tensor, as, slice, transform, heads) {
    if (typeof transform !== "string") throw new TypeError("transform: expected a transform's name or null");
    if (as !== "f32") throw new TypeError('transform: reads values as the converter writes them: {as: "f32"} only');
    if (slice !== undefined) throw new TypeError("transform: applies to rows ({rows}), not to a slice");
    if (transform.startsWith("permute")) {
        if (!Number.isSafeInteger(heads) || heads < 1)
            throw new TypeError(`heads: expected a positive integer, got ${heads}`);
        if (tensor.shape.length > 2) throw new TypeError(`transform: ${transform} applies to 1-D and 2-D tensors`);
    }
}

function checkRows(rows) {
    if (!Array.isArray(rows) || rows.length !== 2 || !rows.every((n) => Number.isSafeInteger(n) && n >= 0)) {
        throw new TypeError("rows: expected [start, count], two non-negative integers");
    }
    return rows;
}

/**
 * @internal What the jobs' callers (quantize.js, compare.js, convert.js, edit.js) need of a Model: model[MODEL_INTERNALS]() ->
 * {handle (the core's model), files (how many files the model has: a job's sources), readChunks(file, offset, size,
 * signal) (the bytes [offset, offset + size) of file `file` as they arrive; fewer when the file ends first; each
 * chunk valid only until the next is asked for: the pump copies it into the job first)}.
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

    /**
     * Statistics of one tensor (or some of its rows): the object `weightstream stats --json` prints for it. The
     * core's StatsJob computes them, run by the jobs' pump (pump.js) as the CLI's driver runs it.
     */
    async stats(name, options = {}) {
        this.#checkOpen();
        const i = this.#byName.get(name);
        if (i === undefined) throw new WeightstreamError("no_such_tensor", `no tensor named "${name}"`);
        const { rows, bins = 32, signal, onProgress } = options;
        if (!Number.isSafeInteger(bins) || bins < 1 || bins > 4096)
            throw new TypeError(`bins: expected an integer from 1 to 4096, got ${bins}`);
        if (rows !== undefined) checkRows(rows);
        throwIfAborted(signal);
        const tensor = this.tensors[i];
        const release = await statsSlots.acquire();
        let job;
        let result;
        try {
            throwIfAborted(signal);
            this.#checkOpen();
            const window = rows !== undefined;
            job = new this.#wasm.StatsJob(this.#handle, i, window, window ? rows[0] : 0, window ? rows[1] : 0, bins);
            const status = job.status();
            if (status.code !== OK) {
                // A type without a decoder is read()'s error; big-endian data of a type with no defined layout the
                // core's words.
                const problem = job.problem();
                if (!problem) throw statusError(status, `tensor "${tensor.name}" rows`);
                this.#decodable(tensor);
                throw new WeightstreamError("unsupported", `tensor "${tensor.name}": ${problem}`, {
                    offset: tensor.offset,
                });
            }
            const total = job.totalWork();
            let loaded = 0;
            // Progress as the bytes arrive (a step is 4 MiB: over a slow server, a while); a step's work is its bytes.
            const onBytes = (n) => {
                loaded += n;
                onProgress?.({ loaded, total });
            };
            const onStep = (step, ms) => this.#metrics.decoded(step.work, ms);
            const read = (file, offset, size, signal) => this.#fileChunks(file, offset, size, signal);
            const context = () => `tensor "${tensor.name}"`;
            // The job writes no output: the pump yields nothing.
            for await (const _ of pump(job, read, { signal, context, onStep, onBytes }));
            result = job.stats();
        } catch (e) {
            throw wasmFailure(e);
        } finally {
            release();
            if (job) freeHandle(job);
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

    /** The model's tokenizer, from its GGUF keys (tokenizer.ggml.*): llama.cpp's ids. See index.d.ts. */
    tokenizer() {
        this.#checkOpen();
        try {
            return modelTokenizer(this.#wasm, this.#handle);
        } catch (e) {
            throw wasmFailure(e);
        }
    }

    async *stream(options = {}) {
        this.#checkOpen();
        // File by file (in info.files order), each in offset order: one forward pass over every source.
        const order = this.tensors.map((_, i) => i);
        const fileOf = this.#fileOf;
        const start = (i) => Number(this.tensors[i].offset);
        const end = (i) => start(i) + Number(this.tensors[i].nbytes);
        order.sort((a, b) => fileOf[a] - fileOf[b] || start(a) - start(b) || a - b);
        const total = this.tensors.reduce((sum, t) => sum + Number(t.nbytes), 0);
        const { as, into, signal } = options;
        let done = 0;
        for (let g = 0; g < order.length;) {
            // A group: the tensors one request reads (a remote source), or one tensor.
            let last = g + 1;
            if (!this.#sources[fileOf[order[g]]].local) {
                while (
                    last < order.length &&
                    fileOf[order[last]] === fileOf[order[g]] &&
                    start(order[last]) >= end(order[last - 1]) &&
                    start(order[last]) - end(order[last - 1]) <= STREAM_GROUP_GAP &&
                    end(order[last]) - start(order[g]) <= STREAM_GROUP_BYTES
                ) {
                    ++last;
                }
            }
            const shared =
                last - g > 1
                    ? new SharedRead(
                          this.#chunks(order[g], start(order[g]), end(order[last - 1]) - start(order[g]), signal),
                          start(order[g]),
                      )
                    : null;
            try {
                for (; g < last; ++g) {
                    const i = order[g];
                    const onProgress =
                        options.onProgress && ((p) => options.onProgress({ loaded: done + p.loaded, total }));
                    const chunks = shared && ((offset, nbytes) => shared.take(Number(offset), Number(nbytes)));
                    const data = await this.#read(i, { as, into, signal, onProgress }, chunks);
                    done += Number(this.tensors[i].nbytes);
                    yield { tensor: this.tensors[i], data };
                }
            } finally {
                await shared?.close();
            }
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
            files: this.#sources.length,
            readChunks: (file, offset, size, signal) => this.#fileChunks(file, offset, size, signal),
        };
    }

    // The byte range and element count of tensor `index`, or of rows [start, start + count) of it.
    #window(index, rows) {
        const tensor = this.tensors[index];
        if (rows === undefined) {
            const shape = tensor.shape.map(Number);
            return { offset: tensor.offset, nbytes: tensor.nbytes, elements: tensor.n_elements, shape };
        }
        const [start, count] = checkRows(rows);
        const w = this.#handle.rowWindow(index, start, count);
        if (w.status.code !== OK) throw statusError(w.status, `tensor "${tensor.name}" rows`);
        return {
            offset: w.offset,
            nbytes: w.nbytes,
            elements: w.nElements,
            shape: [count, Number(tensor.shape.at(-1) ?? 1)],
        };
    }

    #chunks(index, offset, nbytes, signal) {
        return this.#sources[this.#fileOf[index]].read(offset, Number(nbytes), {
            signal,
            chunkSize: this.#options.chunkSize,
        });
    }

    async *#fileChunks(file, offset, size, signal) {
        for await (const chunk of this.#sources[file].read(offset, size, {
            signal,
            chunkSize: this.#options.chunkSize,
            transient: true,
        })) {
            this.#checkOpen();
            yield chunk;
        }
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

    // Decodes (mode "f32", "f16": values; "bytes": the stored bytes) [offset, offset + nbytes) of tensor `index`,
    // `elements` values, into `target` (a Float32Array, a Uint16Array of binary16 bits, or a Uint8Array) from
    // element `at` on. chunksOf(offset, nbytes) gives the bytes; report(loaded) tells the progress.
    async #decodeInto(index, mode, offset, nbytes, elements, target, at, chunksOf, report) {
        const tensor = this.tensors[index];
        if (mode === "bytes") {
            let filled = 0;
            for await (const chunk of chunksOf(offset, nbytes)) {
                this.#checkOpen();
                target.set(chunk, at + filled);
                filled += chunk.length;
                report(filled);
            }
            if (filled < nbytes) throw truncated(Number(offset) + filled, `tensor "${tensor.name}" data`);
            return;
        }
        const dtype = this.#decodable(tensor);
        const feedBytes = this.#feedBytes(dtype);
        const decoder = new this.#wasm.Decoder(dtype.id, elements, mode === "f16", this.info.endian === "big");
        const warm = warmth();
        try {
            let status = decoder.status();
            if (status.code !== OK) throw statusError(status, `tensor "${tensor.name}"`);
            let written = at;
            let loaded = 0;
            for await (const chunk of chunksOf(offset, nbytes)) {
                this.#checkOpen();
                for (const piece of pieces(chunk, feedBytes)) {
                    const t0 = performance.now();
                    status = decoder.feed(piece, target, written);
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
    }

    // read({transform}): `values`, rows [start, start + count) of tensor `index` decoded, made the values
    // convert_hf_to_gguf.py writes for them, in place, by the core (hf_convert_rows()). A 1-D tensor (a q/k bias)
    // is one row, permuted element by element.
    #convert(index, values, rows, transform, heads) {
        const tensor = this.tensors[index];
        const flat = tensor.shape.length <= 1;
        const status = this.#wasm.hfConvertRows(
            transform,
            dtypesOf(this.#wasm).get(tensor.dtype).id,
            heads ?? 0,
            flat ? values.length : Number(tensor.rows),
            flat || rows === undefined ? 0 : rows[0],
            flat ? 1 : Number(tensor.shape.at(-1)),
            values,
        );
        if (status.code === OK) return;
        if (status.what === "transform")
            throw new TypeError(
                `transform: expected a transform compare() names ("permute_q", "plus_one", ...), got ${transform}`,
            );
        throw statusError(status, `tensor "${tensor.name}" ${transform}`);
    }

    // chunksOf(offset, nbytes): where the bytes come from (stream() hands out parts of one shared read).
    async #read(index, { as = "f32", rows, slice, into, signal, onProgress, transform = null, heads }, chunksOf) {
        if (as !== "f32" && as !== "f16" && as !== "f16-bits" && as !== "raw" && as !== "native")
            throw new TypeError(`as: expected "f32", "f16", "f16-bits", "raw" or "native", got ${as}`);
        if (rows !== undefined && slice !== undefined) throw new TypeError("rows and slice: give one of them");
        if (transform !== null) checkTransform(this.tensors[index], as, slice, transform, heads);
        throwIfAborted(signal);
        const tensor = this.tensors[index];
        const source = this.#sources[this.#fileOf[index]];
        chunksOf ??= (offset, nbytes) => this.#chunks(index, offset, Number(nbytes), signal);
        // "f16-bits": the values of "f16", always as their bits in a Uint16Array.
        const half = as === "f16" || as === "f16-bits";
        const Half = as === "f16-bits" ? undefined : globalThis.Float16Array;
        // What is written (mode), into which array type (Target: the decoder's or the byte copy's view of the
        // result) and what the caller gets (Result; `into` may be any of Accepted).
        let mode;
        let Result;
        let Accepted;
        let perElement = 1; // array elements per tensor element
        if (as === "raw") {
            mode = "bytes";
            Result = Uint8Array;
        } else if (as === "native") {
            Result = nativeType(tensor);
            mode = "bytes";
            if (tensor.dtype === "C64") perElement = 2;
        } else if (half && tensor.dtype === "F16") {
            mode = "bytes";
            Result = Half ?? Uint16Array;
            Accepted = Half ? [Half, Uint16Array] : [Uint16Array];
        } else {
            mode = half ? "f16" : as;
            Result = as === "f32" ? Float32Array : (Half ?? Uint16Array);
            if (half) Accepted = Half ? [Half, Uint16Array] : [Uint16Array];
            perElement = this.#decodable(tensor).floatsPerElement;
        }
        Accepted ??= [Result];
        const Target = mode === "bytes" ? Uint8Array : mode === "f32" ? Float32Array : Uint16Array;
        // Bytes per element of the result, for "bytes" (a copy of the stored bytes); 1 for decoded values.
        const unit = mode === "bytes" ? Result.BYTES_PER_ELEMENT : 1;
        const output = (length) => {
            if (into === undefined) return allocate(Result, length, tensor);
            checkInto(into, Accepted, length, tensor);
            return into.subarray(0, length);
        };
        // A big-endian GGUF's stored values, copied as they are, are turned to this runtime's (little-endian) order.
        const swap = mode === "bytes" && as !== "raw" && this.info.endian === "big" && unit > 1;

        if (slice !== undefined) {
            if (as === "raw") throw new TypeError('slice: reads values; {as: "raw"} reads rows ({rows})');
            const { begins, ends } = checkSlice(slice, tensor);
            const plan = this.#handle.slicePlan(index, begins, ends, source.local ? 0 : SLICE_REMOTE_GAP);
            if (plan.status.code !== OK) throw statusError(plan.status, `tensor "${tensor.name}" slice`);
            const out = output(plan.nElements * perElement);
            const outTarget = viewAs(Target, out);
            const block = dtypesOf(this.#wasm).get(tensor.dtype)?.blockElements ?? 1;
            const blockBytes = dtypesOf(this.#wasm).get(tensor.dtype)?.blockBytes ?? 1;
            const take = plan.take * perElement;
            const skip = plan.skip * perElement;
            const stride = plan.stride * perElement;
            const runs = plan.runs;
            const total = runs.reduce((sum, _, k) => (k % 4 === 1 ? sum + runs[k] : sum), 0);
            let loaded = 0;
            for (let k = 0; k < runs.length; k += 4) {
                const [offset, nbytes, firstRow, count] = runs.subarray(k, k + 4);
                const elements = (nbytes / blockBytes) * block;
                const report = (n) => onProgress?.({ loaded: loaded + n, total });
                if (take === stride) {
                    // Whole rows: straight into place.
                    const at = firstRow * take * (mode === "bytes" ? unit : 1);
                    await this.#decodeInto(index, mode, offset, nbytes, elements, outTarget, at, chunksOf, report);
                } else {
                    const temp = new Target(elements * perElement * (mode === "bytes" ? unit : 1));
                    await this.#decodeInto(index, mode, offset, nbytes, elements, temp, 0, chunksOf, report);
                    const values = viewAs(Result === Half ? Uint16Array : Result, temp);
                    const dst = viewAs(Result === Half ? Uint16Array : Result, out);
                    const from = mode === "bytes" ? values : temp;
                    const to = mode === "bytes" ? dst : outTarget;
                    for (let j = 0; j < count; ++j) {
                        const s0 = j * stride + skip;
                        to.set(from.subarray(s0, s0 + take), (firstRow + j) * take);
                    }
                }
                loaded += nbytes;
            }
            if (swap) swapBytes(viewAs(Uint8Array, out), unit);
            return withShape(out, perElement === 2 ? [...plan.shape, 2] : plan.shape);
        }

        const { offset, nbytes, elements, shape } = this.#window(index, rows);
        const report = (loaded) => onProgress?.({ loaded, total: Number(nbytes) });
        const length = mode === "bytes" ? Number(nbytes) / unit : elements * perElement;
        const out = output(length);
        await this.#decodeInto(index, mode, offset, nbytes, elements, viewAs(Target, out), 0, chunksOf, report);
        if (swap) swapBytes(viewAs(Uint8Array, out), unit);
        if (transform !== null) this.#convert(index, out, rows, transform, heads);
        return withShape(out, as === "raw" ? [out.length] : perElement === 2 ? [...shape, 2] : shape);
    }
}
