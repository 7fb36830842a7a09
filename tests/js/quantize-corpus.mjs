// SPDX-License-Identifier: MIT
// The quantizer parity check shared by Node (quantize.test.mjs) and Chromium (tests/browser/quantize-parity):
// every tensor of the ggml corpus (tests/data/ggml, manifest.json) that ggml quantized is quantized again by
// the package's core quantizer in wasm (quantizeRows) from the floats ggml quantized (ref/*.src.f32, with
// ref/*.imatrix.f32 where it took an importance matrix), whole and one row at a time, and compared with the
// bytes stored in the corpus file. Runs wherever `load` can read the corpus; returns plain data for the
// caller to assert (so that it can cross from a page to the test).

const f32 = (bytes) =>
    bytes.byteOffset % 4 === 0
        ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)
        : new Float32Array(bytes.slice().buffer);

function equalBytes(a, b) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; ++i) if (a[i] !== b[i]) return false;
    return true;
}

/**
 * wasm: loadWasm()'s module; load(file): the bytes (Uint8Array) of a file of the corpus folder, by the
 * manifest's relative name. {checked, withImatrix, types: [ggml type names checked], mismatches: [{name,
 * what}], refusal: {status, what} of IQ2_XXS without an importance matrix}.
 */
export async function quantizeCorpus(wasm, load) {
    const manifest = JSON.parse(new TextDecoder().decode(await load("manifest.json")));
    const result = { checked: 0, withImatrix: 0, types: [], mismatches: [], refusal: null };
    for (const f of manifest.files) {
        const file = await load(f.file);
        for (const t of f.tensors) {
            if (!t.source) continue;
            const src = f32(await load(t.source.file));
            const imatrix = t.source.imatrix ? f32(await load(t.source.imatrix.file)) : null;
            const { nrows, n_per_row: cols } = t.source;
            const stored = file.subarray(t.absolute_offset, t.absolute_offset + t.size_bytes);
            const whole = wasm.quantizeRows(t.ggml_type_id, src, nrows, cols, imatrix);
            if (whole.status.name !== "ok") {
                result.mismatches.push({ name: t.name, what: `status ${whole.status.name} ${whole.status.what}` });
                continue;
            }
            if (!equalBytes(whole.bytes, stored)) result.mismatches.push({ name: t.name, what: "whole" });
            const rowBytes = t.size_bytes / nrows;
            for (let row = 0; row < nrows; ++row) {
                const one = wasm.quantizeRows(
                    t.ggml_type_id,
                    src.subarray(row * cols, (row + 1) * cols),
                    1,
                    cols,
                    imatrix,
                );
                if (!equalBytes(one.bytes, stored.subarray(row * rowBytes, (row + 1) * rowBytes))) {
                    result.mismatches.push({ name: t.name, what: `row ${row}` });
                    break;
                }
            }
            result.checked += 1;
            result.types.push(t.ggml_type);
            if (imatrix) result.withImatrix += 1;
        }
    }
    // The types that need an importance matrix refuse to run without one, as ggml does.
    const iq2xxs = manifest.files[0].tensors.find((t) => t.name === "iq2_xxs.weight");
    const r = wasm.quantizeRows(iq2xxs.ggml_type_id, f32(await load(iq2xxs.source.file)), 8, 512, null);
    result.refusal = { status: r.status.name, what: r.status.what };
    return result;
}
