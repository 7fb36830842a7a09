// SPDX-License-Identifier: MIT
// The chat template view: tokenizer.chat_template rendered with a sample conversation by @huggingface/jinja
// (Hugging Face's Jinja for chat templates, the one transformers.js uses) in a worker of its own, with the
// model's bos and eos tokens; the output is put in as text (textContent), never as HTML. A template that
// does not parse, raises or runs too long shows its error in place of the output. The template's sha256 (Web Crypto, over its UTF-8 bytes)
// names it exactly, as a hash in a model card would.
import { el, clear } from "./dom.js";
import { formatInt } from "./format.js";
import { SAMPLE_MESSAGES, templateContext } from "./template_render.js";

// A template is a program from the file: it runs in a worker of its own, and one that has not finished in
// this time (an endless or enormous loop) is stopped and reported.
export const RENDER_TIMEOUT_MS = 3000;

/** Renders templates in a worker (template_worker.js); a render past RENDER_TIMEOUT_MS ends that worker. */
class Renderer {
    #worker = null;
    #pending = null; // {id, resolve, timer}
    #next = 0;

    render(source, context) {
        this.#settle({ error: "superseded" });
        this.#worker ??= this.#start();
        const id = ++this.#next;
        return new Promise((resolve) => {
            const timer = setTimeout(() => {
                this.#stop();
                resolve({ error: `the template did not finish rendering in ${RENDER_TIMEOUT_MS / 1000} s (stopped)` });
            }, RENDER_TIMEOUT_MS);
            this.#pending = { id, resolve, timer };
            this.#worker.postMessage({ id, source, context });
        });
    }

    #start() {
        const worker = new Worker(new URL("./template_worker.js", import.meta.url), { type: "module" });
        worker.onmessage = (e) => {
            if (this.#pending?.id === e.data.id) this.#settle(e.data.result);
        };
        // A worker that fails (out of memory, say) takes its render with it.
        worker.onerror = (e) => {
            e.preventDefault();
            this.#stop();
            this.#settle({ error: `the template's renderer failed: ${e.message || "it stopped"}` });
        };
        return worker;
    }

    #settle(result) {
        const pending = this.#pending;
        if (!pending) return;
        this.#pending = null;
        clearTimeout(pending.timer);
        pending.resolve(result);
    }

    #stop() {
        this.#worker?.terminate();
        this.#worker = null;
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
    #renderer = new Renderer();
    #draw = null; // renders the template on show, when its tab is first shown

    constructor(root) {
        this.#root = root;
    }

    /** Renders the template (once per model, when its tab is first shown). */
    show() {
        const draw = this.#draw;
        this.#draw = null;
        draw?.();
    }

    /** Takes the chat template of `metadata` (rendered by show()); false when it has none. */
    setMetadata(metadata) {
        ++this.#generation;
        this.#draw = null;
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
        const generation = this.#generation;
        const draw = async () => {
            const withSystem = system.checked;
            status.className = "template-status muted";
            status.dataset.state = "rendering";
            status.textContent = "Rendering…";
            const result = await this.#renderer.render(
                source,
                templateContext({ bos, eos, system: withSystem, generationPrompt: prompt.checked }),
            );
            if (generation !== this.#generation || result.error === "superseded") return;
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
                    `Rendered by @huggingface/jinja with ${SAMPLE_MESSAGES.length - (withSystem ? 0 : 1)} sample ` +
                    "messages; " +
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
        this.#draw = draw;
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
