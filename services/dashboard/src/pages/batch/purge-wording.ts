/**
 * The batch header's notice once the retention purge removed the batch's personal data (issue 31):
 * said outright, so empty member data and params are not mistaken for a fault. Null before.
 * `formatTime` is the page's (toLocaleString); tests pass a fixed one.
 */
export function purgeNotice(
  batch: { readonly purgedAt?: string | null; readonly purgeMode?: string | null },
  formatTime: (iso: string) => string = (iso) => new Date(iso).toLocaleString(),
): string | null {
  if (batch.purgedAt == null) return null;
  const what =
    batch.purgeMode === "delete"
      ? "member and step rows deleted"
      : "member data, params and results emptied; keys and statuses kept";
  return `Personal data purged on ${formatTime(batch.purgedAt)} (retention: ${what}).`;
}
