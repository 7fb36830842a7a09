// SPDX-License-Identifier: MIT
// Shared by the package tests: the fixture corpus, the native CLI as the reference, an exact JSON reader, and
// the kinds of source open() accepts, built from a file.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const testData = path.join(repoRoot, "tests/data");
// The full reference corpus beside the checkout (../shared/testdata), when present.
export const sharedTestData = process.env.WS_SHARED_TESTDATA ?? path.resolve(repoRoot, "../shared/testdata");

export function sha256(bytes) {
    return createHash("sha256").update(bytes).digest("hex");
}

export function bytesOf(typed) {
    return Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength);
}

// ---- corpus ---------------------------------------------------------------------------------------------------

function listModels(root) {
    const out = [];
    const walk = (dir) => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
            const full = path.join(dir, entry.name);
            if (entry.isDirectory()) walk(full);
            else if (/\.(gguf|safetensors)$/.test(entry.name)) out.push(full);
        }
    };
    if (existsSync(root)) walk(root);
    return out.sort();
}

const manifests = new Map();
function manifestEntry(file) {
    const dir = path.dirname(file);
    if (!manifests.has(dir)) {
        const m = path.join(dir, "manifest.json");
        manifests.set(dir, existsSync(m) ? exactJson(readFileSync(m, "utf8")) : null);
    }
    return manifests.get(dir)?.files?.find((f) => f.file === path.basename(file)) ?? null;
}

// The shared corpus's folders of single-file models (convert/ and split/ hold checkpoints and split models,
// which their own tests read).
const SHARED_MODEL_DIRS = ["ggml", "recipes", "safetensors"];

/**
 * Every GGUF and safetensors file of tests/data, then those of the shared corpus's SHARED_MODEL_DIRS that
 * tests/data lacks:
 * {file, label, format, manifest (its entry in the manifest beside it, or null), dir}.
 */
export function corpus() {
    const seen = new Set();
    const models = [];
    const roots = [testData, ...SHARED_MODEL_DIRS.map((d) => path.join(sharedTestData, d))];
    for (const dir of roots) {
        const root = dir.startsWith(sharedTestData) ? sharedTestData : testData;
        for (const file of listModels(dir)) {
            const rel = path.relative(root, file);
            if (seen.has(rel)) continue;
            seen.add(rel);
            models.push({
                file,
                label: path.relative(repoRoot, file).startsWith("..") ? `shared/${rel}` : path.relative(repoRoot, file),
                format: file.endsWith(".gguf") ? "gguf" : "safetensors",
                manifest: manifestEntry(file),
                dir: path.dirname(file),
            });
        }
    }
    return models;
}

// ---- exact JSON ----------------------------------------------------------------------------------------------

/** JSON.parse, except integers beyond +-(2^53 - 1) become BigInt. Independent of the package's own reader. */
export function exactJson(text) {
    let i = 0;
    const number = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
    const space = () => {
        while (i < text.length && " \t\r\n".includes(text[i])) ++i;
    };
    const expect = (c) => {
        space();
        if (text[i] !== c) throw new SyntaxError(`expected ${c} at ${i}`);
        ++i;
    };
    const value = () => {
        space();
        const c = text[i];
        if (c === "{") {
            ++i;
            const obj = {};
            space();
            if (text[i] === "}") return (++i, obj);
            for (;;) {
                const key = value();
                expect(":");
                obj[key] = value();
                space();
                if (text[i++] === "}") return obj;
            }
        }
        if (c === "[") {
            ++i;
            const arr = [];
            space();
            if (text[i] === "]") return (++i, arr);
            for (;;) {
                arr.push(value());
                space();
                if (text[i++] === "]") return arr;
            }
        }
        if (c === '"') {
            const start = i++;
            while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
            return JSON.parse(text.slice(start, ++i));
        }
        for (const [word, v] of [
            ["true", true],
            ["false", false],
            ["null", null],
        ]) {
            if (text.startsWith(word, i)) return ((i += word.length), v);
        }
        number.lastIndex = i;
        const m = number.exec(text);
        if (!m) throw new SyntaxError(`unexpected ${c} at ${i}`);
        i = number.lastIndex;
        if (m[1] || m[2]) return Number(m[0]);
        const n = Number(m[0]);
        return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    };
    const v = value();
    space();
    if (i !== text.length) throw new SyntaxError(`trailing text at ${i}`);
    return v;
}

// ---- the native CLI ------------------------------------------------------------------------------------------

/** build/bin/weightstream (or $WEIGHTSTREAM_CLI) when it has been built, else null. */
export const cliPath = (() => {
    const candidate = process.env.WEIGHTSTREAM_CLI ?? path.join(repoRoot, "build/bin/weightstream");
    return existsSync(candidate) ? candidate : null;
})();

function runCli(args) {
    return spawnSync(cliPath, args, { encoding: "utf8", maxBuffer: 1 << 30 });
}

/** `weightstream info FILE --json`, parsed exactly. */
export function cliInfo(file) {
    const r = runCli(["info", file, "--json"]);
    if (r.status !== 0) throw new Error(`weightstream info ${file} --json: exit ${r.status}: ${r.stderr}`);
    return exactJson(r.stdout);
}

/**
 * `weightstream hash FILE --json` as a Map name -> {raw_sha256, f32_sha256}: the parity fingerprint. Null
 * when the CLI is missing or has no hash command yet.
 */
