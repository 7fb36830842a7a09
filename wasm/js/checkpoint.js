// SPDX-License-Identifier: MIT
// A Hugging Face checkpoint's config.json, for the operations that read it beside a safetensors model (compare(),
// convert()): found among the files given, or next to the model's first source, and read whole. Its parsing and
// its limits are the core's (include/weightstream/hf_checkpoint.h, through the jobs' bindings); a file that is not
// a usable config is ignored there, as the CLI ignores it.
import { isAbort } from "./errors.js";
import { locate } from "./parts.js";
import { readWhole } from "./sources.js";

// config.json larger than this is ignored, as the CLI ignores it.
const MAX_CONFIG_BYTES = 16 << 20;
const CONFIG_NAME = "config.json";

function isConfig(input) {
    return locate(input).name === CONFIG_NAME;
}

/** A model's sources without a config.json given among them, and that config.json (or undefined). */
export function splitConfig(input) {
    if (!Array.isArray(input)) return { model: input, config: undefined };
    const config = input.find(isConfig);
    const rest = input.filter((s) => !isConfig(s));
    return { model: rest.length === 1 ? rest[0] : rest, config };
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
 * config.json's bytes for a safetensors model split by splitConfig(): the one given among its files, else the
 * file next to its (first) source when that has a location; null when there is none (a missing config.json is no
 * error: the CLI goes on without it too) or it is too large. `options` are open()'s (normalized).
 */
export async function configBytes(side, options) {
    const given = side.config;
    const first = Array.isArray(side.model) ? side.model[0] : side.model;
    const input = given !== undefined ? locate(given).input : locate(first).sibling?.(CONFIG_NAME);
    if (input === undefined) return null;
    try {
        return await readWhole(input, options, MAX_CONFIG_BYTES);
    } catch (e) {
        if (isAbort(e, options.signal) || !isAbsent(e)) throw e;
        return null;
    }
}
