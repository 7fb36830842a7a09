// SPDX-License-Identifier: MIT
// Types of the weightstream package (hand-written; checked by `npm run typecheck`).

/** An integer from the file: a number, or a bigint beyond +-(2^53 - 1) (Number.MAX_SAFE_INTEGER). */
export type Integer = number | bigint;

/**
 * Every element type this build knows, as dtypes() lists them and TensorInfo.dtype names them: ggml's types
 * (include/weightstream/dtype.h; the ids ggml removed are not listed) and the safetensors dtypes without a ggml counterpart.
 * tests/js/helpers.test.mjs checks this list against the core's, entry for entry.
 */
export type DTypeName =
    | "F32"
    | "F16"
    | "Q4_0"
    | "Q4_1"
    | "Q5_0"
    | "Q5_1"
    | "Q8_0"
    | "Q8_1"
    | "Q2_K"
    | "Q3_K"
    | "Q4_K"
    | "Q5_K"
    | "Q6_K"
    | "Q8_K"
    | "IQ2_XXS"
    | "IQ2_XS"
    | "IQ3_XXS"
    | "IQ1_S"
    | "IQ4_NL"
    | "IQ3_S"
    | "IQ2_S"
    | "IQ4_XS"
    | "I8"
    | "I16"
    | "I32"
    | "I64"
    | "F64"
    | "IQ1_M"
    | "BF16"
    | "TQ1_0"
    | "TQ2_0"
    | "MXFP4"
    | "NVFP4"
    | "Q1_0"
    | "Q2_0"
    | "BOOL"
    | "U8"
    | "U16"
    | "U32"
    | "U64"
    | "C64"
    | "F8_E4M3"
    | "F8_E5M2"
    | "F8_E8M0"
    | "F8_E4M3FNUZ"
    | "F8_E5M2FNUZ"
    | "F6_E2M3"
    | "F6_E3M2"
    | "F4";

/** A tensor's type: a DTypeName, or "UNKNOWN(<id>)" for a GGUF type id this build lacks or ggml removed. */
export type TensorDType = DTypeName | `UNKNOWN(${number})`;

/**
 * A float from the file. JSON has no NaN or infinities, so (as `weightstream info --json` prints them) those
 * are the strings "NaN", "Infinity" and "-Infinity"; every other value is a number (-0 included).
 */
export type FloatValue = number | "NaN" | "Infinity" | "-Infinity";

/** The value of each scalar metadata type: 64-bit integers as Integer (a bigint beyond 2^53 - 1). */
export interface MetadataScalarValues {
    uint8: number;
    int8: number;
    uint16: number;
    int16: number;
    uint32: number;
    int32: number;
    uint64: Integer;
    int64: Integer;
    float32: FloatValue;
    float64: FloatValue;
    bool: boolean;
    string: string;
}

export type ScalarTypeName = keyof MetadataScalarValues;
export type ValueTypeName = ScalarTypeName | "array";

/** Any metadata value (compare()'s metadata changes hold these). */
export type MetadataValue = MetadataScalarValues[ScalarTypeName] | MetadataValue[];

interface MetadataEntryBase {
    key: string;
    /** A key that is not valid UTF-8: its bytes in hex (`key` has U+FFFD in their place). */
    key_hex?: string;
}

/** A scalar entry: `type` says the type of `value` (`if (e.type === "string")` narrows it to a string). */
export type MetadataScalarEntry = {
    [T in ScalarTypeName]: MetadataEntryBase & {
        type: T;
        value: MetadataScalarValues[T];
        /** Strings that are not valid UTF-8: their bytes in hex (`value` has U+FFFD in their place). */
        bytes_hex?: T extends "string" ? string : never;
    };
}[ScalarTypeName];

/** An array of scalars: `item_type` says the type of its items. */
export type MetadataFlatArrayEntry = {
    [T in ScalarTypeName]: MetadataEntryBase & {
        type: "array";
        item_type: T;
        length: number;
        value: MetadataScalarValues[T][];
        /** String items that are not valid UTF-8: their bytes in hex. */
        invalid_items?: T extends "string" ? { index: number; bytes_hex: string }[] : never;
    };
}[ScalarTypeName];

/** An array of arrays (GGUF allows nesting): each item an array of values of its own type. */
export interface MetadataNestedArrayEntry extends MetadataEntryBase {
    type: "array";
    item_type: "array";
    length: number;
    value: MetadataValue[][];
}

/**
 * One metadata entry as `weightstream info --json` prints it, a union discriminated by `type` (and, for
 * arrays, `item_type`): `if (e.type === "array" && e.item_type === "string")` narrows `e.value` to string[].
 */
export type MetadataEntry = MetadataScalarEntry | MetadataFlatArrayEntry | MetadataNestedArrayEntry;

/**
 * Sizes, offsets and dimensions are numbers, exact (a file of well-formed tensors is far below 2^53 bytes).
 * Beyond Number.MAX_SAFE_INTEGER (2^53 - 1) such a field is a bigint instead, exact as `info --json` prints
 * it: only a tensor of an UNKNOWN(<id>) type (whose size cannot be checked against the file) can declare so
 * many elements, so code that takes untrusted files and does arithmetic on these checks `typeof` first.
 */
export interface TensorInfo {
    name: string;
    /** A tensor name that is not valid UTF-8: its bytes in hex (`name` has U+FFFD in their place). */
    name_hex?: string;
    /** "F32", "Q4_K", "IQ2_XXS", "BF16", "F8_E4M3", ... or "UNKNOWN(<id>)" for a GGUF type id this build lacks. */
    dtype: TensorDType;
    /** Dimensions, outermost first (numpy / PyTorch order). */
    shape: number[];
    /** GGUF only: the dimensions as stored, innermost first (ggml order). */
    ne?: number[];
    /** Absolute byte offset of the data in its file. */
    offset: number;
    nbytes: number;
    n_elements: number;
    /** Rows, a row being the innermost dimension: what read()'s and stats()' `rows` windows address (the
     * product of the outer dimensions when the innermost is 0; 0 when the type has no byte layout). */
    rows: number;
    /** Split or sharded models: the file holding the data. */
    file?: string;
}

/**
 * What the core derives from the header (include/weightstream/model_facts.h), as `info --json` prints it under "facts" and
 * as llama.cpp reports them when it loads a model.
 */
