// SPDX-License-Identifier: MIT
// Which of the chosen files to hand to the package, and how. The package's open() and the core behind it
// (include/weightstream/model_plan.h) sort the files into the parts of one model, check and merge them, and with
// modelFilesOnly leave out what is not a model file, as a dropped Hugging Face folder brings config.json,
// tokenizer.json and the like along with the weights. One file is opened whatever its name (the core tells
// the format from the bytes), except an index alone: a File has no folder to find its shards in.

export class PageError extends Error {
    constructor(code, message) {
        super(message);
        this.code = code;
    }
}

/** The options the page opens chosen files with. */
export const OPEN_OPTIONS = { modelFilesOnly: true };

/** The source to open: one File, or several (the parts of one model). Throws a PageError ("bad_source"). */
export function chooseFiles(files) {
    if (files.length === 0) throw new PageError("bad_source", "no file chosen");
    return files.length === 1 ? files[0] : [...files];
}
