// SPDX-License-Identifier: MIT
// The tokenizer, chat template and layer map views and the whole-tensor statistics, in headless Chromium:
// token lookups both ways on a real vocabulary (DeepSeek LLM, 102,400 tokens) against the file read by
// @huggingface/gguf, the chat template against @huggingface/jinja run here in Node, the layer map against
// `weightstream tensors --json`, the whole-tensor statistics against `weightstream stats --json`.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFile, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { gguf } from "@huggingface/gguf";
import { Template } from "@huggingface/jinja";
import { cliJson, clickTensor, repoRoot, screenshotDir, setUp, waitForModel } from "./support/harness.mjs";
import { hugeGgufHeader, tinyLlamaGguf, wideGguf, writeGguf } from "./support/models.mjs";
import { sharedTestData } from "../js/helpers.mjs";

// The reference corpus beside the checkout (../shared/testdata: present in CI), not a copy in tests/data.
const DEEPSEEK = path.join(sharedTestData, "ggml", "vocab", "ggml-vocab-deepseek-llm.gguf");

// A template that raises for a system message, as Gemma's and Mistral's do.
const STRICT_TEMPLATE =
    "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}" +
    "{% endif %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}";

// Tokens with invisible characters and how the view shows them: [text, textContent, the escapes' texts].
const ESCAPE_TOKENS = [
    ["a\nb", "a\\nb", ["\\n"]],
    ["\t", "\\t", ["\\t"]],
    [" x", "␣x", ["␣"]],
    ["zero\u200bwidth", "zero\\u{200b}width", ["\\u{200b}"]],
    ["\u0000\u007f", "\\x00\\x7f", ["\\x00", "\\x7f"]],
    ["back\\n", "back\\n", []], // a backslash and an n: no escape
    ["<b>bold</b>", "<b>bold</b>", []],
    ["", "(empty)", ["(empty)"]],
];

let h;
before(async () => {
    const huge = hugeGgufHeader();
    h = await setUp({
        "deepseek-llm.gguf": await readFile(DEEPSEEK),
        "ggml-types.gguf": await readFile(path.join(repoRoot, "tests", "data", "ggml", "ggml-types.gguf")),
        "tiny-llama.gguf": tinyLlamaGguf(),
        "wide.gguf": wideGguf(),
        "huge.gguf": huge.header,
        "escapes.gguf": writeGguf({
            kv: [["tokenizer.ggml.tokens", "array", ESCAPE_TOKENS.map(([t]) => t), "string"]],
        }),
        "endless-template.gguf": writeGguf({
            kv: [
                ["general.architecture", "string", "llama"],
                ["tokenizer.chat_template", "string", "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"],
            ],
        }),
        "strict-template.gguf": writeGguf({
            kv: [
                ["general.architecture", "string", "llama"],
                ["tokenizer.ggml.tokens", "array", ["<unk>", "<s>", "</s>"], "string"],
                ["tokenizer.ggml.bos_token_id", "uint32", 1],
                ["tokenizer.ggml.eos_token_id", "uint32", 2],
                ["tokenizer.chat_template", "string", STRICT_TEMPLATE],
            ],
        }),
    });
    await truncate(h.modelPath("huge.gguf"), huge.size); // a sparse file: the tensors' bytes read as zeros
});
after(() => h?.tearDown());

const shot = (page, name) => page.screenshot({ path: path.join(screenshotDir, name) });

/** Waits until the chat template's render (in its worker) is on show; its state, "ok" or "error". */
async function rendered(page) {
    await page.waitForFunction(() => ["ok", "error"].includes(document.querySelector('[data-testid="template-status"]')?.dataset.state), null, { timeout: 10000 });
    return page.getAttribute('[data-testid="template-status"]', "data-state");
}

/** The token rows on show, in order: [{id, title (JSON of the text), text, type}]. */
function tokenRows(page) {
    return page.locator('[data-testid="token-row"]:not([hidden])').evaluateAll((rows) =>
        rows
            .sort((a, b) => a.vlistIndex - b.vlistIndex)
            .map((r) => ({
                id: Number(r.dataset.id),
                title: r.querySelector(".t-text").title,
                text: r.querySelector(".t-text").textContent,
                type: r.querySelector(".t-type").dataset.type,
            })),
    );
}

async function search(page, query) {
    await page.fill('[data-testid="token-search"]', query);
    // The count says which query it is the result of (data-query), once the search ran.
    await page.waitForFunction((q) => document.querySelector('[data-testid="token-count"]').dataset.query === q, query);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
}

