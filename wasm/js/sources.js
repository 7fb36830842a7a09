// SPDX-License-Identifier: MIT
// Where the bytes come from. Every source has the same shape:
//   size       bytes of the file, or undefined while unknown (a stream)
//   read(offset, length, {signal, chunkSize, retain, transient})
//              an async iterator over the bytes [offset, offset + length) in order, in chunks; it ends early
//              at the end of the file. Chunks are fresh arrays or views the caller may keep; with `transient`
//              (the jobs' pump, which copies each chunk into the job before asking for the next) a chunk may be
//              overwritten by the next, so a source can read into one array.
//   close()
//   local      true for bytes, Blobs and Node files: reading ahead costs no download there
//   metrics    the model's Metrics (metrics.js): requests, bytes, retries and waits are counted there
// Random-access sources (bytes, Blob, Node file, HTTP with Range) read any range. Sequential sources (a
// ReadableStream, a Response, a server that ignores Range) only move forward: a read behind the position
// restarts the download when the source can be reopened and fails with code "not_seekable" otherwise.
// `retain` (used while parsing the header) keeps the bytes read in a sequential source, so that the tensor
// data right behind the header can still be read after the parser stopped somewhere inside that read.
import { PIECE_BYTES, cacheVersion } from "./cache.js";
import { WeightstreamError, abortReason, isAbort, throwIfAborted } from "./errors.js";
import { Metrics } from "./metrics.js";

export const isNode = typeof process === "object" && typeof process.versions?.node === "string";

export class BytesSource {
    constructor(bytes, metrics = new Metrics()) {
        this.local = true;
        this.bytes = bytes;
        this.size = bytes.length;
        this.metrics = metrics;
    }

    // Bytes in memory: no requests, and the bytes read count as fetched.
    async *read(offset, length, { signal } = {}) {
        throwIfAborted(signal);
        const end = Math.min(this.size, offset + length);
        if (offset < end) {
            this.metrics.received(end - offset);
            yield this.bytes.subarray(offset, end);
        }
    }

    close() {}
}

export class BlobSource {
    constructor(blob, metrics = new Metrics()) {
        this.local = true;
        this.blob = blob;
        this.size = blob.size;
        this.metrics = metrics;
    }

    async *read(offset, length, { signal, chunkSize }) {
        const end = Math.min(this.size, offset + length);
        for (let pos = offset; pos < end;) {
            throwIfAborted(signal);
            const n = Math.min(chunkSize, end - pos);
            this.metrics.request();
            const chunk = new Uint8Array(await this.metrics.io(this.blob.slice(pos, pos + n).arrayBuffer()));
            this.metrics.received(chunk.length);
            if (chunk.length === 0) return;
            yield chunk;
            pos += chunk.length;
        }
    }

    close() {}
}

/** A file read at offsets through a fs.promises FileHandle (never read whole). */
export class NodeFileSource {
    static async open(path, metrics) {
        const fsName = "node:fs/promises"; // a variable: bundlers for the browser must not resolve it
        const fs = await import(/* @vite-ignore */ fsName);
        let handle;
        try {
            handle = await fs.open(path, "r");
            const stat = await handle.stat();
            if (!stat.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: "EISDIR" });
            return new NodeFileSource(handle, stat.size, String(path), metrics);
        } catch (e) {
            await handle?.close();
            throw new WeightstreamError("io", `${path}: ${e.message}`, { cause: e });
        }
    }

    constructor(handle, size, path, metrics = new Metrics()) {
        this.local = true;
        this.handle = handle;
        this.size = size;
        this.path = path;
        this.closed = false;
        this.metrics = metrics;
    }

    async *read(offset, length, { signal, chunkSize, transient }) {
        const end = Math.min(this.size, offset + length);
        // Transient: one array for every chunk of this read (fresh arrays cost page faults and zeroing: 15 % of
        // the package's Q8_0 quantize of a local file here).
        let reused = null;
        for (let pos = offset; pos < end;) {
            throwIfAborted(signal);
            if (this.closed) throw closedError();
            const n = Math.min(chunkSize, end - pos);
            const chunk = transient
                ? (reused ??= new Uint8Array(Math.min(chunkSize, end - offset))).subarray(0, n)
                : new Uint8Array(n);
            let bytesRead;
            try {
                this.metrics.request();
                ({ bytesRead } = await this.metrics.io(this.handle.read(chunk, 0, n, pos)));
                this.metrics.received(bytesRead);
            } catch (e) {
                // A read that close() overtook fails on the closed handle: that is the model's closing.
                if (this.closed) throw closedError();
                throw new WeightstreamError("io", `${this.path}: ${e.message}`, { offset: pos, cause: e });
            }
            if (bytesRead === 0) return;
            yield bytesRead === n ? chunk : chunk.subarray(0, bytesRead);
            pos += bytesRead;
        }
    }

    close() {
        this.closed = true;
        return this.handle.close().catch(() => {});
    }
}

function closedError() {
    return new WeightstreamError("closed", "the model was closed");
}

// Lets timers and I/O run. A loop over chunks a stream has ready runs in promise continuations only, which
// starve the event loop: no timer (a timeout's abort()) fires until it ends.
function yieldToEventLoop() {
    if (typeof globalThis.scheduler?.yield === "function") return globalThis.scheduler.yield();
    if (typeof setImmediate === "function") return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => setTimeout(resolve, 0));
}

