// SPDX-License-Identifier: MIT
// A cache of the byte ranges HttpSource fetched, so that reopening a model and re-reading a tensor cost no
// body bytes. One entry per URL: the file's version (strong ETag, else Last-Modified, and its size) and the
// ranges of it held, each stored as it was fetched (pieces of at most PIECE_BYTES) under a name of its own.
// HttpSource only serves cached bytes after one conditional request confirmed the version (see
// HttpSource#revalidate); a URL seen with another version drops its entry.
//
// Where the bytes live (a Store): the origin private file system (navigator.storage.getDirectory()) where
// there is one, else the Cache API (caches), else nowhere; in Node only a directory given as
// {cache: {directory}}. The index (every entry with its ranges and when each was last used) is one JSON file
// beside the pieces, written after changes; pieces it does not list (a crash, or another tab's writes that
// the last index write lost) are deleted when the index is loaded. A piece is written whole under a fresh
// name before the index lists it, and never rewritten, so whatever the races between contexts, a listed
// piece is either missing (read as a miss, fetched again) or holds exactly the bytes it was fetched with.
// The total of the pieces is kept under maxBytes by dropping the least recently used ones.

export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;
// The largest piece stored: a long read is stored as it arrives, in pieces of this size (the memory one read
// holds for the cache while it fetches), and evicted piece by piece.
export const PIECE_BYTES = 8 * 1024 * 1024;
const INDEX_NAME = "index.json";
const DIRECTORY_NAME = "weightstream-range-cache";
const CACHE_API_NAME = "weightstream-range-cache";
// The Cache API keys entries by request URL: the pieces' names under an origin that never resolves.
const CACHE_API_BASE = "https://weightstream-cache.invalid/";
const INDEX_VERSION = 1;
// The names this cache makes: only these are ever deleted (a directory given in Node may hold other files).
const PIECE_NAME = /^piece-[a-z0-9-]+$/;
const isOurs = (name) => name === INDEX_NAME || PIECE_NAME.test(name);
// How long index writes wait for more changes to write at once (reads touch their pieces' use times).
const INDEX_WRITE_DELAY_MS = 50;

function notFound(e) {
    return e?.name === "NotFoundError" || e?.code === "ENOENT";
}

/** Pieces in the origin private file system (a folder of the origin's OPFS root). */
class OpfsStore {
    constructor(dir) {
        this.dir = dir;
        this.backend = "opfs";
    }

    static async open() {
        const root = await navigator.storage.getDirectory();
        return new OpfsStore(await root.getDirectoryHandle(DIRECTORY_NAME, { create: true }));
    }

    async read(name, start, end) {
        let file;
        try {
            file = await (await this.dir.getFileHandle(name)).getFile();
        } catch (e) {
            if (notFound(e)) return null;
            throw e;
        }
        if (file.size < end) return null;
        return new Uint8Array(await file.slice(start, end).arrayBuffer());
    }

    async readAll(name) {
        const file = await (await this.dir.getFileHandle(name)).getFile();
        return new Uint8Array(await file.arrayBuffer());
    }

    async write(name, bytes) {
        const handle = await this.dir.getFileHandle(name, { create: true });
        const writable = await handle.createWritable();
        try {
            await writable.write(bytes);
            await writable.close();
        } catch (e) {
            await writable.abort().catch(() => {});
            await this.remove(name);
            throw e;
        }
    }

    async remove(name) {
        await this.dir.removeEntry(name).catch(() => {});
    }

    async list() {
        const names = [];
        for await (const name of this.dir.keys()) names.push(name);
        return names;
    }
}

/** Pieces as responses in a Cache of the Cache API (where there is no OPFS). */
class CacheApiStore {
    constructor(cache) {
        this.cache = cache;
        this.backend = "cache-api";
    }

    static async open() {
        return new CacheApiStore(await caches.open(CACHE_API_NAME));
    }

    async read(name, start, end) {
        const response = await this.cache.match(CACHE_API_BASE + name);
        if (!response) return null;
        const blob = await response.blob();
        if (blob.size < end) return null;
        return new Uint8Array(await blob.slice(start, end).arrayBuffer());
    }

