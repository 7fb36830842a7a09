// SPDX-License-Identifier: MIT
// Types of the weightstream package (hand-written; checked by `npm run typecheck`).

/** An integer from the file: a number, or a bigint beyond +-(2^53 - 1). */
export type Integer = number | bigint;

/** A metadata value as `weightstream info --json` prints it. NaN and infinities are null. */
export type MetadataValue = Integer | number | boolean | string | null | MetadataValue[];

export type ValueTypeName =
    | "uint8"
    | "int8"
    | "uint16"
    | "int16"
    | "uint32"
    | "int32"
    | "uint64"
    | "int64"
    | "float32"
    | "float64"
    | "bool"
    | "string"
    | "array";

export interface MetadataEntry {
    key: string;
    type: ValueTypeName;
    /** Arrays only: the type of the items. */
    item_type?: ValueTypeName;
    /** Arrays only: the number of items. */
    length?: Integer;
    value: MetadataValue;
}

export interface TensorInfo {
    name: string;
    /** "F32", "Q4_K", "IQ2_XXS", "BF16", "F8_E4M3", ... or "UNKNOWN(<id>)" for a GGUF type id this build lacks. */
    dtype: string;
    /** Dimensions, outermost first (numpy / PyTorch order). */
    shape: Integer[];
    /** GGUF only: the dimensions as stored, innermost first (ggml order). */
    ne?: Integer[];
    /** Absolute byte offset of the data in its file. */
    offset: Integer;
    nbytes: Integer;
    n_elements: Integer;
    /** Rows, a row being the innermost dimension: what read()'s and stats()' `rows` windows address (the
     * product of the outer dimensions when the innermost is 0; 0 when the type has no byte layout). */
    rows: Integer;
    /** Split or sharded models: the file holding the data. */
    file?: string;
}

export interface Warning {
    code: string;
    offset: Integer;
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
    file_size: Integer | null;
    data_offset: Integer;
    alignment: number;
    /** A split or sharded model: its files, in order (tensors name theirs in TensorInfo.file). */
    files?: string[];
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
}

export type ReadAs = "f32" | "f16" | "raw";

/** binary16 values: a Float16Array where the runtime has one, else their bits in a Uint16Array. */
export type HalfArray = Uint16Array;

export type ReadResult<A extends ReadAs> = A extends "raw" ? Uint8Array : A extends "f16" ? HalfArray : Float32Array;

export interface ReadOptions<A extends ReadAs = "f32"> {
    /** "f32" (default): decoded float32; "f16": decoded then rounded to binary16 as ggml does (F16 data is
     * returned as stored); "raw": the stored bytes. */
    as?: A;
    /** [start, count]: only these rows, a row being the innermost dimension (shape's last). */
    rows?: [number, number];
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
 * than 2/8192 of the range below); see core/stats.h. One pass: the tensor's bytes are fetched and decoded once,
 * in bounded memory, and never reach JavaScript.
 */
export interface TensorStats {
    name: string;
    dtype: string;
    n_elements: Integer;
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
    /** Bytes a cache answered with instead of the source (0: no cache yet); not in bytesFetched. */
    bytesFromCache: number;
    /** Requests repeated after a failure worth a retry (a dropped connection, a stall, 5xx, 408, 429). */
    retries: number;
    /** Milliseconds from the start of open() (the WebAssembly module loaded) to the first byte from a source;
     * null before it. */
    timeToFirstByte: number | null;
    /** Milliseconds spent waiting for the sources (a response, the next chunk, a file read); waits that
     * overlap count once. */
    ioTime: number;
    /** Tensor bytes fed to the decoders (read() to "f32"/"f16" and stats(); not raw reads). */
    decodedBytes: number;
    /** Milliseconds the decoders took for them. */
    decodeTime: number;
    /** decodedBytes / decodeTime in GB/s (10^9 bytes a second); null before anything was decoded. */
    decodeGBps: number | null;
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
    /** The tensor named `name`, or undefined. */
    tensor(name: string): TensorInfo | undefined;
    /** Reads one tensor (or some of its rows) into a new array owned by JavaScript. */
    read<A extends ReadAs = "f32">(name: string, options?: ReadOptions<A>): Promise<ReadResult<A>>;
    /** Statistics of one tensor (or some of its rows), computed in the core as the CLI's `stats` does. */
    stats(name: string, options?: StatsOptions): Promise<TensorStats>;
    /** Every tensor in file order, one pass: how to consume a stream or a server without Range. */
    stream<A extends ReadAs = "f32">(
        options?: StreamOptions<A>,
    ): AsyncIterableIterator<{ tensor: TensorInfo; data: ReadResult<A> }>;
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

export type CompareVerdict = "identical" | "different" | "only_a" | "only_b" | "incomparable";

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
    | "vocab_trim";

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
}

