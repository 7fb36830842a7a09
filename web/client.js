// SPDX-License-Identifier: MIT
// The page's side of the worker protocol (see worker.js): one promise per request, progress callbacks,
// cancellation. Errors arrive as plain {code, message, offset, what, file} records and become Errors with
// those fields.

export class RequestError extends Error {
    constructor({ code, message, offset, what, file }) {
        super(message);
        this.code = code;
        this.offset = offset;
        this.what = what;
        this.file = file;
    }
}

export class WorkerClient {
    #worker;
    #pending = new Map();
    #next = 1;

    constructor(url) {
        this.#worker = new Worker(url, { type: "module" });
        this.#worker.onmessage = ({ data }) => {
            const request = this.#pending.get(data.id);
            if (!request) return;
            if (data.type === "progress") {
                request.onProgress?.(data);
                return;
            }
            this.#pending.delete(data.id);
            if (data.type === "result") request.resolve(data.result);
            else request.reject(new RequestError(data.error));
        };
        // A worker that fails to load (or dies) fails every request in flight instead of leaving them hanging.
        this.#worker.onerror = (event) => {
            event.preventDefault?.();
            const error = new RequestError({ code: "worker", message: `the worker failed: ${event.message || "it could not be loaded"}` });
            for (const request of this.#pending.values()) request.reject(error);
            this.#pending.clear();
        };
    }

    /** Sends a request: {id, promise, cancel()}. */
    request(type, payload = {}, { onProgress } = {}) {
        const id = this.#next++;
        const promise = new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject, onProgress }));
        this.#worker.postMessage({ ...payload, id, type });
        return { id, promise, cancel: () => this.#worker.postMessage({ type: "cancel", id }) };
    }
}
