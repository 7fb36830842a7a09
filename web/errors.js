// SPDX-License-Identifier: MIT
// What the error banner says: a description of each error code and the banner's parts of an error, read
// from its fields (code, offset, file, what), never from its message.

// What each of the package's own codes means to someone who just opened a file (the banner adds where and which
// field). The core's codes are not here: their errors carry the core's words as `description` (from the
// package, the same the CLI prints). tests/js/errors.test.mjs checks the keys against SourceErrorCode of
// wasm/js/index.d.ts.
export const DESCRIPTIONS = {
    io: "the file could not be read",
    network: "the URL could not be fetched (network or CORS)",
    http: "the server answered with an error",
    source_changed: "the file changed on the server while it was read",
    cors: "the server does not expose Content-Range (CORS)",
    not_seekable: "the source cannot be read out of order",
    no_such_tensor: "the model has no tensor of that name",
    closed: "the model was closed",
    wasm_load: "the WebAssembly module could not be loaded",
    worker: "the page's worker stopped",
};

/**
 * The banner's parts of an error: {code, offset, file, text}. `context` (the file or tensor the page was
 * opening) leads the text. A core error says which field or rule in `what` (its message repeats the code
 * and the offset, which the banner shows apart); any other error says it all in its message.
 */
export function bannerParts(error, context = "") {
    const code = typeof error?.code === "string" ? error.code : "error";
    const offset = typeof error?.offset === "number" || typeof error?.offset === "bigint" ? error.offset : undefined;
    const file = typeof error?.file === "string" ? error.file : undefined;
    const detail =
        typeof error?.what === "string" && error.what
            ? `${file ? `${file}: ` : ""}${error.what}`
            : String(error?.message ?? error);
    const known =
        typeof error?.description === "string"
            ? error.description
            : Object.hasOwn(DESCRIPTIONS, code)
              ? DESCRIPTIONS[code]
              : undefined;
    const description = known ? `${known}: ` : "";
    return { code, offset, file, text: `${context ? `${context}: ` : ""}${description}${detail}` };
}
