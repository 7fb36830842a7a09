// SPDX-License-Identifier: MIT
// Compiled by `npm run typecheck` (tsc --noEmit), never run: the package's index.d.ts must accept the
// documented uses and give the documented result types.
import {
    WeightstreamError,
    convert,
    convertPlan,
    dtypes,
    edit,
    open,
    quantize,
    quantizeFileTypes,
    quantizePlan,
    tokenizer,
} from "weightstream";
import type {
    ConvertPlan,
    ConvertPlannedTensor,
    ConvertProgress,
    DTypeInfo,
    DTypeName,
    ErrorCode,
    HalfArray,
    MetadataEntry,
    MetadataValue,
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
    TensorLayer,
} from "weightstream";
import { WeightstreamWorker, openInWorker } from "weightstream/worker";
import type { WorkerModel, WorkerOpenOptions, WorkerTokenizer } from "weightstream/worker";

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

    // The worker helper: the Model interface (its tokenizer answers asynchronously), options without fetch.
    const workerOptions: WorkerOpenOptions = { signal: controller.signal, onProgress, chunkSize: 1 << 16 };
    const inWorker: WorkerModel = await openInWorker(new Blob([]), workerOptions);
    const decoded: Float32Array = await inWorker.read("w", { rows: [0, 2] });
    for await (const { data } of inWorker.stream({ as: "raw" })) {
        const bytes: Uint8Array = data;
        void bytes;
    }
    await inWorker.close();
    const worker = new WeightstreamWorker();
    const shared: WorkerModel = await worker.open([named, named]);
    (void decoded, shared);

    // Tokenizers: a model's (llama.cpp's ids) and Hugging Face files' (Hugging Face's); async in a worker.
    const own = one.tokenizer();
    const ids: Int32Array = own.tokenize("Hello", { addSpecial: false, parseSpecial: true, addBos: true });
    const text: string = own.detokenize(ids, { skipSpecial: true });
    const kind: "normal" | "control" | "user_defined" | "byte" | "unknown" | "unused" | "undefined" = own.kind(ids[0]);
    const piece: string = own.piece(0);
    const size: number = own.size;
    own.dispose();
    const hf = await tokenizer([named, "tokenizer_config.json"], { signal: controller.signal });
    const hfIds: Int32Array = hf.tokenize("Hi");
    const remote: WorkerTokenizer = await inWorker.tokenizer();
    const remoteIds: Int32Array = await remote.tokenize("Hi");
    const remoteText: string = await remote.detokenize(remoteIds);
    const files2: WorkerTokenizer = await worker.tokenizer(["tokenizer.json", "tokenizer_config.json"]);
    (void text, kind, piece, size, hfIds, remoteText, files2);

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
    // convert(): a stream of the converted file, here and in a worker.
    const converted: ReadableStream<Uint8Array> = convert(
        [
            { name: "config.json", source: new Uint8Array(2) },
            { name: "model.safetensors", source: new Uint8Array(8) },
        ],
        {
            to: "gguf",
            dtype: "q8_0",
            allowRequantize: false,
            signal: controller.signal,
            onProgress: (p: ConvertProgress) => void (p.tensor / p.tensors, p.written / p.outputSize, p.warnings[0]),
        },
    );
    const inWorkerConverted: ReadableStream<Uint8Array> = worker.convert("m.gguf", { to: "safetensors" });
    (void converted, inWorkerConverted);
    // @ts-expect-error `to` is required
    void convert("m.gguf", { dtype: "f16" });
    // The plan before converting, here and in a worker.
    const convertedPlan: ConvertPlan = await convertPlan("https://h/o/r/resolve/main/model.safetensors.index.json", {
        to: "gguf",
        dtype: "f16",
        signal: controller.signal,
    });
    const convertedTensor: ConvertPlannedTensor = convertedPlan.tensors[0];
    void (convertedPlan.fileSize + convertedPlan.inputSize, convertedPlan.to, convertedPlan.warnings[0]);
    void (convertedTensor.name, convertedTensor.inName, convertedTensor.inType, convertedTensor.type);
    void (convertedTensor.shape[0] + convertedTensor.offset + convertedTensor.nbytes, convertedTensor.action);
    const inWorkerConvertPlan: ConvertPlan = await worker.convertPlan([new File([], "model.safetensors")], {
        to: "gguf",
    });
    void inWorkerConvertPlan;
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

