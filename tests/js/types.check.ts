// SPDX-License-Identifier: MIT
// Compiled by `npm run typecheck` (tsc --noEmit), never run: the package's index.d.ts must accept the
// documented uses and give the documented result types.
import { WeightstreamError, dtypes, edit, open, quantize, quantizeFileTypes, quantizePlan } from "weightstream";
import type {
    DTypeInfo,
    HalfArray,
    MetadataEntry,
    Model,
    ModelMetrics,
    NamedSource,
    NativeArray,
    Progress,
    QuantizeFileTypeInfo,
    QuantizePlan,
    QuantizePlannedTensor,
    QuantizeProgress,
    TensorInfo,
} from "weightstream";
import { WeightstreamWorker, openInWorker } from "weightstream/worker";
import type { WorkerOpenOptions } from "weightstream/worker";

export async function uses(): Promise<void> {
    const controller = new AbortController();
    const onProgress = (p: Progress): void => {
        const fraction: number = p.total === undefined ? 0 : p.loaded / p.total;
        void fraction;
    };
    const model: Model = await open("https://example.com/model.gguf", {
        signal: controller.signal,
        onProgress,
        chunkSize: 1 << 20,
        concurrency: 4,
        retries: 4,
        retryDelay: 250,
        stallTimeout: 30000,
        fetch,
    });
    const sources = [
        new URL("https://example.com/m.safetensors"),
        new Blob([]),
        new Uint8Array(8),
        new ArrayBuffer(8),
        new ReadableStream<Uint8Array>(),
        new Response(null),
        new Request("https://example.com/m.gguf"),
    ];
    for (const s of sources) await open(s);

    const format: "gguf" | "safetensors" = model.format;
    const version: number | null = model.version;
    const entries: MetadataEntry[] = model.metadata;
    const tensors: TensorInfo[] = model.tensors;
    const first: TensorInfo | undefined = model.tensor(tensors[0].name);
    const cost: ModelMetrics = model.metrics;
    const rate: number | null = cost.decodeGBps;
    const counts: number[] = [cost.requests, cost.bytesFetched, cost.bytesFromCache, cost.retries, cost.ioTime];
    const ttfb: number | null = cost.timeToFirstByte;
    (void format, version, entries, first);

    const f32: Float32Array = await model.read("w");
    const rows: Float32Array = await model.read("w", { rows: [0, 4], signal: controller.signal, onProgress });
    const f16: HalfArray = await model.read("w", { as: "f16" });
    const raw: Uint8Array = await model.read("w", { as: "raw" });
    (void f32, rows, f16, raw);

    // into, slices, shapes, as: "native".
    const buffer = new Float32Array(1 << 20);
    const reused = await model.read("w", { into: buffer });
    const reusedArray: Float32Array = reused;
    void reusedArray;
    const shape: number[] = reused.shape;
    const part = await model.read("w", { slice: [[0, 2], null, [16, 48]] });
    const partShape: number[] = part.shape;
    const native: NativeArray = await model.read("w", { as: "native" });
    const ints = await model.read("w", { as: "native", into: new Int32Array(64) });
    const halfInto: HalfArray = await model.read("w", { as: "f16", into: new Uint16Array(64) });
    (void shape, partShape, native, ints, halfInto);
    for await (const { data } of model.stream({ into: buffer })) {
        const view: Float32Array = data;
        const viewShape: number[] = data.shape;
        void viewShape;
    }
    // @ts-expect-error into must be the array type `as` reads: a Float32Array for f32
    await model.read("w", { into: new Float64Array(4) });
    // @ts-expect-error a float16 read does not fill a Float32Array
    await model.read("w", { as: "f16", into: new Float32Array(4) });
    // @ts-expect-error a slice range is [start, end]
    await model.read("w", { slice: [[0, 1, 2]] });
    // @ts-expect-error a slice is a list of ranges, not one range
    await model.read("w", { slice: [0, 2] });
    // @ts-expect-error no such read mode
    await model.read("w", { as: "int32" });
    // @ts-expect-error a native read is not always a Float32Array
    const notFloat: Float32Array = await model.read("w", { as: "native" });
    void notFloat;
    // @ts-expect-error stream() into follows as too
    model.stream({ as: "raw", into: new Float32Array(4) });

    for await (const { tensor, data } of model.stream()) {
        const name: string = tensor.name;
        const values: Float32Array = data;
        (void name, values);
    }
    for await (const { data } of model.stream({ as: "raw" })) {
        const bytes: Uint8Array = data;
        void bytes;
    }
    await model.close();

    // Models in several files: a part's URL, the index's path, Files, named bytes.
    const split: Model = await open("https://example.com/m-00002-of-00003.gguf", { split: true });
    const files: File[] = [];
    const named: NamedSource = { name: "m-00001-of-00002.gguf", source: new Uint8Array(8) };
    const sharded: Model = await open([...files, named, "model.safetensors.index.json"]);
    const one: Model = await open("m-00002-of-00003.gguf", { split: false });
    const folder: Model = await open(files, { modelFilesOnly: true, maxSplitParts: 64 });
    const file: string | undefined = split.tensors[0].file;
    const names: string[] | undefined = sharded.info.files;
    (void one, folder, file, names);

    // The worker helper: the same Model interface, options without fetch.
    const workerOptions: WorkerOpenOptions = { signal: controller.signal, onProgress, chunkSize: 1 << 16 };
    const inWorker: Model = await openInWorker(new Blob([]), workerOptions);
    const decoded: Float32Array = await inWorker.read("w", { rows: [0, 2] });
    for await (const { data } of inWorker.stream({ as: "raw" })) {
        const bytes: Uint8Array = data;
        void bytes;
    }
    await inWorker.close();
    const worker = new WeightstreamWorker();
    const shared: Model = await worker.open([named, named]);
    (void decoded, shared);

    // quantize(): a stream of the output GGUF, here and in a worker.
    const quantized: ReadableStream<Uint8Array> = quantize("model-f16.gguf", {
        type: "Q4_K_M",
        imatrix: { name: "imatrix.gguf", source: new Uint8Array(8) },
        overrides: ["attn_v=q8_0", { pattern: /ffn_down/, type: "q6_k" }],
        pure: false,
        outputTensorType: "q8_0",
        tokenEmbeddingType: "q8_0",
        leaveOutputTensor: false,
        allowRequantize: true,
        signal: controller.signal,
        onProgress: (p: QuantizeProgress) => void (p.tensor / p.tensors, p.written / p.outputSize, p.name),
    });
    const inWorkerQuantized: ReadableStream<Uint8Array> = worker.quantize(new Blob([]), { type: "IQ2_XXS" });
    (void quantized, inWorkerQuantized);
    // The plan before starting, and the file types to choose from, here and in a worker.
    const plan: QuantizePlan = await quantizePlan("model-f16.gguf", { type: "Q4_K_M", signal: controller.signal });
    const planned: QuantizePlannedTensor = plan.tensors[0];
    void (plan.fileSize + plan.headerSize + plan.inputSize + plan.fallbacks, plan.type, plan.warnings[0]);
    void (planned.name, planned.type, planned.wanted, planned.nbytes + planned.offset, planned.shape[0]);
    const fileTypes: QuantizeFileTypeInfo[] = await quantizeFileTypes();
    void (fileTypes[0].name, fileTypes[0].id, fileTypes[0].defaultType);
    const inWorkerPlan: QuantizePlan = await worker.quantizePlan(new Blob([]), {
        type: "IQ2_XXS",
        imatrix: new Blob([]),
    });
    const inWorkerTypes: QuantizeFileTypeInfo[] = await worker.quantizeFileTypes();
    (void inWorkerPlan, inWorkerTypes);
    // edit(): a stream of the edited GGUF, here and in a worker.
    const edited: ReadableStream<Uint8Array> = edit("m.gguf", {
        set: { "general.name": "x", "a.ids": { value: [1, 2], type: "i16" }, "a.big": 1n << 40n, "a.flag": true },
        delete: ["general.description"],
        chatTemplate: "{{ x }}",
    });
    const inWorkerEdited: ReadableStream<Uint8Array> = worker.edit(new Blob([]), { set: { "a.f": 0.5 } });
    (void edited, inWorkerEdited);
    await worker.terminate();

    const list: DTypeInfo[] = await dtypes();
    void list;
    try {
        await open("x.gguf");
    } catch (e) {
        if (e instanceof WeightstreamError) {
            const code: string = e.code;
            const changed: boolean = e.code === "source_changed";
            const offset: number | undefined = e.offset;
            const where: string | undefined = e.file;
            (void code, changed, offset, where);
        }
    }
}

