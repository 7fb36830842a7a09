// SPDX-License-Identifier: MIT
// Where the bytes come from. Every source has the same shape:
//   size       bytes of the file, or undefined while unknown (a stream)
//   read(offset, length, {signal, chunkSize, retain})
//              an async iterator over the bytes [offset, offset + length) in order, in chunks; it ends early
//              at the end of the file. Chunks are fresh arrays or views the caller may keep.
//   close()
//   local      true for bytes, Blobs and Node files: reading ahead costs no download there
// Random-access sources (bytes, Blob, Node file, HTTP with Range) read any range. Sequential sources (a
// ReadableStream, a Response, a server that ignores Range) only move forward: a read behind the position
// restarts the download when the source can be reopened and fails with code "not_seekable" otherwise.
// `retain` (used while parsing the header) keeps the bytes read in a sequential source, so that the tensor
// data right behind the header can still be read after the parser stopped somewhere inside that read.
import { WeightstreamError, abortReason, isAbort, throwIfAborted } from "./errors.js";

export const isNode = typeof process === "object" && typeof process.versions?.node === "string";

export class BytesSource {
    constructor(bytes) {
        this.local = true;
        this.bytes = bytes;
        this.size = bytes.length;
    }

    async *read(offset, length, { signal } = {}) {
        throwIfAborted(signal);
        const end = Math.min(this.size, offset + length);
        if (offset < end) yield this.bytes.subarray(offset, end);
    }

    close() {}
}

export class BlobSource {
    constructor(blob) {
        this.local = true;
        this.blob = blob;
        this.size = blob.size;
    }

    async *read(offset, length, { signal, chunkSize }) {
        const end = Math.min(this.size, offset + length);
        for (let pos = offset; pos < end;) {
            throwIfAborted(signal);
            const n = Math.min(chunkSize, end - pos);
            const chunk = new Uint8Array(await this.blob.slice(pos, pos + n).arrayBuffer());
            if (chunk.length === 0) return;
            yield chunk;
            pos += chunk.length;
        }
    }

    close() {}
}

/** A file read at offsets through a fs.promises FileHandle (never read whole). */
export class NodeFileSource {
    static async open(path) {
        const fsName = "node:fs/promises"; // a variable: bundlers for the browser must not resolve it
        const fs = await import(/* @vite-ignore */ fsName);
        let handle;
        try {
            handle = await fs.open(path, "r");
            const stat = await handle.stat();
            if (!stat.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: "EISDIR" });
            return new NodeFileSource(handle, stat.size, String(path));
        } catch (e) {
            await handle?.close();
            throw new WeightstreamError("io", `${path}: ${e.message}`, { cause: e });
        }
    }

    constructor(handle, size, path) {
        this.local = true;
        this.handle = handle;
        this.size = size;
        this.path = path;
    }

    async *read(offset, length, { signal, chunkSize }) {
        const end = Math.min(this.size, offset + length);
        for (let pos = offset; pos < end;) {
            throwIfAborted(signal);
            const n = Math.min(chunkSize, end - pos);
            const chunk = new Uint8Array(n);
            let bytesRead;
            try {
                ({ bytesRead } = await this.handle.read(chunk, 0, n, pos));
            } catch (e) {
                throw new WeightstreamError("io", `${this.path}: ${e.message}`, { offset: pos, cause: e });
            }
            if (bytesRead === 0) return;
            yield bytesRead === n ? chunk : chunk.subarray(0, bytesRead);
            pos += bytesRead;
        }
    }

    close() {
        return this.handle.close().catch(() => {});
    }
}

function asBytes(value) {
    if (value instanceof Uint8Array) return value;
    if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    if (value instanceof ArrayBuffer) return new Uint8Array(value);
    throw new WeightstreamError("bad_source", `the stream gave a ${typeof value}, not bytes (Uint8Array)`);
}

/**
 * A forward-only source over a ReadableStream. `reopen()`, when given, returns a new stream of the file from
 * its first byte: reads behind the position and broken connections then restart the download.
 */
