/**
 * Tokens of a Bicep file, for the schema checks (bicep-syntax/parser.ts). Unlike
 * testing/bicep-reader.ts it keeps every token's offset into the original text, so that a
 * finding names its line. Lexical rules from the Bicep file reference,
 * https://learn.microsoft.com/azure/azure-resource-manager/bicep/file and
 * https://learn.microsoft.com/azure/azure-resource-manager/bicep/data-types#strings :
 * `//` and `/* *\/` comments; strings in single quotes with `\` escapes and `${expr}`
 * interpolation; multi-line strings in `'''` without either; integers only; newlines separate
 * object properties and array items, so they are tokens here.
 */

export type TokenKind = "ident" | "string" | "number" | "punct" | "newline" | "eof";

export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly offset: number;
  /** A string's value when it has no interpolation (escapes undone); undefined otherwise. */
  readonly value?: string;
}

// Longest first: `...` before `.`, `=>` before `=`.
const PUNCTUATION = ["...", "=>", "==", "!=", "=~", "!~", "<=", ">=", "&&", "||", "??", ".?", "::"];
const SINGLE = "{}[](),:?.=!<>+-*/%@|&";
const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", "\\": "\\", "'": "'", $: "$" };

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, end: number, value?: string) => {
    tokens.push({ kind, text: text.slice(i, end), offset: i, ...(value === undefined ? {} : { value }) });
    i = end;
  };
  while (i < text.length) {
    const char = text[i]!;
    if (char === "\n") {
      if (tokens.at(-1)?.kind !== "newline") push("newline", i + 1);
      else i += 1;
    } else if (/\s/.test(char)) i += 1;
    else if (text.startsWith("//", i)) {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      if (end === -1) throw new Error(`unterminated comment at offset ${i}`);
      i = end + 2;
    } else if (text.startsWith("'''", i)) {
      const end = text.indexOf("'''", i + 3);
      if (end === -1) throw new Error(`unterminated multi-line string at offset ${i}`);
      push("string", end + 3, text.slice(i + 3, end).replace(/^\r?\n/, ""));
    } else if (char === "'") {
      const { end, value } = scanString(text, i);
      push("string", end, value);
    } else if (/[0-9]/.test(char)) {
      let end = i;
      while (end < text.length && /[0-9]/.test(text[end]!)) end += 1;
      push("number", end);
    } else if (/[A-Za-z_]/.test(char)) {
      let end = i;
      while (end < text.length && /\w/.test(text[end]!)) end += 1;
      push("ident", end);
    } else {
      const long = PUNCTUATION.find((p) => text.startsWith(p, i));
      if (long !== undefined) push("punct", i + long.length);
      else if (SINGLE.includes(char)) push("punct", i + 1);
      else throw new Error(`unexpected character '${char}' at offset ${i}`);
    }
  }
  tokens.push({ kind: "eof", text: "", offset: text.length });
  return tokens;
}

/** End of the single-quoted string at `start`, and its value when it has no `${}`. */
function scanString(text: string, start: number): { end: number; value?: string } {
  let i = start + 1;
  let value = "";
  let interpolated = false;
  while (i < text.length) {
    const char = text[i]!;
    if (char === "\\") {
      value += ESCAPES[text[i + 1]!] ?? text[i + 1];
      i += 2;
    } else if (char === "'") {
      return interpolated ? { end: i + 1 } : { end: i + 1, value };
    } else if (text.startsWith("${", i)) {
      interpolated = true;
      i = interpolationEnd(text, i + 2);
    } else if (char === "\n") {
      throw new Error(`unterminated string at offset ${start}`);
    } else {
      value += char;
      i += 1;
    }
  }
  throw new Error(`unterminated string at offset ${start}`);
}

/** Index just past the `}` that closes an interpolation whose expression starts at `from`. */
function interpolationEnd(text: string, from: number): number {
  let depth = 1;
  let i = from;
  while (i < text.length) {
    const char = text[i]!;
    if (char === "'") i = scanString(text, i).end;
    else {
      if (char === "{") depth += 1;
      if (char === "}") depth -= 1;
      i += 1;
      if (depth === 0) return i;
    }
  }
  throw new Error(`unterminated interpolation at offset ${from}`);
}

/** 1-based line of an offset. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i += 1) if (text[i] === "\n") line += 1;
  return line;
}
