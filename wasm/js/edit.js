// SPDX-License-Identifier: MIT
// edit(): a GGUF's metadata changed, its tensors streamed through unchanged, as the core's EditJob
// (include/weightstream/edit_job.h, the job the CLI's `weightstream edit` runs too, so the bytes are the same) run by
// the package's one pump (pump.js). This file only checks the caller's changes and hands them to the core as JSON
// text; the job says what to read (the header, then every tensor's stored bytes in pieces, each followed by its zero
// padding). The stream is pulled: nothing past the header is read before the consumer asks for it.
import { statusError, throwIfAborted } from "./errors.js";
import { MODEL_INTERNALS } from "./model.js";
import { openModel } from "./parts.js";
import { generatorStream, pump, releaseJob } from "./pump.js";
import { loadWasm, wasmFailure } from "./wasm.js";

const OK = 0;
const TYPES = new Set(["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool", "str"]);

const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 64n - 1n;

// A scalar as JSON text: BigInts as their digits (a JSON number the core reads exactly, to 64 bits; past 64
// bits JSON would read it as a float, so it is refused here).
function scalarJson(key, v) {
    if (typeof v === "bigint") {
        if (v < BIGINT_MIN || v > BIGINT_MAX)
            throw new RangeError(`set["${key}"]: ${v}n does not fit 64 bits (i64 from -2^63, u64 up to 2^64 - 1)`);
        return v.toString();
    }
    if (typeof v === "number") {
        if (!Number.isFinite(v)) throw new TypeError(`set["${key}"]: ${v} cannot be written (not a finite number)`);
        return JSON.stringify(v);
    }
    if (typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
    throw new TypeError(`set["${key}"]: expected a string, number, bigint, boolean or an array of them, got ${v}`);
}

function valueJson(key, v) {
    if (v instanceof DataView) throw new TypeError(`set["${key}"]: a DataView is not an array of values`);
    if (ArrayBuffer.isView(v)) {
        // A typed array's items are numbers (BigInts for the 64-bit ones, always in range) that join() writes as
        // JSON does once they are finite: one pass in the engine, not a string per item (edit() of 40M u8 items:
        // 20 s -> 7.7 s here).
        if ((v instanceof Float32Array || v instanceof Float64Array) && !v.every(Number.isFinite)) {
            throw new TypeError(
                `set["${key}"]: ${v.find((x) => !Number.isFinite(x))} cannot be written (not a finite number)`,
            );
        }
        return `[${v.join(",")}]`;
    }
    if (Array.isArray(v)) return `[${Array.from(v, (item) => scalarJson(key, item)).join(",")}]`;
    return scalarJson(key, v);
}

/** changes -> the core's lists ([[key, json, type]], [keys]); throws TypeError on a malformed object. */
function editsOf(changes) {
    if (changes === null || typeof changes !== "object")
        throw new TypeError("edit(): changes must be an object {set, delete, chatTemplate}");
    const set = [];
    if (changes.set !== undefined) {
        if (changes.set === null || typeof changes.set !== "object" || Array.isArray(changes.set))
            throw new TypeError("set: expected an object of key -> value or {value, type}");
        for (const [key, entry] of Object.entries(changes.set)) {
            const typed = entry !== null && typeof entry === "object" && !Array.isArray(entry) && "value" in entry;
            if (typed && entry.type !== undefined && !TYPES.has(entry.type))
                throw new TypeError(`set["${key}"]: type must be one of ${[...TYPES].join(" ")}, got ${entry.type}`);
            set.push([key, valueJson(key, typed ? entry.value : entry), typed ? (entry.type ?? "") : ""]);
        }
    }
    if (changes.chatTemplate !== undefined) {
        if (typeof changes.chatTemplate !== "string") throw new TypeError("chatTemplate: expected a string");
        set.push(["tokenizer.chat_template", JSON.stringify(changes.chatTemplate), "str"]);
    }
    const remove = changes.delete ?? [];
    if (!Array.isArray(remove) || !remove.every((k) => typeof k === "string"))
        throw new TypeError("delete: expected an array of keys");
    return { set, remove };
}

async function* run(source, options, changes, signal) {
    throwIfAborted(signal);
    const { set, remove } = editsOf(changes);
    const wasm = await loadWasm();
    const model = await openModel(wasm, source, { ...options, onProgress: undefined, keepMetadata: true });
    let job = null;
    try {
        job = new wasm.EditJob();
        const { handle, readChunks } = model[MODEL_INTERNALS]();
        const status = job.plan(handle, set, remove);
        if (status.code !== OK) {
            const key = job.failedKey();
            throw statusError(status, key ? `key "${key}"` : "");
        }
        const context = (step) => (step.tensor >= 0 ? `tensor "${model.tensors[step.tensor].name}"` : "");
        yield* pump(job, readChunks, { signal, context });
    } catch (e) {
        throw wasmFailure(e);
    } finally {
        releaseJob(job);
        await model.close();
    }
}

/** See edit() in index.d.ts. `options` are open()'s (normalized). */
export function editStream(source, options, changes) {
    const { signal } = options;
    const steps = run(source, options, changes, signal);
    return generatorStream(steps, signal);
}