export class StreamSource {
    constructor(stream, { size, reopen, retries = 0, retryDelay = 0 } = {}) {
        this.reader = stream.getReader();
        this.size = size;
        this.reopen = reopen;
        this.retries = reopen ? retries : 0;
        this.retryDelay = retryDelay;
        this.pos = 0; // file offset of pending[0]
        this.pending = []; // bytes pulled from the stream and not consumed yet
        this.pulledEnd = 0; // file offset just past the last byte pulled
        this.ended = false;
        this.queue = Promise.resolve();
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
        throwIfAborted(signal);
        const { done, value } = await this.reader.read();
        throwIfAborted(signal);
        if (done) return null;
        return asBytes(value);
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
                if (isAbort(e, signal) || e instanceof WeightstreamError || ++failures > this.retries) {
                    throw isAbort(e, signal) || e instanceof WeightstreamError ? e : networkError(e, this.pulledEnd);
                }
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

function backoffDelay(base, failures) {
    return Math.min(base * 2 ** (failures - 1), 8000);
}

function networkError(cause, offset) {
    return new WeightstreamError(
        "network",
        `network error at byte ${offset}: ${cause?.message ?? cause} (for a cross-origin URL this is also how a ` +
            "CORS failure shows: the server must allow this origin and the Range header)",
        { offset, cause },
    );
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

/**
 * A URL read with HTTP Range requests: each read asks for exactly its bytes. A server that answers 200 (no
 * Range support) turns the source into one streamed pass over that response, reopened only when a read goes
 * backwards. Dropped connections, 5xx, 408 and 429 are retried with exponential backoff, resuming at the
 * last byte received.
 */
export class HttpSource {
    constructor(target, { fetch, concurrency, retries, retryDelay, slots }) {
        this.request = typeof Request !== "undefined" && target instanceof Request ? target : null;
        this.url = this.request ? this.request.url : String(target);
        this.fetch = fetch;
        this.slots = slots ?? new Slots(concurrency);
        this.retries = retries;
        this.retryDelay = retryDelay;
        this.knownSize = undefined;
        this.sequential = null;
        this.closing = new AbortController();
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
        const signals = [this.closing.signal];
        if (signal) signals.push(signal);
        const init = { headers, signal: anySignal(signals) };
        return this.request ? this.fetch(new Request(this.request, init)) : this.fetch(this.url, init);
    }

    // A plain GET of the whole file, for a server without Range support.
    async #openWhole(signal) {
        for (let failures = 0; ;) {
            let response;
            try {
                response = await this.#send(null, signal);
            } catch (e) {
                if (isAbort(e, signal)) throw e;
                if (this.closing.signal.aborted) throw this.closing.signal.reason;
                if (++failures > this.retries) throw networkError(e, 0);
                await sleep(backoffDelay(this.retryDelay, failures), signal);
                continue;
            }
            if (response.ok && response.body) return response.body;
            response.body?.cancel().catch(() => {});
            if (!isRetryableStatus(response.status) || ++failures > this.retries) throw this.#httpError(response, 0);
            await sleep(backoffDelay(this.retryDelay, failures), signal);
        }
    }

    #httpError(response, offset) {
        return new WeightstreamError("http", `${this.url}: HTTP ${response.status} ${response.statusText}`.trimEnd(), {
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
        });
    }

    async *read(offset, length, options = {}) {
        if (this.sequential) {
            yield* this.sequential.read(offset, length, options);
            return;
        }
        const { signal } = options;
        let end = this.size === undefined ? offset + length : Math.min(this.size, offset + length);
        let pos = offset;
        let failures = 0;
        // Waits before the next attempt, or throws when the retries are used up (an HTTP error as itself, any
        // other failure as a network error).
        const retry = async (cause) => {
            if (isAbort(cause, signal)) throw cause;
            if (this.closing.signal.aborted) throw this.closing.signal.reason;
            if (++failures > this.retries) throw cause instanceof WeightstreamError ? cause : networkError(cause, pos);
            await sleep(backoffDelay(this.retryDelay, failures), signal);
        };
        while (pos < end) {
            throwIfAborted(signal);
            const release = await this.slots.acquire();
            let response;
            try {
                try {
                    response = await this.#send([pos, end], signal);
                } catch (e) {
                    release();
                    await retry(e);
                    continue;
                }
                if (response.status === 200 && response.body) {
                    release();
                    this.#becomeSequential(response);
                    yield* this.sequential.read(pos, end - pos, options);
                    return;
                }
                const range = parseContentRange(response.headers.get("content-range"));
                if (response.status === 416) {
                    response.body?.cancel().catch(() => {});
                    if (range?.unsatisfied) this.size = range.total;
                    return; // the range starts at or past the end of the file
                }
                if (response.status !== 206 || !response.body) {
                    response.body?.cancel().catch(() => {});
                    const error = this.#httpError(response, pos);
                    if (!isRetryableStatus(response.status)) throw error;
                    release();
                    await retry(error);
                    continue;
                }
                if (range === null) {
                    response.body.cancel().catch(() => {});
                    throw new WeightstreamError(
                        "cors",
                        `${this.url}: the server answered 206 but its Content-Range header is not readable; a ` +
                            "cross-origin server must send Access-Control-Expose-Headers: Content-Range",
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
                if (range.total !== undefined) {
                    this.size = range.total;
                    end = Math.min(end, range.total);
                }
                const reader = response.body.getReader();
                let broken = null;
                try {
                    while (pos < end) {
                        let result;
                        try {
                            result = await reader.read();
                        } catch (e) {
                            broken = e;
                            break;
                        }
                        if (result.done) {
                            broken = new Error(`the response ended at byte ${pos} of ${end}`);
                            break;
                        }
                        let chunk = asBytes(result.value);
                        if (chunk.length > end - pos) chunk = chunk.subarray(0, end - pos);
                        if (chunk.length === 0) continue;
                        pos += chunk.length;
                        failures = 0; // progress: a resumed transfer gets its retries back
                        yield chunk;
                    }
                    if (!broken && range.end <= end) {
                        // Every byte arrived: take the body's end too, so that a browser counts the request as
                        // finished (keeping its connection) rather than cancelled.
                        await reader.read().catch(() => {});
                    }
                } finally {
                    reader.cancel().catch(() => {});
                }
                if (broken) {
                    release();
                    await retry(broken);
                }
            } finally {
                release();
            }
        }
    }

    close() {
        this.closing.abort(new WeightstreamError("closed", "the model was closed"));
        return this.sequential?.close();
    }
}

function anySignal(signals) {
    if (signals.length === 1) return signals[0];
    if (typeof AbortSignal.any === "function") return AbortSignal.any(signals);
    const controller = new AbortController();
    for (const s of signals) {
        if (s.aborted) {
            controller.abort(s.reason);
            break;
        }
        s.addEventListener("abort", () => controller.abort(s.reason), { once: true });
    }
    return controller.signal;
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
    const http = (target) => new HttpSource(target, options);
    if (input instanceof Uint8Array) return new BytesSource(input);
    if (
        input instanceof ArrayBuffer ||
        (typeof SharedArrayBuffer !== "undefined" && input instanceof SharedArrayBuffer)
    ) {
        return new BytesSource(new Uint8Array(input));
    }
    if (ArrayBuffer.isView(input))
        return new BytesSource(new Uint8Array(input.buffer, input.byteOffset, input.byteLength));
    if (typeof Blob !== "undefined" && input instanceof Blob) return new BlobSource(input);
    if (typeof Response !== "undefined" && input instanceof Response) {
        if (!input.ok || !input.body || input.bodyUsed) {
            throw new WeightstreamError("http", `the Response has no readable body (status ${input.status})`, {
                status: input.status,
            });
        }
        return new StreamSource(input.body, { size: input.status === 200 ? contentLength(input) : undefined });
    }
    if (typeof Request !== "undefined" && input instanceof Request) return http(input);
    if (typeof ReadableStream !== "undefined" && input instanceof ReadableStream) return new StreamSource(input);
    if (input instanceof URL) {
        if (input.protocol === "file:" && isNode) return NodeFileSource.open(await nodeFilePath(input));
        return http(input.href);
    }
    if (typeof input === "string") {
        // A Windows drive path ("C:\...") also starts like a scheme; a real scheme has at least two letters.
        if (URL_SCHEME.test(input) && !/^[a-z]:[\\/]/i.test(input)) {
            if (input.startsWith("file:") && isNode) return NodeFileSource.open(await nodeFilePath(input));
            return http(input);
        }
        if (isNode) return NodeFileSource.open(input);
        return http(new URL(input, globalThis.location?.href).href);
    }
    if (input && typeof input.getReader === "function") return new StreamSource(input);
    throw new TypeError(
        "open(): expected a URL, Request, Response, Blob/File, ArrayBuffer, Uint8Array, ReadableStream " +
            "or (in Node) a file path",
    );
}