// How long a stream source may pull chunks without letting the event loop run (a frame).
const YIELD_INTERVAL_MS = 16;

function asBytes(value) {
    if (value instanceof Uint8Array) return value;
    if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    if (value instanceof ArrayBuffer) return new Uint8Array(value);
    throw new WeightstreamError("bad_source", `the stream gave a ${typeof value}, not bytes (Uint8Array)`);
}

/**
 * A forward-only source over a ReadableStream. `reopen()`, when given, returns a new stream of the file from
 * its first byte: reads behind the position and broken connections then restart the download. `size` is the
 * declared length (Content-Length): no read skips past it. `stallTimeout` (ms, 0: none): the longest wait for
 * the next chunk, after which the stream counts as broken (an HTTP body; a caller's stream has none).
 */
export class StreamSource {
    constructor(
        stream,
        {
            size,
            reopen,
            retries = 0,
            retryDelay = 0,
            stallTimeout = 0,
            name = "the stream",
            metrics = new Metrics(),
        } = {},
    ) {
        this.reader = stream.getReader();
        this.size = size;
        this.reopen = reopen;
        this.retries = reopen ? retries : 0;
        this.retryDelay = retryDelay;
        this.stallTimeout = stallTimeout;
        this.name = name;
        this.pos = 0; // file offset of pending[0]
        this.pending = []; // bytes pulled from the stream and not consumed yet
        this.pulledEnd = 0; // file offset just past the last byte pulled
        this.ended = false;
        this.closed = false;
        this.queue = Promise.resolve();
        this.lastYield = Date.now();
        this.metrics = metrics;
    }

    // Called before each chunk pulled: every YIELD_INTERVAL_MS, lets the event loop run, then honours an
    // abort that came meanwhile.
    async #breathe(signal) {
        if (Date.now() - this.lastYield < YIELD_INTERVAL_MS) return;
        await yieldToEventLoop();
        this.lastYield = Date.now();
        throwIfAborted(signal);
    }

    // The reader's next chunk, or a retryable network error after stallTimeout ms without one.
    #nextChunk() {
        const next = this.reader.read();
        if (!this.stallTimeout) return next;
        let timer;
        const stall = new Promise((_, reject) => {
            timer = setTimeout(() => reject(stalled(this.name, this.stallTimeout, this.pulledEnd)), this.stallTimeout);
        });
        return Promise.race([next, stall]).finally(() => clearTimeout(timer));
    }

    async #restart(signal) {
        this.reader.cancel().catch(() => {});
        const stream = await this.reopen(signal);
        this.reader = stream.getReader();
        this.pos = 0;
        this.pending = [];
        this.pulledEnd = 0;
        this.ended = false;
    }

    async #pullRaw(signal) {
        await this.#breathe(signal);
        throwIfAborted(signal);
        const { done, value } = await this.metrics.io(this.#nextChunk());
        throwIfAborted(signal);
        if (this.closed) throw closedError();
        if (done) return null;
        const bytes = asBytes(value);
        this.metrics.received(bytes.length);
        return bytes;
    }

    // The next chunk of the stream (appended to pending), or null at its end. A broken stream that can be
    // reopened is restarted and fast-forwarded to where it broke.
    async #pull(signal) {
        if (this.ended) return null;
        let failures = 0;
        for (;;) {
            try {
                const chunk = await this.#pullRaw(signal);
                if (chunk === null) {
                    this.ended = true;
                    if (this.size === undefined) this.size = this.pulledEnd;
                    return null;
                }
                if (chunk.length === 0) continue;
                this.pending.push(chunk);
                this.pulledEnd += chunk.length;
                return chunk;
            } catch (e) {
                const final = isAbort(e, signal) || (e instanceof WeightstreamError && !RETRYABLE.has(e));
                if (final || ++failures > this.retries) {
                    throw final || e instanceof WeightstreamError ? e : networkError(e, this.pulledEnd);
                }
                this.metrics.retry();
                await sleep(backoffDelay(this.retryDelay, failures), signal);
                await this.#resumeAt(this.pulledEnd, signal);
            }
        }
    }

    // Reopens the stream and discards bytes up to `offset`, keeping what was pending.
    async #resumeAt(offset, signal) {
        const { pos, pending } = this;
        await this.#restart(signal);
        let skipped = 0;
        while (skipped < offset) {
            const chunk = await this.#pullRaw(signal);
            if (chunk === null)
                throw new WeightstreamError("network", "the reopened stream ended early", { offset: skipped });
            const keep = skipped + chunk.length - offset;
            skipped += chunk.length;
            if (keep > 0) pending.push(chunk.subarray(chunk.length - keep));
        }
        this.pos = pos;
        this.pending = pending;
        this.pulledEnd = skipped;
    }

    async #dropBefore(offset, signal) {
        // Past the declared length there is nothing to reach: the read ends there, without pulling the rest.
        if (this.size !== undefined && offset > this.size) return;
        while (this.pos < offset) {
            if (this.pending.length === 0 && (await this.#pull(signal)) === null) return;
            const head = this.pending[0];
            if (this.pos + head.length <= offset) {
                this.pending.shift();
                this.pos += head.length;
            } else {
                this.pending[0] = head.subarray(offset - this.pos);
                this.pos = offset;
            }
        }
    }

    // Reads run one at a time, in call order: they share one stream reader.
    async *read(offset, length, options = {}) {
        const previous = this.queue;
        let release;
        this.queue = new Promise((resolve) => (release = resolve));
        try {
            await previous;
            yield* this.#read(offset, length, options);
        } finally {
            release();
        }
    }

    async *#read(offset, length, { signal, retain = false }) {
        if (this.closed) throw closedError();
        if (offset < this.pos) {
            if (!this.reopen) {
                throw new WeightstreamError(
                    "not_seekable",
                    `cannot go back to byte ${offset} of a stream already at byte ${this.pos}: read tensors in file ` +
                        "order (model.stream()) or open a source that can seek (Blob, file, URL)",
                    { offset },
                );
            }
            await this.#restart(signal);
        }
        await this.#dropBefore(offset, signal);
        if (this.pos < offset) return; // the file ends before offset
        let want = length;
        if (retain) {
            // Leave everything pending: a later read may start anywhere at or after `offset`.
            for (let i = 0; want > 0; ++i) {
                if (i === this.pending.length && (await this.#pull(signal)) === null) return;
                const chunk = this.pending[i];
                const part = chunk.length <= want ? chunk : chunk.subarray(0, want);
                want -= part.length;
                yield part;
            }
            return;
        }
        while (want > 0) {
            if (this.pending.length === 0 && (await this.#pull(signal)) === null) return;
            const head = this.pending[0];
            if (head.length <= want) {
                this.pending.shift();
                this.pos += head.length;
                want -= head.length;
                yield head;
            } else {
                this.pending[0] = head.subarray(want);
                this.pos += want;
                yield head.subarray(0, want);
                want = 0;
            }
        }
    }

    close() {
        this.closed = true;
        this.pending = [];
        return this.reader.cancel().catch(() => {});
    }
}

// ---- HTTP ---------------------------------------------------------------------------------------------------

function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        throwIfAborted(signal);
        const onAbort = () => {
            clearTimeout(timer);
            reject(abortReason(signal));
        };
        const timer = setTimeout(() => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
        }, ms);
        signal?.addEventListener("abort", onAbort, { once: true });
    });
}

