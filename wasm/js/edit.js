// SPDX-License-Identifier: MIT
// edit(): a GGUF's metadata changed, its tensors streamed through unchanged. The core builds the new header
// (include/weightstream/gguf_edit.h, the one place the CLI's `weightstream edit` uses too, so the bytes are the same); this
// file only checks the caller's changes, hands them to the core as JSON text, and moves bytes: the header,
// then every tensor's stored bytes read through the model's sources, each followed by its zero padding.
// The stream is pulled: nothing past the header is read before the consumer asks for it.
import { statusError, throwIfAborted } from "./errors.js";
import { MODEL_INTERNALS } from "./model.js";
import { openModel } from "./parts.js";
import { generatorStream } from "./pump.js";
import { loadWasm, wasmFailure } from "./wasm.js";

const OK = 0;
const TYPES = new Set(["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool", "str"]);

// A scalar as JSON text: BigInts as their digits (a JSON number the core reads exactly, to 64 bits).
function scalarJson(key, v) {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number") {
        if (!Number.isFinite(v)) throw new TypeError(`set["${key}"]: ${v} cannot be written (not a finite number)`);
        return JSON.stringify(v);
    }
    if (typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
    throw new TypeError(`set["${key}"]: expected a string, number, bigint, boolean or an array of them, got ${v}`);
}

function valueJson(key, v) {
    if (Array.isArray(v) || ArrayBuffer.isView(v)) {
        if (v instanceof DataView) throw new TypeError(`set["${key}"]: a DataView is not an array of values`);
        return `[${Array.from(v, (item) => scalarJson(key, item)).join(",")}]`;
    }
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
    try {
        const { handle, chunks } = model[MODEL_INTERNALS]();
        const plan = wasm.editPlan(handle, set, remove);
        if (plan.status.code !== OK) throw statusError(plan.status, plan.key ? `key "${plan.key}"` : "");
        yield plan.header;
        for (let i = 0; i < model.tensors.length; ++i) {
            for await (const chunk of chunks(i, signal)) {
                throwIfAborted(signal);
                yield chunk.slice();
            }
            if (plan.padding[i] > 0) yield new Uint8Array(plan.padding[i]);
        }
    } catch (e) {
        throw wasmFailure(e);
    } finally {
        await model.close();
    }
}

/** See edit() in index.d.ts. `options` are open()'s (normalized). */
export function editStream(source, options, changes) {
    const { signal } = options;
    const steps = run(source, options, changes, signal);
    return generatorStream(steps, signal);
}
