// SPDX-License-Identifier: MIT
// Saving what the page makes (an edited or quantized GGUF, a tensor's .npy) on the user's machine: nothing is
// uploaded.
import { el } from "./dom.js";

/** Offers `blob` as a download named `name`. */
export function download(blob, name) {
    const url = URL.createObjectURL(blob);
    const a = el("a", { href: url, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * Saves the GGUF stream makeStream() returns as `name`: through the File System Access API where the browser has
 * it (the file is picked first, then the stream made and piped into it as it comes; an error or `signal` aborts
 * the writable, which discards what it holds), else as a download of the whole stream once it ended. "file",
 * "download", or null when the picker was dismissed (then makeStream is not called). onSaved(file), when given, is
 * called with a File of what was saved (the picked file read back, or the download's bytes) before this returns.
 */
export async function saveAs(name, makeStream, { signal, onSaved } = {}) {
    let writable = null;
    let handle = null;
    if (typeof window.showSaveFilePicker === "function") {
        try {
            handle = await window.showSaveFilePicker({
                suggestedName: name,
                types: [{ description: "GGUF model", accept: { "application/octet-stream": [".gguf"] } }],
            });
            writable = await handle.createWritable();
        } catch (error) {
            if (error?.name === "AbortError") return null;
            throw error;
        }
    }
    const stream = makeStream();
    if (writable) {
        await stream.pipeTo(writable, { signal });
        if (onSaved) await onSaved(await handle.getFile());
        return "file";
    }
    const chunks = [];
    const reader = stream.getReader();
    for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
    }
    signal?.throwIfAborted();
    const blob = new Blob(chunks, { type: "application/octet-stream" });
    download(blob, name);
    if (onSaved) await onSaved(new File([blob], name, { type: blob.type }));
    return "download";
}
