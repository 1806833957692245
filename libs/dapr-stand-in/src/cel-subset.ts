/**
 * A small subset of the Common Expression Language, enough for Dapr pub/sub routing rules such as
 * `event.type == "x" && event.data.WorkerId != 'w-1'`. Dapr evaluates rules with the CloudEvent bound
 * to `event`. Supported: `event.<field>.<field>...`, string/number/bool/null literals (single or double
 * quoted strings), `==`, `!=`, `!`, `&&`, `||`, parentheses and `has(event.<path>)`.
 * Everything else is rejected at compile time so a test never silently evaluates a rule differently
 * from daprd.
 *
 * Evaluation follows CEL semantics where it matters for routing:
 * - selecting a missing field is an error ("no such key"), which Dapr treats as a failed delivery
 *   (dead-letter topic if configured, otherwise redelivery) rather than "no match";
 * - `&&`/`||` absorb errors when the other side decides the result (`false && err` is false);
 * - equality across different types is false (heterogeneous equality), numbers compare numerically.
 */

export class CelSyntaxError extends Error {
  constructor(expression: string, position: number, reason: string) {
    super(
      `unsupported CEL in routing rule "${expression}" at position ${position}: ${reason}. ` +
        "The stand-in supports event.<path>, string/number/bool/null literals, ==, !=, !, &&, ||, () and has(event.<path>)",
    );
    this.name = "CelSyntaxError";
  }
}

export type CelResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

export interface CompiledCel {
  readonly source: string;
  /** Evaluates against a CloudEvent; a non-boolean result is an error, as in Dapr. */
  matches(
    event: unknown,
  ): { readonly ok: true; readonly value: boolean } | { readonly ok: false; readonly error: string };
}

type Node =
  | { readonly kind: "literal"; readonly value: string | number | boolean | null }
  | { readonly kind: "path"; readonly segments: readonly string[] }
  | { readonly kind: "has"; readonly segments: readonly string[] }
  | { readonly kind: "not"; readonly operand: Node }
  | {
      readonly kind: "binary";
      readonly operator: "==" | "!=" | "&&" | "||";
      readonly left: Node;
      readonly right: Node;
    };

type Token =
  | { readonly kind: "string"; readonly value: string; readonly position: number }
  | { readonly kind: "number"; readonly value: number; readonly position: number }
  | { readonly kind: "identifier"; readonly value: string; readonly position: number }
  | {
      readonly kind: "symbol";
      readonly value: "==" | "!=" | "&&" | "||" | "!" | "(" | ")" | ".";
      readonly position: number;
    }
  | { readonly kind: "end"; readonly position: number };

export function compileCel(expression: string): CompiledCel {
  const tokens = tokenize(expression);
  const parser = new Parser(expression, tokens);
  const root = parser.parseExpression();
  parser.expectEnd();
  return {
    source: expression,
    matches(event) {
      const result = evaluate(root, event);
      if (!result.ok) return result;
      if (typeof result.value !== "boolean") {
        return { ok: false, error: `the result of match expression ${expression} was not a boolean` };
      }
      return { ok: true, value: result.value };
    },
  };
}

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < expression.length) {
    const char = expression[index] as string;
    if (/\s/.test(char)) {
      index += 1;
      continue;
    }
    const two = expression.slice(index, index + 2);
    if (two === "==" || two === "!=" || two === "&&" || two === "||") {
      tokens.push({ kind: "symbol", value: two, position: index });
      index += 2;
      continue;
    }
    if (char === "!" || char === "(" || char === ")" || char === ".") {
      // A "." directly followed by a digit is a number like ".5", which CEL does not allow either.
      tokens.push({ kind: "symbol", value: char, position: index });
      index += 1;
      continue;
    }
    if (char === '"' || char === "'") {
      const { value, end } = readString(expression, index);
      tokens.push({ kind: "string", value, position: index });
      index = end;
      continue;
    }
    const number = /^\d+(\.\d+)?/.exec(expression.slice(index));
    if (number) {
      tokens.push({ kind: "number", value: Number(number[0]), position: index });
      index += number[0].length;
      continue;
    }
    const identifier = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expression.slice(index));
    if (identifier) {
      tokens.push({ kind: "identifier", value: identifier[0], position: index });
      index += identifier[0].length;
      continue;
    }
    throw new CelSyntaxError(
      expression,
      index,
      `unsupported token "${expression.slice(index, index + 2).trim()}"`,
    );
  }
  tokens.push({ kind: "end", position: expression.length });
  return tokens;
}

const ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  '"': '"',
  "'": "'",
};

function readString(expression: string, start: number): { value: string; end: number } {
  const quote = expression[start] as string;
  if (expression.startsWith(quote.repeat(3), start)) {
    throw new CelSyntaxError(expression, start, "triple-quoted strings are not supported");
  }
  let value = "";
  let index = start + 1;
  while (index < expression.length) {
    const char = expression[index] as string;
    if (char === quote) return { value, end: index + 1 };
    if (char === "\\") {
      const escaped = ESCAPES[expression[index + 1] ?? ""];
      if (escaped === undefined) throw new CelSyntaxError(expression, index, "unsupported escape sequence");
      value += escaped;
      index += 2;
      continue;
    }
    value += char;
    index += 1;
  }
  throw new CelSyntaxError(expression, start, "unterminated string literal");
}

class Parser {
  private index = 0;

  constructor(
    private readonly expression: string,
    private readonly tokens: readonly Token[],
  ) {}

  parseExpression(): Node {
    let left = this.parseAnd();
    while (this.peekSymbol("||")) {
      this.index += 1;
      left = { kind: "binary", operator: "||", left, right: this.parseAnd() };
    }
    return left;
  }

  expectEnd(): void {
    const token = this.current();
    if (token.kind !== "end") throw this.unexpected(token);
  }

  private parseAnd(): Node {
    let left = this.parseComparison();
    while (this.peekSymbol("&&")) {
      this.index += 1;
      left = { kind: "binary", operator: "&&", left, right: this.parseComparison() };
    }
    return left;
  }

  // As in CEL, `!` binds tighter than `==`: `!a == b` is `(!a) == b`.
  private parseComparison(): Node {
    const left = this.parseUnary();
    const token = this.current();
    if (token.kind === "symbol" && (token.value === "==" || token.value === "!=")) {
      this.index += 1;
      const right = this.parseUnary();
      const next = this.current();
      if (next.kind === "symbol" && (next.value === "==" || next.value === "!=")) {
        throw new CelSyntaxError(this.expression, next.position, "chained comparisons need parentheses");
      }
      return { kind: "binary", operator: token.value, left, right };
    }
    return left;
  }

  private parseUnary(): Node {
    if (this.peekSymbol("!")) {
      this.index += 1;
      return { kind: "not", operand: this.parseUnary() };
    }
    return this.parsePrimary();
  }

  private parsePrimary(): Node {
    const token = this.current();
    this.index += 1;
    switch (token.kind) {
      case "string":
      case "number":
        return { kind: "literal", value: token.value };
      case "identifier":
        return this.parseIdentifier(token);
      case "symbol":
        if (token.value === "(") {
          const inner = this.parseExpression();
          this.expectSymbol(")");
          return inner;
        }
        throw this.unexpected(token);
      case "end":
        throw new CelSyntaxError(this.expression, token.position, "unexpected end of expression");
      default:
        return assertNever(token);
    }
  }

  private parseIdentifier(token: Extract<Token, { kind: "identifier" }>): Node {
    switch (token.value) {
      case "true":
        return { kind: "literal", value: true };
      case "false":
        return { kind: "literal", value: false };
      case "null":
        return { kind: "literal", value: null };
      case "event":
        return { kind: "path", segments: this.parseSelectors() };
      case "has": {
        this.expectSymbol("(");
        const root = this.current();
        if (root.kind !== "identifier" || root.value !== "event") {
          throw new CelSyntaxError(this.expression, root.position, "has() takes a field selection on event");
        }
        this.index += 1;
        const segments = this.parseSelectors();
        if (segments.length === 0) {
          throw new CelSyntaxError(
            this.expression,
            root.position,
            "has() needs a field selection such as has(event.data.x)",
          );
        }
        this.expectSymbol(")");
        return { kind: "has", segments };
      }
      default:
        if (this.peekSymbol("(")) {
          throw new CelSyntaxError(
            this.expression,
            token.position,
            `function "${token.value}" is not supported`,
          );
        }
        throw new CelSyntaxError(
          this.expression,
          token.position,
          `undeclared reference "${token.value}" (only event is bound)`,
        );
    }
  }

