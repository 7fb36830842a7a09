// SPDX-License-Identifier: MIT
// What the error banner says: a description of each error code and the banner's parts of an error, read
// from its fields (code, offset, file, what), never from its message.

// What each code means to someone who just opened a file (the banner adds where and which field). One
// entry per code the package rejects with: tests/js/errors.test.mjs checks the keys against the core's
// list (errorNames() of the wasm module) and the ErrorCode type of wasm/js/index.d.ts.
export const DESCRIPTIONS = {
    // the core's codes (core/status.h)
    bad_magic: "not a GGUF or safetensors file",
    unsupported_version: "a format version this page does not read",
    truncated: "the file ends too early",
    too_large: "a size in the file is beyond the limits",
    overflow: "a size in the file overflows",
    bad_type: "an unknown type",
    bad_shape: "an impossible tensor shape",
    bad_alignment: "misaligned data",
    bad_offset: "tensor data outside the file or overlapping",
    duplicate_name: "two entries with the same name",
    bad_json: "a malformed JSON header",
    bad_key: "a malformed metadata key",
    trailing_data: "unexpected bytes after the data",
    unsupported: "not supported",
    bad_split: "the parts do not form one model",
    internal: "a bug in weightstream (please report it)",
    // the package's codes for the source
    io: "the file could not be read",
    network: "the URL could not be fetched",
    http: "the server answered with an error",
    source_changed: "the file changed on the server while it was read",
    cors: "the server's CORS headers do not let this page read the file",
    not_seekable: "the source cannot be read out of order",
    no_such_tensor: "the model has no tensor of that name",
    closed: "the model was closed",
    bad_source: "this cannot be opened",
    wasm_load: "the WebAssembly module could not be loaded",
    worker: "the page's worker stopped",
};

// What an HTTP status says, said once: "not found" rather than "the server answered with an error".
const STATUSES = {
    401: "access denied (the server asks for credentials)",
    403: "access denied",
    404: "not found",
    410: "not found (gone)",
};

/**
 * The banner's parts of an error: {code, offset, file, url, text}. `context` (the file or tensor the page
 * was opening) leads the text, then what the code means, then the error's own detail, each said once. A
 * core error says which field or rule in `what` (its message repeats the code and the offset, which the
 * banner shows apart); any other error says it in its message, after the URL it names (dropped from the
 * text: the context names the file, and `url` keeps it).
 */
export function bannerParts(error, context = "") {
    const code = typeof error?.code === "string" ? error.code : "error";
    const offset = typeof error?.offset === "number" || typeof error?.offset === "bigint" ? error.offset : undefined;
    const file = typeof error?.file === "string" ? error.file : undefined;
    let url;
    let detail;
    if (typeof error?.what === "string" && error.what) {
        detail = `${file ? `${file}: ` : ""}${error.what}`;
    } else {
        detail = String(error?.message ?? error);
        const lead = /^(https?:\/\/\S+?): /.exec(detail);
        if (lead) {
            url = lead[1];
            detail = detail.slice(lead[0].length);
        }
    }
    let description = Object.hasOwn(DESCRIPTIONS, code) ? DESCRIPTIONS[code] : "";
    if (code === "http" && Object.hasOwn(STATUSES, error?.status)) {
        description = STATUSES[error.status];
        // "HTTP 404 Not Found": the reason phrase says again what the description says.
        detail = detail.replace(/^HTTP (\d{3}) [^:]*/, "HTTP $1");
    }
    if (description && detail.toLowerCase().startsWith(description.toLowerCase())) description = "";
    const text = [context, description, detail].filter(Boolean).join(": ");
    return url === undefined ? { code, offset, file, text } : { code, offset, file, url, text };
}
