import { sql, type RawBuilder } from "kysely";

/**
 * A value as a jsonb SQL expression; null/undefined become SQL NULL (not the JSON literal `null`).
 * Serialising ourselves matters: node-postgres turns a JS array parameter into a PostgreSQL array
 * literal, which jsonb rejects, and a string would be taken as JSON text rather than a JSON string.
 */
export function jsonb<T>(value: T): RawBuilder<T> {
  if (value === null || value === undefined) return sql<T>`NULL::jsonb`;
  return sql<T>`${JSON.stringify(value)}::jsonb`;
}
