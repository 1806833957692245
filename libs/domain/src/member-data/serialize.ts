import type { MultiValuedColumn } from "../runbook/model.ts";
import { toMultiValued } from "./multi-valued.ts";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Dates and bigints (which JSON.stringify mangles or rejects) become strings, also inside lists/maps. */
function toJsonSafe(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map(toJsonSafe);
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toJsonSafe(item)]));
  }
  return value;
}

/**
 * One source row → the object stored in batch_members.data_json and later used for templates.
 * Multi-valued columns become string lists so `"{{Groups}}"` resolves to a list; a configured column
 * the row lacks stays absent (the template resolver then reports it by name).
 */
export function serializeMemberData(
  row: Readonly<Record<string, unknown>>,
  multiValuedColumns: readonly MultiValuedColumn[],
): Record<string, unknown> {
  const formats = new Map(multiValuedColumns.map((column) => [column.name, column]));
  const data: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    const column = formats.get(name);
    // defineProperty so a column literally named "__proto__" stays data, not a prototype change.
    Object.defineProperty(data, name, {
      value: column ? toMultiValued(value, column) : toJsonSafe(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return data;
}