export interface ModelFacts {
    /** The sum of n_elements over all tensors (llama_model_n_params). A number: exact to 2^53. */
    parameter_count: number;
    /** The sum of nbytes over all tensors. */
    data_bytes: number;
    /** data_bytes * 8 / parameter_count, as llama.cpp prints "BPW"; null without parameters. */
    bits_per_weight: number | null;
    /** llama-quantize's name of general.file_type ("Q4_K_M", "F16"); null when the key is absent or an id
     * llama-quantize does not name. */
    file_type: string | null;
    /** general.file_type as stored (a llama_ftype number); null when absent. */
    file_type_id: number | null;
    /** The number of layer groups (Model.layers). */
    layers: number;
}

export interface Warning {
    code: CoreErrorCode;
    offset: number;
    message: string;
}

/** The object `weightstream info --json` prints. */
export interface ModelInfo {
    format: "gguf" | "safetensors";
    /** GGUF version; null for safetensors. */
    version: number | null;
    /** GGUF only. */
    endian?: "little" | "big";
    /** Bytes of the file (of all its files); null while unknown (a stream of unknown length). */
    file_size: number | null;
    data_offset: number;
    alignment: number;
    /** A split or sharded model: its files, in order (tensors name theirs in TensorInfo.file). */
    files?: string[];
    /** Derived facts (parameters, bits per weight, file type, layers). */
    facts: ModelFacts;
    metadata: MetadataEntry[];
    tensors: TensorInfo[];
    warnings?: Warning[];
}

export interface Progress {
    /** Bytes processed so far. */
    loaded: number;
    /** Bytes in all, when known. */
    total: number | undefined;
}

export interface OpenOptions {
    signal?: AbortSignal;
    onProgress?: (progress: Progress) => void;
    /** The most bytes read (Blob slice, file read) or handed to WebAssembly at a time. Default 1 MiB. */
    chunkSize?: number;
    /** The most HTTP requests in flight for one model. Default 4. */
    concurrency?: number;
    /** Retries of a failed HTTP request (network fault, stall, 5xx, 408, 429), resumed at the last byte. Default
     * 4. */
    retries?: number;
    /** Milliseconds before the first retry; doubles with each further one (up to 8 s). A 429 or 503 with
     * Retry-After (seconds or an HTTP-date) waits at least that long, at most 60 s. Default 250. */
    retryDelay?: number;
    /**
     * Milliseconds an HTTP request may wait on the network without progress: for its response, or for the next
     * 16 KiB of its body (a server trickling bytes makes no progress). Then it counts as a network fault:
     * retried, and after the retries an error "network". 0: no limit. Default 30000.
     */
    stallTimeout?: number;
    /** The fetch to use for URLs. Default globalThis.fetch. */
    fetch?: typeof fetch;
    /**
     * Default true: a URL or path naming one part of a split GGUF (`name-00002-of-00005.gguf`) or a sharded
     * safetensors index (`*.safetensors.index.json`) opens the whole model, its other files found next to it.
     * false: open just that file. An index alone, not opened with its shards (false, or a File), is an error
     * "bad_source".
     */
    split?: boolean;
    /** The most parts of a split GGUF opened (more is an error "too_large", before any part is read). Default
     * 1024. */
    maxSplitParts?: number;
    /**
     * Several sources: leave out those whose names are not a model file's (".gguf", ".safetensors",
     * ".safetensors.index.json", any case), as a dropped model folder brings config.json and the like along.
     * Default false: such sources are an error "bad_source".
     */
    modelFilesOnly?: boolean;
    /**
     * The range cache of URLs (see cacheInfo()): the byte ranges fetched (header and tensors) are kept, so that
     * reopening a model and re-reading a tensor cost no body bytes. A reopened URL is first revalidated by one
     * request (byte 0 with If-None-Match or If-Modified-Since: 304, no body, when unchanged); a changed file
     * (another ETag, Last-Modified or size) is fetched again and its old ranges dropped, and a file replaced
     * after that check fails "source_changed" as ever. Only files with a strong ETag or a Last-Modified, a
     * known size and Range support are cached.
     *   undefined (default): on in browsers (the origin private file system, else the Cache API; none where
     *     neither is available), off in Node.
     *   false: off. true: on (in Node an error: Node needs a directory).
     *   {maxBytes, directory}: on with a cap (default 1 GiB; the least recently used pieces go first; the cap
     *     given last applies to every model using the same store) and, in Node only, the directory to keep it
     *     in.
     * A store that fails (a full disk: QuotaExceededError) leaves the load going on uncached, counted in
     * metrics.cacheErrors.
     */
    cache?: boolean | CacheOptions;
}

export interface CacheOptions {
    /** The most bytes held; default 1 GiB (1073741824). */
    maxBytes?: number;
    /** Node only: the directory holding the cache (made if missing). */
    directory?: string;
}

/** One cached file: its version and the ranges [start, end) of it held. */
export interface CacheEntry {
    url: string;
    /** The strong ETag it is keyed by, or null (then Last-Modified is). */
    etag: string | null;
    lastModified: string | null;
    /** The file's size in bytes. */
    size: number;
    /** Bytes held. */
    bytes: number;
    ranges: [number, number][];
    /** When a range of it was last used (ms since 1970), or null. */
    lastUsed: number | null;
}

export interface CacheInfo {
    /** Where it is kept: "opfs", "cache-api", "directory" (Node), or null: no cache in this runtime. */
    backend: "opfs" | "cache-api" | "directory" | null;
    maxBytes: number;
    /** Bytes held in all. */
    bytes: number;
    entries: CacheEntry[];
    /** Pieces this context failed to store (a full disk) since it started. */
    writeErrors: number;
}

/** The directory of a Node cache ({cache: {directory}}); browsers have one cache per origin. */
export interface CacheLocation {
    directory?: string;
}

/**
 * What read() and stream() return: "f32" (default): decoded float32; "f16": decoded then rounded to binary16 as
 * ggml does (F16 data as stored), in a Float16Array where the runtime has one and otherwise as the bits in a
 * Uint16Array (HalfArray); "f16-bits": the same binary16 values, always as their bits in a Uint16Array; "raw":
 * the stored bytes; "native": the stored values exactly, in the typed array of their type (see NativeArray).
 */
export type ReadAs = "f32" | "f16" | "f16-bits" | "raw" | "native";

/**
 * The runtime's Float16Array when the TypeScript lib in use declares one (ES2025 / ESNext), else the part of
 * it this package's users touch. Float16Array is in Chromium 135+, Firefox 129+, Safari 18.2+ and Node 24+ (with
 * a flag before 25); Node 20 and 22 have none.
 */
export type Float16ArrayType = typeof globalThis extends { Float16Array: { prototype: infer P } }
    ? P
    : Float16ArrayLike;

