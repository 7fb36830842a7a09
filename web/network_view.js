// SPDX-License-Identifier: MIT
// The network panel: what the model on show cost (model.metrics, forwarded by weightstream/worker with every
// answer: requests, bytes fetched, bytes the range cache answered with, retries, time to first byte) and what
// the range cache holds (cacheInfo(): its entries and bytes), with a button that clears it. Every number is
// also in its cell's data-value, exact, for tests and for copying.
import { el, clear } from "./dom.js";
import { formatBytes, formatDuration, formatInt } from "./format.js";

const BACKENDS = { opfs: "origin private file system", "cache-api": "Cache API", directory: "a directory" };

function row(label, key, value, text) {
    return el(
        "tr",
        { dataset: { key } },
        el("th", { text: label, attrs: { scope: "row" } }),
        el("td", { text, dataset: { value: String(value) } }),
    );
}

export class NetworkView {
    #root;
    #worker; // () => the WeightstreamWorker whose cache and models are shown
    #model = null;
    #refreshing = null;
    #again = false;

    /** `root`: the panel's element (a <details>); `worker()`: the page's WeightstreamWorker. */
    constructor(root, worker) {
        this.#root = root;
        this.#worker = worker;
        root.addEventListener("toggle", () => this.refresh());
    }

    /** Shows the metrics of `model` (a WorkerModel), or none. */
    setModel(model) {
        this.#model = model;
        this.refresh();
    }

    /**
     * Redraws from the model's latest metrics and the cache's current state (one redraw at a time), while the
     * panel is open: closed, it asks the worker nothing (the page starts no worker for it).
     */
    refresh() {
        if (!this.#root.open) return Promise.resolve();
        if (this.#refreshing) {
            this.#again = true;
            return this.#refreshing;
        }
        this.#refreshing = (async () => {
            try {
                do {
                    this.#again = false;
                    await this.#render();
                } while (this.#again);
            } finally {
                this.#refreshing = null;
            }
        })();
        return this.#refreshing;
    }

    async #render() {
        let info = null;
        let failure = null;
        try {
            info = await this.#worker().cacheInfo();
        } catch (e) {
            failure = e;
        }
        const body =
            this.#root.querySelector(".network-body") ?? this.#root.appendChild(el("div", { class: "network-body" }));
        const m = this.#model?.metrics ?? null;
        const cached = m ? m.bytesFromCache : 0;
        const ratio = m && m.bytesFetched + cached > 0 ? cached / (m.bytesFetched + cached) : null;
        const modelTable = m
            ? el(
                  "table",
                  { class: "network-table", dataset: { testid: "network-model" } },
                  el("caption", { text: "This model" }),
                  row("Requests", "requests", m.requests, formatInt(m.requests)),
                  row("Bytes fetched", "bytesFetched", m.bytesFetched, formatBytes(m.bytesFetched)),
                  row(
                      "Bytes from the cache",
                      "bytesFromCache",
                      m.bytesFromCache,
                      ratio === null
                          ? formatBytes(cached)
                          : `${formatBytes(cached)} (${(ratio * 100).toFixed(ratio === 1 || ratio === 0 ? 0 : 1)} % of the bytes read)`,
                  ),
                  row("Retries", "retries", m.retries, formatInt(m.retries)),
                  row(
                      "Time to first byte",
                      "timeToFirstByte",
                      m.timeToFirstByte ?? "",
                      m.timeToFirstByte === null ? "–" : formatDuration(m.timeToFirstByte),
                  ),
                  m.cacheErrors
                      ? row("Cache write errors", "cacheErrors", m.cacheErrors, formatInt(m.cacheErrors))
                      : null,
              )
            : el("p", { class: "muted", text: "No model open." });
        let cacheBlock;
        if (failure) {
            cacheBlock = el("p", { class: "muted", text: `The cache cannot be read: ${failure.message}` });
        } else if (!info.backend) {
            cacheBlock = el("p", { class: "muted", text: "This browser has no storage for a range cache." });
        } else {
            cacheBlock = el(
                "div",
                {},
                el(
                    "table",
                    { class: "network-table", dataset: { testid: "network-cache" } },
                    el("caption", { text: `Range cache (${BACKENDS[info.backend] ?? info.backend})` }),
                    row("Models", "entries", info.entries.length, formatInt(info.entries.length)),
                    row("Bytes", "bytes", info.bytes, `${formatBytes(info.bytes)} of ${formatBytes(info.maxBytes)}`),
                ),
                info.entries.length
                    ? el(
                          "ul",
                          { class: "network-entries", dataset: { testid: "network-entries" } },
                          info.entries.map((e) =>
                              el("li", {
                                  title: e.url,
                                  text: `${e.url}: ${formatBytes(e.bytes)} of ${formatBytes(e.size)}`,
                              }),
                          ),
                      )
                    : null,
                el("button", {
                    type: "button",
                    text: "Clear the cache",
                    disabled: info.entries.length === 0,
                    dataset: { testid: "network-clear" },
                    on: { click: () => this.#clear() },
                }),
            );
        }
        clear(body, modelTable, cacheBlock);
        this.#root.dataset.renders = String(Number(this.#root.dataset.renders ?? 0) + 1);
    }

    async #clear() {
        try {
            await this.#worker().clearCache();
        } finally {
            await this.refresh();
        }
    }
}
