import { CmdletError, exceptionTypes } from "./cmdlet-error.ts";

/**
 * PowerShell parameter binding, as much of it as the admin API exposes: names are matched
 * case-insensitively, an unknown name or a value of the wrong kind is a ParameterBindingException,
 * a missing mandatory parameter too. `multi` is a MultiValuedProperty: a full list, or the
 * `{"@odata.type": "#Exchange.GenericHashTable", Add, Remove}` hashtable that edits it.
 */
export type ParameterKind = "string" | "boolean" | "switch" | "guid" | "multi" | "resultSize";

export interface ParameterSpec {
  readonly kind: ParameterKind;
  readonly mandatory?: boolean;
}

export type MultiValue =
  | { readonly mode: "replace"; readonly values: readonly string[] }
  | { readonly mode: "edit"; readonly add: readonly string[]; readonly remove: readonly string[] };

const guidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function bindParameters(
  declared: Readonly<Record<string, ParameterSpec>>,
  given: unknown,
): Record<string, unknown> {
  if (given !== undefined && given !== null && (typeof given !== "object" || Array.isArray(given))) {
    throw bindingError("Cannot bind parameters: Parameters must be an object.");
  }
  const byLowerName = new Map(Object.keys(declared).map((name) => [name.toLowerCase(), name]));
  const bound: Record<string, unknown> = {};
  for (const [rawName, value] of Object.entries((given ?? {}) as Record<string, unknown>)) {
    const name = byLowerName.get(rawName.toLowerCase());
    if (name === undefined)
      throw bindingError(`A parameter cannot be found that matches parameter name '${rawName}'.`);
    bound[name] = convert(name, declared[name]!.kind, value);
  }
  const missing = Object.entries(declared)
    .filter(([name, spec]) => spec.mandatory === true && bound[name] === undefined)
    .map(([name]) => name);
  if (missing.length > 0) {
    throw bindingError(
      `Cannot process command because of one or more missing mandatory parameters: ${missing.join(" ")}.`,
    );
  }
  return bound;
}

function convert(name: string, kind: ParameterKind, value: unknown): unknown {
  const refuse = (): never => {
    throw bindingError(
      `Cannot bind parameter '${name}'. Cannot convert the value to the type the parameter expects.`,
    );
  };
  switch (kind) {
    case "string":
      if (typeof value === "string" && value !== "") return value;
      return refuse();
    case "boolean":
    case "switch":
      if (typeof value === "boolean") return value;
      if (typeof value === "string" && /^(true|false)$/i.test(value)) return value.toLowerCase() === "true";
      return refuse();
    case "guid":
      if (typeof value === "string" && guidPattern.test(value)) return value.toLowerCase();
      return refuse();
    case "resultSize":
      if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
      if (typeof value === "string" && /^unlimited$/i.test(value)) return Number.POSITIVE_INFINITY;
      if (typeof value === "string" && /^\d+$/.test(value) && Number(value) > 0) return Number(value);
      return refuse();
    case "multi":
      return toMultiValue(value) ?? refuse();
    default: {
      const unreachable: never = kind;
      throw new Error(`Unknown parameter kind ${String(unreachable)}`);
    }
  }
}

function toMultiValue(value: unknown): MultiValue | undefined {
  const strings = (list: unknown): string[] | undefined => {
    if (list === undefined || list === null) return [];
    const items = Array.isArray(list) ? list : [list];
    return items.every((item) => typeof item === "string" && item !== "") ? (items as string[]) : undefined;
  };
  if (typeof value === "string" || Array.isArray(value)) {
    const values = strings(value);
    return values === undefined ? undefined : { mode: "replace", values };
  }
  if (typeof value !== "object" || value === null) return undefined;
  const table = Object.fromEntries(Object.entries(value).map(([key, item]) => [key.toLowerCase(), item]));
  const unknownKeys = Object.keys(table).filter((key) => !["@odata.type", "add", "remove"].includes(key));
  const add = strings(table.add);
  const remove = strings(table.remove);
  if (unknownKeys.length > 0 || add === undefined || remove === undefined) return undefined;
  return { mode: "edit", add, remove };
}

function bindingError(text: string): CmdletError {
  return new CmdletError(400, exceptionTypes.parameterBinding, text);
}