// Resolves when `promise` settles (either way), or rejects with the signal's reason when it aborts first.
function untilSettled(promise, signal) {
    return new Promise((resolve, reject) => {
        throwIfAborted(signal);
        const onAbort = () => reject(abortReason(signal));
        signal?.addEventListener("abort", onAbort, { once: true });
        promise.then(
            () => {
                signal?.removeEventListener("abort", onAbort);
                resolve();
            },
            () => {
                signal?.removeEventListener("abort", onAbort);
                resolve();
            },
        );
    });
}

function backoffDelay(base, failures) {
    return Math.min(base * 2 ** (failures - 1), 8000);
}

// The longest wait a Retry-After header is obeyed for: a server asking for more gets its retry after this.
export const MAX_RETRY_AFTER_MS = 60000;

/** The wait a 429 or 503 asks for in Retry-After (delay-seconds or an HTTP-date), in ms, capped; else 0. */
export function retryAfterMs(response, now = Date.now()) {
    if (response.status !== 429 && response.status !== 503) return 0;
    const value = response.headers.get("retry-after")?.trim();
    if (!value) return 0;
    const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
    return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : 0;
}

function networkError(cause, offset) {
    return new WeightstreamError(
        "network",
        `network error at byte ${offset}: ${cause?.message ?? cause} (for a cross-origin URL this is also how a ` +
            "CORS failure shows: the server must allow this origin and the Range header)",
        { offset, cause },
    );
}

// Network errors of the package's own that are worth a retry (a stall), unlike its other errors.
const RETRYABLE = new WeakSet();

// Bytes whose arrival counts as progress for the stall timeout: a trickle (1 byte/s) is no progress.
export const STALL_BYTES = 16 * 1024;

function stalled(name, ms, offset) {
    const error = new WeightstreamError(
        "network",
        `${name}: no progress for ${ms} ms at byte ${offset} (fewer than ${STALL_BYTES} bytes arrived; option ` +
            "stallTimeout)",
        { offset },
    );
    RETRYABLE.add(error);
    return error;
}

/**
 * One HTTP request's own AbortSignal, for fetch, which keeps a listener on the signal it is given until the
 * request is collected: given a long-lived one, those would pile up. It aborts when `live` (the source's set
 * of requests under way, which close() aborts) is closed, when the read's signal aborts (a listener that
 * dispose() removes again: a caller may pass one signal to many reads), or when the request stalls: no
 * response, or fewer than STALL_BYTES arriving, for `stallTimeout` ms of waiting on the network (pause() stops
 * the clock while the reader holds a chunk it has not handed on yet).
 */
class Attempt {
    constructor(live, signal, stallTimeout, stallError) {
        this.controller = new AbortController();
        this.signal = this.controller.signal;
        this.live = live;
        this.parent = signal;
        this.onAbort = () => this.controller.abort(signal.reason);
        if (signal?.aborted) this.controller.abort(signal.reason);
        else signal?.addEventListener("abort", this.onAbort, { once: true });
        live.add(this);
        this.stallTimeout = stallTimeout;
        this.stallError = stallError;
        this.stall = null; // the error, once stalled
        this.timer = null;
        this.remaining = stallTimeout;
        this.deadline = 0;
        this.bytes = 0; // since the clock was last reset
        this.resume();
    }

