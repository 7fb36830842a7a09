// SPDX-License-Identifier: MIT
// The name patterns of the package's filters (compare()'s `tensors`, quantize()'s `overrides`). A string is
// compiled and searched by the core's linear-time engine (include/weightstream/regex.h), as the CLI's
// `diff --tensors` and `--tensor-type` are: the same pattern matches the same names in both twins, and no pattern
// or name, however hostile, makes matching slow (V8's RegExp backtracks: "(.*)*x" over a long name runs for
// minutes). A RegExp object is the caller's own and runs as given.

/**
 * A matcher for `pattern` (a string or a RegExp): {source, test(name), dispose()}. Throws a TypeError naming
 * `option` for a string the engine refuses, in the CLI's words.
 */
export function namePattern(wasm, option, pattern) {
    if (pattern instanceof RegExp) {
        const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, "")); // no lastIndex state
        return { source: re.source, test: (name) => re.test(name), dispose() {} };
    }
    const regex = new wasm.Regex(pattern);
    const status = regex.status();
    if (status.code !== 0) {
        regex.delete();
        const why = status.what.replace(/^regex: /, "");
        throw new TypeError(`${option}: bad regular expression '${pattern}': ${why} at byte ${status.offset}`);
    }
    return { source: pattern, test: (name) => regex.search(name), dispose: () => regex.delete() };
}
