// SPDX-License-Identifier: MIT
// Tokenizers: the core's (include/weightstream/tokenizer.h), from a model's GGUF keys (model.tokenizer(), llama.cpp's
// ids) or from Hugging Face files (tokenizer(): tokenizer.json with Hugging Face's ids, or a SentencePiece
// tokenizer.model; tokenizer_config.json beside either). This file reads the files and converts text and arrays;
// which file wins and every id is the core's, so the CLI's `weightstream tokenize` gives the same ids.
import { WeightstreamError, statusError } from "./errors.js";
import { locate } from "./parts.js";
import { readWhole } from "./sources.js";
import { loadWasm, wasmFailure } from "./wasm.js";

const OK = 0;
// Tokenizer files larger than this are refused (the largest real tokenizer.json is ~33 MB), as the CLI refuses them.
const MAX_TOKENIZER_BYTES = 1 << 30;
// TokenKind (tokenizer.h), numbered as GGUF's tokenizer.ggml.token_type stores it.
const KINDS = ["undefined", "normal", "unknown", "control", "user_defined", "unused", "byte"];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function optionBoolean(options, name, fallback) {
    const v = options[name];
    if (v === undefined) return fallback;
    if (typeof v !== "boolean") throw new TypeError(`${name}: expected a boolean, got ${v}`);
    return v;
}

/** @internal tokenize()'s arguments checked (TypeError), with the defaults: also the worker's client's check. */
export function checkTokenizeArguments(text, options) {
    if (typeof text !== "string") throw new TypeError(`tokenize(): expected a string, got ${typeof text}`);
    return {
        addSpecial: optionBoolean(options, "addSpecial", true),
        parseSpecial: optionBoolean(options, "parseSpecial", true),
        addBos: optionBoolean(options, "addBos", true),
    };
}

/** @internal detokenize()'s arguments checked (TypeError, RangeError for an id outside [0, size)). */
export function checkDetokenizeArguments(ids, options, size) {
    if (!(ids instanceof Int32Array) && !Array.isArray(ids))
        throw new TypeError("detokenize(): expected an Int32Array or an array of ids");
    for (const id of ids) {
        if (!Number.isInteger(id) || id < 0 || id >= size)
            throw new RangeError(`detokenize(): token id ${id} is outside the vocabulary (${size} tokens)`);
    }
    return { skipSpecial: optionBoolean(options, "skipSpecial", false) };
}

/**
 * @internal The token table as the core gives it (JsTokenizer::table): every piece's UTF-8 bytes one after another,
 * where each ends, and each token's kind. A piece is decoded when asked for, so a 262,144-token table costs its
 * bytes, not a quarter of a million strings.
 */
export class TokenTable {
    constructor(arrays) {
        this.arrays = arrays;
    }

    get size() {
        return this.arrays.ends.length;
    }

    #check(id, what) {
        if (!Number.isInteger(id) || id < 0 || id >= this.size)
            throw new RangeError(`${what}(): token id ${id} is outside the vocabulary (${this.size} tokens)`);
    }

    piece(id) {
        this.#check(id, "piece");
        const { pieces, ends } = this.arrays;
        return decoder.decode(pieces.subarray(id === 0 ? 0 : ends[id - 1], ends[id]));
    }

    kind(id) {
        this.#check(id, "kind");
        return KINDS[this.arrays.kinds[id]] ?? "undefined";
    }
}

/** A tokenizer: text to token ids and back. Made by model.tokenizer() or tokenizer(); dispose() frees it. */
export class Tokenizer {
    #wasm;
    #handle;
    #tokens = null; // the TokenTable, fetched from the module on first use

    /** @internal */
    constructor(wasm, handle) {
        this.#wasm = wasm;
        this.#handle = handle;
    }

    #live() {
        if (!this.#handle) throw new WeightstreamError("closed", "the tokenizer was disposed");
        return this.#handle;
    }

    /** Tokens in the table. */
    get size() {
        return this.#live().size();
    }

    /** What the tokenizer is: "llama", "gpt2/llama-bpe", "bert", "hf:BPE", ... */
    get description() {
        return this.#live().description();
    }

    /** Text to ids: {addSpecial (true), parseSpecial (true), addBos (true)} as the CLI's flags. */
    tokenize(text, options = {}) {
        const { addSpecial, parseSpecial, addBos } = checkTokenizeArguments(text, options);
        const handle = this.#live();
        let result;
        try {
            result = handle.tokenize(encoder.encode(text), addSpecial, parseSpecial, addBos);
        } catch (e) {
            throw wasmFailure(e);
        }
        if (result.status.code !== OK) throw statusError(result.status, "the text");
        return result.ids;
    }

