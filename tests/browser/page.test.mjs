// SPDX-License-Identifier: MIT
// The inspection page in headless Chromium, served by nginx: opening by file picker, URL field and ?url=,
// the tensor table against `weightstream tensors --json`, tensor statistics against `weightstream stats
// --json`, the charts, the raw values and .npy download against `weightstream dump`, row windows, split
// models, errors, cancel, the metadata view, phone width and dark theme. Screenshots go to
// build/screenshots/.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import {
    cliJson,
    cliPath,
    clickTensor,
    collectRows,
    repoRoot,
    screenshotDir,
    screenshotPixels,
    setUp,
    waitForModel,
    webRoot,
} from "./support/harness.mjs";
import { corruptFiles, shardedSafetensors, splitGguf, tinyLlamaGguf, tinySafetensors, wideGguf } from "./support/models.mjs";

const run = promisify(execFile);
const fixture = (p) => path.join(repoRoot, "tests", "data", p);

let h;
before(async () => {
    const corrupt = corruptFiles();
    const parts = splitGguf();
    h = await setUp({
        "tiny-llama.gguf": tinyLlamaGguf(),
        "tiny.safetensors": tinySafetensors(),
        "ggml-types.gguf": await readFile(fixture("ggml/ggml-types.gguf")),
        "mel_filters.safetensors": await readFile(fixture("safetensors/mel_filters.safetensors")),
        "vocab-llama-spm.gguf": await readFile(fixture("ggml/vocab/ggml-vocab-llama-spm.gguf")),
        "wide.gguf": wideGguf(),
        "truncated.gguf": corrupt.truncated,
        "not-a-model.gguf": corrupt.badMagic,
        "duplicate-key.gguf": corrupt.duplicateKey,
        ...Object.fromEntries(parts.map((bytes, i) => [`split-0000${i + 1}-of-00003.gguf`, bytes])),
        // A split whose second part ends inside its header, and one whose parts 2 and 3 carry each other's name.
        "broken-00001-of-00003.gguf": parts[0],
        "broken-00002-of-00003.gguf": parts[1].subarray(0, 100),
        "broken-00003-of-00003.gguf": parts[2],
        "swapped-00001-of-00003.gguf": parts[0],
        "swapped-00002-of-00003.gguf": parts[2],
        "swapped-00003-of-00003.gguf": parts[1],
        ...shardedSafetensors(),
        // Dropped with the shards when a whole Hugging Face folder is chosen.
        "config.json": '{"architectures": ["LlamaForCausalLM"]}\n',
    });
});
after(() => h?.tearDown());

const digits = (text) => text.replace(/,/g, "");

/** The table rows (collected by scrolling) equal the CLI's tensor list, field by field. */
async function assertTensorRows(page, file) {
    const { tensors } = await cliJson(["tensors", h.modelPath(file), "--json"]);
    await page.click("#tab-tensors");
    const rows = await collectRows(page, "tensor-table", "tensor-row", "name");
    assert.equal(rows.size, tensors.length, `${file}: rows in the table`);
    for (const t of tensors) {
        const cells = rows.get(t.name);
        assert.ok(cells, `${file}: no row for ${t.name}`);
        const [name, dtype, shape, params, size, offset, fileCell] = cells;
        assert.equal(name.text, t.name);
        assert.equal(dtype.text, t.dtype, `${t.name} dtype`);
        assert.deepEqual(shape.text === "scalar" ? [] : shape.text.split(" × ").map(digits), t.shape.map(String), `${t.name} shape`);
        assert.equal(digits(params.text), String(t.n_elements), `${t.name} parameters`);
        assert.equal(size.bytes, String(t.nbytes), `${t.name} bytes`);
        assert.equal(digits(offset.text), String(t.offset), `${t.name} offset`);
        if (t.file !== undefined) assert.equal(fileCell?.text, t.file, `${t.name} file`);
    }
    return tensors;
}

/** A shown number equals the CLI's to the digits shown (half a unit of the last shown digit). */
function assertSameToShownDigits(shown, expected, what) {
    const value = Number(shown);
    assert.ok(Number.isFinite(value), `${what}: "${shown}" is not a number`);
    const mantissa = shown.replace(/^-/, "").replace(/e.*$/, "");
    const exponent = Number(/e([+-]\d+)$/.exec(shown)?.[1] ?? 0);
    const decimals = mantissa.includes(".") ? mantissa.length - mantissa.indexOf(".") - 1 : 0;
    const halfUnit = 0.5 * 10 ** (exponent - decimals);
    assert.ok(Math.abs(value - expected) <= halfUnit * (1 + 1e-9), `${what}: page ${shown}, CLI ${expected}`);
}

