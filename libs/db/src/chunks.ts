/**
 * PostgreSQL's wire protocol allows at most 65,535 bind parameters per statement; a phase of
 * 10,000 members × 5 steps is far more. Multi-row inserts go in chunks sized by the row's column
 * count, inside the caller's transaction, so they stay one atomic write.
 */
const MAX_BIND_PARAMETERS = 65_535;

export function chunksForInsert<T extends object>(rows: readonly T[]): T[][] {
  if (rows.length === 0) return [];
  const columns = Math.max(1, ...rows.slice(0, 16).map((row) => Object.keys(row).length));
  const size = Math.max(1, Math.floor(MAX_BIND_PARAMETERS / columns) - 1);
  const chunks: T[][] = [];
  for (let start = 0; start < rows.length; start += size) chunks.push(rows.slice(start, start + size));
  return chunks;
}
