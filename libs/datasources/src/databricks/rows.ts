import type { DataRow } from "../types.ts";
import type { ColumnInfo } from "./statement-schemas.ts";

/**
 * JSON_ARRAY sends every value as a string. Types JavaScript holds exactly become numbers and
 * booleans; LONG and DECIMAL stay strings (as pg returns int8 and numeric), and so do dates and
 * timestamps, whose zone (TIMESTAMP_NTZ has none) only the runbook's query knows.
 */
const numericTypes = new Set(["BYTE", "SHORT", "INT", "FLOAT", "DOUBLE"]);

function convert(value: unknown, typeName: string | undefined): unknown {
  if (typeof value !== "string") return value;
  if (typeName === "BOOLEAN") return value === "true" ? true : value === "false" ? false : value;
  if (typeName !== undefined && numericTypes.has(typeName)) {
    const number = Number(value);
    return value.trim() !== "" && !Number.isNaN(number) ? number : value;
  }
  return value;
}

/** Maps one positional row to the manifest's column names (`position`, else list order). */
export function toRow(columns: readonly ColumnInfo[], values: readonly unknown[]): DataRow {
  const row: DataRow = {};
  columns.forEach((column, index) => {
    row[column.name] = convert(values[column.position ?? index] ?? null, column.type_name);
  });
  return row;
}
