// SPDX-License-Identifier: MIT
// compare(a, b): two models compared tensor by tensor, resolving to the object `weightstream diff --json`
// prints. The core's CompareJob (include/weightstream/compare_job.h) pairs the tensors (by name, or a Hugging
// Face checkpoint against its GGUF by llama.cpp's conversion rules), compares them and writes the JSON; the
// package's pump (pump.js) runs it. This file only opens: each model's header and config.json beside a
// safetensors side (checkpoint.js); the job then reads, pair by pair, a window of whole rows of each side at a time, so memory
// stays at about a window of each side whatever the models' sizes.
import { configBytes, splitConfig } from "./checkpoint.js";
import { WeightstreamError, throwIfAborted } from "./errors.js";
import { MODEL_INTERNALS } from "./model.js";
import { namePattern } from "./name_pattern.js";
import { locate, openModel } from "./parts.js";
import { pump, releaseJob } from "./pump.js";
import { wasmFailure } from "./wasm.js";

// What the report calls a side ("path"): what the CLI would be given, as far as the source has a name.
function pathOf(input) {
    if (Array.isArray(input)) return input.length ? pathOf(input[0]) : "";
    if (typeof input === "string") return input;
    if (input instanceof URL) return input.href;
    if (typeof Request !== "undefined" && input instanceof Request) return input.url;
    return locate(input).name ?? "";
}

// The pairs compare() keeps: {keep(name), dispose()} (see name_pattern.js).
function tensorFilter(wasm, tensors) {
    if (tensors === undefined) return { keep: () => true, dispose() {} };
    if (typeof tensors !== "string" && !(tensors instanceof RegExp))
        throw new TypeError("tensors: expected a RegExp or a string");
    const pattern = namePattern(wasm, "tensors", tensors);
    return { keep: (name) => name !== null && pattern.test(name), dispose: pattern.dispose };
}

// Compares the selected rows pair by pair; returns the report's JSON text.
async function run(job, models, options, keep) {
    const { signal, onProgress, onTensor } = options;
    const rows = [];
    job.pairs().forEach(([a, b], i) => {
        if (keep(a) || keep(b)) rows.push(i);
    });
    if (!job.select(rows)) throw new WeightstreamError("internal", "compare: bad row selection");
    // The job's sources: A's files, then B's.
    const [a, b] = models.map((m) => m[MODEL_INTERNALS]());
    const read = (source, offset, size, signal) =>
        source < a.files
            ? a.readChunks(source, offset, size, signal)
            : b.readChunks(source - a.files, offset, size, signal);
    const total = job.totalWork();
    let loaded = 0;
    onProgress?.({ loaded, total });
    const report = () => {
        for (const r of job.finished()) onTensor?.(JSON.parse(job.rowJson(r)), r);
    };
    const onStep = (step) => {
        loaded += step.work;
        onProgress?.({ loaded, total });
        report();
    };
    const steps = pump(job, read, { signal, onStep });
    while (!(await steps.next()).done) {
        // compare writes no output: the steps only feed the job
    }
    report();
    return job.report();
}

/** compare() of index.d.ts: `options` normalized by index.js. */
export async function compareModels(wasm, a, b, options) {
    throwIfAborted(options.signal);
    if (options.onTensor !== undefined && typeof options.onTensor !== "function")
        throw new TypeError("onTensor: expected a function");
    const filter = tensorFilter(wasm, options.tensors);
    const sides = [splitConfig(a), splitConfig(b)];
    // Header progress is not reported: compare()'s onProgress counts the bytes of the compared tensors.
    const openOptions = { ...options, onProgress: undefined, keepMetadata: true };
    const models = [];
    let job = null;
    try {
        for (const side of sides) models.push(await openModel(wasm, side.model, openOptions));
        const configs = [];
        for (let i = 0; i < 2; ++i) {
            configs.push(models[i].format === "safetensors" ? await configBytes(sides[i], options) : null);
        }
        job = new wasm.CompareJob(
            models[0][MODEL_INTERNALS]().handle,
            models[1][MODEL_INTERNALS]().handle,
            configs[0],
            configs[1],
            pathOf(sides[0].model),
            pathOf(sides[1].model),
        );
        return JSON.parse(await run(job, models, options, filter.keep));
    } catch (e) {
        throw wasmFailure(e);
    } finally {
        releaseJob(job);
        filter.dispose();
        await Promise.all(models.map((m) => m.close()));
    }
}
