// SPDX-License-Identifier: MIT
// A list of fixed-height rows of which only the visible ones (plus a margin) exist as elements: a 5,000-row
// tensor table or a 150,000-item vocabulary costs a few dozen elements, re-filled while scrolling.

export class VirtualList {
    #viewport;
    #body;
    #rowHeight;
    #createRow;
    #renderRow;
    #overscan;
    #pool = [];
    #count = 0;
    #observer;

    /**
     * viewport: the scrolling element (position: relative); the rows go into a body element appended to it,
     * after whatever it already holds (a sticky header).
     * createRow(): a new empty row element; renderRow(row, index): fills it for item `index`.
     */
    constructor(viewport, { rowHeight, createRow, renderRow, overscan = 6 }) {
        this.#viewport = viewport;
        this.#rowHeight = rowHeight;
        this.#createRow = createRow;
        this.#renderRow = renderRow;
        this.#overscan = overscan;
        this.#body = document.createElement("div");
        this.#body.className = "vlist-body";
        this.#body.style.position = "relative";
        viewport.append(this.#body);
        viewport.addEventListener("scroll", () => this.#update(false), { passive: true });
        this.#observer = new ResizeObserver(() => this.#update(false));
        this.#observer.observe(viewport);
    }

    /** Stops observing (the list is being removed). */
    dispose() {
        this.#observer.disconnect();
    }

    /** Sets the number of items and re-renders every visible row. */
    setCount(count) {
        this.#count = count;
        this.#body.style.height = `${count * this.#rowHeight}px`;
        this.#update(true);
    }

    /** Changes the height of every row (a layout change), keeping the first visible item in view. */
    setRowHeight(rowHeight) {
        if (rowHeight === this.#rowHeight) return;
        const first = Math.floor(Math.max(0, this.#viewport.scrollTop - this.#body.offsetTop) / this.#rowHeight);
        this.#rowHeight = rowHeight;
        for (const row of this.#pool) row.style.height = `${rowHeight}px`;
        this.setCount(this.#count);
        this.#viewport.scrollTop = first * rowHeight;
    }

    /** Re-renders the visible rows (after the items changed in place). */
    refresh() {
        this.#update(true);
    }

    /** Scrolls so that item `index` is visible. */
    scrollToIndex(index, align = "nearest") {
        const top = this.#body.offsetTop + index * this.#rowHeight;
        const header = this.#body.offsetTop;
        const view = this.#viewport;
        if (align === "start" || top - header < view.scrollTop) view.scrollTop = top - header;
        else if (top + this.#rowHeight > view.scrollTop + view.clientHeight)
            view.scrollTop = top + this.#rowHeight - view.clientHeight;
    }

    #update(force) {
        const view = this.#viewport;
        const top = Math.max(0, view.scrollTop - this.#body.offsetTop);
        const height = view.clientHeight || 600;
        const first = Math.max(0, Math.floor(top / this.#rowHeight) - this.#overscan);
        const last = Math.min(this.#count, Math.ceil((top + height) / this.#rowHeight) + this.#overscan);
        const needed = last - first;
        if (needed > this.#pool.length) {
            while (this.#pool.length < needed) {
                const row = this.#createRow();
                row.style.position = "absolute";
                row.style.left = "0";
                row.style.right = "0";
                row.style.height = `${this.#rowHeight}px`;
                row.vlistIndex = -1;
                this.#body.append(row);
                this.#pool.push(row);
            }
            for (const row of this.#pool) row.vlistIndex = -1;
        }
        const size = this.#pool.length;
        const used = new Set();
        for (let i = first; i < last; ++i) {
            const row = this.#pool[i % size];
            used.add(row);
            if (force || row.vlistIndex !== i) {
                row.vlistIndex = i;
                row.style.transform = `translateY(${i * this.#rowHeight}px)`;
                this.#renderRow(row, i);
            }
            row.hidden = false;
        }
        for (const row of this.#pool) {
            if (!used.has(row)) {
                row.hidden = true;
                row.vlistIndex = -1;
            }
        }
    }
}
