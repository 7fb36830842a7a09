// SPDX-License-Identifier: MIT
// Number and text formatting shared by the views. Pure functions: the browser tests import them too.

const GROUPED = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** An integer (number or bigint) with thousands separators: 1234567 -> "1,234,567". */
export function formatInt(n) {
    if (n === null || n === undefined) return "";
    return typeof n === "bigint" ? n.toLocaleString("en-US") : GROUPED.format(n);
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** Bytes in binary units, as the CLI prints them: 512 -> "512 B", 102624 -> "100.2 KiB". */
export function formatBytes(n) {
    let v = Number(n);
    if (!Number.isFinite(v)) return "";
    let unit = 0;
    while (v >= 1024 && unit < BYTE_UNITS.length - 1) {
        v /= 1024;
        ++unit;
    }
    return unit === 0 ? `${v} B` : `${v.toFixed(1)} ${BYTE_UNITS[unit]}`;
}

const COUNT_UNITS = [
    [1e12, "T"],
    [1e9, "B"],
    [1e6, "M"],
    [1e3, "K"],
];

/** A large count in short form: 116064 -> "116.1 K", 8030261248 -> "8.03 B". */
export function formatCount(n) {
    const v = Number(n);
    for (const [scale, unit] of COUNT_UNITS) {
        if (Math.abs(v) >= scale) {
            const x = v / scale;
            return `${x.toFixed(x >= 100 ? 1 : 2)} ${unit}`;
        }
    }
    return String(v);
}

/** A double with `digits` significant digits, without trailing zeros: 0.1234567 -> "0.123457". */
export function formatFloat(v, digits = 6) {
    if (Number.isNaN(v)) return "NaN";
    if (v === Infinity) return "+Inf";
    if (v === -Infinity) return "-Inf";
    if (v === 0) return Object.is(v, -0) ? "-0" : "0";
    const abs = Math.abs(v);
    let s;
    if (abs >= 1e-4 && abs < 10 ** digits) {
        s = v.toPrecision(digits);
        if (s.includes("e"))
            s = String(Number(s)); // 1e+4 -> 10000: plain digits in this range
        else if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "");
    } else {
        s = v.toExponential(digits - 1).replace(/\.?0+e/, "e");
    }
    return s;
}

/** The shortest decimal that reads back as the same float32: exact for a stored value. */
export function formatF32(v) {
    if (!Number.isFinite(v) || v === 0) return formatFloat(v);
    for (let p = 1; p <= 9; ++p) {
        const s = v.toPrecision(p);
        const n = Number(s);
        if (Math.fround(n) !== v) continue;
        const abs = Math.abs(n);
        return abs >= 1e-4 && abs < 1e9 ? String(n) : n.toExponential(p - 1).replace(/\.?0+e/, "e");
    }
    return v.toPrecision(9);
}

/** A tensor shape, outermost first: [8, 512] -> "8 × 512"; a scalar -> "scalar". */
export function formatShape(shape) {
    if (!shape || shape.length === 0) return "scalar";
    return shape.map((d) => formatInt(d)).join(" × ");
}

/** Milliseconds as a short duration. */
export function formatDuration(ms) {
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

// Control characters, quotes and backslashes become escapes so that a string's extent and invisible
// characters show; everything else (any script, emoji, U+2581 of sentencepiece) stays as it is.
const ESCAPES = { "\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\" };

/** A file string quoted for display in one line: 'a"b\n' -> '"a\"b\n"' (as text, never HTML). */
export function quoteString(s) {
    const body = s.replace(/[\u0000-\u001f\u007f"\\\u2028\u2029]/g, (c) => {
        return ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
    });
    return `"${body}"`;
}

/** A metadata scalar as text. */
export function formatScalar(value, type) {
    if (value === null) return type === "float32" || type === "float64" ? "NaN/Inf (null)" : "null";
    if (typeof value === "string") return value;
    if (typeof value === "boolean") return value ? "true" : "false";
    if (typeof value === "bigint") return value.toString();
    if (typeof value === "number") {
        if (type === "float32" || type === "float64")
            return type === "float32" ? formatF32(Math.fround(value)) : String(value);
        return String(value);
    }
    return String(value);
}

/** One array item as shown in lists: strings quoted, numbers as they are. */
export function formatItem(value, type) {
    if (typeof value === "string") return quoteString(value);
    if (Array.isArray(value)) return `[${value.length} items]`;
    return formatScalar(value, type);
}

/** A short one-line preview of any metadata value, at most about `max` characters. */
export function previewValue(entry, max = 160) {
    const { value, type } = entry;
    if (type === "array" || Array.isArray(value)) {
        const items = Array.isArray(value) ? value : [];
        const parts = [];
        let length = 1;
        for (const item of items) {
            const s = formatItem(item, entry.item_type);
            if (length + s.length > max && parts.length > 0) break;
            parts.push(s.length > max ? `${s.slice(0, max)}…` : s);
            length += s.length + 2;
        }
        const more = items.length > parts.length ? ", …" : "";
        return `[${parts.join(", ")}${more}]`;
    }
    const s = formatScalar(value, type);
    if (typeof value !== "string") return s;
    const oneLine = s.replace(/\r?\n/g, " ↵ ").replace(/\t/g, " ");
    return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}
