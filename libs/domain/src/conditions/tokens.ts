import type { ComparisonOperator } from "./syntax.ts";

/** The tokenizer of `when:` conditions: text in, tokens with their offsets out. No regex backtracking. */

export type Token =
  | { readonly kind: "reference"; readonly name: string; readonly at: number }
  | { readonly kind: "text"; readonly value: string; readonly at: number }
  | { readonly kind: "number"; readonly value: number; readonly at: number }
  | { readonly kind: "keyword"; readonly word: Keyword; readonly at: number }
  | { readonly kind: "operator"; readonly operator: ComparisonOperator; readonly at: number }
  | { readonly kind: "(" | ")" | "[" | "]" | "," | "end"; readonly at: number };

export const keywords = ["and", "or", "not", "in", "is", "empty", "true", "false"] as const;
export type Keyword = (typeof keywords)[number];

/** Thrown inside the tokenizer and parser; parseCondition turns it into a ConditionProblem. */
export class ConditionSyntaxError extends Error {
  readonly offset: number;
  constructor(offset: number, message: string) {
    super(message);
    this.offset = offset;
  }
}

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isWordStart = (c: string | undefined) => c !== undefined && /[A-Za-z_]/.test(c);
const isWordPart = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_]/.test(c);

const MISTAKES: Readonly<Record<string, string>> = {
  "&&": "write and",
  "||": "write or",
  "=": "compare with ==",
  "!": "write not, or compare with !=",
  '"': "text is written in single quotes: 'like this'",
};

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const two = text.slice(i, i + 2);
    if (c === " " || c === "\t" || c === "\n" || c === "\r") i += 1;
    else if (two === "{{") i = readReference(text, i, tokens);
    else if (c === "'") i = readText(text, i, tokens);
    else if (isDigit(c) || (c === "-" && isDigit(text[i + 1]))) i = readNumber(text, i, tokens);
    else if (isWordStart(c)) i = readWord(text, i, tokens);
    else if (two === "==" || two === "!=" || two === "<=" || two === ">=") {
      tokens.push({ kind: "operator", operator: two, at: i });
      i += 2;
    } else if (c === "<" || c === ">") {
      tokens.push({ kind: "operator", operator: c, at: i });
      i += 1;
    } else if (c === "(" || c === ")" || c === "[" || c === "]" || c === ",") {
      tokens.push({ kind: c, at: i });
      i += 1;
    } else {
      const mistake = MISTAKES[two] === undefined ? c : two;
      const hint = MISTAKES[mistake];
      throw new ConditionSyntaxError(i, `unexpected '${mistake}'${hint === undefined ? "" : `: ${hint}`}`);
    }
  }
  tokens.push({ kind: "end", at: text.length });
  return tokens;
}

/** `{{ Name }}`: the name trimmed, as templates read it (templates/syntax.ts). */
function readReference(text: string, start: number, tokens: Token[]): number {
  const close = text.indexOf("}}", start + 2);
  if (close === -1) throw new ConditionSyntaxError(start, "'{{' is not closed by '}}'");
  const inner = text.slice(start + 2, close);
  if (inner.includes("{") || inner.includes("}"))
    throw new ConditionSyntaxError(start, "a name between {{ and }} cannot hold '{' or '}'");
  const name = inner.trim();
  if (name === "") throw new ConditionSyntaxError(start, "empty reference {{}}: name a column or an output");
  tokens.push({ kind: "reference", name, at: start });
  return close + 2;
}

/** `'it''s'`: single quotes, a quote inside doubled (as in SQL). */
function readText(text: string, start: number, tokens: Token[]): number {
  let value = "";
  let i = start + 1;
  for (;;) {
    const quote = text.indexOf("'", i);
    if (quote === -1) throw new ConditionSyntaxError(start, "text opened with ' is not closed");
    value += text.slice(i, quote);
    if (text[quote + 1] !== "'") {
      tokens.push({ kind: "text", value, at: start });
      return quote + 1;
    }
    value += "'";
    i = quote + 2;
  }
}

/** `12`, `-3`, `0.25`: decimal only. */
function readNumber(text: string, start: number, tokens: Token[]): number {
  let i = start + 1;
  while (isDigit(text[i])) i += 1;
  if (text[i] === "." && isDigit(text[i + 1])) {
    i += 1;
    while (isDigit(text[i])) i += 1;
  }
  if (isWordPart(text[i]) || text[i] === ".")
    throw new ConditionSyntaxError(start, `'${text.slice(start, i + 1)}' is not a number`);
  tokens.push({ kind: "number", value: Number(text.slice(start, i)), at: start });
  return i;
}

function readWord(text: string, start: number, tokens: Token[]): number {
  let i = start + 1;
  while (isWordPart(text[i])) i += 1;
  const word = text.slice(start, i);
  const keyword = keywords.find((candidate) => candidate === word.toLowerCase());
  if (keyword === undefined) {
    throw new ConditionSyntaxError(
      start,
      `unknown word '${word}': a column or an output is written {{${word}}}, a text '${word}'`,
    );
  }
  tokens.push({ kind: "keyword", word: keyword, at: start });
  return i;
}