    async readAll(name) {
        const response = await this.cache.match(CACHE_API_BASE + name);
        return new Uint8Array(await response.arrayBuffer());
    }

    async write(name, bytes) {
        await this.cache.put(CACHE_API_BASE + name, new Response(bytes));
    }

    async remove(name) {
        await this.cache.delete(CACHE_API_BASE + name).catch(() => {});
    }

    async list() {
        return (await this.cache.keys())
            .map((request) => request.url)
            .filter((url) => url.startsWith(CACHE_API_BASE))
            .map((url) => url.slice(CACHE_API_BASE.length));
    }
}

/** Pieces as files of a directory (Node; {cache: {directory}}). Written to a temporary name, then renamed. */
class DirectoryStore {
    constructor(fs, path, directory) {
        this.fs = fs;
        this.path = path;
        this.directory = directory;
        this.backend = "directory";
    }

    static async open(directory) {
        const fsName = "node:fs/promises"; // variables: bundlers for the browser must not resolve these
        const pathName = "node:path";
        const fs = await import(/* @vite-ignore */ fsName);
        const path = await import(/* @vite-ignore */ pathName);
        await fs.mkdir(directory, { recursive: true });
        return new DirectoryStore(fs, path, directory);
    }

    /**
     * The file `name` opened for reading if it is a regular file, else null (missing, or a FIFO, device or link
     * planted there: the store writes none; opened without blocking, as a FIFO would block the open forever).
     */
    async #openFile(name) {
        const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = this.fs.constants;
        let handle;
        try {
            handle = await this.fs.open(this.path.join(this.directory, name), O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
        } catch (e) {
            if (notFound(e) || e?.code === "ELOOP") return null;
            throw e;
        }
        if ((await handle.stat()).isFile()) return handle;
        await handle.close();
        return null;
    }

    async read(name, start, end) {
        const handle = await this.#openFile(name);
        if (handle === null) return null;
        try {
            const bytes = new Uint8Array(end - start);
            const { bytesRead } = await handle.read(bytes, 0, bytes.length, start);
            return bytesRead === bytes.length ? bytes : null;
        } finally {
            await handle.close();
        }
    }

    async readAll(name) {
        const handle = await this.#openFile(name);
        if (handle === null) throw new Error(`${name}: not a regular file`);
        try {
            return new Uint8Array(await handle.readFile());
        } finally {
            await handle.close();
        }
    }

    async write(name, bytes) {
        const file = this.path.join(this.directory, name);
        const temporary = `${file}.${Math.random().toString(36).slice(2)}.tmp`;
        try {
            await this.fs.writeFile(temporary, bytes);
            await this.fs.rename(temporary, file);
        } catch (e) {
            await this.fs.rm(temporary, { force: true }).catch(() => {});
            throw e;
        }
    }

    async remove(name) {
        await this.fs.rm(this.path.join(this.directory, name), { force: true }).catch(() => {});
    }

    async list() {
        return (await this.fs.readdir(this.directory)).filter((name) => !name.endsWith(".tmp"));
    }
}

// The store this runtime has: OPFS, else the Cache API, else none (null). A store that fails to open (a
// browser's private mode may refuse OPFS) gives way to the next.
async function defaultStore() {
    if (typeof navigator === "object" && typeof navigator.storage?.getDirectory === "function") {
        try {
            return await OpfsStore.open();
        } catch {
            // next
        }
    }
    if (typeof caches === "object" && typeof caches?.open === "function") {
        try {
            return await CacheApiStore.open();
        } catch {
            // next
        }
    }
    return null;
}

function isInteger(n) {
    return Number.isSafeInteger(n) && n >= 0;
}