    /** Ids to text: {skipSpecial (false): leave special tokens' text out}. */
    detokenize(ids, options = {}) {
        const { skipSpecial } = checkDetokenizeArguments(ids, options, this.size);
        const handle = this.#live();
        let result;
        try {
            result = handle.detokenize(ids, false, !skipSpecial);
        } catch (e) {
            throw wasmFailure(e);
        }
        if (result.status.code !== OK) throw statusError(result.status, "the ids");
        return decoder.decode(result.bytes);
    }

    /** What each token stands for inside a text: its bytes (a byte token's one byte, a special token's text). */
    tokenBytes(ids) {
        checkDetokenizeArguments(ids, {}, this.size);
        const handle = this.#live();
        let result;
        try {
            result = handle.tokenBytes(ids);
        } catch (e) {
            throw wasmFailure(e);
        }
        if (result.status.code !== OK) throw statusError(result.status, "the ids");
        const out = new Array(result.ends.length);
        let start = 0;
        for (let i = 0; i < out.length; ++i) {
            out[i] = result.bytes.subarray(start, result.ends[i]);
            start = result.ends[i];
        }
        return out;
    }

    #table() {
        if (!this.#tokens) this.#tokens = new TokenTable(this.#live().table());
        return this.#tokens;
    }

    /** @internal The token table's arrays (worker_main.js sends them to a WorkerTokenizer). */
    tableArrays() {
        return this.#table().arrays;
    }

    /** Token id's text as the vocabulary stores it ("Ġthe", "▁the", "<0x0A>"). */
    piece(id) {
        return this.#table().piece(id);
    }

    /** Token id's kind: "normal", "control", "user_defined", "byte", "unknown", "unused" or "undefined". */
    kind(id) {
        return this.#table().kind(id);
    }

    /** Frees the tokenizer's memory in the module; later calls throw. */
    dispose() {
        this.#handle?.delete();
        this.#handle = null;
        this.#tokens = null;
    }
}

/** @internal A model's tokenizer: from its GGUF keys (model.js). */
export function modelTokenizer(wasm, modelHandle) {
    const handle = new wasm.Tokenizer(modelHandle);
    const status = handle.status();
    if (status.code !== OK) {
        handle.delete();
        throw statusError(status, "tokenizer");
    }
    return new Tokenizer(wasm, handle);
}

const ROLES = {
    "tokenizer.json": "json",
    "tokenizer_config.json": "config",
    "tokenizer.model": "model",
};

/**
 * @internal tokenizer() of index.js, `options` open()'s (normalized). A tokenizer from Hugging Face files: one source or several (File, URL, {name, source}, ...), named
 * tokenizer.json, tokenizer.model and tokenizer_config.json. One file of another name counts as tokenizer.json
 * when it ends in .json, as tokenizer.model when it ends in .model. See index.d.ts.
 */
export async function tokenizerFromFiles(input, options) {
    const inputs = Array.isArray(input) ? input : [input];
    const files = {};
    for (const source of inputs) {
        const { name, input: located } = locate(source);
        let role = ROLES[name];
        if (!role && inputs.length === 1) role = name?.endsWith(".model") ? "model" : "json";
        if (!role)
            throw new TypeError(
                `tokenizer(): ${name ?? "a source"} is not tokenizer.json, tokenizer.model or tokenizer_config.json`,
            );
        if (files[role]) throw new TypeError(`tokenizer(): two ${name} files`);
        files[role] = { name: name ?? role, input: located };
    }
    if (!files.json && !files.model) throw new TypeError("tokenizer(): give a tokenizer.json or a tokenizer.model");
    const wasm = await loadWasm();
    const bytes = {};
    for (const [role, { name, input: source }] of Object.entries(files)) {
        bytes[role] = await readWhole(source, options, MAX_TOKENIZER_BYTES);
        if (bytes[role] === null)
            throw new WeightstreamError("too_large", `${name}: larger than ${MAX_TOKENIZER_BYTES} bytes`);
    }
    let handle;
    try {
        handle = new wasm.Tokenizer(bytes.json ?? null, bytes.config ?? null, bytes.model ?? null);
    } catch (e) {
        throw wasmFailure(e);
    }
    const status = handle.status();
    if (status.code !== OK) {
        handle.delete();
        const which = files.json ? "tokenizer.json" : "tokenizer.model";
        throw statusError(status, which);
    }
    return new Tokenizer(wasm, handle);
}
