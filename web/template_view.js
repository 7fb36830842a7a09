// SPDX-License-Identifier: MIT
// The chat template view: tokenizer.chat_template rendered with a sample conversation by @huggingface/jinja
// (Hugging Face's Jinja for chat templates, the one transformers.js uses), with the model's bos and eos
// tokens; the output is put in as text (textContent), never as HTML. A template that does not parse or
// raises shows its error in place of the output. The template's sha256 (Web Crypto, over its UTF-8 bytes)
// names it exactly, as a hash in a model card would.
import { Template } from "@huggingface/jinja";
import { el, clear } from "./dom.js";
import { formatInt } from "./format.js";

/** The sample conversation the template is rendered with. */
export const SAMPLE_MESSAGES = [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "What is the capital of France?" },
    { role: "assistant", content: "The capital of France is Paris." },
    { role: "user", content: "And of Italy?" },
];

/** The variables a chat template is rendered with (those transformers' apply_chat_template passes). */
export function templateContext({ bos, eos, system = true, generationPrompt = true }) {
    return {
        messages: system ? SAMPLE_MESSAGES : SAMPLE_MESSAGES.slice(1),
        bos_token: bos,
        eos_token: eos,
        add_generation_prompt: generationPrompt,
    };
}

/** Renders `source` with `context`: {text} or {error} (the template's parse or runtime error). */
export function renderTemplate(source, context) {
    let template;
    try {
        template = new Template(source);
    } catch (error) {
        return { error: `the template does not parse: ${error?.message ?? error}` };
    }
    try {
        return { text: template.render(context) };
    } catch (error) {
        return { error: `the template failed while rendering: ${error?.message ?? error}` };
    }
}

async function sha256Hex(text) {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function tokenText(metadata, key) {
    const id = metadata.find((m) => m.key === key)?.value;
    const tokens = metadata.find((m) => m.key === "tokenizer.ggml.tokens")?.value;
    if ((typeof id !== "number" && typeof id !== "bigint") || !Array.isArray(tokens)) return "";
    return typeof tokens[Number(id)] === "string" ? tokens[Number(id)] : "";
}

export class TemplateView {
    #root;
    #generation = 0;

    constructor(root) {
        this.#root = root;
    }

    /** Shows the chat template of `metadata`; false when it has none. */
    setMetadata(metadata) {
        ++this.#generation;
        const source = metadata.find((m) => m.key === "tokenizer.chat_template")?.value;
        if (typeof source !== "string") {
            clear(this.#root);
            return false;
        }
        const bos = tokenText(metadata, "tokenizer.ggml.bos_token_id");
        const eos = tokenText(metadata, "tokenizer.ggml.eos_token_id");
        const hash = el("code", { class: "hash", text: "…", attrs: { "data-testid": "template-sha256" } });
        const system = el("input", { type: "checkbox", checked: true, attrs: { "data-testid": "template-system" } });
        const prompt = el("input", { type: "checkbox", checked: true, attrs: { "data-testid": "template-prompt" } });
        const output = el("pre", { class: "value-text wrap", attrs: { "data-testid": "template-output" } });
        const status = el("p", { class: "template-status", attrs: { "data-testid": "template-status" } });
        const draw = () => {
            const result = renderTemplate(
                source,
                templateContext({ bos, eos, system: system.checked, generationPrompt: prompt.checked }),
            );
            if (result.error !== undefined) {
                output.hidden = true;
                output.textContent = "";
                status.className = "template-status inline-error";
                status.dataset.state = "error";
                status.textContent = result.error;
            } else {
                output.hidden = false;
                output.textContent = result.text;
                status.className = "template-status muted";
                status.dataset.state = "ok";
                status.textContent =
                    `Rendered by @huggingface/jinja with ${system.checked ? 4 : 3} sample messages; ` +
                    `${formatInt(result.text.length)} characters.`;
            }
        };
        system.addEventListener("change", draw);
        prompt.addEventListener("change", draw);
        clear(
            this.#root,
            el(
                "dl",
                { class: "facts" },
                el("dt", { text: "sha256" }),
                el("dd", {}, hash),
                el("dt", { text: "length" }),
                el("dd", { text: `${formatInt(source.length)} characters` }),
                el("dt", { text: "bos_token" }),
                el("dd", {}, el("code", { text: JSON.stringify(bos), attrs: { "data-testid": "template-bos" } })),
                el("dt", { text: "eos_token" }),
                el("dd", {}, el("code", { text: JSON.stringify(eos), attrs: { "data-testid": "template-eos" } })),
            ),
            el(
                "div",
                { class: "toolbar" },
                el("label", { class: "check" }, system, " with a system message"),
                el("label", { class: "check" }, prompt, " add_generation_prompt"),
            ),
            el("h3", { text: "Rendered" }),
            status,
            output,
            el("h3", { text: "Template" }),
            el("pre", { class: "value-text", text: source, attrs: { "data-testid": "template-source" } }),
        );
        draw();
        const generation = this.#generation;
        sha256Hex(source).then(
            (hex) => {
                if (generation === this.#generation) hash.textContent = hex;
            },
            (error) => {
                if (generation === this.#generation) hash.textContent = `unavailable: ${error?.message ?? error}`;
            },
        );
        return true;
    }
}