    /** `n` bytes arrived: every STALL_BYTES of them reset the clock. */
    progress(n) {
        this.bytes += n;
        if (this.bytes < STALL_BYTES) return;
        this.bytes = 0;
        this.pause();
        this.remaining = this.stallTimeout;
        this.resume();
    }

    pause() {
        if (this.timer === null) return;
        clearTimeout(this.timer);
        this.timer = null;
        this.remaining = Math.max(0, this.deadline - Date.now());
    }

    resume() {
        if (!this.stallTimeout || this.timer !== null || this.signal.aborted) return;
        this.deadline = Date.now() + this.remaining;
        this.timer = setTimeout(() => {
            this.timer = null;
            this.stall = this.stallError();
            this.controller.abort(this.stall);
        }, this.remaining);
    }

    /** What a failure of this request is: the stall, when it stalled. */
    cause(error) {
        return this.stall ?? error;
    }

    dispose() {
        this.pause();
        this.parent?.removeEventListener("abort", this.onAbort);
        this.live.delete(this);
    }
}

/** Caps the number of requests in flight (shared by the files of one model). */
export class Slots {
    constructor(n) {
        this.free = n;
        this.waiting = [];
    }

    async acquire() {
        if (this.free > 0) {
            --this.free;
        } else {
            await new Promise((resolve) => this.waiting.push(resolve));
        }
        let released = false;
        return () => {
            if (released) return;
            released = true;
            const next = this.waiting.shift();
            if (next) next();
            else ++this.free;
        };
    }
}

function parseContentRange(value) {
    if (value === null) return null;
    let m = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(value);
    if (m) return { start: Number(m[1]), end: Number(m[2]) + 1, total: m[3] === "*" ? undefined : Number(m[3]) };
    m = /^\s*bytes\s+\*\/(\d+)\s*$/i.exec(value);
    if (m) return { unsatisfied: true, total: Number(m[1]) };
    return undefined;
}

