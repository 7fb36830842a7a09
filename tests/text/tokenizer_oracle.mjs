// SPDX-License-Identifier: MIT
// The independent oracle of tests/tokenizer_hf_test.cpp: @huggingface/tokenizers (a JavaScript port of Hugging
// Face's tokenizers that also reads tokenizer_config.json, as transformers does) tokenizes every text of TEXTS.json
// with the tokenizer.json + tokenizer_config.json of MODEL_DIR, with and without special tokens, and decodes the ids
// with special tokens. Prints JSON: {version, results: [per text: {with: [ids], without: [ids], decoded: "..."}]}.
// With --crate, the ids are also the Rust crate's (its Node binding, npm `tokenizers`), and a text on which the port
// and the crate disagree is an error (exit 1): for real files, which the crate loads as they are (it wants every
// field that hand-written test files leave out).
// With --no-parse-special, special added tokens are left out of the file first, so that text that spells one is
// tokenized as text: what Hugging Face's encode_special_tokens = true does (weightstream's parse_special = false).
// The port only: the crate renumbers the added tokens left after a gap, and its binding has no
// encode_special_tokens.
// Usage: node tokenizer_oracle.mjs MODEL_DIR TEXTS.json [--no-parse-special | --crate]
import { readFileSync } from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";
import crateBinding from "tokenizers";

const [dir, textsFile, flag] = process.argv.slice(2);
const tokenizerJson = JSON.parse(readFileSync(`${dir}/tokenizer.json`, "utf8"));
const tokenizerConfig = JSON.parse(readFileSync(`${dir}/tokenizer_config.json`, "utf8"));
const texts = JSON.parse(readFileSync(textsFile, "utf8"));
if (flag === "--no-parse-special") {
    tokenizerJson.added_tokens = tokenizerJson.added_tokens.filter((t) => !t.special);
}
const crate = flag === "--crate" ? crateBinding.Tokenizer.fromString(JSON.stringify(tokenizerJson)) : null;
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const results = [];
for (const text of texts) {
    const withSpecial = tokenizer.encode(text, { add_special_tokens: true }).ids;
    const withoutSpecial = tokenizer.encode(text, { add_special_tokens: false }).ids;
    for (const [addSpecialTokens, ids] of crate
        ? [
              [true, withSpecial],
              [false, withoutSpecial],
          ]
        : []) {
        const crateIds = (await crate.encode(text, null, { addSpecialTokens })).getIds();
        if (JSON.stringify(crateIds) !== JSON.stringify(ids)) {
            process.stderr.write(`the port's ids are not the crate's (${addSpecialTokens}): ${JSON.stringify(text)}\n`);
            process.exit(1);
        }
    }
    const decoded = withSpecial.length > 0 ? tokenizer.decode(withSpecial) : "";
    results.push({ with: withSpecial, without: withoutSpecial, decoded });
}
const versionOf = (name) =>
    JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), "utf8")).version;
const version = crate
    ? `@huggingface/tokenizers ${versionOf("@huggingface/tokenizers")} = tokenizers ${versionOf("tokenizers")}`
    : versionOf("@huggingface/tokenizers");
process.stdout.write(JSON.stringify({ version, results }) + "\n");