/** The part of a Float16Array used here, for TypeScript libs that do not declare it. */
export interface Float16ArrayLike {
    readonly [Symbol.toStringTag]: "Float16Array";
    readonly BYTES_PER_ELEMENT: 2;
    readonly buffer: ArrayBuffer;
    readonly byteOffset: number;
    readonly byteLength: number;
    readonly length: number;
    [index: number]: number;
    [Symbol.iterator](): IterableIterator<number>;
}

/**
 * What `as: "f16"` returns: the values in a Float16Array where the runtime has one, or their binary16 bits in
 * a Uint16Array where it has none (tell them apart with `instanceof Uint16Array`). `as: "f16-bits"` always
 * returns the Uint16Array of bits.
 */
export type HalfArray = Float16ArrayType | Uint16Array;

/**
 * as: "native": I8 Int8Array, I16 Int16Array, I32 Int32Array, I64 BigInt64Array, U8 and BOOL Uint8Array, U16
 * Uint16Array, U32 Uint32Array, U64 BigUint64Array, F32 Float32Array, F64 Float64Array, F16 a HalfArray, BF16
 * a Uint16Array of its bits, C64 a Float32Array of (real, imaginary) pairs (shape gains a last dimension of 2).
 * Quantized and 8-, 6- and 4-bit float types have no such array: their read rejects with code "unsupported".
 * Values of a big-endian GGUF come in this runtime's byte order.
 */
export type NativeArray =
    | Int8Array
    | Int16Array
    | Int32Array
    | BigInt64Array
    | Uint8Array
    | Uint16Array
    | Uint32Array
    | BigUint64Array
    | Float32Array
    | Float64Array
    | Float16ArrayType;

/** The array type a read of `as: A` fills (and the type `into` must be). */
export type ReadArray<A extends ReadAs> = A extends "raw"
    ? Uint8Array
    : A extends "f16-bits"
      ? Uint16Array
      : A extends "f16"
        ? HalfArray
        : A extends "native"
          ? NativeArray
          : Float32Array;

/**
 * A read's array, carrying its shape: outermost first as numpy's (the tensor's shape; [count, ne0] for
 * `rows`; the slice's extents for `slice`; [bytes] for "raw"; a complex dtype, C64, adds a last dimension of 2,
 * its (real, imaginary) pairs). The array itself is a plain typed array (the shape is an own property, so a
 * structured clone or `slice()` of it drops the shape).
 */
export type ReadResult<A extends ReadAs> = ReadArray<A> & { shape: number[] };

/** [start, end): half-open, as numpy's `start:end`; null: the whole dimension. */
export type SliceRange = readonly [number, number] | null;

export interface ReadOptions<A extends ReadAs = "f32"> {
    /** See ReadAs. Default "f32". */
    as?: A;
    /** [start, count]: only these rows, a row being the innermost dimension (shape's last). */
    rows?: [number, number];
    /**
     * An N-D slice: a range per dimension, outermost first as numpy's (fewer ranges than dimensions leave the
     * inner ones whole). Only the bytes of the selected rows' blocks are read (along the innermost dimension
     * whole blocks, then cut); not with `rows`, not with as: "raw". A range outside its dimension is a
     * RangeError.
     */
    slice?: readonly SliceRange[];
    /**
     * Decode into this array instead of a new one (reuse it across reads: no allocation, no page faults). It must
     * be of the type `as` reads (a Float32Array for "f32"; for "f16" a Uint16Array, or a Float16Array where the
     * runtime has one; for "native" the tensor's own type) — else a TypeError — and hold at least the values
     * read — else a RangeError. The result is a view of its first elements (`into.subarray(0, n)`) with
     * `shape`. Not on a model opened in a worker (a TypeError).
     */
    into?: ReadArray<A>;
    /**
     * Read a Hugging Face tensor's values as llama.cpp's convert_hf_to_gguf.py writes them into its GGUF: the
     * transform a compare() row names (CompareRow.transform), applied by the core that compare() and
     * `weightstream convert` use (the Q/K permutation, Gemma's + 1 rounded to F16 for an F16 tensor; the split and
     * trim transforms only select rows, which `rows` does). as "f32" only, not with `slice` (a TypeError). Default
     * null: the values as stored.
     */
    transform?: CompareTransform | null;
    /**
     * The permutation's head count (CompareRow.heads), required for "permute_q" / "permute_k": `rows` must then
     * be whole heads (first row and count multiples of tensor.rows / heads), else `bad_shape`.
     */
    heads?: number;
    signal?: AbortSignal;
    onProgress?: (progress: Progress) => void;
}

export interface StatsOptions {
    /** [start, count]: only these rows, as for read(). */
    rows?: [number, number];
    /** Histogram bins, 1 to 4096 (default 32). */
    bins?: number;
    signal?: AbortSignal;
    onProgress?: (progress: Progress) => void;
}

/**
 * Statistics of a tensor's decoded values, exactly the entry `weightstream stats --json` prints for it: over
 * the finite values min, max, mean and population std (null when none is finite), counts of NaN, +Inf, -Inf
 * and zeros, and a histogram over [min, max] whose bin k holds the values v with edges[k] <= v < edges[k + 1]
 * (the last bin also max). The edges are the equal-width ones rounded down to a fine power-of-two grid (less
 * than 2/8192 of the range below); see include/weightstream/stats.h. One pass: the tensor's bytes are fetched and decoded once,
 * in bounded memory, and never reach JavaScript.
 */
export interface TensorStats {
    name: string;
    dtype: TensorDType;
    n_elements: number;
    min: number | null;
    max: number | null;
    mean: number | null;
    std: number | null;
    nan: number;
    pos_inf: number;
    neg_inf: number;
    zeros: number;
    histogram: { min: number | null; max: number | null; counts: number[]; edges: number[] };
    /** With options.rows: the window. */
    rows?: [number, number];
}

export interface StreamOptions<A extends ReadAs = "f32"> {
    as?: A;
    /**
     * Every tensor is decoded into this one array (as read()'s `into`; checked tensor by tensor): each yielded
     * `data` is a view of it, valid until the iterator is resumed. Size it for the largest tensor.
     */
    into?: ReadArray<A>;
    signal?: AbortSignal;
    /** Bytes of all tensors processed so far. */
    onProgress?: (progress: Progress) => void;
}

/**
 * What a model cost so far, from open() on (its index and every file of a split or sharded model included): a
 * plain snapshot, not updated after it is taken. Requests are what the model asked of its sources: HTTP
 * requests (retries and a restarted download included), reads of a File/Blob or Node file (one per chunk), one
 * per pass over a ReadableStream or Response; bytes in memory (a Uint8Array, an ArrayBuffer) take none.
 */
