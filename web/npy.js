// SPDX-License-Identifier: MIT
// NumPy .npy (format version 1.0) for decoded values, so that `numpy.load` reads a download as is.

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // "\x93NUMPY"

/**
 * The bytes of an .npy file holding `values` with `shape`, C order: float32 (or complex64 pairs), or the
 * NumPy type `descr` ("<i8", "|u1", ...) of a typed array of another type, its bytes as they are.
 */
export function encodeNpy(values, shape, { complex = false, descr = complex ? "<c8" : "<f4" } = {}) {
    const dims = shape.map((d) => String(d));
    const tuple = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(", ")})`;
    let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${tuple}, }`;
    // The magic, version and length take 10 bytes; the header ends with "\n" and pads the whole to 64.
    const unpadded = 10 + header.length + 1;
    header += " ".repeat((64 - (unpadded % 64)) % 64) + "\n";
    const out = new Uint8Array(10 + header.length + values.byteLength);
    out.set(MAGIC, 0);
    out[6] = 1;
    out[7] = 0;
    out[8] = header.length & 0xff;
    out[9] = header.length >> 8;
    for (let i = 0; i < header.length; ++i) out[10 + i] = header.charCodeAt(i);
    out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), 10 + header.length);
    return out;
}
