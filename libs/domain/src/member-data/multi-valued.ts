import type { MultiValuedColumn, MultiValuedFormat } from "../runbook/model.ts";
import { MemberDataError } from "./errors.ts";

type Scalar = string | number | boolean | bigint;

function isScalar(value: unknown): value is Scalar {
  return ["string", "number", "boolean", "bigint"].includes(typeof value);
}

function splitDelimited(text: string, delimiter: string): string[] {
  return text
    .split(delimiter)
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

function parseJsonArray(text: string, column: MultiValuedColumn): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MemberDataError(column.name, column.format, "expected a JSON array, got unparseable JSON");
  }
  return toStringList(parsed, column);
}

/** Some sources (e.g. PostgreSQL text[]) already return lists; accept those for any format. */
function toStringList(value: unknown, column: MultiValuedColumn): string[] {
  if (!Array.isArray(value)) {
    throw new MemberDataError(column.name, column.format, "expected a list of scalars");
  }
  return value.map((item) => {
    if (!isScalar(item)) throw new MemberDataError(column.name, column.format, "expected a list of scalars");
    return String(item);
  });
}

function splitText(text: string, column: MultiValuedColumn): string[] {
  const format: MultiValuedFormat = column.format;
  switch (format) {
    case "semicolon_delimited":
      return splitDelimited(text, ";");
    case "comma_delimited":
      return splitDelimited(text, ",");
    case "json_array":
      return text.trim() === "" ? [] : parseJsonArray(text, column);
    default: {
      const unreachable: never = format;
      throw new Error(`unhandled multi-valued format ${String(unreachable)}`);
    }
  }
}

/** A null or empty cell means "no values", not an error. */
export function toMultiValued(value: unknown, column: MultiValuedColumn): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return toStringList(value, column);
  if (typeof value === "string") return splitText(value, column);
  if (isScalar(value)) return splitText(String(value), column);
  throw new MemberDataError(column.name, column.format, "expected text or a list");
}