export interface ModelMetrics {
    requests: number;
    /** Bytes that arrived from the sources, also those of a response cut short once the header was parsed. */
    bytesFetched: number;
    /** Bytes the range cache (OpenOptions.cache) answered with instead of the source; not in bytesFetched. */
    bytesFromCache: number;
    /** Pieces the range cache failed to store (QuotaExceededError and the like); the reads went on uncached. */
    cacheErrors: number;
    /** Requests repeated after a failure worth a retry (a dropped connection, a stall, 5xx, 408, 429). */
    retries: number;
    /** Milliseconds from the start of open() (the WebAssembly module loaded) to the first byte from a source;
     * null before it. */
    timeToFirstByte: number | null;
    /** Milliseconds spent waiting for the sources (a response, the next chunk, a file read); waits that
     * overlap count once. */
    ioTime: number;
    /**
     * Tensor bytes fed to the decoders: read() and stream() to "f32", "f16" or "f16-bits", and stats(); not "raw"
     * or "native" reads, nor F16 data read as "f16"/"f16-bits" (those are copies of the stored bytes).
     */
    decodedBytes: number;
    /** Milliseconds the decoders took for them. */
    decodeTime: number;
    /** decodedBytes / decodeTime in GB/s (10^9 bytes a second); null before anything was decoded. */
    decodeGBps: number | null;
}

/** The tensors of one layer of a model (Model.layers). */
export interface TensorLayer {
    /** The name's prefix up to the layer number: "blk.3" (GGUF), "model.layers.3" (Hugging Face), "v.blk.3". */
    name: string;
    /** The layer number: 3. */
    index: number;
    /** Its tensors, in file order. */
    tensors: TensorInfo[];
}

export interface Model {
    readonly info: ModelInfo;
    readonly format: ModelInfo["format"];
    readonly version: ModelInfo["version"];
    readonly metadata: MetadataEntry[];
    readonly tensors: TensorInfo[];
    readonly closed: boolean;
    /**
     * What the model cost so far: a new snapshot at each access. For a model opened in a worker
     * (weightstream/worker), as of the worker's latest answer about it (an awaited call includes itself).
     */
    readonly metrics: ModelMetrics;
    /** The metadata entries by key (the same entries as `metadata`; keys are unique in a valid file). */
    readonly metadataMap: ReadonlyMap<string, MetadataEntry>;
    /** The value of metadata key `key` (as in its MetadataEntry), or undefined when there is no such key. */
    get(key: string): MetadataValue | undefined;
    /**
     * The number of parameters: n_elements summed over all tensors, every file of a split model included (what
     * llama.cpp's llama_model_n_params counts). info.facts.parameter_count.
     */
    readonly parameterCount: number;
    /** Tensor bytes * 8 / parameterCount, as llama.cpp prints "BPW" at load; null without parameters. */
    readonly bitsPerWeight: number | null;
    /**
     * llama-quantize's name of general.file_type: "Q4_K_M", "Q8_0", "F16", "BF16", "F32", ... (the names
     * quantize() and `weightstream quantize --type` take, from include/weightstream/quant_recipe.h); null when the key is
     * absent (safetensors) or holds an id llama-quantize does not name (its number is in info.facts.file_type_id).
     */
    readonly fileType: string | null;
    /**
     * The tensors grouped by layer (include/weightstream/model_facts.h): one entry per "blk.N" (GGUF) or "...layers.N",
     * "...h.N", "...layer.N", "...blocks.N" (Hugging Face) prefix, ordered by the prefix (in order of first
     * appearance) and then by N. Only layers that have tensors are listed.
     */
    readonly layers: TensorLayer[];
    /** The tensors in no layer (token_embd.weight, output_norm.weight, output.weight, ...), in file order. */
    readonly nonLayerTensors: TensorInfo[];
    /** The tensor named `name`, or undefined. */
    tensor(name: string): TensorInfo | undefined;
    /** Reads one tensor (or some of its rows) into a new array owned by JavaScript. */
    read<A extends ReadAs = "f32">(name: string, options?: ReadOptions<A>): Promise<ReadResult<A>>;
    /** Statistics of one tensor (or some of its rows), computed in the core as the CLI's `stats` does. */
    stats(name: string, options?: StatsOptions): Promise<TensorStats>;
    /**
     * Every tensor in file order, one pass: how to consume a stream or a server without Range. Over HTTP with
     * Range, neighbouring tensors (at most 4 KiB apart) are read in one request of up to 16 MiB.
     */
    stream<A extends ReadAs = "f32">(
        options?: StreamOptions<A>,
    ): AsyncIterableIterator<{ tensor: TensorInfo; data: ReadResult<A> }>;
    /**
     * The model's tokenizer, made from its GGUF keys (tokenizer.ggml.*): llama.cpp's ids, `weightstream tokenize
     * MODEL`'s. Throws a WeightstreamError when the model has none ("unsupported") or its keys are invalid.
     */
    tokenizer(): Tokenizer;
    /** Frees the model; later reads reject with code "closed". */
    close(): Promise<void>;
}

/** What open() reads: a URL (read with HTTP Range), a Request or Response, a Blob or File, bytes, a stream of
 * bytes, or in Node a file path. */
export type Source =
    string | URL | Request | Response | Blob | ArrayBuffer | ArrayBufferView | ReadableStream<Uint8Array>;

/**
 * A source with a file name: how to name bytes, a Blob or a stream that is one file of a model stored in
 * several. The name also tells the format (".gguf", ".safetensors") as the CLI reads it from a path: it only
 * decides which parser explains bytes that announce neither format.
 */
export interface NamedSource {
    name: string;
    source: Source;
}

/**
 * The files of one model stored in several, in any order: every part of a split GGUF
 * (`name-00001-of-00003.gguf` ...), or the shards of a safetensors model with its `*.safetensors.index.json`
 * (or without it: then the shards in name order). Each needs a name: a File, a URL, a path or a NamedSource.
 */
export type Sources = ReadonlyArray<Source | NamedSource>;

/**
 * Opens a model, reading its header only (for a model in several files, every file's header; tensors then
 * carry `file`). Rejects with a WeightstreamError.
 */
export function open(source: Source | NamedSource | Sources, options?: OpenOptions): Promise<Model>;