// The entries of an index file, or [] for one that is not ours (unreadable, another version, damaged).
function parseIndex(bytes) {
    let index;
    try {
        index = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
        return [];
    }
    if (index?.version !== INDEX_VERSION || !Array.isArray(index.entries)) return [];
    const entries = [];
    for (const e of index.entries) {
        if (typeof e?.url !== "string" || !isInteger(e.size) || !Array.isArray(e.ranges)) continue;
        if (
            (e.etag !== null && typeof e.etag !== "string") ||
            (e.lastModified !== null && typeof e.lastModified !== "string")
        )
            continue;
        if (cacheVersion(e.etag, e.lastModified, e.size) === null) continue;
        const ranges = e.ranges.filter(
            (r) =>
                typeof r?.name === "string" &&
                isInteger(r.start) &&
                isInteger(r.end) &&
                r.start < r.end &&
                r.end <= e.size &&
                Number.isFinite(r.used),
        );
        ranges.sort((a, b) => a.start - b.start);
        // Overlapping ranges cannot come from this code; keep the first of any that do.
        const kept = ranges.filter((r, i) => i === 0 || r.start >= ranges[i - 1].end);
        entries.push({ url: e.url, etag: e.etag, lastModified: e.lastModified, size: e.size, ranges: kept });
    }
    return entries;
}

/** The version of a file a cache entry is for: its strong ETag, else its Last-Modified, and its size. */
export function cacheVersion(etag, lastModified, size) {
    const strong = etag !== null && !etag.startsWith("W/") ? etag : null;
    if (!isInteger(size) || (strong === null && lastModified === null)) return null;
    return { etag: strong, lastModified: strong === null ? lastModified : null, size };
}

function sameVersion(entry, version) {
    return entry.etag === version.etag && entry.lastModified === version.lastModified && entry.size === version.size;
}

/**
 * The cache over one store. Every open() that uses the same store shares one RangeCache (rangeCache()), so
 * that its index in memory is the one truth within a context.
 */
export class RangeCache {
    #open; // () => Promise<Store | null>
    #ready = null; // Promise<Store | null>, once loading began
    #store = null;
    #entries = new Map(); // url -> {url, etag, lastModified, size, ranges: [{start, end, name, used}]}
    #clock = 0;
    #serial = 0;
    #dirty = false;
    #flushing = null;
    #warned = false;

    constructor(open, maxBytes = DEFAULT_MAX_BYTES) {
        this.#open = open;
        this.maxBytes = maxBytes;
        this.writeErrors = 0;
    }

    /** The store, its index loaded; null when this runtime has none. */
    ready() {
        this.#ready ??= this.#load();
        return this.#ready;
    }