describe("tokenizer view", () => {
    test("DeepSeek's 102,400 tokens: id -> text and text -> id as the file says; special tokens; merges", async () => {
        const { metadata } = await gguf(DEEPSEEK, { allowLocalFile: true });
        const tokens = metadata["tokenizer.ggml.tokens"];
        const types = metadata["tokenizer.ggml.token_type"];
        const merges = metadata["tokenizer.ggml.merges"];
        assert.equal(tokens.length, 102400);
        const { page, context, problems } = await h.newPage({ query: "?url=models/deepseek-llm.gguf" });
        await waitForModel(page, 0);
        await page.click('[data-testid="tab-tokenizer"]');
        assert.equal(await page.textContent('[data-testid="token-count"]'), "102,400 tokens");
        assert.ok((await page.locator('[data-testid="token-row"]').count()) < 100, "the list is virtualized");

        // id -> text: typing an id shows that token first, its text as the file has it.
        for (const id of [0, 1, 100, 4242, 100000, 100001, 102399]) {
            await search(page, String(id));
            const [first] = await tokenRows(page);
            assert.equal(first.id, id, `search ${id}`);
            assert.equal(first.title, JSON.stringify(tokens[id]), `token ${id}`);
            assert.equal(first.type, String(types[id]), `type of ${id}`);
        }
        // text -> id: a token's text finds it (exact matches first), for tokens picked across the vocabulary.
        for (const id of [262, 3000, 25000, 77777, 100000]) {
            const text = tokens[id];
            await search(page, text);
            const rows = await tokenRows(page);
            const exact = tokens.flatMap((t, i) => (t === text ? [i] : []));
            assert.deepEqual(
                rows.slice(0, exact.length).map((r) => r.id),
                exact,
                `search ${JSON.stringify(text)}`,
            );
            assert.ok(exact.includes(id));
        }
        // Special tokens: the ids of the file, with their text.
        const special = await page
            .locator('[data-testid="special-tokens"] li')
            .evaluateAll((lis) =>
                lis.map((li) => [li.dataset.special, Number(li.dataset.id), li.querySelector(".token-text").title]),
            );
        assert.deepEqual(special, [
            ["bos", 100000, JSON.stringify(tokens[100000])],
            ["eos", 100001, JSON.stringify(tokens[100001])],
            ["pad", 100001, JSON.stringify(tokens[100001])],
        ]);
        // Merges by rank.
        const mergeRows = await page.locator('[data-testid="merge-row"]:not([hidden])').evaluateAll((rows) =>
            rows
                .sort((a, b) => a.vlistIndex - b.vlistIndex)
                .slice(0, 5)
                .map((r) => [Number(r.dataset.rank), r.querySelector(".token-text").title]),
        );
        assert.deepEqual(
            mergeRows,
            merges.slice(0, 5).map((m, i) => [i, JSON.stringify(m)]),
        );
        await search(page, "128000"); // beyond the vocabulary: no id match, text matches only
        assert.ok((await tokenRows(page)).every((r) => tokens[r.id].includes("128000")));
        await search(page, "100000");
        await shot(page, "20-tokenizer.png");
        await page.setViewportSize({ width: 390, height: 844 });
        await search(page, "Ġthe");
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), 0);
        await shot(page, "20-phone-tokenizer.png");
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("control, whitespace and invisible characters are visible escapes; text is text", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/escapes.gguf" });
        await waitForModel(page, 0);
        await page.click('[data-testid="tab-tokenizer"]');
        for (const [id, [token, text, escapes]] of ESCAPE_TOKENS.entries()) {
            const cell = page.locator(`[data-testid="token-row"][data-id="${id}"] .t-text`);
            assert.equal(await cell.textContent(), text, JSON.stringify(token));
            assert.deepEqual(await cell.locator(".esc").allTextContents(), escapes, JSON.stringify(token));
            assert.equal(await cell.getAttribute("title"), JSON.stringify(token));
        }
        assert.equal(await page.locator('[data-testid="token-table"] b').count(), 0);
        await search(page, "\\n"); // the escaped form is not searched: only the literal backslash-n token
        assert.deepEqual(
            (await tokenRows(page)).map((r) => r.id),
            [5],
        );
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("a tokenizer with scores: each row's score and type as stored (tiny llama)", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        const info = await cliJson(["info", h.modelPath("tiny-llama.gguf"), "--json"]);
        const scores = info.metadata.find((m) => m.key === "tokenizer.ggml.scores").value;
        await page.click('[data-testid="tab-tokenizer"]');
        await search(page, "300");
        const score = await page.textContent('[data-testid="token-row"][data-id="300"] .t-score');
        assert.equal(Math.fround(Number(score)), Math.fround(scores[300]));
        assert.equal(await page.textContent('[data-testid="token-row"][data-id="300"] .t-type'), "normal");
        await search(page, "1");
        assert.equal(await page.textContent('[data-testid="token-row"][data-id="1"] .t-type'), "control");
        assert.deepEqual(problems, []);
        await context.close();
    });
});

