// SPDX-License-Identifier: MIT
// Compiled by `npm run typecheck` (tsc --noEmit), never run: the package's index.d.ts must accept the
// documented uses and give the documented result types.
import { WeightstreamError, dtypes, edit, open, quantize } from "weightstream";
import type {
    DTypeInfo,
    HalfArray,
    MetadataEntry,
    Model,
    NamedSource,
    Progress,
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
    (void format, version, entries, first);

    const f32: Float32Array = await model.read("w");
    const rows: Float32Array = await model.read("w", { rows: [0, 4], signal: controller.signal, onProgress });
    const f16: HalfArray = await model.read("w", { as: "f16" });
    const raw: Uint8Array = await model.read("w", { as: "raw" });
    (void f32, rows, f16, raw);

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
