// SPDX-License-Identifier: MIT
// A minimal GGUF v3 writer for test fixtures the corpus lacks (odd metadata, large headers, corrupt files).
// Independent of the package: it writes the layout of ggml's gguf.md directly.

const TYPE_IDS = {
    uint8: 0,
    int8: 1,
    uint16: 2,
    int16: 3,
    uint32: 4,
    int32: 5,
    float32: 6,
    bool: 7,
    string: 8,
    array: 9,
    uint64: 10,
    int64: 11,
    float64: 12,
};

class Bytes {
    constructor() {
        this.parts = [];
        this.length = 0;
    }
    push(buf) {
        this.parts.push(buf);
        this.length += buf.length;
    }
    u32(v) {
        const b = Buffer.alloc(4);
        b.writeUInt32LE(v);
        this.push(b);
    }
    u64(v) {
        const b = Buffer.alloc(8);
        b.writeBigUInt64LE(BigInt(v));
        this.push(b);
    }
    string(s) {
        const b = typeof s === "string" ? Buffer.from(s, "utf8") : Buffer.from(s);
        this.u64(b.length);
        this.push(b);
    }
    scalar(type, v) {
        const b = Buffer.alloc(
            { uint8: 1, int8: 1, bool: 1, uint16: 2, int16: 2, uint32: 4, int32: 4, float32: 4 }[type] ?? 8,
        );
        switch (type) {
            case "uint8":
                b.writeUInt8(v);
                break;
            case "int8":
                b.writeInt8(v);
                break;
            case "bool":
                b.writeUInt8(v ? 1 : 0);
                break;
            case "uint16":
                b.writeUInt16LE(v);
                break;
            case "int16":
                b.writeInt16LE(v);
                break;
            case "uint32":
                b.writeUInt32LE(v);
                break;
            case "int32":
                b.writeInt32LE(v);
                break;
            case "float32":
                b.writeFloatLE(v);
                break;
            case "uint64":
                b.writeBigUInt64LE(BigInt(v));
                break;
            case "int64":
                b.writeBigInt64LE(BigInt(v));
                break;
            case "float64":
                b.writeDoubleLE(v);
                break;
            default:
                throw new Error(`unknown scalar type ${type}`);
        }
        this.push(b);
    }
    value(type, v, itemType) {
        if (type === "string") return this.string(v);
        if (type !== "array") return this.scalar(type, v);
        this.u32(TYPE_IDS[itemType.type ?? itemType]);
        this.u64(v.length);
        for (const item of v) {
            if (typeof itemType === "object") this.value("array", item, itemType.items);
            else this.value(itemType, item);
        }
    }
    pad(alignment) {
        const n = (alignment - (this.length % alignment)) % alignment;
        if (n) this.push(Buffer.alloc(n));
    }
    bytes() {
        return new Uint8Array(Buffer.concat(this.parts));
    }
}

/**
 * The header of a GGUF v3 file up to its data section (padded to the alignment): kv as for writeGguf, tensors
 * [{name, type (ggml id), ne, nbytes}]. Each tensor's data follows at its offset, padded to the alignment.
 * Returns {bytes, offsets (relative to the data section)}.
 */
export function ggufHeader({ kv = [], tensors = [], alignment = 32 }) {
    const out = new Bytes();
    out.push(Buffer.from("GGUF"));
    out.u32(3);
    out.u64(tensors.length);
    out.u64(kv.length);
    for (const { key, type, value, itemType } of kv) {
        out.string(key);
        out.u32(TYPE_IDS[type]);
        out.value(type, value, itemType);
    }
    let offset = 0;
    const offsets = [];
    for (const t of tensors) {
        offsets.push(offset);
        offset += Math.ceil(t.nbytes / alignment) * alignment;
    }
    tensors.forEach((t, i) => {
        out.string(t.name);
        out.u32(t.ne.length);
        for (const n of t.ne) out.u64(n);
        out.u32(t.type);
        out.u64(offsets[i]);
    });
    if (tensors.length) out.pad(alignment);
    return { bytes: out.bytes(), offsets };
}

/**
 * kv: [{key, type, value, itemType}] (itemType for arrays: a type name, or {type: "array", items} nested);
 * strings may be given as bytes (for invalid UTF-8). tensors: [{name, type (ggml id), ne, data}].
 */
export function writeGguf({ kv = [], tensors = [], alignment = 32 }) {
    const header = ggufHeader({ kv, tensors: tensors.map((t) => ({ ...t, nbytes: t.data.length })), alignment });
    const out = new Bytes();
    out.push(Buffer.from(header.bytes));
    for (const t of tensors) {
        out.push(Buffer.from(t.data));
        out.pad(alignment);
    }
    return out.bytes();
}

/**
 * A GGUF without tensors (v3, little-endian, alignment 32: a real vocabulary file) with one F32 tensor "weight"
 * of `n` values appended: its directory entry after the header, then the values. Returns {bytes, header (the
 * header's new length, before the padding)}.
 */
export function withF32Tensor(tensorless, n) {
    const entry = new Bytes();
    entry.string("weight");
    entry.u32(1);
    entry.u64(n);
    entry.u32(0); // F32
    entry.u64(0);
    const head = Buffer.concat([Buffer.from(tensorless), Buffer.from(entry.bytes())]);
    head.writeBigUInt64LE(1n, 8); // n_tensors
    const data = Buffer.alloc(n * 4);
    for (let i = 0; i < n; ++i) data.writeFloatLE((i % 1000) / 8, i * 4);
    const padding = Buffer.alloc((32 - (head.length % 32)) % 32);
    return { bytes: new Uint8Array(Buffer.concat([head, padding, data])), header: head.length };
}