async function shownStats(page) {
    await page.waitForSelector('[data-testid="tensor-stats"]', { timeout: 20000 });
    return page.evaluate(() => {
        const out = {};
        for (const dd of document.querySelectorAll('[data-testid="tensor-stats"] dd')) out[dd.dataset.stat] = dd.textContent;
        out.histogram = document.querySelector('[data-testid="tensor-histogram"]').dataset.counts;
        return out;
    });
}

/** Clicks `name` and checks the statistics and histogram against `weightstream stats --json`. */
async function assertTensorStats(page, file, name) {
    const { tensors } = await cliJson(["stats", h.modelPath(file), name, "--json"]);
    const expected = tensors[0];
    await clickTensor(page, name);
    await page.waitForFunction((n) => document.querySelector('[data-testid="tensor-detail"] h2')?.textContent === n, name);
    const shown = await shownStats(page);
    assert.equal(digits(shown.count), String(expected.n_elements), `${name}: values`);
    for (const key of ["min", "max"]) {
        // min and max are stored floats: the page prints the shortest decimal that reads back as the same float32.
        if (expected[key] === null) assert.equal(shown[key], "NaN", `${name}: ${key}`);
        else assert.equal(Math.fround(Number(shown[key])), Math.fround(expected[key]), `${name}: ${key} page ${shown[key]} CLI ${expected[key]}`);
    }
    for (const key of ["mean", "std"]) {
        if (expected[key] === null) assert.equal(shown[key], "NaN", `${name}: ${key}`);
        else assertSameToShownDigits(shown[key], expected[key], `${name}: ${key}`);
    }
    assert.equal(digits(shown.nan), String(expected.nan), `${name}: NaN`);
    assert.equal(digits(shown.posinf), String(expected.pos_inf), `${name}: +Inf`);
    assert.equal(digits(shown.neginf), String(expected.neg_inf), `${name}: -Inf`);
    assert.equal(digits(shown.zeros), String(expected.zeros), `${name}: zeros`);
    assert.equal(shown.histogram, expected.histogram.counts.join(","), `${name}: histogram counts`);
}

/** float32 values of `weightstream dump FILE TENSOR [--rows]`. */
async function cliDump(file, name, rows) {
    const args = ["dump", h.modelPath(file), name];
    if (rows) args.push("--rows", `${rows[0]}:${rows[0] + rows[1]}`); // [first, count] as a Python slice
    const { stdout } = await run(cliPath, args, { encoding: "buffer", maxBuffer: 1 << 28 });
    return new Float32Array(stdout.buffer, stdout.byteOffset, stdout.byteLength / 4);
}

async function valuesTable(page) {
    return page.evaluate(() => {
        const table = document.querySelector('[data-testid="tensor-values"]');
        const cols = [...table.querySelectorAll("thead th")].slice(1).map((th) => Number(th.textContent.replace(/,/g, "")));
        const rows = [...table.querySelectorAll("tbody tr")].map((tr) => ({
            row: Number(tr.querySelector("th").textContent.replace(/,/g, "")),
            values: [...tr.querySelectorAll("td")].map((td) => td.textContent),
        }));
        return { cols, rows };
    });
}

const shot = (page, name, options = {}) => page.screenshot({ path: path.join(screenshotDir, name), ...options });

