// SPDX-License-Identifier: MIT
// Types of weightstream/worker (hand-written; checked by `npm run typecheck`).
import type {
    CacheInfo,
    CacheLocation,
    CompareOptions,
    CompareReport,
    ConvertOptions,
    ConvertPlan,
    MetadataChanges,
    Model,
    NamedSource,
    OpenOptions,
    QuantizeFileTypeInfo,
    QuantizeOptions,
    QuantizePlan,
    Source,
    Sources,
    TokenKind,
    TokenizeOptions,
} from "./index.js";

export { WeightstreamError } from "./index.js";

/** compare()'s options that can cross to a worker (a fetch function cannot). */
export type WorkerCompareOptions = Omit<CompareOptions, "fetch">;

/** open()'s options that can cross to a worker (a fetch function cannot). */
export type WorkerOpenOptions = Omit<OpenOptions, "fetch">;

/** index.d.ts's Tokenizer in a worker: tokenize() and detokenize() answer asynchronously; the table is here. */
export interface WorkerTokenizer {
    readonly size: number;
    readonly description: string;
    tokenize(text: string, options?: TokenizeOptions): Promise<Int32Array>;
    detokenize(ids: Int32Array | readonly number[], options?: { skipSpecial?: boolean }): Promise<string>;
    tokenBytes(ids: Int32Array | readonly number[]): Promise<Uint8Array[]>;
    piece(id: number): string;
    kind(id: number): TokenKind;
    dispose(): void;
}

/** A model open in a worker: index.d.ts's Model, with a WorkerTokenizer. */
export interface WorkerModel extends Omit<Model, "tokenizer"> {
    tokenizer(): Promise<WorkerTokenizer>;
}

/**
 * A worker (a module Web Worker in browsers, a worker_threads Worker in Node) running the package: parsing
 * and decoding happen there, and every array a read returns is transferred to the calling thread.
 */
export class WeightstreamWorker {
    constructor();
    /**
     * Opens a model in this worker. Its reads, streams and close() are requests to the worker. Long metadata
     * arrays (a vocabulary) cross packed and are rebuilt here a slice per task: no long task on this thread.
     */
    open(source: Source | NamedSource | Sources, options?: WorkerOpenOptions): Promise<WorkerModel>;
    /** compare() of index.d.ts, run in this worker (onProgress and onTensor are called on this thread). */
    compare(
        a: Source | NamedSource | Sources,
        b: Source | NamedSource | Sources,
        options?: WorkerCompareOptions,
    ): Promise<CompareReport>;
    /** quantizePlan() of index.d.ts, run in this worker. */
    quantizePlan(
        source: Source | NamedSource | Sources,
        options: Omit<QuantizeOptions, "fetch" | "onProgress">,
    ): Promise<QuantizePlan>;
    /** tokenizer() of index.d.ts, made in this worker. */
    tokenizer(
        source: Source | NamedSource | Sources,
        options?: Pick<WorkerOpenOptions, "signal" | "retries" | "retryDelay" | "stallTimeout" | "cache">,
    ): Promise<WorkerTokenizer>;
    /** cacheInfo() of index.d.ts: the range cache the worker's models use. */
    cacheInfo(location?: CacheLocation): Promise<CacheInfo>;
    /** clearCache() of index.d.ts, in the worker. */
    clearCache(location?: CacheLocation): Promise<void>;
    /** quantizeFileTypes() of index.d.ts, answered by this worker. */
    quantizeFileTypes(): Promise<QuantizeFileTypeInfo[]>;
    /**
     * quantize() of index.d.ts run in this worker: the same bytes, every chunk made there and transferred
     * (options.fetch cannot cross to a worker).
     */
    quantize(
        source: Source | NamedSource | Sources,
        options: Omit<QuantizeOptions, "fetch">,
    ): ReadableStream<Uint8Array>;
    /**
     * convert() of index.d.ts run in this worker: the same bytes, every chunk made there and transferred
     * (options.fetch cannot cross to a worker). Bad options error the stream.
     */
    convert(source: Source | NamedSource | Sources, options: Omit<ConvertOptions, "fetch">): ReadableStream<Uint8Array>;
    /** convertPlan() of index.d.ts, run in this worker. */
    convertPlan(
        source: Source | NamedSource | Sources,
        options: Omit<ConvertOptions, "fetch" | "onProgress">,
    ): Promise<ConvertPlan>;
    /** edit() of index.d.ts run in this worker: the same bytes, every chunk made there and transferred. */
    edit(
        source: Source | NamedSource | Sources,
        changes: MetadataChanges,
        options?: Omit<OpenOptions, "fetch" | "onProgress">,
    ): ReadableStream<Uint8Array>;
    /** Ends the worker: its models are gone, pending requests reject with code "worker". */
    terminate(): Promise<void>;
}

/** Opens a model in a worker of its own, ended when the model is closed. */
export function openInWorker(source: Source | NamedSource | Sources, options?: WorkerOpenOptions): Promise<WorkerModel>;

/** compare() in a worker of its own, ended when the comparison is done. */
export function compareInWorker(
    a: Source | NamedSource | Sources,
    b: Source | NamedSource | Sources,
    options?: WorkerCompareOptions,
): Promise<CompareReport>;