/** Metadata entries narrow on `type` (and `item_type`), dtypes are names, helpers have their types. */
export async function narrowing(model: Model, e: MetadataEntry): Promise<void> {
    if (e.type === "string") {
        const text: string = e.value;
        const hex: string | undefined = e.bytes_hex;
        (void text, hex);
    } else if (e.type === "uint32" || e.type === "int8") {
        const n: number = e.value;
        void n;
    } else if (e.type === "uint64") {
        const n: number | bigint = e.value;
        void n;
    } else if (e.type === "float32") {
        const f: number | "NaN" | "Infinity" | "-Infinity" = e.value;
        void f;
    } else if (e.type === "bool") {
        const b: boolean = e.value;
        void b;
    } else if (e.type === "array") {
        const n: number = e.length;
        if (e.item_type === "string") {
            const tokens: string[] = e.value;
            const bad: { index: number; bytes_hex: string }[] | undefined = e.invalid_items;
            (void tokens, bad);
        } else if (e.item_type === "float32") {
            const scores: (number | "NaN" | "Infinity" | "-Infinity")[] = e.value;
            void scores;
        } else if (e.item_type === "int64") {
            const wide: (number | bigint)[] = e.value;
            void wide;
        } else if (e.item_type === "array") {
            const nested: MetadataValue[][] = e.value;
            void nested;
        }
        void n;
    }
    const t: TensorInfo = model.tensors[0];
    const dtype: DTypeName | `UNKNOWN(${number})` = t.dtype;
    const quantized: boolean = t.dtype === "Q4_K" || t.dtype === "IQ2_XXS" || t.dtype === "UNKNOWN(77)";
    const elements: number = t.shape.reduce((a, b) => a * b, 1) + t.nbytes + t.offset + t.n_elements + t.rows;
    (void dtype, quantized, elements);
    const names: DTypeName[] = (await dtypes()).map((d) => d.name);
    void names;

    // The helpers.
    const value: MetadataValue | undefined = model.get("general.architecture");
    const entry: MetadataEntry | undefined = model.metadataMap.get("general.file_type");
    const params: number = model.parameterCount;
    const bpw: number | null = model.bitsPerWeight;
    const fileType: string | null = model.fileType;
    const layers: TensorLayer[] = model.layers;
    const first: { name: string; index: number; tensors: TensorInfo[] } = layers[0];
    const other: TensorInfo[] = model.nonLayerTensors;
    const facts: number | null = model.info.facts.bits_per_weight ?? model.info.facts.file_type_id;
    (void value, entry, params, bpw, fileType, first, other, facts);

    // Halves: a Float16Array where the runtime has one, else bits; "f16-bits" always bits.
    const half: HalfArray = await model.read("w", { as: "f16" });
    if (half instanceof Uint16Array) {
        const bits: Uint16Array = half;
        void bits;
    } else {
        const x: number = half[0];
        void x;
    }
    const bits: Uint16Array = await model.read("w", { as: "f16-bits", rows: [0, 1] });
    for await (const { data } of model.stream({ as: "f16-bits" })) {
        const streamed: Uint16Array = data;
        void streamed;
    }
    void bits;

    try {
        await model.read("w");
    } catch (err) {
        if (err instanceof WeightstreamError) {
            const code: ErrorCode = err.code;
            const http: boolean = err.code === "http" || err.code === "bad_magic";
            (void code, http);
        }
    }
}

export async function misuses(model: Model, e: MetadataEntry, err: WeightstreamError): Promise<void> {
    if (e.type === "string") {
        // @ts-expect-error a string entry's value is not a number
        const n: number = e.value;
        void n;
    }
    if (e.type === "array") {
        // @ts-expect-error an array's value is not one string before item_type says so
        const s: string[] = e.value;
        void s;
    }
    if (e.type === "array" && e.item_type === "uint32") {
        // @ts-expect-error uint32 items are numbers, not strings
        const s: string[] = e.value;
        void s;
    }
    if (e.type === "uint64") {
        // @ts-expect-error a 64-bit value may be a bigint
        const n: number = e.value;
        void n;
    }
    if (e.type === "float64") {
        // @ts-expect-error a float may be "NaN", "Infinity" or "-Infinity"
        const n: number = e.value;
        void n;
    }
    // @ts-expect-error no such value type
    if (e.type === "float16") void e;
    // @ts-expect-error length is only on arrays
    void e.length;
    // @ts-expect-error not a dtype name ("Q4_K" is)
    if (model.tensors[0].dtype === "Q4_KM") void 0;
    // @ts-expect-error dtype names are upper case
    const lower: DTypeName = "q8_0";
    void lower;
    // @ts-expect-error not an error code ("bad_magic" is)
    if (err.code === "bad_magik") void 0;
    // @ts-expect-error "f16" is not always a Uint16Array: a Float16Array where the runtime has one
    const notBits: Uint16Array = await model.read("w", { as: "f16" });
    // @ts-expect-error no such read type
    await model.read("w", { as: "f64" });
    // @ts-expect-error the option is "as", not "type"
    await model.read("w", { type: "f16" });
    // @ts-expect-error rows is [start, count]
    await model.read("w", { rows: 4 });
    // @ts-expect-error fileType is a name or null, not the id
    const id: number = model.fileType;
    // @ts-expect-error the map is read-only
    model.metadataMap.set("k", e);
    // @ts-expect-error parameterCount is a property, not a method
    model.parameterCount();
    (void notBits, id);

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
