// SPDX-License-Identifier: MIT
// Loads the WebAssembly module once per realm. In Node the generated loader cannot fetch a file path, so the
// .wasm is read here and handed over as wasmBinary; browsers and workers fetch it next to dist/weightstream.js.
import createWeightstreamModule from "./dist/weightstream.js";
import { WeightstreamError, setCoreDescriptions } from "./errors.js";

const isNode = typeof process === "object" && typeof process.versions?.node === "string";

let loading = null;
let dtypeTable = null;

async function instantiate() {
    const options = {};
    if (isNode) {
        const fsName = "node:fs/promises"; // a variable: bundlers for the browser must not resolve it
        const fs = await import(/* @vite-ignore */ fsName);
        options.wasmBinary = await fs.readFile(new URL("./dist/weightstream.wasm", import.meta.url));
    }
    const module = await createWeightstreamModule(options);
    setCoreDescriptions(module.errorNames(), module.errorDescriptions());
    return module;
}

/** The instantiated module (shared by every model). */
export function loadWasm() {
    if (!loading) {
        loading = instantiate().catch((e) => {
            loading = null;
            throw new WeightstreamError("wasm_load", `cannot load weightstream.wasm: ${e?.message ?? e}`, { cause: e });
        });
    }
    return loading;
}

/**
 * A wasm trap (an out-of-memory abort) leaves the module unusable: forget it so the next open() starts a
 * fresh instance, and report the trap as an Error with a code.
 */
export function wasmFailure(error) {
    if (error instanceof WebAssembly.RuntimeError) {
        loading = null;
        dtypeTable = null;
        return new WeightstreamError("internal", `WebAssembly trap: ${error.message}`, { cause: error });
    }
    return error;
}

/** dtype name -> {id, name, kind, blockElements, blockBytes, floatsPerElement, decodable}. */
export function dtypesOf(wasm) {
    if (!dtypeTable || dtypeTable.wasm !== wasm) {
        const byName = new Map();
        for (const d of wasm.dtypes()) {
            if (d.name && d.kind !== "removed" && d.kind !== "unknown") byName.set(d.name, Object.freeze(d));
        }
        dtypeTable = { wasm, byName };
    }
    return dtypeTable.byName;
}
