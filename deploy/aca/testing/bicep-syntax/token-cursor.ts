import type { Token } from "./lexer.ts";

/**
 * Reading position in a token list (lexer.ts), shared by the parser and the statement skipper of
 * declarations.ts. Newlines are tokens: callers skip them where Bicep lets an expression go on
 * over several lines (inside brackets, around a ternary's `?` and `:`).
 */
export class TokenCursor {
  protected index = 0;
  constructor(protected readonly tokens: readonly Token[]) {}

  get position(): number {
    return this.index;
  }
  set position(value: number) {
    this.index = value;
  }
  peek(skipNewlines = false): Token {
    let i = this.index;
    while (skipNewlines && this.tokens[i]!.kind === "newline") i += 1;
    return this.tokens[i]!;
  }
  next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== "eof") this.index += 1;
    return token;
  }
  skipNewlines(): void {
    while (this.peek().kind === "newline") this.index += 1;
  }
  is(text: string, skipNewlines = false): boolean {
    const token = this.peek(skipNewlines);
    return token.kind !== "string" && token.text === text;
  }
  expect(text: string): Token {
    this.skipNewlines();
    const token = this.next();
    if (token.text !== text || token.kind === "string")
      throw new Error(`expected '${text}' at offset ${token.offset}, found '${token.text}'`);
    return token;
  }
}