/** What compare() takes of open()'s options, and its own. */
export interface CompareOptions extends Omit<OpenOptions, "onProgress"> {
    /**
     * Compare only the pairs where either side's tensor name matches (as `diff --tensors REGEX`); a string is
     * made a RegExp. Default: every pair.
     */
    tensors?: RegExp | string;
    /** Bytes of the compared tensors read so far (both sides), and their total. */
    onProgress?: (progress: Progress) => void;
    /** Each row of the report as it is done (in report order), with its index in `tensors`. */
    onTensor?: (row: CompareRow, index: number) => void;
}

/** non_finite: the pair differs where a value is NaN or Inf (n_nonfinite_diff > 0), whatever its nmse. */
export type CompareVerdict = "identical" | "different" | "non_finite" | "only_a" | "only_b" | "incomparable";

/** The converter's transform applied to the source side (or the part of a fused tensor compared). */
export type CompareTransform =
    | "permute_q"
    | "permute_k"
    | "plus_one"
    | "split_q"
    | "split_k"
    | "split_v"
    | "split_gate"
    | "split_up"
    | "vocab_trim"
    | "expert";

/** A pair's numbers, over the pairs where both values are finite; null where a number is not finite. */
export interface CompareMetrics {
    max_abs: number;
    /** The first element (in the GGUF side's order) with that difference. */
    max_abs_index: number;
    rmse: number | null;
    /** sum (a - b)^2 / sum a^2 */
    nmse: number | null;
    cosine: number | null;
    n_diff: number;
    n_nan_a: number;
    n_nan_b: number;
    n_inf_a: number;
    n_inf_b: number;
    /** Pairs that differ where either value is NaN or Inf (left out of the sums, so the nmse cannot see them). */
    n_nonfinite_diff: number;
}

/** One pair of tensors (or a tensor only one side has). Shapes are outermost first. */
export interface CompareRow {
    a: string | null;
    b: string | null;
    dtype_a: TensorDType | null;
    dtype_b: TensorDType | null;
    shape_a: number[] | null;
    shape_b: number[] | null;
    transform: CompareTransform | null;
    /** The Q/K permutation's head count (for permute_q / permute_k), else null. */
    heads: number | null;
    verdict: CompareVerdict;
    metrics: CompareMetrics | null;
    /** The conversion mistake that explains a difference, or why a pair is incomparable. */
    hint: string | null;
}

/** The object `weightstream diff A B --json` prints. */
export interface CompareReport {
    /** path: what the side was given as (a path, URL or file name; "" for bytes or a stream). */
    a: { path: string; format: "gguf" | "safetensors" };
    b: { path: string; format: "gguf" | "safetensors" };
    /** "names" or "hf-to-gguf:<family>" */
    mapping: string;
    /** Metadata differences of two models of the same format (empty lists otherwise). */
    metadata: {
        only_a: string[];
        only_b: string[];
        changed: { key: string; a: MetadataValue; b: MetadataValue }[];
    };
    tensors: CompareRow[];
    summary: {
        identical: number;
        different: number;
        non_finite: number;
        only_a: number;
        only_b: number;
        incomparable: number;
    };
}

/**
 * Compares two models tensor by tensor, as `weightstream diff --json` does: the same rows in the same order
 * with the same numbers. Each side is what open() takes; for a safetensors side, config.json is read next to
 * a URL or path, or taken from among the side's Files when given there. Reads each header, then each compared
 * pair a window of whole rows of each side at a time. Rejects with a WeightstreamError when a side cannot be
 * opened; a pair that cannot be compared is a row with verdict "incomparable".
 */
export function compare(
    a: Source | NamedSource | Sources,
    b: Source | NamedSource | Sources,
    options?: CompareOptions,
): Promise<CompareReport>;

export interface DTypeInfo {
    id: number;
    name: DTypeName;
    kind: "float" | "integer" | "quantized";
    blockElements: number;
    blockBytes: number;
    floatsPerElement: number;
    decodable: boolean;
}

/** Every element type this build knows. */
export function dtypes(): Promise<DTypeInfo[]>;

/** What the range cache holds (OpenOptions.cache): in this context's store, or the Node directory given. */
export function cacheInfo(location?: CacheLocation): Promise<CacheInfo>;

/** Empties the range cache: every piece and the index, also pieces another tab stored. */
export function clearCache(location?: CacheLocation): Promise<void>;

// ---- quantize() ----

/** llama-quantize's file types (`weightstream quantize --type`; any case, or the llama_ftype number as a string). */
export type QuantizeFileType =
    | "F32"
    | "F16"
    | "BF16"
    | "Q4_0"
    | "Q4_1"
    | "Q5_0"
    | "Q5_1"
    | "Q8_0"
    | "Q2_K"
    | "Q2_K_S"
    | "Q3_K"
    | "Q3_K_S"
    | "Q3_K_M"
    | "Q3_K_L"
    | "Q4_K"
    | "Q4_K_S"
    | "Q4_K_M"
    | "Q5_K"
    | "Q5_K_S"
    | "Q5_K_M"
    | "Q6_K"
    | "IQ1_S"
    | "IQ1_M"
    | "IQ2_XXS"
    | "IQ2_XS"
    | "IQ2_S"
    | "IQ2_M"
    | "IQ3_XXS"
    | "IQ3_XS"
    | "IQ3_S"
    | "IQ3_M"
    | "IQ4_NL"
    | "IQ4_XS"
    | "TQ1_0"
    | "TQ2_0"
    | "MXFP4_MOE"
    | (string & {});

/**
 * A per-tensor type like llama-quantize's `--tensor-type REGEX=TYPE`: a string "REGEX=TYPE" is read exactly as
 * that option (REGEX lowercased, searched in each tensor name); an object's pattern is used as given. TYPE is a
 * ggml type name ("q8_0", "Q4_K", "f16"). The first that matches a tensor wins.
 */
export type QuantizeOverride = string | { pattern: string | RegExp; type: string };

export interface QuantizeProgress extends Progress {
    /** Input bytes of the planned tensors, in all. */
    total: number;
    /** Index (in output order) of the tensor being written; `tensors` when done. */
    tensor: number;
    tensors: number;
    /** The tensor being written and the type it is written in. */
    name: string;
    dtype: string;
    /** Output bytes produced so far, and the size of the whole output file. */
    written: number;
    outputSize: number;
    /** What llama-quantize would warn about (requantizing, imatrix entries not found, ...). */
    warnings: string[];
}

