// SPDX-License-Identifier: MIT
// Reading the package's declarations (wasm/js/index.d.ts) in tests, so that its string unions can be held
// against the core's own lists.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

import { repoRoot } from "./helpers.mjs";

/**
 * The string literals of the union type alias `name` in index.d.ts, in order (following aliases it names). An
 * open union's `(string & {})` (literals offered for completion, any string accepted) is passed over only when
 * `open` is set; any other member that is not a string literal throws.
 */
export function unionMembers(name, { open = false } = {}) {
    const file = path.join(repoRoot, "wasm/js/index.d.ts");
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const aliases = new Map();
    for (const s of source.statements) if (ts.isTypeAliasDeclaration(s)) aliases.set(s.name.text, s.type);
    const members = (type) => {
        if (ts.isUnionTypeNode(type)) return type.types.flatMap(members);
        if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) return [type.literal.text];
        if (ts.isTypeReferenceNode(type) && aliases.has(type.typeName.getText())) {
            return members(aliases.get(type.typeName.getText()));
        }
        if (open && type.getText() === "(string & {})") return [];
        throw new Error(`index.d.ts: ${name} holds ${type.getText()}, not a string literal`);
    };
    assert.ok(aliases.has(name), `index.d.ts has no type ${name}`);
    return members(aliases.get(name));
}