function contentLength(response) {
    const value = response.headers.get("content-length");
    if (value === null || response.headers.get("content-encoding")) return undefined;
    const n = Number(value);
    return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

function isRetryableStatus(status) {
    return status === 408 || status === 429 || status >= 500;
}

// Whether requests to `url` may carry conditional headers. If-Range and If-Match are not CORS-safelisted: on
// a cross-origin request a browser would send a preflight the server may refuse, so there the responses'
// validators are only checked. Outside a page (Node) there is no CORS.
function mayCondition(url) {
    const origin = globalThis.location?.origin;
    if (typeof origin !== "string") return true;
    try {
        return new URL(url).origin === origin;
    } catch {
        return false;
    }
}

// A fetch of `url` that failed (a TypeError) in a page of another origin is a CORS refusal when the server
// answers a no-cors request for it (an opaque response: it is up, it only withholds
// Access-Control-Allow-Origin), else a network failure. A refusal is final: no retry can change it.
async function corsRefusal(fetch, url, failure, offset) {
    if (!(failure instanceof TypeError) || mayCondition(url)) return null;
    const probe = new AbortController();
    const timer = setTimeout(() => probe.abort(), 10_000);
    try {
        const response = await fetch(url, { mode: "no-cors", signal: probe.signal });
        if (response.type !== "opaque") return null;
    } catch {
        return null;
    } finally {
        clearTimeout(timer);
        probe.abort(); // the body is not wanted
    }
    return new WeightstreamError(
        "cors",
        `${url}: the server answered without Access-Control-Allow-Origin for ${globalThis.location.origin}; a ` +
            "cross-origin server must send Access-Control-Allow-Origin (and, when asked in a preflight, " +
            "Access-Control-Allow-Headers: Range)",
        { offset, cause: failure },
    );
}

// An ETag's opaque tag (weak comparison: W/"x" and "x" are one version).
function opaqueTag(etag) {
    return etag.startsWith("W/") ? etag.slice(2) : etag;
}

/**
 * A URL read with HTTP Range requests: each read asks for exactly its bytes. A server that answers 200 (no
 * Range support) turns the source into one streamed pass over that response, reopened only when a read goes
 * backwards. Dropped connections, stalls, 5xx, 408 and 429 are retried with exponential backoff (at least the
 * Retry-After of a 429 or 503), resuming at the last byte received. The first response pins the file (its
 * ETag, Last-Modified and size); a later response of another file is an error "source_changed". With a
 * range cache (cache.js), reads are served from the ranges it holds once one request confirmed that the file
 * is the version they came from (#revalidate), and only the gaps between them are fetched (and stored).
 */
export class HttpSource {
    constructor(
        target,
        { fetch, concurrency, retries, retryDelay, slots, stallTimeout = 0, metrics = new Metrics(), cache = null },
    ) {
        this.request = typeof Request !== "undefined" && target instanceof Request ? target : null;
        this.url = this.request ? this.request.url : String(target);
        this.fetch = fetch;
        this.slots = slots ?? new Slots(concurrency);
        this.retries = retries;
        this.retryDelay = retryDelay;
        this.stallTimeout = stallTimeout;
        this.conditional = mayCondition(this.url);
        this.knownSize = undefined;
        this.pinned = null; // {etag, lastModified, total} of the first response
        this.sequential = null;
        this.closing = new AbortController();
        this.attempts = new Set(); // requests under way (Attempt)
        this.metrics = metrics;
        this.cache = cache; // a RangeCache, or null
        this.cacheEntry = undefined; // once revalidated: the promise of {entry} (entry null: none yet), or null
        this.cacheWrites = true; // false after the store failed (a full disk): the reads go on uncached
        this.fetching = []; // the cached reads' gaps being fetched now: [{start, end, done}], done settles once stored
    }

    #attempt(signal, offset) {
        if (this.closing.signal.aborted) throw this.closing.signal.reason;
        return new Attempt(this.attempts, signal, this.stallTimeout, () =>
            stalled(this.url, this.stallTimeout, offset()),
        );
    }

    // Learnt from Content-Range; a sequential fallback learns it at the end of its stream.
    get size() {
        return this.sequential ? this.sequential.size : this.knownSize;
    }

    set size(value) {
        this.knownSize = value;
    }

    #send(range, signal) {
        const headers = new Headers(this.request?.headers);
        if (range) headers.set("Range", `bytes=${range[0]}-${range[1] - 1}`);
        if (this.pinned && this.conditional) {
            // The server itself refuses another version: If-Range answers 200 (the whole new file), If-Match 412.
            const { etag, lastModified } = this.pinned;
            const strong = etag !== null && !etag.startsWith("W/") ? etag : null;
            if (range) {
                if ((strong ?? lastModified) !== null) headers.set("If-Range", strong ?? lastModified);
            } else if (strong !== null) {
                headers.set("If-Match", strong);
            } else if (lastModified !== null) {
                headers.set("If-Unmodified-Since", lastModified);
            }
        }
        const init = { headers, signal };
        this.metrics.request();
        return this.metrics.io(this.request ? this.fetch(new Request(this.request, init)) : this.fetch(this.url, init));
    }

    #changed(offset, what) {
        return new WeightstreamError(
            "source_changed",
            `${this.url}: the file changed while it was being read (${what}); open it again`,
            { offset },
        );
    }

    // Pins the file on its first response, and checks every later one against the pin: same ETag (else, when
    // either response has none, same Last-Modified), same size (`total`: from Content-Range or Content-Length;
    // undefined when not told). Last-Modified yields to an ETag: mirrors of one file may disagree on dates.
    #checkPinned(response, total, offset) {
        const etag = response.headers.get("etag");
        const lastModified = response.headers.get("last-modified");
        const pin = this.pinned;
        if (!pin) {
            this.pinned = { etag, lastModified, total };
            return;
        }
        const tagged = pin.etag !== null && etag !== null;
        if (tagged && opaqueTag(etag) !== opaqueTag(pin.etag))
            throw this.#changed(offset, `ETag ${pin.etag}, now ${etag}`);
        if (!tagged && pin.lastModified !== null && lastModified !== null && lastModified !== pin.lastModified)
            throw this.#changed(offset, `Last-Modified ${pin.lastModified}, now ${lastModified}`);
        if (pin.total !== undefined && total !== undefined && total !== pin.total)
            throw this.#changed(offset, `${pin.total} bytes, now ${total}`);
    }

    // A plain GET of the whole file, for a server without Range support: its body (checked against the pin).
    async #openWhole(signal) {
        for (let failures = 0; ;) {
            const attempt = this.#attempt(signal, () => 0);
            let response;
            let wait = 0;
            try {
                try {
                    response = await this.#send(null, attempt.signal);
                } catch (e) {
                    const cause = attempt.cause(e);
                    if (isAbort(cause, signal)) throw cause;
                    if (this.closing.signal.aborted) throw this.closing.signal.reason;
                    const refusal = await corsRefusal(this.fetch, this.url, cause, 0);
                    if (refusal) throw refusal;
                    if (++failures > this.retries) throw RETRYABLE.has(cause) ? cause : networkError(cause, 0);
                }
                if (response) {
                    if (response.ok && response.body) {
                        try {
                            this.#checkPinned(response, contentLength(response), 0);
                        } catch (e) {
                            response.body.cancel().catch(() => {});
                            throw e;
                        }
                        return response.body;
                    }
                    response.body?.cancel().catch(() => {});
                    if (response.status === 412)
                        throw this.#changed(0, "a precondition (If-Match, If-Unmodified-Since) failed: 412");
                    if (!isRetryableStatus(response.status) || ++failures > this.retries)
                        throw this.#httpError(response, 0);
                    wait = retryAfterMs(response);
                }
            } finally {
                attempt.dispose();
            }
            this.metrics.retry();
            await sleep(Math.max(backoffDelay(this.retryDelay, failures), wait), signal);
        }
    }

    #httpError(response, offset, detail = "") {
        const text = `${this.url}: HTTP ${response.status} ${response.statusText}`.trimEnd();
        return new WeightstreamError("http", detail ? `${text}: ${detail}` : text, {
            offset,
            status: response.status,
        });
    }

    #becomeSequential(response) {
        this.sequential = new StreamSource(response.body, {
            size: this.size ?? contentLength(response),
            reopen: (signal) => this.#openWhole(signal),
            retries: this.retries,
            retryDelay: this.retryDelay,
            stallTimeout: this.stallTimeout,
            name: this.url,
            metrics: this.metrics,
        });
    }

    async *read(offset, length, options = {}) {
        if (this.cache && !this.sequential) {
            yield* this.#readCached(offset, length, options);
            return;
        }
        yield* this.#fetchRange(offset, length, options);
    }

    /**
     * Confirms once, before any cached byte is used, that the cached entry of this URL is of the file the
     * server has now: one GET of byte 0 with If-None-Match (or If-Modified-Since), answered 304 (no body) when
     * it is; a server that ignores the condition (or a cross-origin page, which sends none: see
     * mayCondition) answers 206 with one byte, whose ETag, Last-Modified and size are compared instead. The
     * answer pins the file, as the first response of a source does: later requests carry If-Range, so a file
     * replaced afterwards still fails with "source_changed", never mixing cached bytes of one version with
     * fetched bytes of another. A changed file drops the entry. {entry}, or null: no cache for this source
     * (the check failed; the normal path then has its retries).
     */
    async #revalidate() {
        const entry = await this.cache.entryOf(this.url);
        // Nothing held (every write failed, say): nothing to confirm; the first response pins the file.
        if (!entry || entry.ranges.length === 0) return { entry: null };
        const headers = new Headers(this.request?.headers);
        headers.set("Range", "bytes=0-0");
        if (this.conditional) {
            if (entry.etag !== null) headers.set("If-None-Match", entry.etag);
            else headers.set("If-Modified-Since", entry.lastModified);
        }
        const attempt = this.#attempt(undefined, () => 0);
        try {
            const init = { headers, signal: attempt.signal };
            this.metrics.request();
            const response = await this.metrics.io(
                this.request ? this.fetch(new Request(this.request, init)) : this.fetch(this.url, init),
            );
            const etag = response.headers.get("etag");
            const lastModified = response.headers.get("last-modified");
            if (response.status === 304) {
                await response.arrayBuffer().catch(() => {}); // none: a 304 has no body; this ends the request
                // A 304 naming another version (an If-Modified-Since met by an older file put in place): the
                // entry is stale; the reads go to the server, and the first response pins and keys anew.
                const stale =
                    (entry.etag !== null && etag !== null && etag !== entry.etag) ||
                    (entry.etag === null && lastModified !== null && lastModified !== entry.lastModified);
                if (stale) {
                    await this.cache.drop(this.url);
                    return { entry: null };
                }
                this.pinned = {
                    etag: etag ?? entry.etag,
                    lastModified: lastModified ?? entry.lastModified,
                    total: entry.size,
                };
                this.size = entry.size;
                return { entry };
            }
            const range = response.status === 206 ? parseContentRange(response.headers.get("content-range")) : null;
            if (!range || range.start !== 0 || range.total === undefined || !response.body) {
                response.body?.cancel().catch(() => {});
                return null;
            }
            const body = new Uint8Array(await this.metrics.io(response.arrayBuffer()));
            this.metrics.received(body.length);
            this.#checkPinned(response, range.total, 0);
            this.size = range.total;
            const version = cacheVersion(etag, lastModified, range.total);
            const same = version !== null && version.etag === entry.etag && version.lastModified === entry.lastModified;
            if (same && version.size === entry.size) return { entry };
            await this.cache.drop(this.url);
            return { entry: null };
        } catch (e) {
            if (this.closing.signal.aborted) throw this.closing.signal.reason;
            if (e instanceof WeightstreamError && e.code === "source_changed") throw e;
            return null;
        } finally {
            attempt.dispose();
        }
    }

    // The entry the bytes fetched now belong to: made on the first response that pinned a version.
    async #entryNow(state) {
        if (state.entry || !this.pinned) return state.entry;
        const { etag, lastModified, total } = this.pinned;
        const version = cacheVersion(etag, lastModified, total);
        if (version === null) return null;
        state.entry = await this.cache.entryFor(this.url, version);
        return state.entry;
    }

    // Stores bytes fetched at `start`; a failing store (QuotaExceededError) ends this source's writes.
    async #store(state, start, chunks) {
        if (!this.cacheWrites || chunks.length === 0) return;
        const entry = await this.#entryNow(state);
        if (!entry) return;
        let bytes = chunks[0];
        if (chunks.length > 1) {
            bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
            let at = 0;
            for (const c of chunks) {
                bytes.set(c, at);
                at += c.length;
            }
        } else {
            bytes = bytes.slice();
        }
        try {
            await this.cache.add(entry, start, bytes);
        } catch {
            this.cacheWrites = false;
            ++this.metrics.cacheErrors;
        }
    }

    async *#readCached(offset, length, options) {
        this.cacheEntry ??= this.#revalidate();
        const state = await this.cacheEntry;
        if (!state || this.sequential) {
            yield* this.#fetchRange(offset, length, options);
            return;
        }
        const { signal, chunkSize = 1 << 20 } = options;
        let end = this.size === undefined ? offset + length : Math.min(this.size, offset + length);
        let pos = offset;
        while (pos < end) {
            throwIfAborted(signal);
            const entry = state.entry;
            const hit = entry ? this.cache.find(entry, pos) : { next: Infinity };
            if (hit.range) {
                const to = Math.min(end, hit.range.end);
                const bytes = await this.cache.read(entry, hit.range, pos, to);
                if (bytes === null) continue; // the piece is gone: now a gap
                this.metrics.bytesFromCache += bytes.length;
                for (let at = 0; at < bytes.length; at += chunkSize) {
                    const chunk = bytes.subarray(at, Math.min(bytes.length, at + chunkSize));
                    pos += chunk.length;
                    yield chunk;
                }
                continue;
            }
            const gapEnd = Math.min(end, hit.next);
            // A gap another read of this source is fetching now (the page reads a tensor's values and its statistics
            // at once): once that fetch is stored, the bytes come from the cache; whatever it did not store (it
            // stopped early) is fetched then.
            const covering = this.fetching.find((f) => f.start <= pos && gapEnd <= f.end);
            if (covering) {
                await untilSettled(covering.done, signal);
                continue;
            }
            // A gap: fetched as one range, stored in pieces as it arrives (and what came, if the read stops).
            let settle;
            const fetching = { start: pos, end: gapEnd, done: new Promise((resolve) => (settle = resolve)) };
            this.fetching.push(fetching);
            let pieceStart = pos;
            let piece = [];
            let pieceBytes = 0;
            let writing = Promise.resolve();
            try {
                for await (const chunk of this.#fetchRange(pos, gapEnd - pos, options)) {
                    piece.push(chunk);
                    pieceBytes += chunk.length;
                    pos += chunk.length;
                    if (pieceBytes >= PIECE_BYTES) {
                        await writing; // one write at a time per read: the memory held stays one piece
                        writing = this.#store(state, pieceStart, piece);
                        pieceStart = pos;
                        piece = [];
                        pieceBytes = 0;
                    }
                    yield chunk;
                }
            } finally {
                try {
                    await writing;
                    if (!this.sequential) await this.#store(state, pieceStart, piece);
                } finally {
                    this.fetching.splice(this.fetching.indexOf(fetching), 1);
                    settle();
                }
            }
            if (this.sequential || pos < gapEnd) return; // the file ended, or the source became sequential
            if (this.size !== undefined) end = Math.min(end, this.size);
        }
    }

    async *#fetchRange(offset, length, options = {}) {
        if (this.sequential) {
            yield* this.sequential.read(offset, length, options);
            return;
        }
        const { signal } = options;
        let end = this.size === undefined ? offset + length : Math.min(this.size, offset + length);
        let pos = offset;
        let failures = 0;
        while (pos < end) {
            throwIfAborted(signal);
            const release = await this.slots.acquire();
            let attempt;
            try {
                attempt = this.#attempt(signal, () => pos);
            } catch (e) {
                release();
                throw e;
            }
            // A failure worth a retry (resumed at pos), the least wait before it, and the bytes that came.
            let broken = null;
            let wait = 0;
            let got = 0;
            try {
                let response;
                try {
                    response = await this.#send([pos, end], attempt.signal);
                } catch (e) {
                    broken = attempt.cause(e);
                    if (!isAbort(broken, signal) && !this.closing.signal.aborted) {
                        const refusal = await corsRefusal(this.fetch, this.url, broken, pos);
                        if (refusal) throw refusal;
                    }
                }
                if (response?.status === 200 && response.body) {
                    if (this.pinned) {
                        // If-Range failed (or the server stopped honouring Range): the whole file, not a part.
                        response.body.cancel().catch(() => {});
                        throw this.#changed(pos, "the server answered a range of it with the whole file (200)");
                    }
                    this.#checkPinned(response, contentLength(response), pos);
                    this.#becomeSequential(response);
                } else if (response) {
                    const range = parseContentRange(response.headers.get("content-range"));
                    if (response.status === 412) {
                        response.body?.cancel().catch(() => {});
                        throw this.#changed(pos, "the server's precondition failed (412)");
                    }
                    if (response.status === 416) {
                        response.body?.cancel().catch(() => {});
                        const total = range?.unsatisfied ? range.total : undefined;
                        if (this.pinned) this.#checkPinned(response, total, pos);
                        const size = total ?? this.size;
                        // A range at or past the end of the file: the read ends there.
                        if (size === undefined || pos >= size) {
                            if (total !== undefined) this.size = total;
                            return;
                        }
                        throw this.#httpError(response, pos, `bytes ${pos}-${end - 1} are inside the file`);
                    }
                    if (response.status !== 206 || !response.body) {
                        response.body?.cancel().catch(() => {});
                        const error = this.#httpError(response, pos);
                        if (!isRetryableStatus(response.status)) throw error;
                        broken = error;
                        wait = retryAfterMs(response);
                    } else {
                        if (range === null) {
                            response.body.cancel().catch(() => {});
                            throw new WeightstreamError(
                                "cors",
                                `${this.url}: the server answered 206 but did not expose Content-Range to this ` +
                                    "page; a cross-origin server must send Access-Control-Expose-Headers: " +
                                    `Content-Range${response.headers.get("etag") === null ? ", ETag" : ""}`,
                                { offset: pos },
                            );
                        }
                        if (range === undefined || range.start !== pos || range.end <= pos) {
                            response.body.cancel().catch(() => {});
                            throw new WeightstreamError(
                                "http",
                                `${this.url}: asked for bytes ${pos}-${end - 1}, the server sent ` +
                                    `"${response.headers.get("content-range")}"`,
                                { offset: pos },
                            );
                        }
                        try {
                            this.#checkPinned(response, range.total, pos);
                        } catch (e) {
                            response.body.cancel().catch(() => {});
                            throw e;
                        }
                        if (range.total !== undefined) {
                            this.size = range.total;
                            end = Math.min(end, range.total);
                        }
                        const reader = response.body.getReader();
                        try {
                            while (pos < end) {
                                let result;
                                try {
                                    result = await this.metrics.io(reader.read());
                                } catch (e) {
                                    broken = attempt.cause(e);
                                    break;
                                }
                                if (result.done) {
                                    broken = new Error(`the response ended at byte ${pos} of ${end}`);
                                    break;
                                }
                                let chunk = asBytes(result.value);
                                this.metrics.received(chunk.length);
                                if (chunk.length > end - pos) chunk = chunk.subarray(0, end - pos);
                                if (chunk.length === 0) continue;
                                pos += chunk.length;
                                got += chunk.length;
                                attempt.progress(chunk.length);
                                attempt.pause();
                                yield chunk;
                                attempt.resume();
                            }
                            if (!broken && range.end <= end) {
                                // Every byte arrived: take the body's end too, so that a browser counts the
                                // request as finished (keeping its connection) rather than cancelled.
                                const tail = await reader.read().catch(() => ({ done: true }));
                                if (!tail.done) this.metrics.received(asBytes(tail.value).length);
                            }
                        } finally {
                            reader.cancel().catch(() => {});
                        }
                    }
                }
            } finally {
                attempt.dispose();
                release();
            }
            if (this.sequential) {
                yield* this.sequential.read(pos, end - pos, options);
                return;
            }
            if (broken) {
                // Progress (for a stalled request, more than a trickle): a resumed transfer gets its retries back.
                if (got >= (attempt.stall ? STALL_BYTES : 1)) failures = 0;
                if (isAbort(broken, signal)) throw broken;
                if (this.closing.signal.aborted) throw this.closing.signal.reason;
                if (++failures > this.retries)
                    throw broken instanceof WeightstreamError ? broken : networkError(broken, pos);
                this.metrics.retry();
                await sleep(Math.max(backoffDelay(this.retryDelay, failures), wait), signal);
            }
        }
    }

    close() {
        this.closing.abort(closedError());
        for (const attempt of this.attempts) attempt.controller.abort(this.closing.signal.reason);
        return this.sequential?.close();
    }
}

