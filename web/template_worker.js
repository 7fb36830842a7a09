// SPDX-License-Identifier: MIT
// The chat template's worker: renders {id, source, context} and answers {id, result} ({text} or {error}).
// A template is a program from the model file; here an endless loop stops only this worker, which the page
// ends after a timeout (template_view.js).
import { renderTemplate } from "./template_render.js";

self.onmessage = (e) => {
    const { id, source, context } = e.data;
    self.postMessage({ id, result: renderTemplate(source, context) });
};
