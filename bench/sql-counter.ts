import pg from "pg";

/**
 * Counts every statement this process sends to PostgreSQL (every pool and client, pg-boss's
 * included) by wrapping pg's Client#query. pg_stat_statements would need a server restart with
 * shared_preload_libraries, which a benchmark should not ask for.
 */
export function installSqlCounter(): {
  count(): number;
  reset(): void;
  /** Statements by their text (whitespace folded, first 160 characters), most frequent first. */
  byStatement(): Array<{ statement: string; count: number }>;
} {
  let statements = 0;
  const byText = new Map<string, number>();
  // Raw text → folded text: folding a statement of a few kB at each call cost the bench process
  // more than counting should (the texts repeat: the statement cache prepares them for that).
  const folded = new Map<string, string>();
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
    statements += 1;
    const raw = rawText(args[0]);
    let text = folded.get(raw);
    if (text === undefined) {
      text = raw.replace(/\s+/g, " ").trim().slice(0, 160);
      if (folded.size < 10_000) folded.set(raw, text);
    }
    byText.set(text, (byText.get(text) ?? 0) + 1);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return {
    count: () => statements,
    reset: () => {
      statements = 0;
      byText.clear();
    },
    byStatement: () =>
      [...byText].map(([statement, count]) => ({ statement, count })).sort((a, b) => b.count - a.count),
  };
}

function rawText(query: unknown): string {
  return typeof query === "string"
    ? query
    : typeof (query as { text?: unknown } | null)?.text === "string"
      ? (query as { text: string }).text
      : "(other)";
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
