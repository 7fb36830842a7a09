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
 * - `read(source, offset, size, signal)` resolves to the bytes [offset, offset + size) of the job's source
 *   `source` (a Uint8Array of exactly that size); a WeightstreamError "truncated" means the range lies outside
 *   the file, which the job takes in or turns into its error.
 * - `context(step)` names what a failing step was about ("tensor \"x\""), for the error's message.
 * - `onStep(step)` is called after each step (step.work counts toward job.totalWork()).
 */
export async function* pump(job, read, { signal, context = () => "", onStep } = {}) {
    for (let step = job.next(); step !== null; step = job.next()) {
        throwIfAborted(signal);
        // A step's inputs are read together (compare reads both sides of a window at once).
        const inputs = await Promise.all(
            step.inputs.map((r) =>
                r.size === 0
                    ? new Uint8Array(0)
                    : read(r.source, r.offset, r.size, signal).catch((e) => {
                          if (e instanceof WeightstreamError && e.code === "truncated") return null;
                          throw e;
                      }),
            ),
        );
        throwIfAborted(signal);
        const unreadable = inputs.indexOf(null);
        if (unreadable >= 0) {
            const status = job.unreadable(unreadable);
            if (status.code !== OK) throw statusError(status, context(step));
        } else {
            inputs.forEach((bytes, i) => {
                if (!job.setInput(i, bytes)) throw new WeightstreamError("internal", "job: input of the wrong size");
            });
            const status = job.run();
            if (status.code !== OK) throw statusError(status, context(step));
            const out = job.output();
            if (out.length) yield out;
        }
        onStep?.(step);
    }
}