export async function misuses(): Promise<void> {
    // @ts-expect-error a fetch function cannot cross to a worker
    await openInWorker("https://example.com/m.gguf", { fetch });
    // @ts-expect-error maxSplitParts is a number
    await open("m.gguf", { maxSplitParts: "64" });
    // @ts-expect-error quantize() needs a type
    quantize("m.gguf", { pure: true });
    // @ts-expect-error a fetch function cannot cross to a worker
    new WeightstreamWorker().quantize("m.gguf", { type: "Q8_0", fetch });
    // @ts-expect-error edit() types are GGUF's short names ("u32"), not "uint32"
    edit("m.gguf", { set: { k: { value: 1, type: "uint32" } } });
    // @ts-expect-error delete takes a list of keys
    edit("m.gguf", { delete: "general.name" });
    // @ts-expect-error split is a boolean
    await open("m.gguf", { split: "yes" });
}

export async function rangeCache(): Promise<void> {
    const { cacheInfo, clearCache } = await import("weightstream");
    await open("https://example.com/m.gguf", { cache: false });
    await open("https://example.com/m.gguf", { cache: { maxBytes: 256 << 20 } });
    await open("https://example.com/m.gguf", { cache: { directory: "/tmp/ws-cache" } });
    const info = await cacheInfo();
    const backend: "opfs" | "cache-api" | "directory" | null = info.backend;
    const held: number = info.entries.reduce((n, e) => n + e.bytes, 0);
    const ranges: [number, number][] = info.entries[0].ranges;
    const etag: string | null = info.entries[0].etag;
    await clearCache({ directory: "/tmp/ws-cache" });
    const worker = new WeightstreamWorker();
    const inWorker: number = (await worker.cacheInfo()).bytes;
    await worker.clearCache();
    const errors: number = (await open("m.gguf")).metrics.cacheErrors;
    (void backend, held, ranges, etag, inWorker, errors);
    // @ts-expect-error maxBytes is a number
    await open("m.gguf", { cache: { maxBytes: "1G" } });
}
