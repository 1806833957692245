import { sql, type Expression, type SqlBool } from "kysely";

/**
 * `<column> IN ('a', 'b', …)` with literal values, as CHECK constraints and partial index
 * predicates need (DDL takes no bind parameters).
 */
export function inList(column: string, values: readonly string[]): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} IN (${sql.join(values.map((value) => sql.lit(value)))})`;
}

export const now = sql`now()`;
export const emptyJsonObject = sql`'{}'::jsonb`;