export interface QuantizeOptions extends Omit<OpenOptions, "onProgress"> {
    /** The file type, as `weightstream quantize --type` (and llama-quantize) take it: "Q4_K_M", "IQ2_XXS", ... */
    type: QuantizeFileType;
    /**
     * An importance matrix (llama-imatrix's GGUF or legacy .dat), read whole: a source as for open(), or a
     * NamedSource. quantize.imatrix.file records a path or URL string as given, a File's or NamedSource's name.
     */
    imatrix?: Source | NamedSource;
    overrides?: QuantizeOverride[];
    /** --pure: every tensor in the file type's default type (no mix). */
    pure?: boolean;
    /** --output-tensor-type / --token-embedding-type: a ggml type name. */
    outputTensorType?: string;
    tokenEmbeddingType?: string;
    /** --leave-output-tensor: output.weight is copied as stored. */
    leaveOutputTensor?: boolean;
    /** --allow-requantize: quantize from an already quantized input. */
    allowRequantize?: boolean;
    /**
     * A Hugging Face checkpoint's folder name, for the general.* keys its conversion writes: as ConvertOptions's
     * (a path's folder, a URL's repository by default; give it with named sources and bytes).
     */
    modelName?: string;
    /** --strict-tokenizer, for a Hugging Face checkpoint: as ConvertOptions's. */
    strictTokenizer?: boolean;
    /**
     * Several sources (a checkpoint's files) keep only model files: true by default here, as for convert();
     * config.json and the tokenizer files among them are taken as the checkpoint's side files.
     */
    modelFilesOnly?: boolean;
    /** Aborting errors the stream with the signal's reason. */
    signal?: AbortSignal;
    onProgress?: (progress: QuantizeProgress) => void;
}

/**
 * Quantizes a model as llama-quantize does (include/weightstream/quant_recipe.h): a stream of the output GGUF, the bytes
 * `weightstream quantize IN OUT --type ...` writes for the same options. `source` is what open() takes, or a Hugging
 * Face checkpoint as convert() takes it (named files, a folder's path, a model.safetensors(.index.json) URL; its
 * config.json and tokenizer files read as convert() reads them): the one pass, the bytes of convert() to the
 * checkpoint's float type (convert_hf_to_gguf.py's --outtype auto: F16 from an F16 checkpoint, else BF16) then
 * quantize(), without the intermediate file; each tensor's rows are read from the checkpoint and converted on the
 * way. A safetensors model with no config.json is quantized as it is when it has general.architecture (a file
 * convert() wrote from a GGUF); otherwise it is refused, WeightstreamError "unsupported" with `what` "config.json" (no
 * config.json, or an unusable one) or "config.model_type" (an architecture the converter does not know, named with
 * the known ones); a conversion refused is convert()'s error. The
 * stream is pulled: tensors are read one at a time, in output order, through the model's sources (a forward
 * stream works when that order is the file's), and a tensor goes through WebAssembly a row window at a time
 * (at most 4 Mi floats, its input bytes and its output), whatever the model size. Every chunk is a new array
 * the caller owns. Errors (bad options as TypeError, the core's as WeightstreamError with its code and `what`:
 * "imatrix.required", "imatrix.size", "tensor.data" for NaN/Inf input, ...) error the stream.
 */
export function quantize(source: Source | NamedSource | Sources, options: QuantizeOptions): ReadableStream<Uint8Array>;

/** One of llama-quantize's file types, as the core lists them (include/weightstream/quant_recipe.h ftype_list). */
export interface QuantizeFileTypeInfo {
    /** The canonical name ("Q4_K_M"; the aliases Q3_K, Q4_K and Q5_K are not listed). */
    name: string;
    /** The llama_ftype number written to general.file_type. */
    id: number;
    /** The type of an ordinary tensor ("Q4_K" for Q4_K_M); the recipe gives some tensors others. */
    defaultType: DTypeName;
}

/** Every file type quantize() takes, once each, in llama-quantize's order (its QUANT_OPTIONS). */
export function quantizeFileTypes(): Promise<QuantizeFileTypeInfo[]>;

export interface QuantizePlannedTensor {
    /** Its name in the output (from a checkpoint: its GGUF name), and the input tensor its bytes are read from. */
    name: string;
    inName: string;
    /** Its dimensions, outermost first (the output keeps the input's; from a checkpoint, the conversion's). */
    shape: number[];
    /** The type quantized from (the input's stored type; from a checkpoint, the conversion's), and the type written. */
    inType: TensorDType;
    type: DTypeName;
    /** false: the input bytes are copied (norms, biases, a tensor already of its type, ...). */
    quantize: boolean;
    /** The type the recipe chose before the fallback for a row that is not a multiple of its block. */
    wanted: DTypeName;
    fallback: boolean;
    requantize: boolean;
    /** Whether the importance matrix has an entry for it (and it is used). */
    imatrix: boolean;
    /** Stored bytes read from the input (from a checkpoint: of the tensors it is made from, all experts of a stacked one). */
    inputBytes: number;
    /** Absolute offset and size of its data in the output. */
    offset: number;
    nbytes: number;
}

export interface QuantizePlan {
    /** The file type's canonical name ("Q4_K_M" for "q4_k"). */
    type: string;
    /** The output's size in bytes: what quantize() will write, exactly. */
    fileSize: number;
    /**
     * The output's tensor bytes * 8 / its parameter count: the bits per weight llama.cpp will report for it (as
     * Model.bitsPerWeight of the written file); null without parameters.
     */
    bitsPerWeight: number | null;
    /** Bytes of the output's header (metadata and tensor directory, with padding). */
    headerSize: number;
    /** Input bytes of the tensors, in all (QuantizeProgress.total). */
    inputSize: number;
    /** The general.name the output holds (from a checkpoint: the one its conversion writes), or null. */
    modelName: string | null;
    /** Tensors whose row length needed llama-quantize's fallback type. */
    fallbacks: number;
    /** What the CLI warns about: from a checkpoint, the conversion's warnings first. */
    warnings: string[];
    /** In output order. */
    tensors: QuantizePlannedTensor[];
}

/**
 * What quantize() with the same options writes, before anything is quantized: the core's plan (the one
 * `weightstream quantize` follows) for every tensor, and the output's size. Reads the model's header and the
 * importance matrix, no tensor data. Rejects as quantize()'s stream would for the same options (TypeError for
 * bad options, WeightstreamError "imatrix.required", "imatrix.size", ...).
 */
export function quantizePlan(
    source: Source | NamedSource | Sources,
    options: Omit<QuantizeOptions, "onProgress">,
): Promise<QuantizePlan>;

// ---- end of quantize() ----

// ---- convert() ----

export interface ConvertProgress extends Progress {
    /** Input bytes the conversion reads, in all. */
    total: number;
    /** Index (in output order) of the tensor being written; `tensors` when done. */
    tensor: number;
    tensors: number;
    /** The tensor being written, by its output name (a checkpoint's GGUF name), and the type it is written in. */
    name: string;
    dtype: string;
    /** Output bytes produced so far, and the size of the whole output file. */
    written: number;
    outputSize: number;
    /** The core's warnings about the plan (tensors kept quantized, requantizing, dropped tensors, ...). */
    warnings: string[];
}

