// SPDX-License-Identifier: MIT
// model.stats() is the CLI's `stats --json`, bit for bit: every tensor of every corpus model, whole and in row
// windows, with the default and other bin counts, through a path and through a stream of random chunks (the
// core's one-pass statistics do not depend on how the bytes arrive).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";

import { open } from "weightstream";

import { cliPath, corpus, requireSetup, sourceKinds } from "./helpers.mjs";

requireSetup(cliPath ? null : "the native CLI (build/bin/weightstream)");

function cliStats(file, args = []) {
    const r = spawnSync(cliPath, ["stats", file, ...args, "--json"], { encoding: "utf8", maxBuffer: 1 << 30 });
    assert.equal(r.status, 0, r.stderr);
    return new Map(JSON.parse(r.stdout).tensors.map((t) => [t.name, t]));
}

for (const model of corpus()) {
    describe(`stats of ${model.label}`, () => {
        test("every tensor equals stats --json, from a path and from a stream", async () => {
            const expected = cliStats(model.file);
            for (const kind of ["path", "stream"]) {
                const m = await open(sourceKinds[kind](model.file), { chunkSize: 4099 });
                try {
                    let compared = 0;
                    for (const t of m.tensors) {
                        const want = expected.get(t.name);
                        if (want.error !== undefined) {
                            await assert.rejects(m.stats(t.name), { code: "unsupported" });
                            continue;
                        }
                        assert.deepEqual(await m.stats(t.name), want, `${kind}: ${t.name}`);
                        ++compared;
                    }
                    assert.ok(compared > 0 || m.tensors.length === 0);
                } finally {
                    await m.close();
                }
            }
        });

        test("row windows and bin counts equal stats --rows/--bins", async () => {
            const m = await open(model.file);
            try {
                const t = m.tensors.find((x) => x.shape.length >= 2 && Number(x.shape[0]) >= 4);
                if (!t) return;
                for (const [rows, bins] of [
                    [[1, 2], 32],
                    [[0, 1], 7],
                    [[3, 1], 4096],
                ]) {
                    const want = cliStats(model.file, [
                        t.name,
                        "--rows",
                        `${rows[0]}:${rows[0] + rows[1]}`,
                        "--bins",
                        `${bins}`,
                    ]);
                    assert.deepEqual(
                        await m.stats(t.name, { rows, bins }),
                        want.get(t.name),
                        `${t.name} ${rows} ${bins}`,
                    );
                }
            } finally {
                await m.close();
            }
        });
    });
}

test("stats rejects bad options and unknown tensors", async () => {
    const m = await open(corpus()[0].file);
    try {
        await assert.rejects(m.stats("no such tensor"), { code: "no_such_tensor" });
        const name = m.tensors[0].name;
        await assert.rejects(m.stats(name, { bins: 0 }), TypeError);
        await assert.rejects(m.stats(name, { bins: 4097 }), TypeError);
        await assert.rejects(m.stats(name, { rows: [0] }), TypeError);
        await assert.rejects(m.stats(name, { rows: [1e9, 1] }), { code: "bad_offset" });
    } finally {
        await m.close();
    }
});
