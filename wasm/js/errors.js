// SPDX-License-Identifier: MIT
// The one error type the package throws for problems with a model or its source. `code` is the core's
// error name for file problems ("bad_magic", "truncated", ... as the CLI reports them) or one of the
// package's own codes for the source (see index.d.ts).

// The core's description of each of its codes (error_description() in core/base/status.cpp), set once the module
// is loaded (wasm.js): the words the CLI prints after a code, so the package and the page never keep a copy.
const coreDescriptions = new Map();

/** Records the core's descriptions: `names[i]` is described by `descriptions[i]` (errorNames() order). */
export function setCoreDescriptions(names, descriptions) {
    names.forEach((name, i) => coreDescriptions.set(name, descriptions[i]));
}

export class WeightstreamError extends Error {
    /**
     * @param {string} code
     * @param {string} message
     * @param {{offset?: number, what?: string, status?: number, cause?: unknown, description?: string}} [details]
     */
    constructor(code, message, details = {}) {
        super(message, details.cause === undefined ? undefined : { cause: details.cause });
        this.name = "WeightstreamError";
        this.code = code;
        this.offset = details.offset;
        if (details.what !== undefined) this.what = details.what;
        if (details.status !== undefined) this.status = details.status;
        // A core code's meaning; an error revived from a worker brings the one its realm had.
        const description = details.description ?? coreDescriptions.get(code);
        if (description !== undefined) this.description = description;
    }
}

/** A core status record {code, name, offset, what} that is not ok, as an Error. */
export function statusError(status, context = "") {
    const where = context ? `${context}: ` : "";
    return new WeightstreamError(status.name, `${where}${status.name}: ${status.what} (byte ${status.offset})`, {
        offset: status.offset,
        what: status.what,
    });
}

export function abortReason(signal) {
    return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

export function throwIfAborted(signal) {
    if (signal?.aborted) throw abortReason(signal);
}

export function isAbort(error, signal) {
    return (signal?.aborted && error === signal.reason) || error?.name === "AbortError";
}