    async #load() {
        let store;
        try {
            store = await this.#open();
        } catch {
            return null;
        }
        if (!store) return null;
        let names;
        try {
            names = new Set(await store.list());
        } catch {
            return null;
        }
        let entries = [];
        if (names.has(INDEX_NAME)) {
            try {
                entries = parseIndex(await store.readAll(INDEX_NAME));
            } catch {
                entries = [];
            }
        }
        const listed = new Set([INDEX_NAME]);
        for (const entry of entries) {
            entry.ranges = entry.ranges.filter((r) => names.has(r.name));
            for (const r of entry.ranges) {
                listed.add(r.name);
                this.#clock = Math.max(this.#clock, r.used);
            }
            this.#entries.set(entry.url, entry);
        }
        for (const name of names) if (isOurs(name) && !listed.has(name)) await store.remove(name);
        this.#store = store;
        return store;
    }

    #tick() {
        this.#clock = Math.max(Date.now(), this.#clock + 1);
        return this.#clock;
    }

    /** The entry of `url` whatever its version, or null. */
    async entryOf(url) {
        if (!(await this.ready())) return null;
        return this.#entries.get(url) ?? null;
    }

    /**
     * The entry of `url` at `version` (cacheVersion()), made empty if there is none; an entry of another
     * version of the URL is dropped with its pieces.
     */
    async entryFor(url, version) {
        if (!(await this.ready())) return null;
        const entry = this.#entries.get(url);
        if (entry && sameVersion(entry, version)) return entry;
        if (entry) await this.drop(url);
        const made = { url, ...version, ranges: [] };
        this.#entries.set(url, made);
        this.#persist();
        return made;
    }

    /** Drops the entry of `url` and its pieces. */
    async drop(url) {
        const entry = this.#entries.get(url);
        if (!entry || !this.#store) return;
        this.#entries.delete(url);
        this.#persist();
        await Promise.all(entry.ranges.map((r) => this.#store.remove(r.name)));
    }

    /** The range of `entry` holding byte `pos`, else {next}: where the next held range starts (or Infinity). */
    find(entry, pos) {
        const ranges = entry.ranges;
        let lo = 0;
        let hi = ranges.length;
        while (lo < hi) {
            const mid = (lo + hi) >> 1;
            if (ranges[mid].end <= pos) lo = mid + 1;
            else hi = mid;
        }
        const r = ranges[lo];
        if (r && r.start <= pos) return { range: r };
        return { next: r ? r.start : Infinity };
    }

    /** The bytes [from, to) of the file from `range` (which holds them), or null when its piece is gone. */
    async read(entry, range, from, to) {
        let bytes = null;
        try {
            bytes = await this.#store.read(range.name, from - range.start, to - range.start);
        } catch {
            bytes = null;
        }
        if (bytes === null || bytes.length !== to - from) {
            this.#remove(entry, range);
            return null;
        }
        range.used = this.#tick();
        this.#persist();
        return bytes;
    }

    #remove(entry, range) {
        const i = entry.ranges.indexOf(range);
        if (i >= 0) entry.ranges.splice(i, 1);
        this.#persist();
        this.#store?.remove(range.name);
    }

    /**
     * Stores `bytes` as the bytes at `start` of `entry`'s file. False when not stored: bytes already held (a
     * read of the same gap at once), larger than the cap, or the store failed (QuotaExceededError: the
     * caller's load goes on uncached). Then evicts the least recently used pieces down to maxBytes.
     */
    async add(entry, start, bytes) {
        const end = start + bytes.length;
        if (bytes.length === 0 || bytes.length > this.maxBytes || end > entry.size) return false;
        const overlaps = () => entry.ranges.some((r) => r.start < end && start < r.end);
        if (overlaps()) return false;
        const name = `piece-${(++this.#serial).toString(36)}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
        try {
            await this.#store.write(name, bytes);
        } catch (e) {
            ++this.writeErrors;
            if (!this.#warned) {
                this.#warned = true;
                console.warn(
                    `weightstream: the range cache could not store a piece (${e?.name ?? e}); reading on uncached`,
                );
            }
            throw Object.assign(new Error("the range cache could not store a piece"), { cause: e });
        }
        // An entry emptied by eviction or clearCache() meanwhile is listed again; one replaced by another
        // version is not (its bytes are of another file), nor bytes another read stored meanwhile.
        const current = this.#entries.get(entry.url);
        if (current === undefined) this.#entries.set(entry.url, entry);
        if ((current !== undefined && current !== entry) || overlaps()) {
            await this.#store.remove(name);
            return false;
        }
        const range = { start, end, name, used: this.#tick() };
        const i = entry.ranges.findIndex((r) => r.start > start);
        entry.ranges.splice(i < 0 ? entry.ranges.length : i, 0, range);
        await this.#evict();
        this.#persist();
        return true;
    }

    #totalBytes() {
        let total = 0;
        for (const entry of this.#entries.values()) for (const r of entry.ranges) total += r.end - r.start;
        return total;
    }

    async #evict() {
        let total = this.#totalBytes();
        if (total <= this.maxBytes) return;
        const all = [];
        for (const entry of this.#entries.values()) for (const r of entry.ranges) all.push({ entry, r });
        all.sort((a, b) => a.r.used - b.r.used);
        for (const { entry, r } of all) {
            if (total <= this.maxBytes) break;
            total -= r.end - r.start;
            const i = entry.ranges.indexOf(r);
            if (i >= 0) entry.ranges.splice(i, 1);
            await this.#store.remove(r.name);
        }
        for (const [url, entry] of this.#entries) if (entry.ranges.length === 0) this.#entries.delete(url);
    }

    // Writes the index after the changes so far (one write at a time; changes meanwhile make one more).
    #persist() {
        this.#dirty = true;
        if (this.#flushing || !this.#store) return;
        const store = this.#store;
        this.#flushing = (async () => {
            try {
                while (this.#dirty) {
                    await new Promise((resolve) => setTimeout(resolve, INDEX_WRITE_DELAY_MS));
                    this.#dirty = false;
                    const entries = [...this.#entries.values()];
                    const text = JSON.stringify({ version: INDEX_VERSION, entries });
                    await store.write(INDEX_NAME, new TextEncoder().encode(text)).catch(() => {});
                }
            } finally {
                this.#flushing = null;
            }
        })();
    }

    /** Waits for the index to be written. */
    async flush() {
        while (this.#flushing) await this.#flushing;
    }

    /** What is cached: see CacheInfo in index.d.ts. */
    async info() {
        const store = await this.ready();
        await this.flush();
        const entries = [...this.#entries.values()].map((e) => ({
            url: e.url,
            etag: e.etag,
            lastModified: e.lastModified,
            size: e.size,
            bytes: e.ranges.reduce((n, r) => n + r.end - r.start, 0),
            ranges: e.ranges.map((r) => [r.start, r.end]),
            lastUsed: e.ranges.reduce((t, r) => Math.max(t, r.used), 0) || null,
        }));
        return {
            backend: store ? store.backend : null,
            maxBytes: this.maxBytes,
            bytes: entries.reduce((n, e) => n + e.bytes, 0),
            entries,
            writeErrors: this.writeErrors,
        };
    }

    /** Deletes every piece and the index (also what another context stored and the index lost). */
    async clear() {
        const store = await this.ready();
        if (!store) return;
        this.#entries.clear();
        await this.flush();
        for (const name of await store.list()) if (isOurs(name)) await store.remove(name);
    }
}

const isNode = typeof process === "object" && typeof process.versions?.node === "string";
const shared = new Map(); // "default" or "directory:" + path -> RangeCache

function sharedCache(key, open) {
    if (!shared.has(key)) shared.set(key, new RangeCache(open));
    return shared.get(key);
}

/**
 * The RangeCache open()'s `cache` option asks for, or null for none: false, none; true or undefined, this
 * runtime's store (OPFS or the Cache API; in Node none by default, and true there is an error: Node needs a
 * directory); {directory, maxBytes}, that directory (Node) and that cap. The cap given last applies to the
 * cache of every model using the same store.
 */
export function rangeCacheFor(option) {
    if (option === false) return null;
    if (option === undefined || option === true) {
        if (!isNode) return sharedCache("default", defaultStore);
        if (option === true) throw new TypeError("cache: Node has no browser storage; give {directory: PATH}");
        return null;
    }
    if (option === null || typeof option !== "object")
        throw new TypeError(`cache: expected a boolean or {directory, maxBytes}, got ${option}`);
    const { directory, maxBytes } = option;
    if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < 0))
        throw new TypeError(`cache.maxBytes: expected a non-negative integer, got ${maxBytes}`);
    let cache;
    if (directory !== undefined) {
        if (typeof directory !== "string" || directory === "")
            throw new TypeError(`cache.directory: expected a path, got ${directory}`);
        if (!isNode) throw new TypeError("cache.directory: only in Node (browsers use their own storage)");
        cache = sharedCache(`directory:${directory}`, () => DirectoryStore.open(directory));
    } else if (isNode) {
        throw new TypeError("cache: Node has no browser storage; give {directory: PATH}");
    } else {
        cache = sharedCache("default", defaultStore);
    }
    if (maxBytes !== undefined) cache.maxBytes = maxBytes;
    return cache;
}

// The cache cacheInfo() and clearCache() look at: this runtime's store, or (Node) the directory given.
function cacheAt(options = {}) {
    if (options === null || typeof options !== "object") throw new TypeError("expected {directory}");
    if (options.directory !== undefined) return rangeCacheFor({ directory: options.directory });
    return isNode ? null : rangeCacheFor(true);
}

/** What the range cache holds: see index.d.ts. */
export async function cacheInfo(options) {
    const cache = cacheAt(options);
    if (!cache) return { backend: null, maxBytes: DEFAULT_MAX_BYTES, bytes: 0, entries: [], writeErrors: 0 };
    return cache.info();
}

/** Empties the range cache: see index.d.ts. */
export async function clearCache(options) {
    await cacheAt(options)?.clear();
}