describe("chat template view", () => {
    test("rendered as @huggingface/jinja renders it in Node, as text; the sha256 of the template", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/tiny-llama.gguf" });
        await waitForModel(page, 22);
        const info = await cliJson(["info", h.modelPath("tiny-llama.gguf"), "--json"]);
        const get = (key) => info.metadata.find((m) => m.key === key).value;
        const source = get("tokenizer.chat_template");
        const tokens = get("tokenizer.ggml.tokens");
        const bos = tokens[get("tokenizer.ggml.bos_token_id")];
        const eos = tokens[get("tokenizer.ggml.eos_token_id")];
        const messages = [
            { role: "system", content: "You are a helpful assistant." },
            { role: "user", content: "What is the capital of France?" },
            { role: "assistant", content: "The capital of France is Paris." },
            { role: "user", content: "And of Italy?" },
        ];
        const render = (msgs, prompt) =>
            new Template(source).render({
                messages: msgs,
                bos_token: bos,
                eos_token: eos,
                add_generation_prompt: prompt,
            });
        await page.click('[data-testid="tab-template"]');
        const output = '[data-testid="template-output"]';
        assert.equal(await rendered(page), "ok");
        assert.equal(await page.textContent(output), render(messages, true));
        assert.match(await page.textContent(output), /<\|user\|>\nWhat is the capital/); // markup-like text stays text
        assert.equal(await page.locator(`${output} *`).count(), 0, "no elements from the output");
        await page.uncheck('[data-testid="template-system"]');
        await page.uncheck('[data-testid="template-prompt"]');
        assert.equal(await rendered(page), "ok");
        assert.equal(await page.textContent(output), render(messages.slice(1), false));
        assert.equal(await page.textContent('[data-testid="template-bos"]'), JSON.stringify(bos));
        assert.equal(await page.textContent('[data-testid="template-eos"]'), JSON.stringify(eos));
        const sha = createHash("sha256").update(source, "utf8").digest("hex");
        await page.waitForFunction(
            (s) => document.querySelector('[data-testid="template-sha256"]').textContent === s,
            sha,
        );
        await page.check('[data-testid="template-system"]');
        await rendered(page);
        await shot(page, "21-chat-template.png");
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("a template that raises shows its error clearly, the output none", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/strict-template.gguf" });
        await waitForModel(page, 0);
        await page.click('[data-testid="tab-template"]');
        const status = '[data-testid="template-status"]';
        assert.equal(await rendered(page), "error");
        assert.match(await page.textContent(status), /failed while rendering: .*System role not supported/);
        assert.equal(await page.isHidden('[data-testid="template-output"]'), true);
        await page.uncheck('[data-testid="template-system"]');
        assert.equal(await rendered(page), "ok");
        const expected = new Template(STRICT_TEMPLATE).render({
            messages: [
                { role: "user", content: "What is the capital of France?" },
                { role: "assistant", content: "The capital of France is Paris." },
                { role: "user", content: "And of Italy?" },
            ],
            bos_token: "<s>",
            eos_token: "</s>",
            add_generation_prompt: true,
        });
        assert.equal(await page.textContent('[data-testid="template-output"]'), expected);
        assert.deepEqual(problems, []);
        await context.close();
    });
});

test("a template that never ends is stopped in its worker and reported; the page stays responsive", async () => {
    const { page, context, problems } = await h.newPage({ query: "?url=models/endless-template.gguf" });
    await waitForModel(page, 0);
    await page.click('[data-testid="tab-template"]');
    await page.waitForSelector('[data-testid="template-status"][data-state="rendering"]');
    const started = Date.now();
    await page.click("#tab-metadata"); // the page thread is free while the template runs
    assert.ok(Date.now() - started < 1000);
    await page.click('[data-testid="tab-template"]');
    assert.equal(await rendered(page), "error");
    assert.match(await page.textContent('[data-testid="template-status"]'), /did not finish rendering in 3 s/);
    // The next render gets a new worker.
    await page.uncheck('[data-testid="template-prompt"]');
    await page.waitForSelector('[data-testid="template-status"][data-state="rendering"]');
    assert.deepEqual(problems, []);
    await context.close();
});

