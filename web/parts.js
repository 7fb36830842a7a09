// SPDX-License-Identifier: MIT
// Models stored in several files: llama.cpp's split GGUF (name-00001-of-00003.gguf, keys split.no and
// split.count) and Hugging Face's sharded safetensors (shards plus model.safetensors.index.json, whose
// weight_map names the shard of every tensor). The worker opens every part with the package and merges the
// parts here into one description whose tensors carry `file`.

const SPLIT = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;

export class PageError extends Error {
    constructor(code, message, offset) {
        super(message);
        this.code = code;
        this.offset = offset;
    }
}

/** "dir/m-00002-of-00003.gguf" -> {prefix: "dir/m", part: 2, count: 3}, or null. */
export function parseSplitName(name) {
    const m = SPLIT.exec(name);
    if (!m) return null;
    return { prefix: m[1], part: Number(m[2]), count: Number(m[3]) };
}

export function splitPartName(prefix, part, count) {
    return `${prefix}-${String(part).padStart(5, "0")}-of-${String(count).padStart(5, "0")}.gguf`;
}

const baseName = (name) => name.slice(name.lastIndexOf("/") + 1);

/**
 * What to open among the chosen files ({name} objects: File, or URL records):
 *   {kind: "single", file} | {kind: "split", parts: [file, ...] in part order} |
 *   {kind: "shards", index: file | null, shards: [file, ...]}
 * Throws a PageError (code "bad_split" or "bad_source") when the files do not form one model.
 */
export function planFiles(files) {
    if (files.length === 0) throw new PageError("bad_source", "no file chosen");
    if (files.length === 1 && !files[0].name.toLowerCase().endsWith(".json")) return { kind: "single", file: files[0] };
    const ggufs = files.filter((f) => f.name.toLowerCase().endsWith(".gguf"));
    const tensors = files.filter((f) => f.name.toLowerCase().endsWith(".safetensors"));
    const indexes = files.filter((f) => f.name.toLowerCase().endsWith(".json"));
    const others = files.length - ggufs.length - tensors.length - indexes.length;
    if (ggufs.length && (tensors.length || indexes.length)) {
        throw new PageError("bad_source", "choose the files of one model: GGUF and safetensors files were mixed");
    }
    if (others) throw new PageError("bad_source", "choose .gguf or .safetensors files (and a .safetensors.index.json)");
    if (ggufs.length) {
        const parts = ggufs.map((f) => ({ file: f, split: parseSplitName(f.name) }));
        const first = parts[0].split;
        if (!first || parts.some((p) => !p.split)) {
            throw new PageError("bad_source", "several GGUF files chosen: choose one file, or every part of one split model (name-00001-of-0000N.gguf)");
        }
        if (parts.some((p) => p.split.prefix !== first.prefix || p.split.count !== first.count)) {
            throw new PageError("bad_split", "the chosen parts belong to different split models");
        }
        const byPart = new Map(parts.map((p) => [p.split.part, p.file]));
        const missing = [];
        for (let i = 1; i <= first.count; ++i) if (!byPart.has(i)) missing.push(baseName(splitPartName(first.prefix, i, first.count)));
        if (missing.length) throw new PageError("bad_split", `missing part${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
        if (byPart.size !== parts.length) throw new PageError("bad_split", "a part was chosen twice");
        return { kind: "split", parts: [...byPart.keys()].sort((a, b) => a - b).map((k) => byPart.get(k)) };
    }
    if (indexes.length > 1) throw new PageError("bad_source", "choose one .safetensors.index.json");
    if (tensors.length === 0) throw new PageError("bad_source", "an index was chosen without its .safetensors shards");
    return {
        kind: "shards",
        index: indexes[0] ?? null,
        shards: [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    };
}

/** The shard file names a safetensors index refers to, in first-use order. Throws on a malformed index. */
export function indexShards(index) {
    if (!index || typeof index !== "object" || !index.weight_map || typeof index.weight_map !== "object") {
        throw new PageError("bad_json", "the index has no weight_map object");
    }
    const files = [];
    for (const file of Object.values(index.weight_map)) {
        if (typeof file !== "string") throw new PageError("bad_json", "a weight_map value is not a file name");
        if (!files.includes(file)) files.push(file);
    }
    return files;
}

function metaValue(entries, key) {
    const e = entries.find((m) => m.key === key);
    return e === undefined ? undefined : Number(e.value);
}

/** One description from the parts' infos (in part order) and their file names. */
export function mergeParts(kind, infos, names, index = null) {
    const first = infos[0];
    const tensors = [];
    const seen = new Map();
    const warnings = [];
    infos.forEach((info, i) => {
        if (kind === "split") {
            const no = metaValue(info.metadata, "split.no");
            const count = metaValue(info.metadata, "split.count");
            if (no !== undefined && no !== i) throw new PageError("bad_split", `${names[i]}: split.no is ${no}, expected ${i}`);
            if (count !== undefined && count !== infos.length) {
                throw new PageError("bad_split", `${names[i]}: split.count is ${count}, expected ${infos.length}`);
            }
        }
        for (const t of info.tensors) {
            if (seen.has(t.name)) {
                throw new PageError("duplicate_name", `tensor "${t.name}" is in both ${seen.get(t.name)} and ${names[i]}`);
            }
            seen.set(t.name, names[i]);
            tensors.push({ ...t, file: names[i] });
        }
        for (const w of info.warnings ?? []) warnings.push({ ...w, message: `${names[i]}: ${w.message}` });
    });
    let metadata = first.metadata;
    if (kind === "split") {
        const expected = metaValue(first.metadata, "split.tensors.count");
        if (expected !== undefined && expected !== tensors.length) {
            throw new PageError("bad_split", `split.tensors.count is ${expected}, the parts hold ${tensors.length} tensors`);
        }
    } else if (index) {
        const fromIndex = Object.entries(index.metadata ?? {}).map(([key, value]) => ({
            key: `index.${key}`,
            type: "string",
            value: typeof value === "string" ? value : JSON.stringify(value),
        }));
        metadata = [...fromIndex, ...first.metadata];
        for (const [name, file] of Object.entries(index.weight_map)) {
            const actual = seen.get(name);
            if (actual === undefined) warnings.push({ code: "index_mismatch", offset: 0, message: `the index lists "${name}" in ${file}; no shard holds it` });
            else if (baseName(actual) !== baseName(file)) {
                warnings.push({ code: "index_mismatch", offset: 0, message: `the index lists "${name}" in ${file}; it is in ${actual}` });
            }
        }
    }
    const sizes = infos.map((i) => i.file_size);
    return {
        ...first,
        metadata,
        tensors,
        warnings,
        file_size: sizes.every((s) => s !== null && s !== undefined) ? sizes.reduce((a, b) => a + Number(b), 0) : null,
        files: names,
    };
}