describe("opening", () => {
    test("by file picker: the tensor rows equal `tensors --json` (GGUF of every type, safetensors)", async () => {
        const { page, context, problems, requests } = await h.newPage();
        await shot(page, "01-welcome.png");
        for (const [file, count] of [
            ["ggml-types.gguf", 46],
            ["tiny-llama.gguf", 22],
            ["tiny.safetensors", 5],
            ["mel_filters.safetensors", 1],
        ]) {
            await page.setInputFiles('[data-testid="file-input"]', h.modelPath(file));
            await waitForModel(page, count);
            await assertTensorRows(page, file);
        }
        // Offline: everything the page loaded (script, worker, wasm, styles, icon) came from its own server.
        assert.deepEqual(requests.filter((url) => !url.startsWith(h.url) && !/^(data|blob):/.test(url)), []);
        assert.ok(requests.some((url) => url.endsWith("/weightstream.wasm")));
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("by the URL field: rows equal the CLI and the address gets ?url=", async () => {
        const { page, context, problems } = await h.newPage();
        await page.fill('[data-testid="url-input"]', "models/tiny-llama.gguf");
        await page.click('[data-testid="url-load"]');
        await waitForModel(page, 22);
        assert.equal(new URL(page.url()).searchParams.get("url"), "models/tiny-llama.gguf");
        await assertTensorRows(page, "tiny-llama.gguf");
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("by ?url=: rows equal the CLI; the summary shows the model's facts", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        const info = await cliJson(["info", h.modelPath("tiny-llama.gguf"), "--json"]);
        const fact = (key) => page.locator(`[data-testid="model-summary"] [data-fact="${key}"] .value`).textContent();
        const sub = (key) => page.locator(`[data-testid="model-summary"] [data-fact="${key}"] .sub`).textContent();
        assert.equal(await fact("format"), "GGUF v3");
        assert.equal(await fact("architecture"), "llama");
        assert.equal(await fact("name"), "Tiny Test Llama");
        const params = info.tensors.reduce((s, t) => s + t.n_elements, 0);
        assert.equal(digits(await sub("parameters")), String(params));
        assert.equal(digits(await sub("file-size")), `${info.file_size} bytes`);
        const bytes = info.tensors.reduce((s, t) => s + t.nbytes, 0);
        assert.equal(await fact("bits-per-weight"), String(Number(((bytes * 8) / params).toPrecision(4))));
        assert.equal(await fact("tensors"), "22");
        assert.equal(await fact("layers"), "2");
        assert.equal(await fact("context-length"), "2,048");
        assert.equal(await fact("vocab-size"), "320");
        assert.equal(await fact("file-type"), "Q8_0");
        const legend = await page.locator(".mix-legend li").evaluateAll((lis) => lis.map((li) => li.dataset.dtype));
        assert.deepEqual(legend, ["Q8_0", "F16", "F32"]); // by share of bytes
        await shot(page, "02-summary.png");
        await assertTensorRows(page, "tiny-llama.gguf");
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("a split GGUF opens from all its parts; a missing part is reported", async () => {
        const { page, context, problems } = await h.newPage();
        const parts = [1, 2, 3].map((i) => h.modelPath(`split-0000${i}-of-00003.gguf`));
        await page.setInputFiles('[data-testid="file-input"]', parts);
        await waitForModel(page, 6);
        await assertTensorRows(page, "split-00001-of-00003.gguf");
        await assertTensorStats(page, "split-00001-of-00003.gguf", "blk.5.w");
        await page.setInputFiles('[data-testid="file-input"]', [parts[0], parts[2]]);
        await page.waitForSelector('[data-testid="error-banner"]:not([hidden])');
        assert.equal(await page.getAttribute('[data-testid="error-banner"]', "data-code"), "bad_split");
        assert.match(await page.textContent('[data-testid="error-banner"]'), /split-00002-of-00003\.gguf/);
        // By URL: the other parts are found from the name of any part.
        await page.fill('[data-testid="url-input"]', "models/split-00002-of-00003.gguf");
        await page.click('[data-testid="url-load"]');
        await page.waitForSelector('[data-testid="error-banner"]', { state: "hidden" });
        await waitForModel(page, 6);
        await assertTensorRows(page, "split-00001-of-00003.gguf");
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("a broken split shows the core's error code and the file it is in", async () => {
        const { page, context, problems } = await h.newPage();
        const banner = '[data-testid="error-banner"]';
        const expected = await run(cliPath, ["info", h.modelPath("broken-00001-of-00003.gguf"), "--json"]).then(
            () => assert.fail("the CLI opened a broken split"),
            (e) => e.stderr,
        );
        assert.match(expected, /broken-00002-of-00003\.gguf: truncated: [^:]*: header\.n_kv \(byte 16\)/);
        // Chosen as files, and by URL: the same code, file and offset as the CLI's.
        const broken = [1, 2, 3].map((i) => h.modelPath(`broken-0000${i}-of-00003.gguf`));
        for (const open of [
            () => page.setInputFiles('[data-testid="file-input"]', broken),
            async () => {
                await page.fill('[data-testid="url-input"]', "models/broken-00001-of-00003.gguf");
                await page.click('[data-testid="url-load"]');
            },
        ]) {
            await page.evaluate(() => document.querySelector('[data-testid="error-banner"]').setAttribute("hidden", ""));
            await open();
            await page.waitForSelector(`${banner}:not([hidden])`);
            assert.equal(await page.getAttribute(banner, "data-code"), "truncated");
            assert.equal(await page.getAttribute(banner, "data-file"), "broken-00002-of-00003.gguf");
            assert.equal(await page.getAttribute(banner, "data-offset"), "16");
            assert.match(await page.textContent(banner), /broken-00002-of-00003\.gguf: header\.n_kv/);
        }
        // Parts under each other's names: the core's check of split.no, as the CLI reports it.
        await page.setInputFiles('[data-testid="file-input"]', [1, 2, 3].map((i) => h.modelPath(`swapped-0000${i}-of-00003.gguf`)));
        await page.waitForSelector(`${banner}[data-code="bad_split"]:not([hidden])`);
        assert.match(await page.textContent(banner), /split\.no/);
        const cli = await run(cliPath, ["info", h.modelPath("swapped-00001-of-00003.gguf"), "--json"]).then(
            () => assert.fail("the CLI opened swapped parts"),
            (e) => e.stderr,
        );
        assert.match(cli, /bad_split: [^:]*: split\.no/);
        assert.equal(await page.isHidden("#model"), true);
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("a sharded safetensors model opens from its shards and index (files or URL)", async () => {
        const { page, context, problems } = await h.newPage();
        const names = ["model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"];
        await page.setInputFiles('[data-testid="file-input"]', names.map((n) => h.modelPath(n)));
        await waitForModel(page, 8);
        await assertTensorRows(page, "model.safetensors.index.json");
        await assertTensorStats(page, "model.safetensors.index.json", "model.layers.3.mlp.up_proj.weight");
        await page.setInputFiles('[data-testid="file-input"]', names.slice(0, 2).map((n) => h.modelPath(n)));
        await page.waitForSelector('[data-testid="error-banner"]:not([hidden])');
        assert.equal(await page.getAttribute('[data-testid="error-banner"]', "data-code"), "bad_split");
        assert.match(await page.textContent('[data-testid="error-banner"]'), /model-00002-of-00002\.safetensors/);
        // A whole folder chosen: config.json is left out, the model opens from its shards and index.
        await page.setInputFiles('[data-testid="file-input"]', ["config.json", ...names].map((n) => h.modelPath(n)));
        await page.waitForSelector('[data-testid="error-banner"]', { state: "hidden" });
        await waitForModel(page, 8);
        await assertTensorRows(page, "model.safetensors.index.json");
        await page.fill('[data-testid="url-input"]', "models/model.safetensors.index.json");
        await page.click('[data-testid="url-load"]');
        await page.waitForSelector('[data-testid="error-banner"]', { state: "hidden" });
        await waitForModel(page, 8);
        await assertTensorRows(page, "model.safetensors.index.json");
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("by drag and drop onto the page", async () => {
        const { page, context, problems } = await h.newPage();
        await page.evaluate(async () => {
            const bytes = await (await fetch("models/tiny.safetensors")).arrayBuffer();
            const data = new DataTransfer();
            data.items.add(new File([bytes], "tiny.safetensors"));
            window.dispatchEvent(new DragEvent("dragenter", { dataTransfer: data, bubbles: true, cancelable: true }));
            window.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
        });
        await waitForModel(page, 5);
        assert.equal(await page.isHidden("#drop-overlay"), true);
        await assertTensorRows(page, "tiny.safetensors");
        assert.deepEqual(problems, []);
        await context.close();
    });
});

describe("tensor detail", () => {
    test("stats equal `stats --json` for every GGML type (ggml's reference file)", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/ggml-types.gguf" });
        await waitForModel(page, 46);
        await page.click("#tab-tensors");
        const { tensors } = await cliJson(["tensors", h.modelPath("ggml-types.gguf"), "--json"]);
        for (const t of tensors) await assertTensorStats(page, "ggml-types.gguf", t.name);
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("stats, NaN/Inf/zeros, histogram, heatmap, raw values and .npy of a tiny llama", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        await page.click("#tab-tensors");
        await shot(page, "03-tensors.png");
        for (const name of ["special.weight", "output.weight", "blk.1.ffn_down.weight", "blk.0.attn_norm.weight"]) {
            await assertTensorStats(page, "tiny-llama.gguf", name);
        }

        await assertTensorStats(page, "tiny-llama.gguf", "blk.0.attn_q.weight");
        // Charts are drawn: many pixels differ from the background, in several colours.
        const histogram = await screenshotPixels(h.browser, page.locator('[data-testid="tensor-histogram"]'));
        assert.ok(histogram.differing > histogram.total * 0.05, `histogram: ${JSON.stringify(histogram)}`);
        const heatmapLocator = page.locator('[data-testid="tensor-heatmap"]');
        await heatmapLocator.scrollIntoViewIfNeeded();
        const heatmap = await screenshotPixels(h.browser, heatmapLocator);
        assert.ok(heatmap.differing > heatmap.total * 0.5 && heatmap.colours > 50, `heatmap: ${JSON.stringify(heatmap)}`);
        await shot(page, "04-tensor-detail.png");
        await page.locator('[data-testid="tensor-detail"]').screenshot({ path: path.join(screenshotDir, "04-tensor-detail-panel.png") });

        // Raw values equal the CLI's decode, bit for bit; clicking the heatmap moves the table there.
        const dumped = await cliDump("tiny-llama.gguf", "blk.0.attn_q.weight");
        let table = await valuesTable(page);
        assert.equal(table.rows[0].row, 0);
        for (const { row, values } of table.rows) {
            values.forEach((text, c) => assert.equal(Math.fround(Number(text)), dumped[row * 64 + table.cols[c]], `value [${row}, ${c}]`));
        }
        const box = await heatmapLocator.boundingBox();
        await page.mouse.click(box.x + box.width * 0.75, box.y + box.height * 0.5);
        table = await valuesTable(page);
        assert.equal(table.rows[0].row, 32);
        assert.equal(table.cols[0], 48);
        table.rows.forEach(({ row, values }) =>
            values.forEach((text, c) => assert.equal(Math.fround(Number(text)), dumped[row * 64 + table.cols[c]])),
        );

        // Zoom and pan change the picture; Fit restores it.
        const before = await heatmapLocator.screenshot();
        await page.click('button[aria-label="Zoom in"]');
        await page.waitForTimeout(100);
        const zoomed = await heatmapLocator.screenshot();
        assert.notDeepEqual(zoomed, before);
        await page.mouse.move(box.x + 100, box.y + 100);
        await page.mouse.down();
        await page.mouse.move(box.x + 180, box.y + 140, { steps: 4 });
        await page.mouse.up();
        await page.waitForTimeout(100);
        assert.notDeepEqual(await heatmapLocator.screenshot(), zoomed);
        await page.click('button[aria-label="Show the whole window"]');
        await page.waitForTimeout(100);
        assert.deepEqual(await heatmapLocator.screenshot(), before);

        // .npy download: a NumPy header with the shape, then the same float32 values.
        const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="download-npy"]')]);
        assert.equal(download.suggestedFilename(), "blk.0.attn_q.weight.npy");
        const npy = await readFile(await download.path());
        assert.deepEqual([...npy.subarray(0, 8)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
        const headerLength = npy.readUInt16LE(8);
        const header = npy.subarray(10, 10 + headerLength).toString("latin1");
        assert.match(header, /'descr': '<f4', 'fortran_order': False, 'shape': \(64, 64\)/);
        assert.equal((10 + headerLength) % 64, 0);
        const data = npy.subarray(10 + headerLength);
        assert.deepEqual(new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)), dumped);
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("a tensor too large for one read is decoded by row windows that say which rows", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/wide.gguf" });
        await waitForModel(page, 1);
        await page.click("#tab-tensors");
        await clickTensor(page, "wide.weight");
        await page.waitForSelector('[data-testid="tensor-stats"]');
        assert.match(await page.textContent('[data-testid="tensor-window"]'), /Rows 0–1,023 of 1,100/);
        assert.equal(await page.textContent('[data-testid="tensor-stats"] [data-stat="count"]'), (1024 * 4096).toLocaleString("en-US"));
        let dumped = await cliDump("wide.gguf", "wide.weight", [0, 16]);
        let table = await valuesTable(page);
        table.rows.forEach(({ row, values }) => values.forEach((t, c) => assert.equal(Math.fround(Number(t)), dumped[row * 4096 + c])));
        await page.click('[data-testid="tensor-window"] button:has-text("Next")');
        await page.waitForFunction(() => /Rows 1,024–1,099 of 1,100/.test(document.querySelector('[data-testid="tensor-window"]')?.textContent));
        assert.equal(await page.textContent('[data-testid="tensor-stats"] [data-stat="count"]'), (76 * 4096).toLocaleString("en-US"));
        dumped = await cliDump("wide.gguf", "wide.weight", [1024, 16]);
        table = await valuesTable(page);
        assert.equal(table.rows[0].row, 1024);
        table.rows.forEach(({ row, values }) => values.forEach((t, c) => assert.equal(Math.fround(Number(t)), dumped[(row - 1024) * 4096 + c])));
        const heatmap = await screenshotPixels(h.browser, page.locator('[data-testid="tensor-heatmap"]'));
        assert.ok(heatmap.colours > 50, JSON.stringify(heatmap));
        await page.locator('[data-testid="tensor-detail"]').screenshot({ path: path.join(screenshotDir, "05-row-window.png") });
        assert.deepEqual(problems, []);
        await context.close();
    });
});

describe("tables", () => {
    test("sort, filter by name and dtype, group by layer", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        await page.click("#tab-tensors");
        const names = () => page.locator('[data-testid="tensor-row"]:not([hidden])').evaluateAll((rows) =>
            rows.sort((a, b) => a.vlistIndex - b.vlistIndex).map((r) => r.dataset.name));
        // Size, largest first.
        await page.click('.thead button:has-text("Size")');
        await page.click('.thead button:has-text("Size")');
        assert.deepEqual((await names()).slice(0, 2), ["output.weight", "token_embd.weight"]);
        await page.click('.thead button:has-text("Size")'); // back to file order
        assert.equal((await names())[0], "token_embd.weight");
        await page.fill('[data-testid="tensor-filter"]', "attn q");
        assert.deepEqual(await names(), ["blk.0.attn_q.weight", "blk.1.attn_q.weight"]);
        await page.fill('[data-testid="tensor-filter"]', "");
        await page.selectOption('[data-testid="tensor-dtype-filter"]', "F32");
        assert.deepEqual(await names(), ["blk.0.attn_norm.weight", "blk.0.ffn_norm.weight", "blk.1.attn_norm.weight", "blk.1.ffn_norm.weight", "output_norm.weight", "special.weight"]);
        assert.equal(await page.textContent(".tensor-table-root .count"), "6 of 22 tensors");
        await page.selectOption('[data-testid="tensor-dtype-filter"]', "");
        await page.check('[data-testid="tensor-group-toggle"]');
        const groups = await page.locator('[data-testid="tensor-group"]').evaluateAll((rows) => rows.map((r) => r.textContent));
        assert.equal(groups.length, 3);
        assert.match(groups[0], /^▾not in a layer 4 tensors/);
        assert.match(groups[1], /^▾layer 0 9 tensors/);
        assert.match(groups[2], /^▾layer 1 9 tensors/);
        await shot(page, "06-tensors-grouped.png");
        await page.click('[data-testid="tensor-group"][data-group="0"]');
        assert.equal(await page.locator('[data-testid="tensor-row"]:not([hidden])').count(), 4 + 9);
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("metadata: every key with its type; long strings readable; long arrays searchable", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/vocab-llama-spm.gguf" });
        const info = await cliJson(["info", h.modelPath("vocab-llama-spm.gguf"), "--json"]);
        await waitForModel(page, info.tensors.length);
        await page.click("#tab-metadata");
        const rows = await collectRows(page, "metadata-table", "metadata-row", "key");
        assert.equal(rows.size, info.metadata.length);
        for (const m of info.metadata) {
            const [key, type] = rows.get(m.key);
            assert.equal(key.text, m.key);
            assert.equal(type.text, m.type === "array" ? `${m.item_type}[${m.length.toLocaleString("en-US")}]` : m.type);
        }
        // The vocabulary: a virtualized list of every token, searchable.
        const tokens = info.metadata.find((m) => m.key === "tokenizer.ggml.tokens").value;
        await page.fill('[data-testid="metadata-filter"]', "tokenizer.ggml.tokens");
        await page.click('[data-testid="metadata-row"][data-key="tokenizer.ggml.tokens"]');
        await page.waitForSelector('[data-testid="array-items"] .trow');
        assert.equal(await page.textContent('[data-testid="metadata-value"] .count'), `${tokens.length.toLocaleString("en-US")} items`);
        assert.ok((await page.locator('[data-testid="array-items"] .trow').count()) < 100, "the list is virtualized");
        await page.fill('[data-testid="array-search"]', "▁hello");
        const expected = tokens.filter((t) => t.toLowerCase().includes("▁hello"));
        await page.waitForFunction((n) => document.querySelector('[data-testid="metadata-value"] .count')?.textContent.startsWith(`${n} of`), expected.length);
        const found = await page.locator('[data-testid="array-items"] .trow:not([hidden]) .a-value').allTextContents();
        assert.deepEqual(found, expected.slice(0, found.length).map((t) => JSON.stringify(t)));
        await shot(page, "07-metadata-vocab.png");
        assert.deepEqual(problems, []);
        await context.close();

        const second = await h.newPage({ query: "?url=models/tiny-llama.gguf" });
        await waitForModel(second.page, 22);
        await second.page.click("#tab-metadata");
        await second.page.fill('[data-testid="metadata-filter"]', "chat");
        await second.page.click('[data-testid="metadata-row"][data-key="tokenizer.chat_template"]');
        const template = (await cliJson(["info", h.modelPath("tiny-llama.gguf"), "--json"])).metadata.find((m) => m.key === "tokenizer.chat_template").value;
        assert.equal(await second.page.textContent('[data-testid="metadata-text"]'), template);
        await shot(second.page, "08-metadata-chat-template.png");
        assert.deepEqual(second.problems, []);
        await second.context.close();
    });
});

describe("errors and cancel", () => {
    test("a corrupt file shows the banner with its code, offset and field as the CLI's; the page opens the next file", async () => {
        const { page, context, problems } = await h.newPage();
        const banner = '[data-testid="error-banner"]';
        for (const file of ["truncated.gguf", "not-a-model.gguf", "duplicate-key.gguf"]) {
            const [, code, what, offset] = await run(cliPath, ["info", h.modelPath(file)]).then(
                () => assert.fail(`${file} should be rejected by the CLI`),
                (e) => /error: [^:]+: ([a-z_]+): (.*) \(byte (\d+)\)$/m.exec(e.stderr),
            );
            await page.evaluate(() => document.querySelector('[data-testid="error-banner"]').setAttribute("hidden", ""));
            await page.setInputFiles('[data-testid="file-input"]', h.modelPath(file));
            await page.waitForSelector(`${banner}:not([hidden])`);
            assert.equal(await page.getAttribute(banner, "data-code"), code, file);
            assert.equal(await page.getAttribute(banner, "data-offset"), offset, file);
            assert.equal(await page.textContent(`${banner} .error-code`), code, file);
            assert.match(await page.textContent(`${banner} .error-offset`), new RegExp(`at byte ${Number(offset).toLocaleString("en-US")}`));
            // The field from error.what, after the file and the code's description; the code and the offset
            // are shown apart, not repeated from the message.
            const message = await page.textContent(`${banner} .error-message`);
            assert.ok(message.startsWith(`${file}: `) && message.endsWith(`: ${what}`), `${file}: "${message}", CLI: ${what}`);
            assert.doesNotMatch(message, /\(byte|truncated:|bad_magic:|duplicate_name:/);
            if (file === "truncated.gguf") await shot(page, "09-error-banner.png");
        }
        assert.notEqual(await page.getAttribute(banner, "data-offset"), "0", "duplicate-key.gguf: an offset inside the file");
        // The page stays usable: the next file opens and the banner goes.
        await page.setInputFiles('[data-testid="file-input"]', h.modelPath("tiny.safetensors"));
        await waitForModel(page, 5);
        assert.equal(await page.isHidden('[data-testid="error-banner"]'), true);
        // A bad file while a model is shown leaves that model in place.
        await page.setInputFiles('[data-testid="file-input"]', h.modelPath("not-a-model.gguf"));
        await page.waitForSelector('[data-testid="error-banner"]:not([hidden])');
        await waitForModel(page, 5);
        await assertTensorRows(page, "tiny.safetensors");
        // A URL that does not exist.
        await page.fill('[data-testid="url-input"]', "models/no-such-model.gguf");
        await page.click('[data-testid="url-load"]');
        await page.waitForFunction(() => document.querySelector('[data-testid="error-banner"]').dataset.code === "http");
        assert.deepEqual(problems.filter((p) => !p.includes("404")), []);
        await context.close();
    });

    test("?url= with a malformed %-escape shows the banner, not an uncaught URIError", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=%E0%A4%A" });
        const banner = '[data-testid="error-banner"]';
        await page.waitForSelector(`${banner}:not([hidden])`);
        assert.equal(await page.getAttribute(banner, "data-code"), "bad_source");
        assert.match(await page.textContent(`${banner} .error-message`), /malformed %-escape/);
        assert.equal(await page.isHidden("#model"), true);
        // The page goes on: a good address opens.
        await page.fill('[data-testid="url-input"]', "models/tiny-llama.gguf");
        await page.click('[data-testid="url-load"]');
        await waitForModel(page, 22);
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("the page works in the package's worker (weightstream/worker): reads stream progress and cancel", async () => {
        const { page, context, problems, requests } = await h.newPage({ query: "?url=slow/wide.gguf" });
        await waitForModel(page, 1);
        // One worker, the package's script; the page has no worker or client of its own any more.
        assert.deepEqual(page.workers().map((w) => new URL(w.url()).pathname), ["/worker_main.js"]);
        assert.deepEqual(requests.filter((url) => /\/(worker|client)\.js$/.test(url)), []);
        for (const gone of ["worker.js", "client.js"]) assert.equal(existsSync(path.join(webRoot, gone)), false, gone);
        // wide.weight is 4.6 MB at 16 KiB/s: the read's progress shows bytes, and cancel ends it quietly.
        await page.click("#tab-tensors");
        await clickTensor(page, "wide.weight");
        await page.waitForFunction(() => /KiB of .* · .*\/s/.test(document.querySelector('[data-testid="progress"] .progress-text')?.textContent ?? ""));
        assert.match(await page.textContent('[data-testid="progress"] .progress-label'), /^Decoding wide\.weight \(rows 0–1,023\)$/);
        await page.click('[data-testid="progress"] .progress-cancel');
        await page.waitForSelector('[data-testid="progress"]', { state: "hidden" });
        assert.equal(await page.textContent('[data-testid="tensor-detail"] .detail-body'), "Cancelled.");
        assert.equal(await page.isHidden('[data-testid="error-banner"]'), true);
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("cancel stops a slow download, without an error; the progress bar shows bytes and rate", async () => {
        const { page, context, problems } = await h.newPage();
        // /slow/ is served at 16 KiB/s per request: the vocabulary file's 700 KB header takes many seconds.
        await page.fill('[data-testid="url-input"]', "slow/vocab-llama-spm.gguf");
        await page.click('[data-testid="url-load"]');
        await page.waitForFunction(() => /KiB of .* · .*\/s/.test(document.querySelector('[data-testid="progress"] .progress-text')?.textContent ?? ""));
        await shot(page, "10-progress.png");
        await page.click('[data-testid="progress"] .progress-cancel');
        await page.waitForSelector('[data-testid="progress"]', { state: "hidden" });
        assert.equal(await page.isHidden('[data-testid="error-banner"]'), true);
        assert.equal(await page.isHidden("#model"), true);
        // And the page opens the next model.
        await page.fill('[data-testid="url-input"]', "models/tiny-llama.gguf");
        await page.click('[data-testid="url-load"]');
        await waitForModel(page, 22);
        assert.deepEqual(problems, []);
        await context.close();
    });
});

describe("layouts", () => {
    test("phone width: no horizontal overflow; the tensor detail covers the screen and closes", async () => {
        const { page, context, problems } = await h.newPage({ width: 390, height: 844, query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.equal(await overflow(), 0);
        await shot(page, "11-phone-summary.png");
        await page.click("#tab-tensors");
        assert.equal(await overflow(), 0);
        await shot(page, "12-phone-tensors.png");
        await clickTensor(page, "blk.0.attn_k.weight");
        await page.waitForSelector('[data-testid="tensor-stats"]');
        const box = await page.locator('[data-testid="tensor-detail"]').boundingBox();
        assert.deepEqual([box.x, box.y, box.width, box.height], [0, 0, 390, 844]);
        await shot(page, "13-phone-detail.png");
        await page.click('[data-testid="tensor-detail"] .close');
        assert.equal(await page.isVisible('[data-testid="tensor-detail"]'), false);
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("dark theme follows the system, and the theme button switches it", async () => {
        const { page, context, problems } = await h.newPage({ colorScheme: "dark", query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        assert.equal(await background(), "rgb(20, 23, 28)");
        await page.click("#tab-tensors");
        await clickTensor(page, "token_embd.weight");
        await page.waitForSelector('[data-testid="tensor-stats"]');
        await shot(page, "14-dark-tensors.png");
        await page.click("#theme-toggle"); // auto -> light
        assert.equal(await background(), "rgb(245, 246, 248)");
        await page.click("#theme-toggle"); // light -> dark
        assert.equal(await background(), "rgb(20, 23, 28)");
        await page.click("#theme-toggle"); // dark -> auto (the system's dark)
        assert.equal(await page.textContent("#theme-toggle"), "Theme: auto");
        assert.deepEqual(problems, []);
        await context.close();
    });
});
