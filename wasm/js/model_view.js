// SPDX-License-Identifier: MIT
// What a Model tells of its header without reading data, the same for a model opened here and in a worker:
// metadata by key, and the core's derived facts (include/weightstream/model_facts.h): the parameter count, bits per weight
// and file type from info.facts (`info --json`'s "facts"), the tensors by layer from the core's grouping
// (Model.layerGroups() of the bindings, which crosses from a worker with the description).

/** @internal The core's layer grouping of a model: {layers: [{name, index}], of: Int32Array}. */
export const LAYER_DATA = Symbol("weightstream.layerData");

export class ModelView {
    #layerData;
    #metadataMap;
    #layers;
    #nonLayerTensors;

    constructor(info, layerData) {
        /** The whole description, as `weightstream info --json` prints it. */
        this.info = info;
        this.format = info.format;
        this.version = info.version;
        this.metadata = info.metadata;
        this.tensors = info.tensors;
        this.#layerData = layerData;
    }

    /** @internal */
    get [LAYER_DATA]() {
        return this.#layerData;
    }

    /** The metadata entries by key (made at the first access, then the same Map). */
    get metadataMap() {
        this.#metadataMap ??= new Map(this.metadata.map((e) => [e.key, e]));
        return this.#metadataMap;
    }

    /** The value of metadata key `key`, or undefined. */
    get(key) {
        return this.metadataMap.get(key)?.value;
    }

    get parameterCount() {
        return this.info.facts.parameter_count;
    }

    get bitsPerWeight() {
        return this.info.facts.bits_per_weight;
    }

    get fileType() {
        return this.info.facts.file_type;
    }

    get layers() {
        if (!this.#layers) this.#group();
        return this.#layers;
    }

    get nonLayerTensors() {
        if (!this.#nonLayerTensors) this.#group();
        return this.#nonLayerTensors;
    }

    #group() {
        const { layers, of } = this.#layerData;
        const groups = layers.map(({ name, index }) => ({ name, index, tensors: [] }));
        const other = [];
        for (let i = 0; i < of.length; ++i) (of[i] < 0 ? other : groups[of[i]].tensors).push(this.tensors[i]);
        this.#layers = groups;
        this.#nonLayerTensors = other;
    }
}
