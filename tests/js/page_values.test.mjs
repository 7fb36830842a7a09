// SPDX-License-Identifier: MIT
// The page's exact values of integer and float64 tensors (web/tensor_detail.js exactValues): the stored
// bytes of a little- or big-endian file as the typed array of the tensor's type, and their .npy (web/npy.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeNpy } from "../../web/npy.js";
import { EXACT_TYPES, exactValues } from "../../web/tensor_detail.js";

test("exactValues: every type from little- and big-endian bytes", () => {
    const cases = [
        ["I8", [-128, 127, -1], Int8Array],
        ["U8", [0, 255, 7], Uint8Array],
        ["BOOL", [0, 1, 1], Uint8Array],
        ["I16", [-32768, 32767, -2], Int16Array],
        ["U16", [0, 65535, 258], Uint16Array],
        ["I32", [-(2 ** 31), 2 ** 31 - 1, 16777217], Int32Array],
        ["U32", [0, 2 ** 32 - 1, 16777217], Uint32Array],
        ["I64", [-(2n ** 63n), 2n ** 63n - 1n, 9007199254740993n], BigInt64Array],
        ["U64", [0n, 2n ** 64n - 1n, 9007199254740993n], BigUint64Array],
        ["F64", [-0, Number.MIN_VALUE, 0.1], Float64Array],
    ];
    for (const [dtype, values, Type] of cases) {
        assert.equal(EXACT_TYPES[dtype].array, Type, dtype);
        const little = new Uint8Array(Type.from(values).buffer);
        assert.deepEqual(exactValues(little, dtype), Type.from(values), `${dtype} little-endian`);
        const size = Type.BYTES_PER_ELEMENT;
        const big = new Uint8Array(little.length);
        for (let i = 0; i < little.length; i += size) big.set(little.subarray(i, i + size).reverse(), i);
        assert.deepEqual(exactValues(big, dtype, true), Type.from(values), `${dtype} big-endian`);
    }
    // Bytes at an odd offset of their buffer are copied, not misread.
    const buffer = new Uint8Array(9);
    buffer.set(new Uint8Array(new BigInt64Array([-5n]).buffer), 1);
    assert.deepEqual(exactValues(buffer.subarray(1), "I64"), new BigInt64Array([-5n]));
});

test("encodeNpy: the descr of a stored type, the bytes as they are", () => {
    const values = new BigInt64Array([-(2n ** 63n), 1n]);
    const npy = encodeNpy(values, [2], { descr: "<i8" });
    const headerLength = npy[8] | (npy[9] << 8);
    assert.equal((10 + headerLength) % 64, 0);
    assert.match(
        new TextDecoder().decode(npy.subarray(10, 10 + headerLength)),
        /^\{'descr': '<i8', 'fortran_order': False, 'shape': \(2,\), \}/,
    );
    assert.deepEqual(npy.subarray(10 + headerLength), new Uint8Array(values.buffer));
});
