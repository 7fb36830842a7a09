// SPDX-License-Identifier: MIT
// What the error banner says: a description of each error code and the banner's parts of an error, read
// from its fields (code, offset, file, what), never from its message.

// What each of the package's own codes means to someone who just opened a file (the banner adds where and which
// field). The core's codes are not here, its source codes (io, network, http, source_changed, ...) neither: their
// errors carry the core's words as `description` (from the package, the same the CLI prints).
// tests/js/errors.test.mjs checks the keys against PackageErrorCode of wasm/js/index.d.ts.
export const DESCRIPTIONS = {
    cors: "the server's CORS headers do not let this page read the file",
    no_such_tensor: "the model has no tensor of that name",
    closed: "the model was closed",
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
    let description =
        typeof error?.description === "string"
            ? error.description
            : Object.hasOwn(DESCRIPTIONS, code)
              ? DESCRIPTIONS[code]
              : "";
    if (code === "http" && Object.hasOwn(STATUSES, error?.status)) {
        description = STATUSES[error.status];
        // "HTTP 404 Not Found": the reason phrase says again what the description says.
        detail = detail.replace(/^HTTP (\d{3}) [^:]*/, "HTTP $1");
    }
    if (description && detail.toLowerCase().startsWith(description.toLowerCase())) description = "";
    const text = [context, description, detail].filter(Boolean).join(": ");
    return url === undefined ? { code, offset, file, text } : { code, offset, file, url, text };
}
