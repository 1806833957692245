/** A query embedded as a subquery (for a row limit) must not end with a statement terminator. */
export function withoutTrailingSemicolons(sql: string): string {
  return sql.trim().replace(/(?:;\s*)+$/u, "");
}

export function assertLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }
}
