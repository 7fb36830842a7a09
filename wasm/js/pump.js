// SPDX-License-Identifier: MIT
// The one JavaScript pump of the core's jobs (include/weightstream/job.h, the Job class of wasm/bindings.cpp):
// every operation the package runs in the core — quantize(), compare(), convert(), edit(), stats() — goes through
// here, as every native command that runs a job goes through native/io/job_driver.cpp. The job says which byte
// ranges its next step reads; the pump reads them from the sources, hands them in, runs the step and passes its
// output on. It moves bytes; the job decides.
import { WeightstreamError, abortReason, statusError, throwIfAborted } from "./errors.js";
import { MODEL_INTERNALS } from "./model.js";

const OK = 0;

/** Frees a job (a core object of the Job class); a trapped module cannot free, and is discarded anyway. */
export function releaseJob(job) {
    try {
        job?.delete();
    } catch {
        // nothing to do
    }
}

/**
 * Runs `job` to its end, yielding its output chunks (new arrays the consumer owns).
 * - `read(source, offset, size, signal)` gives the bytes [offset, offset + size) of the job's source `source`
 *   as they arrive (an async iterable of Uint8Arrays), each chunk copied into the job as it comes (no array of
 *   the whole range is made); fewer bytes mean the range lies outside the file, which the job takes in or turns
 *   into its error.
 * - `context(step)` names what a failing step was about ("tensor \"x\""), for the error's message.
 * - `onStep(step, ms)` is called after each step (step.work counts toward job.totalWork()); ms: how long the job
 *   took to run and complete it (0 when its input was unreadable).
 * - `onBytes(n)` is called as each chunk of input arrives (n bytes), for progress finer than a step: a step over a
 *   slow server can take a while.
 */
export async function* pump(job, read, { signal, context = () => "", onStep, onBytes } = {}) {
    for (let step = job.next(); step !== null; step = job.next()) {
        throwIfAborted(signal);
        // A step's inputs are read together (compare reads both sides of a window at once); allSettled, so that
        // no read still feeds the job after one failed.
        const reads = await Promise.allSettled(
            step.inputs.map(async (r, i) => {
                let got = 0;
                if (r.size > 0) {
                    for await (const chunk of read(r.source, r.offset, r.size, signal)) {
                        const piece = chunk.length > r.size - got ? chunk.subarray(0, r.size - got) : chunk;
                        if (!job.addInput(i, piece))
                            throw new WeightstreamError("internal", "job: input past its size");
                        got += piece.length;
                        onBytes?.(piece.length);
                        if (got === r.size) break;
                    }
                }
                return got === r.size;
            }),
        );
        const short = (r) => r.reason instanceof WeightstreamError && r.reason.code === "truncated";
        const failed = reads.find((r) => r.status === "rejected" && !short(r));
        if (failed) throw failed.reason;
        throwIfAborted(signal);
        const unreadable = reads.findIndex((r) => r.status === "rejected" || !r.value);
        let ms = 0;
        if (unreadable >= 0) {
            const status = job.unreadable(unreadable);
            if (status.code !== OK) throw statusError(status, context(step));
        } else {
            const t0 = performance.now();
            const status = job.run();
            ms = performance.now() - t0;
            if (status.code !== OK) throw statusError(status, context(step));
            const out = job.output();
            if (out.length) yield out;
        }
        onStep?.(step, ms);
    }
}

/**
 * A job that writes a file from `model`'s tensors (quantize, convert), pumped with progress: `planned` are the
 * output's tensors in order ({input, type}: the input tensor's index, the output type), `names` their output
 * names; onProgress gets {loaded, total, tensor, tensors, name, dtype, written, outputSize, warnings} after
 * every step that read bytes, and once more at the end (tensor === tensors).
 */
export async function* pumpToFile(job, model, planned, names, { signal, onProgress }) {
    const planOf = new Map(planned.map((p, k) => [p.input, k]));
    const report = {
        loaded: 0,
        total: job.totalWork(),
        tensor: 0,
        tensors: planned.length,
        name: "",
        dtype: "",
        written: 0,
        outputSize: job.fileSize(),
        warnings: job.warnings(),
    };
    const context = (step) => (step.tensor >= 0 ? `tensor "${model.tensors[step.tensor].name}"` : "");
    const onStep = (step) => {
        const k = planOf.get(step.tensor);
        if (k !== undefined) {
            report.tensor = k;
            report.name = names[k];
            report.dtype = planned[k].type;
        }
        report.loaded += step.work;
        if (step.work > 0) onProgress?.({ ...report });
    };
    const { readChunks } = model[MODEL_INTERNALS]();
    for await (const out of pump(job, readChunks, { signal, context, onStep })) {
        report.written += out.length;
        yield out;
    }
    report.tensor = planned.length;
    onProgress?.({ ...report });
}

/**
 * A byte stream pulled from the async generator `steps` one chunk at a time (no read-ahead); `signal` aborts
 * it (the stream errors with the signal's reason and the generator is closed). quantize(), convert() and edit() share it.
 */
export function generatorStream(steps, signal) {
    let onAbort = null;
    const stop = () => signal?.removeEventListener("abort", onAbort);
    return new ReadableStream(
        {
            start(controller) {
                if (!signal) return;
                onAbort = () => {
                    controller.error(abortReason(signal));
                    steps.return().catch(() => {});
                };
                signal.addEventListener("abort", onAbort, { once: true });
            },
            async pull(controller) {
                try {
                    const { done, value } = await steps.next();
                    if (done) {
                        stop();
                        controller.close();
                    } else controller.enqueue(value);
                } catch (e) {
                    stop();
                    throw e;
                }
            },
            async cancel() {
                stop();
                await steps.return();
            },
        },
        { highWaterMark: 0 },
    );
}
