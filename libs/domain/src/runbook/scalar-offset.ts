import { Scalar } from "yaml";

/**
 * Where the `offset`-th character of a string scalar's value is in the YAML text, so a problem
 * inside a `when:` condition points at its own line:column. Single-line plain and quoted scalars
 * are mapped character by character (a quoted scalar's escapes, `''` or `\n`, stand for one
 * character); anything else (block scalars, values folded over several lines) falls back to the
 * start of the value, which is still the right line for the usual one-line condition.
 */
export function scalarSourceOffset(text: string, node: Scalar, offset: number): number {
  const start = node.range?.[0] ?? 0;
  if (node.type === Scalar.PLAIN) return walk(text, start, offset, () => 1) ?? start;
  if (node.type === Scalar.QUOTE_SINGLE)
    return walk(text, start + 1, offset, (at) => (text.startsWith("''", at) ? 2 : 1)) ?? start;
  if (node.type === Scalar.QUOTE_DOUBLE) return walk(text, start + 1, offset, doubleQuoted(text)) ?? start;
  return start;
}

/** Advances `offset` value characters from `from`, each `width(at)` source characters wide. */
function walk(text: string, from: number, offset: number, width: (at: number) => number): number | undefined {
  let at = from;
  for (let count = 0; count < offset; count += 1) {
    if (at >= text.length || text[at] === "\n" || text[at] === "\r") return undefined;
    at += width(at);
  }
  return at;
}

function doubleQuoted(text: string): (at: number) => number {
  const escapeWidth: Readonly<Record<string, number>> = { x: 4, u: 6, U: 10 };
  return (at) => (text[at] === "\\" ? (escapeWidth[text[at + 1] ?? ""] ?? 2) : 1);
}