// ---- choosing a source ----------------------------------------------------------------------------------------

const URL_SCHEME = /^[a-z][a-z\d+.-]*:/i;

async function nodeFilePath(url) {
    const urlName = "node:url";
    const { fileURLToPath } = await import(/* @vite-ignore */ urlName);
    return fileURLToPath(url);
}

/** The source for what open() was given. */
export async function makeSource(input, options) {
    const metrics = options.metrics ?? new Metrics();
    const http = (target) => new HttpSource(target, { ...options, metrics });
    const file = async (url) => NodeFileSource.open(await nodeFilePath(url), metrics);
    const stream = (body, size) => {
        metrics.request();
        return new StreamSource(body, { size, metrics });
    };
    if (input instanceof Uint8Array) return new BytesSource(input, metrics);
    if (
        input instanceof ArrayBuffer ||
        (typeof SharedArrayBuffer !== "undefined" && input instanceof SharedArrayBuffer)
    ) {
        return new BytesSource(new Uint8Array(input), metrics);
    }
    if (ArrayBuffer.isView(input))
        return new BytesSource(new Uint8Array(input.buffer, input.byteOffset, input.byteLength), metrics);
    if (typeof Blob !== "undefined" && input instanceof Blob) return new BlobSource(input, metrics);
    if (typeof Response !== "undefined" && input instanceof Response) {
        if (!input.ok || !input.body || input.bodyUsed) {
            throw new WeightstreamError("http", `the Response has no readable body (status ${input.status})`, {
                status: input.status,
            });
        }
        return stream(input.body, input.status === 200 ? contentLength(input) : undefined);
    }
    if (typeof Request !== "undefined" && input instanceof Request) return http(input);
    if (typeof ReadableStream !== "undefined" && input instanceof ReadableStream) return stream(input);
    if (input instanceof URL) {
        if (input.protocol === "file:" && isNode) return file(input);
        return http(input.href);
    }
    if (typeof input === "string") {
        // A Windows drive path ("C:\...") also starts like a scheme; a real scheme has at least two letters.
        if (URL_SCHEME.test(input) && !/^[a-z]:[\\/]/i.test(input)) {
            if (input.startsWith("file:") && isNode) return file(input);
            return http(input);
        }
        if (isNode) return NodeFileSource.open(input, metrics);
        return http(new URL(input, globalThis.location?.href).href);
    }
    if (input && typeof input.getReader === "function") return stream(input);
    throw new TypeError(
        "open(): expected a URL, Request, Response, Blob/File, ArrayBuffer, Uint8Array, ReadableStream " +
            "or (in Node) a file path",
    );
}

/**
 * A whole small file (config.json, an importance matrix) in one array, or null when it holds more than
 * `maxBytes` (known from its size before anything is read, else after reading maxBytes + 1). `input` is a
 * source as open() takes it; `options` are open()'s (normalized).
 */
export async function readWhole(input, options, maxBytes) {
    const source = await makeSource(input, options);
    try {
        if (source.size !== undefined && source.size > maxBytes) return null;
        const chunks = [];
        let size = 0;
        const want = Math.min(source.size ?? Infinity, maxBytes + 1);
        for await (const chunk of source.read(0, want, { signal: options.signal, chunkSize: options.chunkSize })) {
            chunks.push(chunk);
            size += chunk.length;
            if (size > maxBytes) return null;
        }
        const bytes = new Uint8Array(size);
        let at = 0;
        for (const c of chunks) {
            bytes.set(c, at);
            at += c.length;
        }
        return bytes;
    } finally {
        await source.close();
    }
}
