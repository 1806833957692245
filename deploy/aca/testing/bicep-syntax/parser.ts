import { TokenCursor } from "./token-cursor.ts";

/**
 * Bicep values as a tree, for the schema checks. Object and array literals are walked to the
 * bottom; anything computed (a reference, a call, an operator) is an opaque `expr` whose type is
 * unknown. A ternary keeps both branches: each is checked. Syntax per
 * https://learn.microsoft.com/azure/azure-resource-manager/bicep/file (resources, nested child
 * resources), .../bicep/loops (`[for x in y: body]`, `[for (x, i) in y: body]`) and
 * .../bicep/conditional-resource-deployment (`if (condition) body`).
 */
export type BicepNode =
  | { kind: "object"; offset: number; entries: ObjectEntry[]; resources: ResourceDeclaration[] }
  | { kind: "array"; offset: number; items: BicepNode[] }
  | { kind: "for"; offset: number; body: BicepNode }
  | { kind: "if"; offset: number; body: BicepNode }
  | { kind: "ternary"; offset: number; branches: [BicepNode, BicepNode] }
  | { kind: "string"; offset: number; value?: string }
  | { kind: "number" | "bool" | "null" | "expr"; offset: number };

export interface ObjectEntry {
  /** null for an interpolated key (`'${id}': …`), "..." for a spread. */
  readonly key: string | null;
  readonly offset: number;
  readonly value: BicepNode;
}

/** `resource <symbol> '<type>@<apiVersion>' [existing] = <value>`; a nested one may omit `@…`. */
export interface ResourceDeclaration {
  readonly symbol: string;
  readonly typeText: string;
  readonly existing: boolean;
  readonly offset: number;
  readonly value: BicepNode;
}

// Binary operators (https://learn.microsoft.com/azure/azure-resource-manager/bicep/operators).
const BINARY = new Set("== != =~ !~ < > <= >= && || ?? + - * / %".split(" "));

export class BicepParser extends TokenCursor {
  /** A resource declaration, the `resource` keyword being the next token. */
  resourceDeclaration(): ResourceDeclaration {
    const keyword = this.expect("resource");
    const symbol = this.next();
    const type = this.next();
    if (symbol.kind !== "ident" || type.kind !== "string" || type.value === undefined)
      throw new Error(`malformed resource declaration at offset ${keyword.offset}`);
    const existing = this.is("existing");
    if (existing) this.next();
    this.expect("=");
    return {
      symbol: symbol.text,
      typeText: type.value,
      existing,
      offset: keyword.offset,
      value: this.value(),
    };
  }

  /** A declaration's value: `if (…) body`, else an expression. */
  value(): BicepNode {
    this.skipNewlines();
    if (!this.is("if")) return this.expression();
    const offset = this.next().offset;
    this.group("(", ")");
    return { kind: "if", offset, body: this.expression() };
  }

  expression(): BicepNode {
    this.skipNewlines();
    const condition = this.binary();
    if (!this.is("?", true)) return condition;
    this.skipNewlines();
    this.next();
    const whenTrue = this.expression();
    this.expect(":");
    const whenFalse = this.expression();
    return { kind: "ternary", offset: condition.offset, branches: [whenTrue, whenFalse] };
  }

  private binary(): BicepNode {
    let left = this.unary();
    while (this.peek().kind === "punct" && BINARY.has(this.peek().text)) {
      this.next();
      this.skipNewlines();
      this.unary();
      left = { kind: "expr", offset: left.offset };
    }
    return left;
  }

  private unary(): BicepNode {
    const token = this.peek();
    if (token.kind === "punct" && (token.text === "!" || token.text === "-")) {
      this.next();
      const operand = this.unary();
      return token.text === "-" && operand.kind === "number"
        ? { kind: "number", offset: token.offset }
        : { kind: "expr", offset: token.offset };
    }
    return this.postfix(this.primary());
  }

  /** Member access, safe access, nested-resource access, index, call, non-null assertion. */
  private postfix(node: BicepNode): BicepNode {
    for (;;) {
      if (this.is(".") || this.is(".?") || this.is("::")) {
        this.next();
        this.next();
      } else if (this.is("[")) this.group("[", "]");
      else if (this.is("(")) this.group("(", ")");
      else if (
        this.is("!") &&
        this.peek().offset === this.tokens[this.index - 1]!.offset + this.tokens[this.index - 1]!.text.length
      )
        this.next();
      else return node;
      node = { kind: "expr", offset: node.offset };
    }
  }

  private primary(): BicepNode {
    const token = this.peek();
    const offset = token.offset;
    if (token.kind === "string")
      return (
        this.next(),
        token.value === undefined
          ? { kind: "string", offset }
          : { kind: "string", offset, value: token.value }
      );
    if (token.kind === "number") return (this.next(), { kind: "number", offset });
    if (token.kind === "ident") {
      this.next();
      if (token.text === "true" || token.text === "false") return { kind: "bool", offset };
      if (token.text === "null") return { kind: "null", offset };
      if (this.is("=>")) return this.lambdaBody(offset);
      return { kind: "expr", offset };
    }
    if (token.text === "{") return this.object();
    if (token.text === "[") return this.array();
    if (token.text === "(") {
      this.group("(", ")");
      return this.is("=>") ? this.lambdaBody(offset) : { kind: "expr", offset };
    }
    throw new Error(`unexpected '${token.text}' at offset ${offset}`);
  }

  private lambdaBody(offset: number): BicepNode {
    this.next();
    this.expression();
    return { kind: "expr", offset };
  }

  /** Skips a bracketed group (call arguments, index, parenthesis) of expressions. */
  private group(open: string, close: string): void {
    this.expect(open);
    while (!this.is(close, true)) {
      this.skipNewlines();
      if (this.is(",")) this.next();
      else this.expression();
    }
    this.expect(close);
  }

  private object(): BicepNode {
    const offset = this.expect("{").offset;
    const entries: ObjectEntry[] = [];
    const resources: ResourceDeclaration[] = [];
    for (;;) {
      while (this.is(",", true) || this.peek().kind === "newline") this.next();
      if (this.is("}")) break;
      if (this.is("...")) {
        // A spread's properties are unknown: record it so the object is not taken as complete.
        const spread = this.next();
        this.expression();
        entries.push({ key: "...", offset: spread.offset, value: { kind: "expr", offset: spread.offset } });
        continue;
      }
      const key = this.next();
      if (key.kind === "ident" && key.text === "resource" && this.peek().kind === "ident") {
        this.position -= 1;
        resources.push(this.resourceDeclaration());
        continue;
      }
      if (key.kind !== "ident" && key.kind !== "string")
        throw new Error(`expected a property name at offset ${key.offset}, found '${key.text}'`);
      this.expect(":");
      const name = key.kind === "string" ? (key.value ?? null) : key.text;
      entries.push({ key: name, offset: key.offset, value: this.expression() });
    }
    this.expect("}");
    return { kind: "object", offset, entries, resources };
  }

  private array(): BicepNode {
    const offset = this.expect("[").offset;
    if (this.is("for", true)) {
      this.skipNewlines();
      this.next();
      while (!this.is("in")) this.next(); // the item variable, or `(item, index)`
      this.next();
      this.expression();
      this.expect(":");
      const body = this.value();
      this.expect("]");
      return { kind: "for", offset, body };
    }
    const items: BicepNode[] = [];
    for (;;) {
      while (this.is(",", true) || this.peek().kind === "newline") this.next();
      if (this.is("]")) break;
      items.push(this.expression());
    }
    this.expect("]");
    return { kind: "array", offset, items };
  }
}
