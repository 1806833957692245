import type { Condition, Literal, Operand, ParsedCondition, Reference } from "./syntax.ts";
import { MAX_CONDITION_DEPTH, MAX_CONDITION_LENGTH, MAX_LIST_ITEMS } from "./syntax.ts";
import { ConditionSyntaxError, tokenize, type Keyword, type Token } from "./tokens.ts";
import { checkComparison, checkEmptyTest, checkMembership, show } from "./types.ts";

/**
 * Parses a `when:` condition (recursive descent, hand-written; see docs/runbook-conditions.md):
 *
 *   condition  := and ( "or" and )*
 *   and        := not ( "and" not )*
 *   not        := "not" not | primary
 *   primary    := "(" condition ")" | operand [ test ]
 *   test       := ("==" | "!=" | "<" | "<=" | ">" | ">=") operand
 *               | [ "not" ] "in" "[" literal ( "," literal )* [ "," ] "]"
 *               | "is" [ "not" ] "empty"
 *   operand    := "{{" name "}}" | literal
 *   literal    := 'text' | number | "true" | "false"
 *
 * An operand without a test is a condition only when it is `true` or `false`. Keywords are
 * case-insensitive. The first problem found is reported, at its offset; types are checked as the
 * tree is built (types.ts), so a parsed condition can always be evaluated.
 */
export function parseCondition(text: string): ParsedCondition {
  if (text.length > MAX_CONDITION_LENGTH) {
    const message = `a condition is at most ${MAX_CONDITION_LENGTH} characters (this one has ${text.length})`;
    return { ok: false, problem: { offset: MAX_CONDITION_LENGTH, message } };
  }
  try {
    const parser = new Parser(tokenize(text));
    const condition = parser.condition(0);
    parser.expectEnd();
    return { ok: true, condition, references: parser.references };
  } catch (error) {
    if (!(error instanceof ConditionSyntaxError)) throw error;
    return { ok: false, problem: { offset: error.offset, message: error.message } };
  }
}

class Parser {
  readonly references: Reference[] = [];
  #index = 0;
  readonly #tokens: readonly Token[];

  constructor(tokens: readonly Token[]) {
    this.#tokens = tokens;
  }

  condition(depth: number): Condition {
    let left = this.#and(depth);
    while (this.#takeKeyword("or")) left = { kind: "or", left, right: this.#and(depth) };
    return left;
  }

  expectEnd(): void {
    const token = this.#peek();
    if (token.kind === "end") return;
    throw new ConditionSyntaxError(
      token.at,
      `unexpected ${describe(token)} after a complete condition: join conditions with and / or`,
    );
  }

  #and(depth: number): Condition {
    let left = this.#not(depth);
    while (this.#takeKeyword("and")) left = { kind: "and", left, right: this.#not(depth) };
    return left;
  }

  #not(depth: number): Condition {
    const token = this.#peek();
    if (!this.#takeKeyword("not")) return this.#primary(depth);
    return { kind: "not", operand: this.#not(this.#deeper(depth, token)) };
  }

  #primary(depth: number): Condition {
    const token = this.#peek();
    if (token.kind === "(") {
      this.#index += 1;
      const inner = this.condition(this.#deeper(depth, token));
      if (this.#peek().kind !== ")") this.#fail("')' to close '('");
      this.#index += 1;
      return inner;
    }
    const operand = this.#operand("a condition: {{Name}}, a value, not, or (");
    return this.#test(operand);
  }

  #test(operand: Operand): Condition {
    const token = this.#peek();
    if (token.kind === "operator") {
      this.#index += 1;
      const right = this.#operand(`a value after ${token.operator}`);
      checkComparison(token.operator, operand, right, token.at);
      return { kind: "compare", operator: token.operator, left: operand, right };
    }
    if (this.#takeKeyword("is")) {
      const negated = this.#takeKeyword("not");
      if (!this.#takeKeyword("empty")) this.#fail(`'empty' after 'is${negated ? " not" : ""}'`);
      return { kind: "empty", operand: checkEmptyTest(operand, token.at), negated };
    }
    const negated = this.#peekKeyword("not") && this.#peekKeyword("in", 1);
    if (negated) this.#index += 1;
    if (this.#takeKeyword("in")) {
      const list = this.#list();
      checkMembership(operand, list, token.at);
      return { kind: "in", operand, list, negated };
    }
    if (operand.kind === "literal" && operand.type === "boolean")
      return { kind: "constant", value: operand.value === true };
    throw new ConditionSyntaxError(
      operand.at,
      `${show(operand)} alone is not a condition: compare it (== 'true') or test it (is empty)`,
    );
  }

  #list(): Literal[] {
    const open = this.#peek();
    if (open.kind !== "[") this.#fail("'[' to start the list after in");
    this.#index += 1;
    const items: Literal[] = [];
    while (this.#peek().kind !== "]") {
      const item = this.#operand("a value in the list, or ']'");
      if (item.kind === "reference")
        throw new ConditionSyntaxError(
          item.at,
          "a list holds fixed values only ('text', numbers, true, false)",
        );
      if (items.length === MAX_LIST_ITEMS)
        throw new ConditionSyntaxError(item.at, `a list holds at most ${MAX_LIST_ITEMS} values`);
      items.push(item);
      if (this.#peek().kind === ",") this.#index += 1;
      else if (this.#peek().kind !== "]") this.#fail("',' or ']' in the list");
    }
    this.#index += 1;
    if (items.length === 0) throw new ConditionSyntaxError(open.at, "an empty list never matches");
    return items;
  }

  #operand(expected: string): Operand {
    const token = this.#peek();
    let operand: Operand | undefined;
    if (token.kind === "reference") {
      operand = { kind: "reference", name: token.name, at: token.at };
      this.references.push(operand);
    } else if (token.kind === "text") {
      operand = { kind: "literal", type: "text", value: token.value, at: token.at };
    } else if (token.kind === "number") {
      operand = { kind: "literal", type: "number", value: token.value, at: token.at };
    } else if (token.kind === "keyword" && (token.word === "true" || token.word === "false")) {
      operand = { kind: "literal", type: "boolean", value: token.word === "true", at: token.at };
    }
    if (operand === undefined) return this.#fail(expected);
    this.#index += 1;
    return operand;
  }

  #deeper(depth: number, token: Token): number {
    if (depth + 1 > MAX_CONDITION_DEPTH)
      throw new ConditionSyntaxError(token.at, `nested deeper than ${MAX_CONDITION_DEPTH} levels`);
    return depth + 1;
  }

  #peek(ahead = 0): Token {
    return this.#tokens[Math.min(this.#index + ahead, this.#tokens.length - 1)]!;
  }

  #peekKeyword(word: Keyword, ahead = 0): boolean {
    const token = this.#peek(ahead);
    return token.kind === "keyword" && token.word === word;
  }

  #takeKeyword(word: Keyword): boolean {
    if (!this.#peekKeyword(word)) return false;
    this.#index += 1;
    return true;
  }

  #fail(expected: string): never {
    const token = this.#peek();
    throw new ConditionSyntaxError(token.at, `expected ${expected}, found ${describe(token)}`);
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case "reference":
      return `{{${token.name}}}`;
    case "text":
      return `'${token.value}'`;
    case "number":
      return String(token.value);
    case "keyword":
      return `'${token.word}'`;
    case "operator":
      return `'${token.operator}'`;
    case "end":
      return "the end of the condition";
    default:
      return `'${token.kind}'`;
  }
}