export interface ConvertOptions extends Omit<OpenOptions, "onProgress"> {
    /** The output's format: what OUT's extension gives `weightstream convert`. Required. */
    to: "gguf" | "safetensors";
    /**
     * --dtype: re-encode the float and quantized tensors as this: "f32", "f16", "bf16" or a quantized ggml type
     * ("q8_0", "q4_k", ...; GGUF only), any case. Absent: the types are kept where the target holds them.
     */
    dtype?: string;
    /** --allow-requantize: requantize tensors already quantized to another quantized dtype (else kept). */
    allowRequantize?: boolean;
    /**
     * A Hugging Face checkpoint's folder name: general.name and the other general.* keys are derived from it as
     * convert_hf_to_gguf.py derives them ("tiny-llama-spm" -> "Tiny Llama Spm"). Default: the folder of the first
     * source's path or of a dropped folder's File (webkitRelativePath), the repository of a Hugging Face URL
     * (.../ORG/REPO/resolve/REV/FILE), else the URL's folder; "" for sources without one (named sources, bytes), so
     * give it with those.
     */
    modelName?: string;
    /**
     * --strict-tokenizer: the written tokenizer and the checkpoint's own (Hugging Face-exact) tokenize a fixed
     * multilingual text differently is an error (the stream errors before any byte) rather than a warning.
     */
    strictTokenizer?: boolean;
    /**
     * Several sources (a checkpoint's files) keep only model files, as open()'s option does: true by default
     * here; config.json and the tokenizer files among them are taken as the checkpoint's side files.
     */
    modelFilesOnly?: boolean;
    /** Aborting errors the stream with the signal's reason. */
    signal?: AbortSignal;
    onProgress?: (progress: ConvertProgress) => void;
}

/**
 * Converts a model as `weightstream convert IN OUT.<to> [--dtype D] [--allow-requantize]` does, byte for byte: a
 * stream of the output file. GGUF <-> safetensors (same-format conversions too), and a Hugging Face checkpoint
 * (safetensors with its config.json) -> GGUF as convert_hf_to_gguf.py writes it (GGUF names, Q/K permuted,
 * general.*, config.json's hyperparameters, the tokenizer: tokenizer.model or tokenizer.json, added_tokens.json,
 * tokenizer_config.json, chat_template.jinja / .json). `source` is what open() takes; config.json and each tokenizer file are the one given among the
 * sources (a NamedSource or File of that name), else the file beside the first source (a path or URL). From a URL
 * (a Hugging Face `.../resolve/main/model.safetensors` or `.../model.safetensors.index.json`), the files beside it
 * are fetched from the same folder: config.json and the tokenizer files (a 404 means absent; another HTTP error
 * rejects, code "http" with its `status`) and the shards the index names (a name outside the folder, "../x" or a
 * URL, is refused: "bad_json" at weight_map). The written tokenizer is checked against the source's on a fixed
 * text: a difference is a warning (progress.warnings) naming the first differing token, or with strictTokenizer an
 * error.
 * The stream is pulled: tensors are read in output order, a piece or a window of rows at a time, whatever the
 * model size. Every chunk is a new array the caller owns. Errors error the stream: bad options as TypeError (a
 * dtype the core cannot encode as, or a quantized dtype for safetensors, too), a refused conversion as
 * WeightstreamError with the core's code and `what` and the CLI's words ("tensor.type": a tensor the target
 * cannot hold, ...).
 */
export function convert(source: Source | NamedSource | Sources, options: ConvertOptions): ReadableStream<Uint8Array>;

/** One tensor of a ConvertPlan, in output order. */
export interface ConvertPlannedTensor {
    /** Its name in the output (a checkpoint's tensor by its GGUF name) and in the input. */
    name: string;
    inName: string;
    /** The stored type read and the type written ("BF16" -> "F16"). */
    inType: string;
    type: string;
    /** Dims as written, outermost first. */
    shape: number[];
    /** "copy" (the stored bytes, a Q/K tensor's rows permuted), "encode" (decoded and re-encoded), "widen". */
    action: "copy" | "encode" | "widen";
    /** Where it lies in the output (absolute) and its bytes. */
    offset: number;
    nbytes: number;
}

export interface ConvertPlan {
    to: "gguf" | "safetensors";
    /** The output's size in bytes: what convert() will write, exactly. */
    fileSize: number;
    /** Input bytes of the tensors, in all (ConvertProgress.total). */
    inputSize: number;
    /**
     * The general.name the output holds, or null: a checkpoint's, as the converter derives it from modelName
     * ("tiny-llama-spm" -> "Tiny Llama Spm"), to name the output file by.
     */
    modelName: string | null;
    /** The core's warnings about the plan, as ConvertProgress.warnings. */
    warnings: string[];
    tensors: ConvertPlannedTensor[];
}

/**
 * What convert() with the same options writes, before anything is converted: the core's plan (plan_conversion(),
 * the one `weightstream convert` follows) for every tensor, and the output's size. Reads the headers, the index and
 * config.json (and what else convert() reads beside the model), no tensor data. Rejects as convert()'s stream would
 * for the same options (TypeError for bad options, the refusal's WeightstreamError).
 */
export function convertPlan(
    source: Source | NamedSource | Sources,
    options: Omit<ConvertOptions, "onProgress">,
): Promise<ConvertPlan>;

// ---- end of convert() ----

// ---- edit() ----

/** GGUF value types as edit() and `weightstream edit --set KEY=VALUE:TYPE` name them (an array's item type). */
export type EditValueType =
    "u8" | "i8" | "u16" | "i16" | "u32" | "i32" | "u64" | "i64" | "f32" | "f64" | "bool" | "str";

/** A value to write: a scalar, or an array of scalars of one kind (all strings, all numbers, all booleans). */
export type EditScalar = string | number | bigint | boolean;
export type EditValue = EditScalar | EditScalar[] | ArrayLike<number> | BigInt64Array | BigUint64Array;