describe("layer map", () => {
    test("cells equal the tensors' types (`tensors --json`); a cell opens its tensor", async () => {
        const { tensors } = await cliJson(["tensors", h.modelPath("huge.gguf"), "--json"]);
        const { page, context, problems } = await h.newPage({ query: "?url=models/huge.gguf" });
        await waitForModel(page, tensors.length);
        await page.click('[data-testid="tab-layers"]');
        const cells = await page
            .locator('[data-testid="layer-cell"]')
            .evaluateAll((cs) =>
                cs.map((c) => [
                    c.dataset.tensor,
                    c.dataset.dtype,
                    c.dataset.layer,
                    c.dataset.role,
                    getComputedStyle(c).backgroundColor,
                ]),
            );
        const inLayers = tensors.filter((t) => /^blk\.\d+\./.test(t.name));
        assert.equal(cells.length, inLayers.length);
        const byName = new Map(tensors.map((t) => [t.name, t]));
        for (const [name, dtype, layer, role] of cells) {
            assert.equal(dtype, byName.get(name).dtype, name);
            assert.equal(name, `blk.${layer}.${role}.weight`);
        }
        // One colour per type, the same for every cell of the type; the legend lists each with its count.
        const colours = new Map();
        for (const [, dtype, , , colour] of cells) {
            assert.equal(colours.get(dtype) ?? colour, colour, dtype);
            colours.set(dtype, colour);
        }
        assert.equal(new Set(colours.values()).size, colours.size);
        const legend = await page.locator('[data-testid="layer-map-legend"] li').allTextContents();
        const counts = new Map();
        for (const t of inLayers) counts.set(t.dtype, (counts.get(t.dtype) ?? 0) + 1);
        assert.deepEqual(legend.sort(), [...counts].map(([d, n]) => `${d} (${n})`).sort());
        // Rows: the layers; columns: the roles in a block's order.
        const roles = await page.locator('[data-testid="layer-map"] th.role').allTextContents();
        assert.deepEqual(roles, [
            "attn_norm",
            "attn_q",
            "attn_k",
            "attn_v",
            "attn_output",
            "ffn_norm",
            "ffn_gate",
            "ffn_up",
            "ffn_down",
        ]);
        await shot(page, "22-layer-map.png");
        await page.setViewportSize({ width: 390, height: 844 });
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), 0);
        await shot(page, "22-phone-layer-map.png");
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.click('[data-testid="layer-cell"][data-tensor="blk.3.ffn_down.weight"]');
        await page.waitForFunction(
            () => document.querySelector('[data-testid="tensor-detail"] h2')?.textContent === "blk.3.ffn_down.weight",
        );
        assert.equal(await page.getAttribute('[data-testid="tab-tensors"], #tab-tensors', "aria-selected"), "true");
        assert.equal(new URL(page.url()).searchParams.get("tensor"), "blk.3.ffn_down.weight");
        assert.equal(
            await page.locator('[data-testid="tensor-row"][data-name="blk.3.ffn_down.weight"].selected').count(),
            1,
        );
        assert.deepEqual(problems, []);
        await context.close();
    });
});

