// SPDX-License-Identifier: MIT
// Rendering a chat template: @huggingface/jinja with the variables transformers' apply_chat_template
// passes and a sample conversation. Pure (no DOM): template_worker.js runs it, the tests import it.
import { Template } from "@huggingface/jinja";

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
