// SPDX-License-Identifier: MIT
// How a model's description crosses from weightstream/worker's worker to the calling thread cheaply. A
// structured clone of a 150,000-token vocabulary is 150,000 strings to rebuild on the receiving thread (a
// main-thread task of 100-200 ms); long arrays of strings or numbers cross instead as one string (copied in
// one piece) with the items' end offsets, or as a Float64Array (both arrays moved), and become the same
// arrays again a slice at a time, so that no task of the calling thread is long. unpackInfo(packInfo(info).info) deep-equals
// info.

const PACKED = "__weightstreamPacked";
// Shorter arrays cross as they are: packing them would save nothing.
const MIN_ITEMS = 256;

function packArray(items, transfer) {
    if (items.length < MIN_ITEMS) return items;
    if (items.every((v) => typeof v === "string")) {
        const ends = new Uint32Array(items.length);
        let end = 0;
        items.forEach((s, i) => (ends[i] = end += s.length));
        transfer.push(ends.buffer);
        return { [PACKED]: "strings", text: items.join(""), ends };
    }
    // Numbers only (NaN and infinities are the strings "NaN", "Infinity", "-Infinity" in metadata, bigints stay as
    // they are: such arrays do not pack).
    if (items.every((v) => typeof v === "number")) {
        const values = Float64Array.from(items);
        transfer.push(values.buffer);
        return { [PACKED]: "numbers", values };
    }
    return items;
}

// Items rebuilt per task: the calling thread is free between slices (a few milliseconds each).
const SLICE_ITEMS = 16384;

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

async function unpackArray(value) {
    const strings = value[PACKED] === "strings";
    const length = strings ? value.ends.length : value.values.length;
    const items = new Array(length);
    for (let from = 0; from < length; from += SLICE_ITEMS) {
        if (from > 0) await nextTask();
        const to = Math.min(length, from + SLICE_ITEMS);
        if (strings) {
            const { text, ends } = value;
            for (let i = from, start = from > 0 ? ends[from - 1] : 0; i < to; start = ends[i++]) {
                items[i] = text.slice(start, ends[i]);
            }
        } else {
            for (let i = from; i < to; ++i) items[i] = value.values[i];
        }
    }
    return items;
}

/** The description to post from the worker, and the buffers to transfer with it. */
export function packInfo(info) {
    const transfer = [];
    const metadata = info.metadata.map((entry) =>
        Array.isArray(entry.value) ? { ...entry, value: packArray(entry.value, transfer) } : entry,
    );
    return { info: { ...info, metadata }, transfer };
}

/** The description as the worker's model has it (long arrays rebuilt a slice per task). */
export async function unpackInfo(info) {
    const metadata = [];
    for (const entry of info.metadata) {
        metadata.push(entry.value?.[PACKED] ? { ...entry, value: await unpackArray(entry.value) } : entry);
    }
    return { ...info, metadata };
}
