// SPDX-License-Identifier: MIT
// A minimal safetensors writer for test fixtures (shards of a sharded model). Independent of the package: it
// writes the layout of the format's documentation directly (u64 header length, JSON header padded with spaces
// to 8 bytes as the Python library does, then the data in header order).

/** tensors: [{name, dtype, shape, data: Uint8Array}]; metadata: {key: string} or undefined. */
export function writeSafetensors({ tensors, metadata }) {
    const header = {};
    if (metadata) header.__metadata__ = metadata;
    let offset = 0;
    for (const t of tensors) {
        header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.length] };
        offset += t.data.length;
    }
    let json = Buffer.from(JSON.stringify(header), "utf8");
    const padded = Math.ceil(json.length / 8) * 8;
    json = Buffer.concat([json, Buffer.alloc(padded - json.length, 0x20)]);
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(json.length));
    return new Uint8Array(Buffer.concat([length, json, ...tensors.map((t) => Buffer.from(t.data))]));
}