export function cliHashes(file) {
    if (!cliPath) return null;
    const r = runCli(["hash", file, "--json"]);
    if (r.status === 2) return null; // a usage error: a CLI without the hash command
    if (r.status !== 0) throw new Error(`weightstream hash ${file} --json: exit ${r.status}: ${r.stderr}`);
    return new Map(JSON.parse(r.stdout).tensors.map((t) => [t.name, t]));
}

/** For an invalid file: {status, code, offset} from the CLI's one-line error. */
export function cliError(file) {
    const r = runCli(["info", file]);
    const m = /^weightstream: error: (.*): ([a-z_]+): .* \(byte (\d+)\)\s*$/s.exec(r.stderr);
    return {
        status: r.status,
        file: m ? path.basename(m[1]) : null, // the file the error is in
        code: m?.[2] ?? null,
        offset: m ? Number(m[3]) : null,
        stderr: r.stderr,
    };
}

// ---- sources -------------------------------------------------------------------------------------------------

/** A small seeded generator (mulberry32), so a failing chunking can be replayed. */
export function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/** A ReadableStream of `bytes` in random chunk sizes: many tiny (1-16), most small, some large. */
export function randomChunkStream(bytes, seed) {
    const random = rng(seed);
    let pos = 0;
    return new ReadableStream({
        pull(controller) {
            if (pos >= bytes.length) {
                controller.close();
                return;
            }
            const r = random();
            const max = r < 0.3 ? 16 : r < 0.8 ? 4096 : 262144;
            const n = Math.min(bytes.length - pos, 1 + Math.floor(random() * max));
            controller.enqueue(bytes.slice(pos, pos + n)); // a copy, as a network stream would give
            pos += n;
        },
    });
}

/** The kinds of source open() is tested with, each made from a file. */
export const sourceKinds = {
    path: (file) => file,
    uint8array: (file) => new Uint8Array(readFileSync(file)),
    blob: (file) => new Blob([readFileSync(file)]),
    stream: (file, seed = 1) => randomChunkStream(new Uint8Array(readFileSync(file)), seed),
};

export function fileSize(file) {
    return statSync(file).size;
}

// ---- expected values -----------------------------------------------------------------------------------------

/** An integer as float32, rounded to nearest even in one step (as the core converts I64/U64). */
export function bigintToF32(v) {
    const negative = v < 0n;
    let m = negative ? -v : v;
    const bits = m.toString(2).length;
    let scale = 1;
    if (bits > 24) {
        const shift = BigInt(bits - 24);
        const rest = m & ((1n << shift) - 1n);
        const half = 1n << (shift - 1n);
        m >>= shift;
        if (rest > half || (rest === half && (m & 1n) === 1n)) m += 1n;
        scale = 2 ** (bits - 24);
    }
    const f = Math.fround(Number(m) * scale);
    return negative ? -f : f;
}

/** The float32 decode of stored integer or F64 bytes (ggml has no decode for them; the core defines one). */
export function expectedFromRaw(dtype, raw) {
    const b = Buffer.from(raw);
    const n = { I8: 1, I16: 2, I32: 4, I64: 8, F64: 8 }[dtype];
    const out = new Float32Array(b.length / n);
    for (let i = 0; i < out.length; ++i) {
        const o = i * n;
        if (dtype === "I8") out[i] = b.readInt8(o);
        else if (dtype === "I16") out[i] = b.readInt16LE(o);
        else if (dtype === "I32") out[i] = Math.fround(b.readInt32LE(o));
        else if (dtype === "I64") out[i] = bigintToF32(b.readBigInt64LE(o));
        else out[i] = Math.fround(b.readDoubleLE(o));
    }
    return out;
}

/** Float arrays equal bit for bit, except that any NaN equals any NaN (for conversions that quiet NaNs). */
export function sameFloatsNaNAgnostic(actual, expected) {
    if (actual.length !== expected.length) return `length ${actual.length} != ${expected.length}`;
    const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
    const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
    for (let i = 0; i < a.length; ++i) {
        if (a[i] !== e[i] && !(Number.isNaN(actual[i]) && Number.isNaN(expected[i]))) {
            return `element ${i}: 0x${a[i].toString(16)} != 0x${e[i].toString(16)}`;
        }
    }
    return null;
}

/**
 * A missing tool is a broken setup, not a reason to skip: scripts/setup.sh installs everything. Throws at
 * module load, so node --test reports the file as failed, naming what is missing.
 */
export function requireSetup(missing) {
    if (missing) throw new Error(`test setup incomplete: ${missing} (run scripts/setup.sh)`);
}

// ---- Chromium ------------------------------------------------------------------------------------------------

/** Debian's Chromium, driven by playwright-core (which never downloads a browser). */
export const CHROMIUM = process.env.WS_CHROMIUM ?? "/usr/bin/chromium";
// Without the networking flags Chromium floods the closed network with refused connections (TOOLCHAIN.md).
const CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

let playwright = null;
try {
    playwright = await import("playwright-core");
} catch {
    // not installed: chromiumMissing() says so
}

/** Why Chromium cannot run here (for requireSetup), or false. */
export function chromiumMissing() {
    return (!playwright && "playwright-core not installed") || (!existsSync(CHROMIUM) && `${CHROMIUM} not installed`);
}

/** A headless Chromium. */
export function launchChromium() {
    return playwright.chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}
