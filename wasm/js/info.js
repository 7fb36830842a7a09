// SPDX-License-Identifier: MIT
// The model description crosses from the core as JSON text without its big parts, which come as typed arrays
// (wasm/info_transfer.h): the items of flat metadata arrays, the tensor table, and, listed apart, the
// integers beyond 2^53 that a double cannot hold (those become BigInt here). What readInfo() builds equals the
// object `weightstream info --json` prints.

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
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
    // JSON has no NaN or infinities: the CLI prints their names as strings (include/weightstream/model_json.h).
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

// Strings packed as UTF-16 with their ends; those that are not UTF-8 come apart as [index, text, ...].
function unpackStrings(packed) {
    const text = utf16.decode(packed.units);
    const ends = packed.utf16Ends;
    const items = new Array(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; ++i) {
        items[i] = text.slice(start, ends[i]);
        start = ends[i];
    }
    for (const [index, replaced] of packed.invalid) items[index] = replaced;
    return items;
}

// The tensor records of `info --json` (keys in its order) from the core's columns.
function tensorsOf(table, files, gguf) {
    const names = unpackStrings(table.names);
    const { dtypeNames, dtype, shape, shapeEnds, offset, nbytes, nElements, rows, file } = table;
    const tensors = new Array(names.length);
    let start = 0;
    for (let i = 0; i < names.length; ++i) {
        const dims = listOf(shape.subarray(start, shapeEnds[i]));
        start = shapeEnds[i];
        const t = { dtype: dtypeNames[dtype[i]] };
        if (file) t.file = files[file[i]];
        t.n_elements = nElements[i];
        t.name = names[i];
        t.nbytes = nbytes[i];
        if (gguf) t.ne = dims.slice().reverse();
        t.offset = offset[i];
        t.rows = rows[i];
        t.shape = dims;
        tensors[i] = t;
    }
    for (const [i, , hex] of table.names.invalid) tensors[i].name_hex = hex;
    for (const [i, field, dim, decimal] of table.wide) {
        const t = tensors[i];
        if (field === "shape") {
            t.shape[dim] = BigInt(decimal);
            if (t.ne) t.ne[t.ne.length - 1 - dim] = t.shape[dim];
        } else {
            t[field] = BigInt(decimal);
        }
    }
    return tensors;
}

/**
 * The model description of a wasm Model handle: the JSON text with the flat arrays' items put back (see
 * wasm/info_transfer.h), equal to what `weightstream info --json` prints.
 */
export function readInfo(handle) {
    const info = JSON.parse(handle.infoJson());
    for (const [entry, path, decimal] of handle.wideIntegers()) {
        const e = info.metadata[entry];
        if (path.length === 0) {
            e.value = BigInt(decimal);
            continue;
        }
        let array = e.value;
        for (const k of path.slice(0, -1)) array = array[k];
        array[path.at(-1)] = BigInt(decimal);
    }
    const arrays = handle.metadataArrays();
    if (arrays === null) throw new Error("metadata strings too long to transfer");
    for (const array of arrays) {
        const entry = info.metadata[array.entry];
        entry.length = array.length;
        if (entry.item_type === "string") {
            entry.value = unpackStrings(array);
            if (array.invalid.length) {
                entry.invalid_items = array.invalid.map(([index, , hex]) => ({ index, bytes_hex: hex }));
            }
        } else {
            entry.value = scalarItems(entry.item_type, array.bytes, array.length);
        }
    }
    const table = handle.tensorTable();
    if (table === null) throw new Error("tensor names too long to transfer");
    info.tensors = tensorsOf(table, info.files ?? [], info.format === "gguf");
    return info;
}
