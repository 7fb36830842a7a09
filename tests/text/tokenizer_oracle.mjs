// SPDX-License-Identifier: MIT
// The independent oracle of tests/tokenizer_hf_test.cpp: @huggingface/tokenizers (a JavaScript port of Hugging
// Face's tokenizers) tokenizes every text of TEXTS.json with the tokenizer.json + tokenizer_config.json of
// MODEL_DIR, with and without special tokens, and decodes the ids with special tokens. Prints JSON:
// {version, results: [per text: {with: [ids], without: [ids], decoded: "..."}]}.
// With --no-parse-special, special added tokens are left out of the file first, so that text that spells one is
// tokenized as text: what Hugging Face's encode_special_tokens = true does (weightstream's parse_special = false).
// Usage: node tokenizer_oracle.mjs MODEL_DIR TEXTS.json [--no-parse-special]
import { readFileSync } from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";

const dir = process.argv[2];
const tokenizerJson = JSON.parse(readFileSync(`${dir}/tokenizer.json`, "utf8"));
const tokenizerConfig = JSON.parse(readFileSync(`${dir}/tokenizer_config.json`, "utf8"));
const texts = JSON.parse(readFileSync(process.argv[3], "utf8"));
if (process.argv[4] === "--no-parse-special") {
    tokenizerJson.added_tokens = tokenizerJson.added_tokens.filter((t) => !t.special);
}
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const results = texts.map((text) => {
    const withSpecial = tokenizer.encode(text, { add_special_tokens: true }).ids;
    const withoutSpecial = tokenizer.encode(text, { add_special_tokens: false }).ids;
    const decoded = withSpecial.length > 0 ? tokenizer.decode(withSpecial) : "";
    return { with: withSpecial, without: withoutSpecial, decoded };
});
const version = JSON.parse(
    readFileSync(new URL("../../node_modules/@huggingface/tokenizers/package.json", import.meta.url), "utf8"),
).version;
process.stdout.write(JSON.stringify({ version, results }) + "\n");
