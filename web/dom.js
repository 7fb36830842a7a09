// SPDX-License-Identifier: MIT
// The one way the page makes elements. Text always goes in as text nodes (textContent), so a string from a
// model file can never become markup: nothing in web/ parses HTML from strings (tests/browser/xss.test.mjs
// checks the sources for every such API).

/**
 * el("div", {class: "a b", text: "...", title: "...", dataset: {name: "..."}, attrs: {role: "row"},
 *            on: {click: fn}}, ...children)   children: nodes or strings (as text)
 */
export function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
        if (value === undefined || value === null) continue;
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = value;
        else if (key === "title") node.title = value;
        else if (key === "dataset") Object.assign(node.dataset, value);
        else if (key === "attrs") for (const [name, v] of Object.entries(value)) node.setAttribute(name, v);
        else if (key === "on") for (const [name, fn] of Object.entries(value)) node.addEventListener(name, fn);
        else node[key] = value;
    }
    append(node, children);
    return node;
}

function append(node, children) {
    for (const child of children) {
        if (child === null || child === undefined || child === false) continue;
        if (Array.isArray(child)) append(node, child);
        else node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
}

/** Removes every child of `node`, then appends `children` as el() does (strings as text, null skipped). */
export function clear(node, ...children) {
    node.replaceChildren();
    append(node, children);
    return node;
}

export function $(selector, root = document) {
    return root.querySelector(selector);
}

/**
 * Sizes a canvas's backing store to `cssWidth` x `cssHeight` CSS pixels at the screen's pixel ratio; returns
 * {width, height} in device pixels, the ratio (dpr) and whether the store was resized (which clears it).
 */
export function fitCanvas(canvas, cssWidth, cssHeight) {
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(cssWidth * dpr));
    const height = Math.round(cssHeight * dpr);
    const resized = canvas.width !== width || canvas.height !== height;
    if (resized) {
        canvas.width = width;
        canvas.height = height;
    }
    return { width, height, dpr, resized };
}

/** The value of a CSS custom property of the document (for canvas colours that follow the theme). */
export function cssVar(name, fallback = "#888") {
    const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return v || fallback;
}
