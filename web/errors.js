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
    network: "the URL could not be fetched (network or CORS)",
    http: "the server answered with an error",
    source_changed: "the file changed on the server while it was read",
    cors: "the server does not expose Content-Range (CORS)",
    not_seekable: "the source cannot be read out of order",
    no_such_tensor: "the model has no tensor of that name",
    closed: "the model was closed",
    bad_source: "this cannot be opened",
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
    const description = Object.hasOwn(DESCRIPTIONS, code) ? `${DESCRIPTIONS[code]}: ` : "";
    return { code, offset, file, text: `${context ? `${context}: ` : ""}${description}${detail}` };
}
