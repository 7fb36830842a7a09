// SPDX-License-Identifier: MIT
// A Hugging Face checkpoint's side files, for the operations that read them beside a safetensors model (compare(),
// convert()): config.json and the tokenizer files (tokenizer.json, tokenizer_config.json, tokenizer.model,
// added_tokens.json, chat_template.jinja, chat_template.json: the core's kHfVocabFileNames, hf_vocab.h), found
// among the files given, or next to the model's first source, and read whole. Their parsing and limits are the
// core's (hf_checkpoint.h, hf_vocab.h, through the jobs' bindings); a config.json that is not usable is ignored
// there, as the CLI ignores it.
import { WeightstreamError, isAbort } from "./errors.js";
import { locate } from "./parts.js";
import { readWhole } from "./sources.js";

// config.json larger than this is ignored, as the CLI ignores it.
const MAX_CONFIG_BYTES = 16 << 20;
const CONFIG_NAME = "config.json";
// The tokenizer files, as the CLI reads them beside the model (hf_config_file.cpp), and their cap
// (kHfTokenizerFileMaxBytes): one byte more is read, so that the core refuses a larger file as the CLI's does.
export const TOKENIZER_FILES = [
    "tokenizer.json",
    "tokenizer_config.json",
    "tokenizer.model",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
];
const MAX_TOKENIZER_BYTES = 64 << 20;
const SIDE_FILES = [CONFIG_NAME, ...TOKENIZER_FILES];

function sideName(input) {
    const name = locate(input).name;
    return SIDE_FILES.includes(name) ? name : undefined;
}

/**
 * Whether reading a file beside the model failed because it is not there: an HTTP 404 (a Hugging Face repository
 * without that file), or a path that cannot be opened (the CLI takes that as missing too). Other failures of a URL
 * (401 of a gated repository, a 500, a network or CORS error) are errors: going on without the file would write
 * another output than the one asked for.
 */
export function isAbsent(error) {
    return (error?.code === "http" && error.status === 404) || error?.code === "io";
}

/**
 * A model's sources without the side files given among them: {model, config (a source or undefined), given
 * ({name: source} of the tokenizer files given)}.
 */
export function splitConfig(input) {
    if (!Array.isArray(input)) return { model: input, config: undefined, given: {} };
    const given = {};
    for (const s of input) {
        const name = sideName(s);
        if (name !== undefined && name !== CONFIG_NAME) given[name] = s;
    }
    const config = input.find((s) => sideName(s) === CONFIG_NAME);
    const rest = input.filter((s) => sideName(s) === undefined);
    return { model: rest.length === 1 ? rest[0] : rest, config, given };
}

// Side file `name`: the one given, else the file next to the model's first source when that has a location.
// Resolves to its bytes, to "too large" when it holds more than maxBytes, or to null when there is none or it is
// absent (isAbsent(): a missing file is no error, the CLI goes on without it; another failure rejects).
async function sideRead(side, given, name, options, maxBytes) {
    const first = Array.isArray(side.model) ? side.model[0] : side.model;
    const input = given !== undefined ? locate(given).input : locate(first).sibling?.(name);
    if (input === undefined) return null;
    try {
        return (await readWhole(input, options, maxBytes)) ?? TOO_LARGE;
    } catch (e) {
        if (isAbort(e, options.signal) || !isAbsent(e)) throw e;
        return null;
    }
}
const TOO_LARGE = "too large";

/** config.json's bytes for a safetensors model split by splitConfig() (null when there is none or it is too large). */
export async function configBytes(side, options) {
    const bytes = await sideRead(side, side.config, CONFIG_NAME, options, MAX_CONFIG_BYTES);
    return bytes === TOO_LARGE ? null : bytes;
}

/**
 * The tokenizer files' bytes, {name: Uint8Array} of those found, for a model split by splitConfig(). A file over
 * the cap is refused (WeightstreamError "too_large", what: its name), as the CLI's core refuses it.
 */
export async function tokenizerBytes(side, options) {
    const out = {};
    for (const name of TOKENIZER_FILES) {
        const bytes = await sideRead(side, side.given[name], name, options, MAX_TOKENIZER_BYTES);
        if (bytes === TOO_LARGE) {
            throw new WeightstreamError("too_large", `cannot convert the tokenizer: too_large in ${name} (entry 0)`, {
                what: name,
            });
        }
        if (bytes !== null && bytes.length > 0) out[name] = bytes;
    }
    return out;
}

/**
 * The checkpoint folder's name (general.name and the other general.* keys come from it, as for the converter):
 * the folder of the first source's path (or of a dropped folder's File), or the repository of a Hugging Face URL
 * (.../ORG/REPO/resolve/REV/FILE), else the URL's folder; undefined for sources without one.
 */
export function modelFolderName(side) {
    const first = Array.isArray(side.model) ? side.model[0] : side.model;
    let href;
    if (typeof first === "string" && !/^[a-z][a-z0-9+.-]*:\/\//i.test(first)) {
        const parts = first.split("/").filter((p) => p !== "" && p !== ".");
        if (parts.length >= 2) return parts[parts.length - 2];
        return undefined;
    }
    // A File of a dropped folder knows its place in it ("tiny-gemma/model.safetensors").
    const relative = typeof File !== "undefined" && first instanceof File ? first.webkitRelativePath : undefined;
    if (relative) {
        const parts = relative.split("/");
        return parts.length >= 2 ? parts[parts.length - 2] : undefined;
    }
    if (typeof first === "string") href = first;
    else if (first instanceof URL) href = first.href;
    else if (typeof Request !== "undefined" && first instanceof Request) href = first.url;
    if (href === undefined) return undefined;
    const parts = new URL(href).pathname.split("/").filter((p) => p !== "");
    const resolve = parts.lastIndexOf("resolve");
    if (resolve >= 2) return decodeURIComponent(parts[resolve - 1]);
    return parts.length >= 2 ? decodeURIComponent(parts[parts.length - 2]) : undefined;
}
