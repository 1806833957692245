/**
 * A small structural reader of Bicep, for the tests of deploy/aca: no Bicep compiler can be
 * installed here, so this reads what the checks need and nothing more. It understands comments,
 * single-quoted strings with `\'` escapes and `${}` interpolation, multi-line `'''` strings,
 * bracket nesting, and the declarations `targetScope`, `param`, `var`, `func`, `resource`,
 * `module` and `output`, with the body of each. It does not evaluate expressions: callers resolve
 * the few they need (a literal, a variable that is a literal) with `literalOf`.
 */

export interface BicepParam {
  readonly name: string;
  readonly type: string;
  /** The default's expression, when the declaration has one. */
  readonly defaultValue?: string;
  /** Values of an `@allowed([...])` decorator, when it has one of string literals. */
  readonly allowed?: readonly string[];
}

export interface BicepResource {
  readonly symbol: string;
  readonly type: string;
  readonly apiVersion: string;
  readonly existing: boolean;
  /** From `=` to the end of the declaration's object (a loop's `[for ...: {...}]` included). */
  readonly body: string;
}

export interface BicepModule {
  readonly symbol: string;
  readonly path: string;
  readonly body: string;
}

export interface BicepFunc {
  readonly name: string;
  readonly params: readonly string[];
  readonly body: string;
}

export interface BicepFile {
  readonly targetScope: string;
  readonly params: readonly BicepParam[];
  readonly vars: ReadonlyMap<string, string>;
  readonly funcs: ReadonlyMap<string, BicepFunc>;
  readonly resources: readonly BicepResource[];
  readonly modules: readonly BicepModule[];
  readonly outputs: readonly string[];
  /** Paths given to loadTextContent / loadJsonContent / loadFileAsBase64. */
  readonly loadedFiles: readonly string[];
  /** The text without comments. */
  readonly code: string;
}

/** Removes `//` and `/* *\/` comments, leaving strings (and a `//` inside one) untouched. */
export function stripComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("'''", i)) {
      const end = text.indexOf("'''", i + 3);
      const stop = end === -1 ? text.length : end + 3;
      out += text.slice(i, stop);
      i = stop;
    } else if (text[i] === "'") {
      const stop = stringEnd(text, i);
      out += text.slice(i, stop);
      i = stop;
    } else if (text.startsWith("//", i)) {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 2;
    } else {
      out += text[i];
      i += 1;
    }
  }
  return out;
}

/** Index just past the single-quoted string opening at `start` (interpolations may nest strings). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const char = text[i];
    if (char === "\\") i += 2;
    else if (char === "'") return i + 1;
    else if (text.startsWith("${", i)) i = matchingClose(text, i + 1) + 1;
    else i += 1;
  }
  return text.length;
}

/** Index of the bracket closing the one at `open` ({, [ or (), skipping strings. */
export function matchingClose(text: string, open: number): number {
  const pairs: Record<string, string> = { "{": "}", "[": "]", "(": ")" };
  const stack: string[] = [];
  let i = open;
  while (i < text.length) {
    const char = text[i]!;
    if (text.startsWith("'''", i)) {
      const end = text.indexOf("'''", i + 3);
      i = end === -1 ? text.length : end + 3;
      continue;
    }
    if (char === "'") {
      i = stringEnd(text, i);
      continue;
    }
    if (pairs[char] !== undefined) stack.push(pairs[char]);
    else if (char === "}" || char === "]" || char === ")") {
      if (stack.pop() !== char) throw new Error(`unbalanced '${char}' at offset ${i}`);
      if (stack.length === 0) return i;
    }
    i += 1;
  }
  throw new Error(`no closing bracket for offset ${open}`);
}

