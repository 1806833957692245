import pg from "pg";

/**
 * Counts every statement this process sends to PostgreSQL (every pool and client, pg-boss's
 * included) by wrapping pg's Client#query. pg_stat_statements would need a server restart with
 * shared_preload_libraries, which a benchmark should not ask for.
 */
export function installSqlCounter(): { count(): number; reset(): void } {
  let statements = 0;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
    statements += 1;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return {
    count: () => statements,
    reset: () => {
      statements = 0;
    },
  };
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