export interface MetadataChanges {
    /**
     * Keys to set. A bare value keeps an existing key's type (an array its item type); a new key's type is
     * inferred as the CLI infers it: boolean -> bool, an integer -> u32 when it fits, else i32, else i64 (u64
     * beyond), other numbers -> f32, string -> str; an array by its items. `{value, type}` sets the type (the
     * item type for an array). BigInts are exact to 64 bits; a numeric string is read as the number for a
     * numeric type. Existing keys keep their place; new ones are appended in this object's order.
     */
    set?: Record<string, EditValue | { value: EditValue; type?: EditValueType }>;
    /** Keys to remove; each must exist (bad_key, what "delete"). */
    delete?: string[];
    /** tokenizer.chat_template, as a string (`--set-chat-template FILE`). */
    chatTemplate?: string;
}

/**
 * Edits a GGUF's metadata (include/weightstream/gguf_edit.h): a stream of the new file, byte for byte what `weightstream edit
 * IN OUT` writes for the same changes: the new header, then every tensor's stored bytes unchanged, re-aligned
 * to the file's alignment. `source` is what open() takes (one little-endian GGUF; safetensors, split and
 * big-endian models error with "unsupported", what "format"). The stream is pulled: tensors are read one at a
 * time in file order through the model's sources. Errors error the stream: a malformed `changes` as TypeError;
 * the core's as WeightstreamError: "bad_type" (a value not of its type), "bad_json", "bad_key" (what
 * "general.alignment": it cannot be edited; "delete": no such key; "key": an empty key); the message names the key.
 */
export function edit(
    source: Source | NamedSource | Sources,
    changes: MetadataChanges,
    options?: Omit<OpenOptions, "onProgress">,
): ReadableStream<Uint8Array>;

// ---- end of edit() ----

/**
 * The core's codes, as the CLI prints them (include/weightstream/status.h; tests/js/errors.test.mjs checks this list
 * against the core's): first an invalid file's ("internal" is a bug: an invariant that input should not reach),
 * then a source's, which the CLI names the same way for the same failure (its exit status 3): "io" (a file
 * error: missing, no permission), "network" (fetch failed, also how CORS failures show; a stalled request),
 * "http" (an HTTP error status or a wrong Content-Range), "source_changed" (the file behind a URL changed while
 * it was read: another ETag, Last-Modified or size than the first response's, a 412, or a whole file answering
 * a range), "not_seekable" (going back in a stream).
 */
export type CoreErrorCode =
    | "bad_magic"
    | "unsupported_version"
    | "truncated"
    | "too_large"
    | "overflow"
    | "bad_type"
    | "bad_shape"
    | "bad_alignment"
    | "bad_offset"
    | "duplicate_name"
    | "bad_json"
    | "bad_key"
    | "trailing_data"
    | "unsupported"
    | "bad_split"
    | "internal"
    | "bad_source"
    | "io"
    | "network"
    | "http"
    | "source_changed"
    | "not_seekable";

/**
 * The package's own codes, for what only a browser or the JavaScript API meets: "cors" (Content-Range not
 * exposed), "no_such_tensor", "closed", "wasm_load", "worker" (weightstream/worker: the worker failed).
 */
export type PackageErrorCode = "cors" | "no_such_tensor" | "closed" | "wasm_load" | "worker";

export type ErrorCode = CoreErrorCode | PackageErrorCode;

/** What the package rejects with for problems with a model or its source; `code` says which (a TypeError
 * for bad arguments or options, an AbortSignal's reason when aborted). */
/** tokenize()'s options: `weightstream tokenize`'s flags. */
export interface TokenizeOptions {
    /** Add the BOS/EOS (or template) tokens the model asks for (default true; --no-add-special). */
    addSpecial?: boolean;
    /** Match special tokens written in the text ("<|eot_id|>") as themselves (default true; --no-parse-special). */
    parseSpecial?: boolean;
    /** With addSpecial: false leaves the BOS out and adds the rest (default true; --no-bos). */
    addBos?: boolean;
}

/** A token's kind, as GGUF's tokenizer.ggml.token_type numbers them. */
export type TokenKind = "undefined" | "normal" | "unknown" | "control" | "user_defined" | "unused" | "byte";

/** Text to token ids and back, in the core: model.tokenizer() or tokenizer(). */
export class Tokenizer {
    private constructor();
    /** Tokens in the table. */
    readonly size: number;
    /** What it is: "llama", "gpt2/llama-bpe", "bert", "t5", "rwkv" (a GGUF's), "hf:BPE", "hf:WordPiece", ... */
    readonly description: string;
    /** The ids of `text` (the CLI's `tokenize --ids`). Text is UTF-8 encoded first (a lone surrogate is U+FFFD). */
    tokenize(text: string, options?: TokenizeOptions): Int32Array;
    /** The text of `ids` (`weightstream detokenize`); skipSpecial leaves special tokens' text out. RangeError for
     * an id outside the table. Bytes that are not UTF-8 are decoded as U+FFFD. */
    detokenize(ids: Int32Array | readonly number[], options?: { skipSpecial?: boolean }): string;
    /**
     * What each token stands for inside a text: its bytes (a byte-fallback token's one byte, a special token's text),
     * as llama-tokenize prints beside each id. Not always whole UTF-8: a character split over tokens is not.
     */
    tokenBytes(ids: Int32Array | readonly number[]): Uint8Array[];
    /** The token's text as the vocabulary stores it ("Ġthe", "▁the", "<0x0A>"). */
    piece(id: number): string;
    kind(id: number): TokenKind;
    /** Frees it; later calls throw a WeightstreamError with code "closed". */
    dispose(): void;
}

/**
 * A tokenizer from Hugging Face files, each a Source named by its file name (a File, a URL, a path, a NamedSource):
 * tokenizer.json (Hugging Face's tokenizers, token-exact), or tokenizer.model (SentencePiece); tokenizer_config.json
 * among them is read too. A single file of another name is a tokenizer.json, or a tokenizer.model when its name
 * ends in ".model". Rejects with a TypeError for other names, a WeightstreamError for invalid files.
 */
export function tokenizer(
    source: Source | NamedSource | Sources,
    options?: Pick<OpenOptions, "signal" | "fetch" | "retries" | "retryDelay" | "stallTimeout" | "cache">,
): Promise<Tokenizer>;

export class WeightstreamError extends Error {
    readonly code: ErrorCode;
    /** The absolute byte offset in the file the problem is at, when there is one. */
    readonly offset: number | undefined;
    /** The field or rule (core errors). */
    readonly what?: string;
    /** The HTTP status ("http" errors). */
    readonly status?: number;
    /** A model in several files: the file the problem is in (its name, as in ModelInfo.files). */
    readonly file?: string;
    /**
     * What a core code means ("not a GGUF or safetensors file" for bad_magic): the core's words, the ones the
     * CLI prints after the code. Set on errors with a CoreErrorCode once the module has loaded.
     */
    readonly description?: string;
}