/** The bracketed expression starting at the first `{` or `[` at or after `from`. */
function bodyFrom(code: string, from: number): string {
  const brace = code.slice(from).search(/[{[]/);
  if (brace === -1) return "";
  const open = from + brace;
  return code.slice(open, matchingClose(code, open) + 1);
}

/** A declaration's value: from after `=` to the end of its line, or of its brackets if it opens any. */
function valueFrom(code: string, from: number): string {
  let i = from;
  let end = code.indexOf("\n", from);
  if (end === -1) end = code.length;
  for (;;) {
    while (i < end) {
      const char = code[i]!;
      if (char === "'") i = stringEnd(code, i);
      else if ("{[(".includes(char)) {
        i = matchingClose(code, i) + 1;
        const next = code.indexOf("\n", i);
        end = Math.max(end, next === -1 ? code.length : next);
      } else i += 1;
    }
    // A ternary continues on the next line (`? a` / `: b`).
    const next = /^\n[ \t]*[?:]/.exec(code.slice(end));
    if (next === null) break;
    const lineEnd = code.indexOf("\n", end + 1);
    end = lineEnd === -1 ? code.length : lineEnd;
  }
  return code.slice(from, end).trim();
}

export function readBicep(text: string): BicepFile {
  const code = stripComments(text);
  const params: BicepParam[] = [];
  for (const match of code.matchAll(/^[ \t]*param\s+(\w+)\s+(\w+)(?:[ \t]*=[ \t]*)?/gm)) {
    const hasDefault = match[0].includes("=");
    const before = code.slice(0, match.index);
    // The single-line decorators right above the declaration.
    const lines = before.split("\n").slice(0, -1);
    let first = lines.length;
    while (first > 0 && lines[first - 1]!.trim().startsWith("@")) first -= 1;
    const decorators = lines.slice(first).join("\n");
    const allowedAt = decorators.indexOf("@allowed(");
    const allowed =
      allowedAt === -1
        ? undefined
        : [...bodyFrom(decorators, allowedAt).matchAll(/'([^']*)'/g)].map((value) => value[1]!);
    params.push({
      name: match[1]!,
      type: match[2]!,
      ...(hasDefault ? { defaultValue: valueFrom(code, match.index + match[0].length) } : {}),
      ...(allowed === undefined ? {} : { allowed }),
    });
  }
  const vars = new Map<string, string>();
  for (const match of code.matchAll(/^[ \t]*var\s+(\w+)\s*=\s*/gm)) {
    vars.set(match[1]!, valueFrom(code, match.index + match[0].length));
  }
  const funcs = new Map<string, BicepFunc>();
  for (const match of code.matchAll(/^[ \t]*func\s+(\w+)\s*\(/gm)) {
    const open = match.index + match[0].length - 1;
    const close = matchingClose(code, open);
    const paramNames = splitTopLevel(code.slice(open + 1, close)).map((p) => p.trim().split(/\s+/)[0]!);
    // The body may start on the line after `=>`.
    let bodyStart = code.indexOf("=>", close) + 2;
    while (/\s/.test(code[bodyStart] ?? "")) bodyStart += 1;
    funcs.set(match[1]!, { name: match[1]!, params: paramNames, body: valueFrom(code, bodyStart) });
  }
  const resources: BicepResource[] = [];
  for (const match of code.matchAll(/^[ \t]*resource\s+(\w+)\s+'([^'@]+)@([^']+)'(\s+existing)?\s*=/gm)) {
    resources.push({
      symbol: match[1]!,
      type: match[2]!,
      apiVersion: match[3]!,
      existing: match[4] !== undefined,
      body: bodyFrom(code, match.index + match[0].length),
    });
  }
  const modules: BicepModule[] = [];
  for (const match of code.matchAll(/^[ \t]*module\s+(\w+)\s+'([^']+)'\s*=/gm)) {
    modules.push({
      symbol: match[1]!,
      path: match[2]!,
      body: bodyFrom(code, match.index + match[0].length),
    });
  }
  const outputs = [...code.matchAll(/^[ \t]*output\s+(\w+)\s+\w+/gm)].map((match) => match[1]!);
  const loadedFiles = [
    ...code.matchAll(/\b(?:loadTextContent|loadJsonContent|loadFileAsBase64)\('([^']+)'/g),
  ].map((match) => match[1]!);
  const targetScope = /^targetScope\s*=\s*'(\w+)'/m.exec(code)?.[1] ?? "resourceGroup";
  return { targetScope, params, vars, funcs, resources, modules, outputs, loadedFiles, code };
}

/** Splits at commas and newlines that are outside brackets and strings. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === "'") {
      const stop = stringEnd(text, i);
      current += text.slice(i, stop);
      i = stop;
      continue;
    }
    if ("{[(".includes(char)) depth += 1;
    if ("}])".includes(char)) depth -= 1;
    if (depth === 0 && (char === "," || char === "\n")) {
      parts.push(current);
      current = "";
    } else current += char;
    i += 1;
  }
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part !== "");
}

/** The items of an array literal `[a, b]` / one per line. */
export function arrayItems(arrayText: string): string[] {
  const trimmed = arrayText.trim();
  if (!trimmed.startsWith("[") || !trimmed.endsWith("]")) throw new Error(`not an array literal: ${trimmed}`);
  return splitTopLevel(trimmed.slice(1, -1));
}

/**
 * The properties of an object literal, key to expression; `...spread` entries under the key
 * `...`. A later key wins, as in Bicep.
 */
export function objectEntries(objectText: string): Map<string, string> {
  const trimmed = objectText.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}"))
    throw new Error(`not an object literal: ${trimmed}`);
  const entries = new Map<string, string>();
  for (const part of splitTopLevel(trimmed.slice(1, -1))) {
    if (part.startsWith("...")) {
      entries.set(`...${part.slice(3).trim()}`, part.slice(3).trim());
      continue;
    }
    const match = /^('(?:[^'\\]|\\.)*'|[\w-]+)\s*:\s*([\s\S]*)$/.exec(part);
    if (match === null) throw new Error(`not an object property: ${part}`);
    const key = match[1]!.startsWith("'") ? match[1]!.slice(1, -1) : match[1]!;
    entries.set(key, match[2]!.trim());
  }
  return entries;
}

/** The value of a plain string literal (`'text'`, escapes undone), else undefined. */
export function literalOf(expression: string): string | undefined {
  const trimmed = expression.trim();
  if (!/^'(?:[^'\\]|\\.)*'$/.test(trimmed)) return undefined;
  return trimmed.slice(1, -1).replace(/\\(.)/g, "$1");
}

/**
 * Identifiers the code refers to: everything but string text, property keys (`name:`), member
 * names (`.name`) and the names being declared. Interpolations inside strings are references.
 */
export function referencedIdentifiers(code: string): Set<string> {
  let expressions = "";
  let i = 0;
  while (i < code.length) {
    if (code[i] === "'") {
      const stop = stringEnd(code, i);
      for (const match of code.slice(i, stop).matchAll(/\$\{/g)) {
        const open = i + match.index + 1;
        expressions += ` ${code.slice(open + 1, matchingClose(code, open))} `;
      }
      i = stop;
    } else {
      expressions += code[i];
      i += 1;
    }
  }
  // Property keys (at the start of a line, after `{` or `,`) and declarations name, not refer.
  const withoutKeys = expressions
    .replace(/(^|[{,\n])([ \t]*)[A-Za-z_][\w-]*(?=\s*:(?!:))/g, "$1$2")
    .replace(/^[ \t]*(param|var|output|resource|module|func)\s+\w+/gm, "")
    .replaceAll("...", " ");
  const names = new Set<string>();
  for (const match of withoutKeys.matchAll(/(?<![.\w])([A-Za-z_]\w*)/g)) names.add(match[1]!);
  return names;
}
