// SPDX-License-Identifier: MIT
// The one JavaScript pump of the core's jobs (include/weightstream/job.h, the Job class of wasm/bindings.cpp):
// every operation the package runs in the core — quantize(), compare(), convert() — goes through here, as every native
// command that runs a job goes through native/io/job_driver.cpp. The job says which byte ranges its next step
// reads; the pump reads them from the sources, hands them in, runs the step and passes its output on. It moves
// bytes; the job decides.
import { WeightstreamError, statusError, throwIfAborted } from "./errors.js";

const OK = 0;

/**
 * Runs `job` to its end, yielding its output chunks (new arrays the consumer owns).
 * - `read(source, offset, size, signal)` gives the bytes [offset, offset + size) of the job's source `source`
 *   as they arrive (an async iterable of Uint8Arrays), each chunk copied into the job as it comes (no array of
 *   the whole range is made); fewer bytes mean the range lies outside the file, which the job takes in or turns
 *   into its error.
 * - `context(step)` names what a failing step was about ("tensor \"x\""), for the error's message.
 * - `onStep(step)` is called after each step (step.work counts toward job.totalWork()).
 */
export async function* pump(job, read, { signal, context = () => "", onStep } = {}) {
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
        if (unreadable >= 0) {
            const status = job.unreadable(unreadable);
            if (status.code !== OK) throw statusError(status, context(step));
        } else {
            const status = job.run();
            if (status.code !== OK) throw statusError(status, context(step));
            const out = job.output();
            if (out.length) yield out;
        }
        onStep?.(step);
    }
}
