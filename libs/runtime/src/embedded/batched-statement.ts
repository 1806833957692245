import { createGroupCommit } from "./group-commit.ts";

/**
 * One SQL statement for many concurrent callers (issue 29: statements, more than bytes, are what
 * a step costs), each caller still hearing its own outcome:
 * - calls made while a statement is in flight go together in the next one (group-commit.ts), so
 *   a lone call costs what it did alone (plus one turn of the event loop) and N concurrent calls
 *   about one round trip;
 * - items whose key is already in the group wait for the next statement: one statement never
 *   touches a row twice (PostgreSQL refuses `ON CONFLICT DO UPDATE` on the same row twice, and
 *   the second call must see what the first one did);
 * - a statement the server refuses for what one item holds (a value jsonb cannot store, a
 *   deadlock between two groups) is retried item by item, so only that item's caller hears the
 *   refusal: one bad item must not fail the others. An unreachable server fails the whole group
 *   at once, as it would each call alone, and every caller retries as it would have.
 */
export interface BatchedStatementOptions<T, R> {
  /** Items per statement at most. */
  readonly maxBatch: number;
  /** Items with the same key never share a statement. */
  readonly keyOf: (item: T) => string;
  /** The statement for many items (all keys distinct): one result per item, in order. */
  readonly many: (items: readonly T[]) => Promise<readonly R[]>;
  /** The same for one item: used alone, and when `many` was refused for what an item holds. */
  readonly one: (item: T) => Promise<R>;
}

type Settled<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

export function createBatchedStatement<T, R>(
  options: BatchedStatementOptions<T, R>,
): (item: T) => Promise<R> {
  const settle = async (item: T): Promise<Settled<R>> => {
    try {
      return { ok: true, value: await options.one(item) };
    } catch (error) {
      return { ok: false, error };
    }
  };

  const runGroup = async (items: readonly T[]): Promise<readonly Settled<R>[]> => {
    if (items.length === 1) return [await settle(items[0] as T)];
    try {
      const values = await options.many(items);
      return values.map((value) => ({ ok: true, value }));
    } catch (error) {
      if (!isRefusalOfTheStatement(error)) throw error;
      const settled: Settled<R>[] = [];
      for (const item of items) settled.push(await settle(item));
      return settled;
    }
  };

  const group = createGroupCommit<T, Settled<R>>({
    maxBatch: options.maxBatch,
    flush: async (items) => {
      // First occurrences go now; a repeated key waits for the next statement of this flush.
      const results: Settled<R>[] = new Array<Settled<R>>(items.length);
      let remaining = items.map((item, index) => ({ item, index }));
      while (remaining.length > 0) {
        const seen = new Set<string>();
        const now: typeof remaining = [];
        const later: typeof remaining = [];
        for (const entry of remaining) {
          const key = options.keyOf(entry.item);
          (seen.has(key) ? later : now).push(entry);
          seen.add(key);
        }
        const settled = await runGroup(now.map((entry) => entry.item));
        now.forEach((entry, position) => (results[entry.index] = settled[position] as Settled<R>));
        remaining = later;
      }
      return results;
    },
  });

  return async (item) => {
    const settled = await group.submit(item);
    if (settled.ok) return settled.value;
    throw settled.error;
  };
}

/**
 * The server answered with an error about the statement (an SQLSTATE), not about itself being
 * unreachable (classes 08 connection, 53 resources, 57 operator intervention, 58 system error):
 * retrying item by item tells the bad item from the good ones.
 */
function isRefusalOfTheStatement(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/u.test(code) && !/^(08|53|57|58)/u.test(code);
}
