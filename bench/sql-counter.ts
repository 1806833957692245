import { performance } from "node:perf_hooks";
import pg from "pg";

/**
 * Counts every statement this process sends to PostgreSQL (every pool and client, pg-boss's
 * included) by wrapping pg's Client#query. pg_stat_statements would need a server restart with
 * shared_preload_libraries, which a benchmark should not ask for.
 */
export function installSqlCounter(): {
  count(): number;
  reset(): void;
  /**
   * Statements by their text (whitespace folded, first 160 characters), most frequent first, with
   * the milliseconds from send to answer summed (the time a caller waited on them, queueing on a
   * busy server included; concurrent statements overlap).
   */
  byStatement(): Array<{ statement: string; count: number; ms: number }>;
} {
  let statements = 0;
  const byText = new Map<string, { count: number; ms: number }>();
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
    const tally = byText.get(text) ?? { count: 0, ms: 0 };
    tally.count += 1;
    byText.set(text, tally);
    const sent = performance.now();
    const answered = (): void => {
      tally.ms += performance.now() - sent;
    };
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === "function") {
      // pg's Pool#query passes a callback: time it to the callback.
      args[last] = (...results: unknown[]) => {
        answered();
        return (callback as (...r: unknown[]) => unknown)(...results);
      };
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    }
    const result = (original as (...a: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) result.then(answered, answered);
    return result;
  } as typeof original;
  return {
    count: () => statements,
    reset: () => {
      statements = 0;
      byText.clear();
    },
    byStatement: () =>
      [...byText]
        .map(([statement, { count, ms }]) => ({ statement, count, ms }))
        .sort((a, b) => b.count - a.count),
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
