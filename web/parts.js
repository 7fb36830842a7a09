// SPDX-License-Identifier: MIT
// Which of the chosen files to hand to the package. Models stored in several files (a split GGUF, or
// safetensors shards with their index) are sorted into parts, checked and merged by the package's open() and
// the core behind it; the page only leaves out what is not a model file, as a dropped Hugging Face folder
// brings config.json, tokenizer.json and the like along with the weights.

export class PageError extends Error {
    constructor(code, message) {
        super(message);
        this.code = code;
    }
}

const isModelFile = (name) => /\.(gguf|safetensors)$/i.test(name) || /\.safetensors\.index\.json$/i.test(name);

/** The Files to open (one File, or several: the parts of one model). Throws a PageError ("bad_source"). */
export function chooseFiles(files) {
    if (files.length === 0) throw new PageError("bad_source", "no file chosen");
    // One file is opened whatever its name: the core tells the format from the bytes.
    const chosen = files.length === 1 ? files : files.filter((f) => isModelFile(f.name));
    if (chosen.length === 0)
        throw new PageError("bad_source", "choose .gguf or .safetensors files (and a .safetensors.index.json)");
    // A File has no folder to find the shards in, as a URL or a path has.
    if (chosen.length === 1 && /\.index\.json$/i.test(chosen[0].name)) {
        throw new PageError("bad_source", "an index was chosen without its .safetensors shards: choose them together");
    }
    return chosen.length === 1 ? chosen[0] : chosen;
}
