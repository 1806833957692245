import { lineAt, tokenize, type Token } from "./lexer.ts";
import { BicepParser, type BicepNode, type ResourceDeclaration } from "./parser.ts";

/**
 * The resources and modules a Bicep file declares, each with its value parsed to a tree
 * (parser.ts). A nested child resource (`resource subnet 'subnets' = {…}` inside its parent's
 * body) is listed with its full type, `<parent type>/<child>`, and the parent's API version when
 * it names none (https://learn.microsoft.com/azure/azure-resource-manager/bicep/child-resource-name-type).
 * Every other statement (param, var, output, func, type, decorators…) is skipped.
 */
export interface BicepResource {
  readonly symbol: string;
  /** Full type, e.g. Microsoft.Network/virtualNetworks/subnets. */
  readonly type: string;
  readonly apiVersion: string;
  readonly existing: boolean;
  readonly line: number;
  /** The value after `=`: an object, `if (…) {…}` or `[for …: …]`. */
  readonly value: BicepNode;
}

export interface BicepModuleDeclaration {
  readonly symbol: string;
  readonly path: string;
  readonly line: number;
}

export interface BicepDeclarations {
  readonly resources: readonly BicepResource[];
  readonly modules: readonly BicepModuleDeclaration[];
  readonly tokens: readonly Token[];
}

export function readDeclarations(text: string): BicepDeclarations {
  const tokens = tokenize(text);
  const parser = new BicepParser(tokens);
  const resources: BicepResource[] = [];
  const modules: BicepModuleDeclaration[] = [];
  for (;;) {
    parser.skipNewlines();
    const token = parser.peek();
    if (token.kind === "eof") break;
    if (token.kind === "ident" && token.text === "resource") {
      addResource(text, parser.resourceDeclaration(), undefined, resources);
    } else if (token.kind === "ident" && token.text === "module") {
      parser.next();
      const symbol = parser.next().text;
      const path = parser.next();
      parser.expect("=");
      parser.value();
      modules.push({ symbol, path: path.value ?? path.text, line: lineAt(text, token.offset) });
    } else skipStatement(parser);
  }
  return { resources, modules, tokens };
}

function addResource(
  text: string,
  declaration: ResourceDeclaration,
  parent: { type: string; apiVersion: string } | undefined,
  into: BicepResource[],
): void {
  const at = declaration.typeText.lastIndexOf("@");
  const name = at === -1 ? declaration.typeText : declaration.typeText.slice(0, at);
  const apiVersion = at === -1 ? parent?.apiVersion : declaration.typeText.slice(at + 1);
  if (apiVersion === undefined)
    throw new Error(`resource ${declaration.symbol}: '${declaration.typeText}' names no API version`);
  // A nested resource's type is relative to its parent's unless it is fully qualified.
  const type = parent !== undefined && !name.includes("/") ? `${parent.type}/${name}` : name;
  into.push({
    symbol: declaration.symbol,
    type,
    apiVersion,
    existing: declaration.existing,
    line: lineAt(text, declaration.offset),
    value: declaration.value,
  });
  for (const child of nestedResources(declaration.value))
    addResource(text, child, { type, apiVersion }, into);
}

/** Child resources declared in a resource's body, through a loop or a condition. */
function nestedResources(value: BicepNode): ResourceDeclaration[] {
  if (value.kind === "object") return value.resources;
  if (value.kind === "for" || value.kind === "if") return nestedResources(value.body);
  return [];
}

/** Skips one statement: to the end of its line, across brackets and continued ternaries. */
function skipStatement(parser: BicepParser): void {
  let depth = 0;
  for (;;) {
    const token = parser.peek();
    if (token.kind === "eof") return;
    if (token.kind === "newline" && depth === 0) {
      const following = parser.peek(true);
      if (following.kind !== "punct" || (following.text !== "?" && following.text !== ":")) return;
    }
    if (token.kind === "punct" && "([{".includes(token.text)) depth += 1;
    if (token.kind === "punct" && ")]}".includes(token.text)) depth -= 1;
    parser.next();
  }
}
