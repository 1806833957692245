import { sql, type RawBuilder } from "kysely";

/**
 * A value as a jsonb SQL expression. Serialising ourselves matters: node-postgres turns a JS array
 * parameter into a PostgreSQL array literal, which jsonb rejects, and a string would be taken as
 * JSON text rather than a JSON string.
 */
export function jsonb<T>(value: T): RawBuilder<T> {
  return sql<T>`${JSON.stringify(value ?? null)}::jsonb`;
}
