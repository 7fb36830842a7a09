// SPDX-License-Identifier: MIT
// What a model cost: one Metrics per opened model, shared by the sources of all its files and by its
// decoders. model.metrics is a snapshot of it (see index.d.ts).

const now = () => performance.now();

export class Metrics {
    constructor() {
        this.start = now();
        this.requests = 0;
        this.bytesFetched = 0;
        // Bytes the range cache (cache.js) answered with: it adds them here, and they are not in bytesFetched.
        this.bytesFromCache = 0;
        // Pieces the range cache failed to store (a full disk: QuotaExceededError); the reads went on uncached.
        this.cacheErrors = 0;
        this.retries = 0;
        this.firstByteAt = null;
        this.waiting = 0; // waits for bytes under way
        this.waitStart = 0;
        this.ioTime = 0;
        this.decodedBytes = 0;
        this.decodeTime = 0;
    }

    /** One request to the source: an HTTP request, a file or Blob read, a pass over a stream. */
    request() {
        ++this.requests;
    }

    /** `n` bytes arrived from the source (all of them, even those a read then drops). */
    received(n) {
        if (this.firstByteAt === null) this.firstByteAt = now();
        this.bytesFetched += n;
    }

    retry() {
        ++this.retries;
    }

    /** The value of `promise`, its wait counted as I/O time; waits that overlap count once. */
    async io(promise) {
        if (this.waiting++ === 0) this.waitStart = now();
        try {
            return await promise;
        } finally {
            if (--this.waiting === 0) this.ioTime += now() - this.waitStart;
        }
    }

    /** A decoder took `ms` for `bytes` of tensor data. */
    decoded(bytes, ms) {
        this.decodedBytes += bytes;
        this.decodeTime += ms;
    }

    snapshot() {
        const io = this.ioTime + (this.waiting > 0 ? now() - this.waitStart : 0);
        return {
            requests: this.requests,
            bytesFetched: this.bytesFetched,
            bytesFromCache: this.bytesFromCache,
            cacheErrors: this.cacheErrors,
            retries: this.retries,
            timeToFirstByte: this.firstByteAt === null ? null : this.firstByteAt - this.start,
            ioTime: io,
            decodedBytes: this.decodedBytes,
            decodeTime: this.decodeTime,
            // bytes per ms / 1e6 = GB/s
            decodeGBps: this.decodeTime > 0 ? this.decodedBytes / this.decodeTime / 1e6 : null,
        };
    }
}
