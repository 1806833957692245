/**
 * `known` completed with the `ids` it lacks, read by `load` in one go: rows a transaction's earlier
 * statement already read (the result transaction's first statement reads batches and phases) are
 * not read again.
 */
export async function completeMap<T>(
  known: ReadonlyMap<number, T> | undefined,
  ids: readonly number[],
  load: (missing: number[]) => Promise<Map<number, T>>,
): Promise<Map<number, T>> {
  const result = new Map(known ?? []);
  const missing = [...new Set(ids)].filter((id) => !result.has(id));
  if (missing.length > 0) for (const [id, row] of await load(missing)) result.set(id, row);
  return result;
}
