// SPDX-License-Identifier: MIT
// The model description arrives as the CLI's `info --json` text (built by the core with nlohmann, which
// prints 64-bit integers exactly). JSON.parse would round integers beyond 2^53; those become BigInt here.

const LONG_DIGIT_RUN = /\d{16}/; // 2^53 has 16 digits: a text without such a run has no unsafe integer
const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
// Marks an unsafe integer after it is turned into a JSON string. The text is valid UTF-8 (invalid bytes in
// file strings were replaced when it was printed) and so can never hold a lone surrogate itself.
const MARK = "\udfff";

function markUnsafeIntegers(text) {
    return text.replace(JSON_TOKEN, (token) => {
        if (token.charCodeAt(0) === 34 /* '"' */ || token.length < 16 || /[.eE]/.test(token)) return token;
        const n = BigInt(token);
        return n > MAX_SAFE || n < -MAX_SAFE ? `"\\udfff${token}"` : token;
    });
}

function reviveMarked(value) {
    if (typeof value === "string") return value.charCodeAt(0) === 0xdfff ? BigInt(value.slice(MARK.length)) : value;
    if (Array.isArray(value)) {
        for (let i = 0; i < value.length; ++i) {
            const v = value[i];
            if (typeof v === "object" || typeof v === "string") value[i] = reviveMarked(v);
        }
    } else if (value !== null && typeof value === "object") {
        for (const key of Object.keys(value)) value[key] = reviveMarked(value[key]);
    }
    return value;
}

/** JSON text -> object, integers beyond +-(2^53 - 1) as BigInt, every other number as a Number. */
export function parseJsonExact(text) {
    if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
    return reviveMarked(JSON.parse(markUnsafeIntegers(text)));
}

const utf16 = new TextDecoder("utf-16le");

// A plain array of the typed array's items, each mapped by fn: a loop, several times faster than Array.from
// (which goes through the iterator protocol) on 100k-item vocabularies.
function listOf(typed, fn) {
    const out = new Array(typed.length);
    if (fn) for (let i = 0; i < typed.length; ++i) out[i] = fn(typed[i]);
    else for (let i = 0; i < typed.length; ++i) out[i] = typed[i];
    return out;
}

function scalarItems(itemType, bytes, length) {
    const { buffer } = bytes;
    // JSON has no NaN or infinities: the CLI prints their names as strings (core/model_json.h).
    const finite = (x) => (Number.isFinite(x) ? x : Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity");
    const wide = (x) => (x > MAX_SAFE || x < -MAX_SAFE ? x : Number(x));
    switch (itemType) {
        case "uint8":
            return listOf(bytes);
        case "int8":
            return listOf(new Int8Array(buffer, 0, length));
        case "uint16":
            return listOf(new Uint16Array(buffer, 0, length));
        case "int16":
            return listOf(new Int16Array(buffer, 0, length));
        case "uint32":
            return listOf(new Uint32Array(buffer, 0, length));
        case "int32":
            return listOf(new Int32Array(buffer, 0, length));
        case "float32":
            return listOf(new Float32Array(buffer, 0, length), finite);
        case "float64":
            return listOf(new Float64Array(buffer, 0, length), finite);
        case "bool":
            return listOf(bytes, (b) => b !== 0);
        case "uint64":
            return listOf(new BigUint64Array(buffer, 0, length), wide);
        case "int64":
            return listOf(new BigInt64Array(buffer, 0, length), wide);
        default:
            throw new Error(`unexpected array item type ${itemType}`);
    }
}

function stringItems(array) {
    const text = utf16.decode(array.units);
    const ends = array.utf16Ends;
    const items = new Array(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; ++i) {
        items[i] = text.slice(start, ends[i]);
        start = ends[i];
    }
    for (const [index, json] of array.invalid) items[index] = JSON.parse(json);
    return items;
}

/**
 * The model description of a wasm Model handle: the JSON text with the flat arrays' items put back (see
 * wasm/info_transfer.h), equal to what `weightstream info --json` prints.
 */
export function readInfo(handle) {
    const info = parseJsonExact(handle.infoJson());
    const arrays = handle.metadataArrays();
    if (arrays === null) throw new Error("metadata strings too long to transfer");
    for (const array of arrays) {
        const entry = info.metadata[array.entry];
        entry.length = array.length;
        entry.value =
            entry.item_type === "string" ? stringItems(array) : scalarItems(entry.item_type, array.bytes, array.length);
    }
    return info;
}