describe("whole-tensor statistics", () => {
    test("beyond the detail's window: equal `stats --json` of the whole tensor", async () => {
        const [expected] = (await cliJson(["stats", h.modelPath("wide.gguf"), "wide.weight", "--json"])).tensors;
        const { page, context, problems } = await h.newPage({ query: "?url=models/wide.gguf&tensor=wide.weight" });
        await waitForModel(page, 1);
        await page.waitForSelector('[data-testid="tensor-stats"]');
        assert.match(await page.textContent('[data-testid="tensor-window"]'), /Rows 0–1,023 of 1,100/);
        await page.click('[data-testid="whole-stats-start"]');
        await page.waitForSelector('[data-testid="whole-stats"][data-state="done"]', { timeout: 30000 });
        const shown = await page.evaluate(() => {
            const out = {};
            for (const dd of document.querySelectorAll('[data-testid="tensor-whole-stats"] dd'))
                out[dd.dataset.stat] = dd.textContent;
            out.histogram = document.querySelector('[data-testid="whole-stats"]').dataset.counts;
            return out;
        });
        const digits = (s) => s.replace(/,/g, "");
        assert.equal(digits(shown.count), String(expected.n_elements));
        assert.equal(Math.fround(Number(shown.min)), Math.fround(expected.min));
        assert.equal(Math.fround(Number(shown.max)), Math.fround(expected.max));
        for (const key of ["mean", "std"]) {
            assert.ok(
                Math.abs(Number(shown[key]) - expected[key]) <= Math.abs(expected[key]) * 1e-5,
                `${key}: ${shown[key]} vs ${expected[key]}`,
            );
        }
        assert.equal(digits(shown.zeros), String(expected.zeros));
        assert.equal(digits(shown.nan), String(expected.nan));
        assert.equal(shown.histogram, expected.histogram.counts.join(","));
        await page
            .locator('[data-testid="tensor-detail"]')
            .screenshot({ path: path.join(screenshotDir, "23-whole-stats.png") });
        assert.deepEqual(problems, []);
        await context.close();
    });

    test("with progress, and Cancel ends it without an error", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=slow/wide.gguf&tensor=wide.weight" });
        await waitForModel(page, 1);
        await page.click('[data-testid="whole-stats-start"]');
        await page.waitForFunction(
            () =>
                /KiB of .*MiB/.test(document.querySelector('[data-testid="whole-stats-progress"]')?.textContent ?? ""),
            null,
            { timeout: 20000 },
        );
        await page.click('[data-testid="whole-stats-cancel"]');
        await page.waitForSelector('[data-testid="whole-stats"][data-state="cancelled"]');
        assert.equal(await page.isVisible('[data-testid="whole-stats-start"]'), true, "can be started again");
        assert.equal(await page.isHidden('[data-testid="error-banner"]'), true);
        assert.deepEqual(problems, []);
        await context.close();
    });
});

describe("integer and float64 tensors", () => {
    // ggml's stored bytes of its integer tensors (extremes such as INT64_MIN included) and of f64.weight.
    const REF = (name) => readFile(path.join(repoRoot, "tests", "data", "ggml", "ref", `${name}.raw`));
    const TYPES = [
        ["i8.weight", Int8Array, "|i1", "int8", [4, 64]],
        ["i16.weight", Int16Array, "<i2", "int16", [4, 64]],
        ["i32.weight", Int32Array, "<i4", "int32", [4, 64]],
        ["i64.weight", BigInt64Array, "<i8", "int64", [2, 32]],
        ["f64.weight", Float64Array, "<f8", "float64", [2, 32]],
    ];

    test("shown as stored and downloaded as .npy of the stored type (ggml's bytes)", async () => {
        const { page, context, problems } = await h.newPage({ query: "?url=models/ggml-types.gguf&tab=tensors" });
        await waitForModel(page, 46);
        for (const [name, Type, descr, numpy, shape] of TYPES) {
            const raw = await REF(name);
            const stored = new Type(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
            await clickTensor(page, name);
            await page.waitForFunction((n) => document.querySelector('[data-testid="tensor-detail"] h2')?.textContent === n && document.querySelector('[data-testid="tensor-values"]'), name);
            const cells = await page.locator('[data-testid="tensor-values"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
            cells.forEach((row, r) => row.forEach((text, c) => assert.equal(text, String(stored[r * shape[1] + c]), `${name}[${r}][${c}]`)));
            const button = page.locator('[data-testid="download-npy"]');
            assert.equal(await button.textContent(), `Download tensor as .npy (${numpy})`);
            const [download] = await Promise.all([page.waitForEvent("download"), button.click()]);
            const npy = await readFile(await download.path());
            const headerLength = npy.readUInt16LE(8);
            assert.match(npy.subarray(10, 10 + headerLength).toString("latin1"), new RegExp(`'descr': '\\${descr[0]}${descr.slice(1)}', 'fortran_order': False, 'shape': \\(${shape.join(", ")}\\)`));
            assert.ok(npy.subarray(10 + headerLength).equals(raw), `${name}: the stored bytes`);
        }
        // The extremes a float32 cannot hold (ggml's i64.weight starts with INT64_MIN, INT64_MAX) are exact.
        await clickTensor(page, "i64.weight");
        await page.waitForFunction(() => document.querySelector('[data-testid="tensor-detail"] h2')?.textContent === "i64.weight" && document.querySelector('[data-testid="tensor-values"]'));
        const first = await page.locator('[data-testid="tensor-values"] tbody tr').first().locator("td").allTextContents();
        assert.deepEqual(first.slice(0, 2), ["-9223372036854775808", "9223372036854775807"]);
        assert.deepEqual(problems, []);
        await context.close();
    });
});
