// SPDX-License-Identifier: MIT
// The page groups tensors by layer only as the core does (Model.layers, include/weightstream/model_facts.h): web/summary.js
// keyedLayers and summarize, web/layer_map.js layerMap, over a model opened by the package whose two towers
// (blk.N and v.blk.N, as a multimodal GGUF names them) share layer numbers and must stay apart.
import assert from "node:assert/strict";
import { test } from "node:test";

import { open } from "weightstream";

import { layerMap } from "../../web/layer_map.js";
import { keyedLayers, summarize } from "../../web/summary.js";
import { writeGguf } from "./gguf-writer.mjs";

const F32 = 0;
const f32 = (n) => new Uint8Array(new Float32Array(n).fill(0.5).buffer);

function towersModel() {
    const tensors = [{ name: "token_embd.weight", type: F32, ne: [4, 3], data: f32(12) }];
    for (const tower of ["blk", "v.blk"]) {
        for (const l of [0, 1]) {
            for (const role of ["attn_q.weight", "ffn_up.weight", "ffn_up.bias"]) {
                tensors.push({ name: `${tower}.${l}.${role}`, type: F32, ne: [4], data: f32(4) });
            }
        }
    }
    return writeGguf({ kv: [{ key: "general.architecture", type: "string", value: "clip" }], tensors });
}

test("a multimodal model's towers stay apart: keyed by the core's group names", async () => {
    const model = await open(towersModel());
    try {
        const keyed = keyedLayers(model.layers);
        assert.deepEqual(
            keyed.map((l) => l.key),
            ["blk.0", "blk.1", "v.blk.0", "v.blk.1"],
        );
        const map = layerMap(model.layers);
        assert.deepEqual(map.layers, ["blk.0", "blk.1", "v.blk.0", "v.blk.1"]);
        assert.deepEqual(map.roles, ["attn_q", "ffn_up", "ffn_up.bias"]);
        assert.equal(map.cells.size, 12);
        assert.equal(map.cells.get("v.blk.1/ffn_up").name, "v.blk.1.ffn_up.weight");
        assert.equal(map.cells.get("blk.1/ffn_up.bias").name, "blk.1.ffn_up.bias");
        // No block_count: the layers come from the core's count of groups.
        const s = summarize(model.info);
        assert.equal(s.layers, 4);
        assert.equal(s.layersFromNames, true);
        assert.equal(s.parameters, model.parameterCount);
        assert.equal(s.tensorBytes, model.info.facts.data_bytes);
    } finally {
        await model.close();
    }
});

test("one tower: layers keyed by number, in the core's order", async () => {
    const tensors = [2, 10, 1].map((l) => ({ name: `blk.${l}.attn_q.weight`, type: F32, ne: [4], data: f32(4) }));
    const model = await open(writeGguf({ tensors }));
    try {
        assert.deepEqual(
            keyedLayers(model.layers).map((l) => l.key),
            ["1", "2", "10"],
        );
        assert.equal(layerMap(model.layers).cells.get("10/attn_q").name, "blk.10.attn_q.weight");
        assert.equal(layerMap([]), null);
    } finally {
        await model.close();
    }
});