  private parseSelectors(): string[] {
    const segments: string[] = [];
    while (this.peekSymbol(".")) {
      this.index += 1;
      const field = this.current();
      if (field.kind !== "identifier") throw this.unexpected(field);
      segments.push(field.value);
      this.index += 1;
    }
    const next = this.current();
    if (next.kind === "symbol" && next.value === "(") {
      throw new CelSyntaxError(this.expression, next.position, "method calls are not supported");
    }
    return segments;
  }

  private current(): Token {
    return this.tokens[this.index] as Token;
  }

  private peekSymbol(value: string): boolean {
    const token = this.current();
    return token.kind === "symbol" && token.value === value;
  }

  private expectSymbol(value: string): void {
    const token = this.current();
    if (token.kind !== "symbol" || token.value !== value) throw this.unexpected(token, `expected "${value}"`);
    this.index += 1;
  }

  private unexpected(token: Token, expectation?: string): CelSyntaxError {
    const seen = token.kind === "end" ? "end of expression" : `"${String(token.value)}"`;
    return new CelSyntaxError(
      this.expression,
      token.position,
      `unexpected ${seen}${expectation ? `, ${expectation}` : ""}`,
    );
  }
}

function evaluate(node: Node, event: unknown): CelResult {
  switch (node.kind) {
    case "literal":
      return { ok: true, value: node.value };
    case "path":
      return select(event, node.segments);
    case "has": {
      const parent = select(event, node.segments.slice(0, -1));
      if (!parent.ok) return parent;
      const last = node.segments[node.segments.length - 1] as string;
      if (!isObject(parent.value)) return { ok: false, error: `has() on a non-map value at "${last}"` };
      return { ok: true, value: Object.prototype.hasOwnProperty.call(parent.value, last) };
    }
    case "not": {
      const operand = evaluate(node.operand, event);
      if (!operand.ok) return operand;
      if (typeof operand.value !== "boolean")
        return { ok: false, error: "no such overload: !_ on a non-boolean" };
      return { ok: true, value: !operand.value };
    }
    case "binary":
      return evaluateBinary(node.operator, evaluate(node.left, event), evaluate(node.right, event));
    default:
      return assertNever(node);
  }
}

function evaluateBinary(operator: "==" | "!=" | "&&" | "||", left: CelResult, right: CelResult): CelResult {
  switch (operator) {
    case "==":
    case "!=": {
      if (!left.ok) return left;
      if (!right.ok) return right;
      const equal = celEquals(left.value, right.value);
      return { ok: true, value: operator === "==" ? equal : !equal };
    }
    case "&&":
    case "||": {
      const decisive = operator === "||";
      // CEL's commutative logic: a decisive operand wins even if the other one errored.
      if ((left.ok && left.value === decisive) || (right.ok && right.value === decisive))
        return { ok: true, value: decisive };
      if (!left.ok) return left;
      if (!right.ok) return right;
      if (typeof left.value !== "boolean" || typeof right.value !== "boolean") {
        return { ok: false, error: `no such overload: ${operator} on non-boolean operands` };
      }
      return { ok: true, value: !decisive };
    }
    default:
      return assertNever(operator);
  }
}

function select(root: unknown, segments: readonly string[]): CelResult {
  let current = root;
  for (const segment of segments) {
    if (!isObject(current))
      return { ok: false, error: `no such key: ${segment} (selected on a non-map value)` };
    if (!Object.prototype.hasOwnProperty.call(current, segment))
      return { ok: false, error: `no such key: ${segment}` };
    current = current[segment];
  }
  return { ok: true, value: current };
}

function celEquals(left: unknown, right: unknown): boolean {
  if (left === null || right === null) return left === right;
  if (typeof left !== typeof right) return false;
  if (typeof left !== "object") return left === right;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  const leftEntries = Object.entries(left as Record<string, unknown>);
  const rightRecord = right as Record<string, unknown>;
  return (
    leftEntries.length === Object.keys(rightRecord).length &&
    leftEntries.every(
      ([key, value]) =>
        Object.prototype.hasOwnProperty.call(rightRecord, key) && celEquals(value, rightRecord[key]),
    )
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function assertNever(value: never): never {
  throw new Error(`unexpected CEL node ${JSON.stringify(value)}`);
}
