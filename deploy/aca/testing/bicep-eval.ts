import {
  arrayItems,
  literalOf,
  matchingClose,
  objectEntries,
  splitTopLevel,
  type BicepFile,
} from "./bicep-reader.ts";

/**
 * Evaluates the small part of Bicep the environment lists of deploy/aca/modules/apps.bicep are
 * written in: array literals of `{ name: '…', value: … }`, `concat(…)`, references to variables,
 * calls of user-defined functions, and `p == 'x' ? A : B` on a parameter the caller fixes.
 * A value it cannot compute (a resource property, an output) is `undefined`: callers supply a
 * sample for it by variable name.
 */
export interface EnvEntry {
  readonly name: string;
  readonly value: string | undefined;
}

type Bindings = ReadonlyMap<string, string>;

export function evaluateEnv(file: BicepFile, expression: string, params: Bindings): EnvEntry[] {
  return evalList(file, expression.trim(), params);
}

function evalList(file: BicepFile, expression: string, bindings: Bindings): EnvEntry[] {
  const conditional = /^(\w+)\s*==\s*'([^']*)'\s*\?/.exec(expression);
  if (conditional !== null) {
    const rest = expression.slice(conditional[0].length);
    const [whenTrue, whenFalse] = splitTernary(rest);
    const actual = bindings.get(conditional[1]!);
    if (actual === undefined)
      throw new Error(`cannot decide ${conditional[0]}: ${conditional[1]} is not fixed`);
    return evalList(file, actual === conditional[2] ? whenTrue : whenFalse, bindings);
  }
  if (expression.startsWith("[")) {
    return arrayItems(expression).map((item) => {
      const entries = objectEntries(item);
      const name = literalOf(entries.get("name") ?? "");
      if (name === undefined) throw new Error(`environment entry without a literal name: ${item}`);
      return { name, value: evalString(entries.get("value") ?? "", bindings) };
    });
  }
  const call = /^(\w+)\(/.exec(expression);
  if (call !== null) {
    const open = call[0].length - 1;
    const args = splitTopLevel(expression.slice(open + 1, matchingClose(expression, open)));
    if (call[1] === "concat") return args.flatMap((arg) => evalList(file, arg, bindings));
    const func = file.funcs.get(call[1]!);
    if (func === undefined) throw new Error(`unknown function ${call[1]}`);
    const bound = new Map(bindings);
    func.params.forEach((param, index) => {
      const value = evalString(args[index] ?? "", bindings);
      if (value === undefined) bound.delete(param);
      else bound.set(param, value);
    });
    return evalList(file, func.body, bound);
  }
  const variable = file.vars.get(expression);
  if (variable !== undefined) return evalList(file, variable, bindings);
  throw new Error(`cannot evaluate as an environment list: ${expression}`);
}

/** `A : B` of a ternary whose condition was consumed, split at the top-level colon. */
function splitTernary(text: string): [string, string] {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === "'") {
      i = text.indexOf("'", i + 1);
      continue;
    }
    if ("{[(".includes(char)) depth += 1;
    if ("}])".includes(char)) depth -= 1;
    if (char === ":" && depth === 0) return [text.slice(0, i).trim(), text.slice(i + 1).trim()];
  }
  throw new Error(`not a ternary: ${text}`);
}

/** A string the expression surely has, or undefined. */
export function evalString(expression: string, bindings: Bindings): string | undefined {
  const trimmed = expression.trim();
  if (/^-?\d+$/.test(trimmed)) return trimmed;
  const stringOf = /^string\((\w+)\)$/.exec(trimmed);
  if (stringOf !== null) return bindings.get(stringOf[1]!);
  if (/^\w+$/.test(trimmed)) return bindings.get(trimmed);
  if (!/^'(?:[^'\\]|\\.)*'$/.test(trimmed)) return undefined;
  let unknown = false;
  const text = trimmed.slice(1, -1).replace(/\$\{(\w+)\}/g, (_, name: string) => {
    const value = bindings.get(name);
    if (value === undefined) unknown = true;
    return value ?? "";
  });
  if (unknown || text.includes("${")) return undefined;
  return literalOf(`'${text}'`);
}
