// SPDX-License-Identifier: MIT
// Compiled by `npm run typecheck` (tsc --noEmit), never run: the package's index.d.ts must accept the
// documented uses and give the documented result types.
import { WeightstreamError, dtypes, open } from "weightstream";
import type { DTypeInfo, HalfArray, MetadataEntry, Model, Progress, TensorInfo } from "weightstream";

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

    const list: DTypeInfo[] = await dtypes();
    void list;
    try {
        await open("x.gguf");
    } catch (e) {
        if (e instanceof WeightstreamError) {
            const code: string = e.code;
            const offset: number | undefined = e.offset;
            (void code, offset);
        }
    }
}