/** One pair of tensors (or a tensor only one side has). Shapes are outermost first. */
export interface CompareRow {
    a: string | null;
    b: string | null;
    dtype_a: string | null;
    dtype_b: string | null;
    shape_a: number[] | null;
    shape_b: number[] | null;
    transform: CompareTransform | null;
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
    summary: { identical: number; different: number; only_a: number; only_b: number; incomparable: number };
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
    name: string;
    kind: "float" | "integer" | "quantized";
    blockElements: number;
    blockBytes: number;
    floatsPerElement: number;
    decodable: boolean;
}

/** Every element type this build knows. */
export function dtypes(): Promise<DTypeInfo[]>;

// ---- quantize() ----

/** llama-quantize's file types (`weightstream quantize --type`; any case, or the llama_ftype number). */
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
    /** Aborting errors the stream with the signal's reason. */
    signal?: AbortSignal;
    onProgress?: (progress: QuantizeProgress) => void;
}

/**
 * Quantizes a model as llama-quantize does (core/quant_recipe.h): a stream of the output GGUF, the bytes
 * `weightstream quantize IN OUT --type ...` writes for the same options. `source` is what open() takes. The
 * stream is pulled: tensors are read one at a time, in output order, through the model's sources (a forward
 * stream works when that order is the file's), and a tensor goes through WebAssembly a row window at a time
 * (at most 4 Mi floats, its input bytes and its output), whatever the model size. Every chunk is a new array
 * the caller owns. Errors (bad options as TypeError, the core's as WeightstreamError with its code and `what`:
 * "imatrix.required", "imatrix.size", "tensor.data" for NaN/Inf input, ...) error the stream.
 */
export function quantize(source: Source | NamedSource | Sources, options: QuantizeOptions): ReadableStream<Uint8Array>;

/** One of llama-quantize's file types, as the core lists them (core/quant_recipe.h ftype_list). */
export interface QuantizeFileTypeInfo {
    /** The canonical name ("Q4_K_M"; the aliases Q3_K, Q4_K and Q5_K are not listed). */
    name: string;
    /** The llama_ftype number written to general.file_type. */
    id: number;
    /** The type of an ordinary tensor ("Q4_K" for Q4_K_M); the recipe gives some tensors others. */
    defaultType: string;
}

/** Every file type quantize() takes, once each, in llama-quantize's order (its QUANT_OPTIONS). */
export function quantizeFileTypes(): Promise<QuantizeFileTypeInfo[]>;

export interface QuantizePlannedTensor {
    name: string;
    /** The input's dimensions, outermost first (the output keeps them). */
    shape: number[];
    /** The stored type in the input, and the type written. */
    inType: string;
    type: string;
    /** false: the input bytes are copied (norms, biases, a tensor already of its type, ...). */
    quantize: boolean;
    /** The type the recipe chose before the fallback for a row that is not a multiple of its block. */
    wanted: string;
    fallback: boolean;
    requantize: boolean;
    /** Whether the importance matrix has an entry for it (and it is used). */
    imatrix: boolean;
    /** Stored bytes read from the input. */
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
    /** Bytes of the output's header (metadata and tensor directory, with padding). */
    headerSize: number;
    /** Input bytes of the tensors, in all (QuantizeProgress.total). */
    inputSize: number;
    /** Tensors whose row length needed llama-quantize's fallback type. */
    fallbacks: number;
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

/**
 * The core's names for invalid files, as the CLI prints them (core/status.h; tests/js/errors.test.mjs checks
 * this list against the core's). "internal" is a bug: an invariant that input should not reach.
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
    | "bad_source";

/**
 * The package's own codes: "io" (a Node file error), "network" (fetch failed, also how CORS failures show;
 * a stalled request), "http" (an HTTP error status or a wrong Content-Range), "source_changed" (the file
 * behind a URL changed while it was read: another ETag, Last-Modified or size than the first response's, a 412,
 * or a whole file answering a range), "cors" (Content-Range not exposed), "not_seekable"
 * (going back in a stream), "no_such_tensor", "closed", "wasm_load", "worker" (weightstream/worker: the worker failed).
 */
export type SourceErrorCode =
    | "io"
    | "network"
    | "http"
    | "source_changed"
    | "cors"
    | "not_seekable"
    | "no_such_tensor"
    | "closed"
    | "wasm_load"
    | "worker";

export type ErrorCode = CoreErrorCode | SourceErrorCode;

/** What the package rejects with for problems with a model or its source; `code` says which. */
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
