// SPDX-License-Identifier: MIT
// Runs in Chromium (a page or a Web Worker; served by nginx at /tests/), never in Node: opens a model with the
// package's open() (passed in, so this file needs no import map) and describes it as the Node side of
// browser.test.mjs compares it with the native CLI: the info object and, per tensor, the sha256 of its float32
// decode and of its stored bytes.

async function sha256(view) {
    const digest = await crypto.subtle.digest("SHA-256", view);
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * {info, hashes: {name: {f32, raw}}, kinds: {name: constructor name}}. mode "read": every tensor by
 * model.read() (f32, then raw); "stream": one model.stream() pass (f32), raw hashes left out.
 */
export async function describeModel(open, source, { mode = "read", options = {} } = {}) {
    const model = await open(source, options);
    try {
        const hashes = {};
        const kinds = {};
        if (mode === "stream") {
            for await (const { tensor, data } of model.stream()) {
                hashes[tensor.name] = { f32: await sha256(data) };
                kinds[tensor.name] = data.constructor.name;
            }
        } else {
            for (const tensor of model.tensors) {
                const data = await model.read(tensor.name);
                const raw = await model.read(tensor.name, { as: "raw" });
                hashes[tensor.name] = { f32: await sha256(data), raw: await sha256(raw) };
                kinds[tensor.name] = data.constructor.name;
            }
        }
        return { info: model.info, hashes, kinds };
    } finally {
        await model.close();
    }
}

/** An error as plain data: what crossed from the page to the test. */
export function errorRecord(e) {
    return { name: e?.name, code: e?.code, message: String(e?.message ?? e), offset: e?.offset, file: e?.file };
}
