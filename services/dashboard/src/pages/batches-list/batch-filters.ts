/**
 * The batches page's filters (issue 31) as the URL keeps them and as GET /api/batches takes
 * them. Days are picked in the browser's time zone: "created from 31 Jan" means from that local
 * midnight, "created to 31 Jan" includes the whole day (before the next local midnight); the API
 * takes instants, so each day becomes an ISO timestamp with its offset applied (toISOString).
 */
export interface BatchFilters {
  readonly status: string;
  readonly runbook: string;
  readonly createdBy: string;
  /** YYYY-MM-DD, as an <input type="date"> gives it; "" when unset. */
  readonly createdFrom: string;
  readonly createdTo: string;
  readonly externalRef: string;
}

export const filterKeys = [
  "status",
  "runbook",
  "createdBy",
  "createdFrom",
  "createdTo",
  "externalRef",
] as const;

export function filtersOf(query: URLSearchParams): BatchFilters {
  const read = (key: (typeof filterKeys)[number]) => (query.get(key) ?? "").trim();
  return {
    status: read("status"),
    runbook: read("runbook"),
    createdBy: read("createdBy"),
    createdFrom: validDay(read("createdFrom")),
    createdTo: validDay(read("createdTo")),
    externalRef: read("externalRef"),
  };
}

export function hasFilter(filters: BatchFilters): boolean {
  return filterKeys.some((key) => filters[key] !== "");
}

/** The API query of one page of the list. */
export function listParams(filters: BatchFilters, page: { limit: number; offset: number }): URLSearchParams {
  const params = new URLSearchParams({ limit: String(page.limit), offset: String(page.offset) });
  if (filters.status !== "") params.set("status", filters.status);
  if (filters.runbook !== "") params.set("runbook", filters.runbook);
  if (filters.createdBy !== "") params.set("createdBy", filters.createdBy);
  if (filters.createdFrom !== "") params.set("createdAfter", localMidnight(filters.createdFrom, 0));
  if (filters.createdTo !== "") params.set("createdBefore", localMidnight(filters.createdTo, 1));
  if (filters.externalRef !== "") params.set("externalRef", filters.externalRef);
  return params;
}

/** The local midnight `days` after `day` (YYYY-MM-DD), as an ISO instant. */
export function localMidnight(day: string, days: number): string {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number];
  return new Date(year, month - 1, date + days).toISOString();
}

/** A hand-edited URL with another shape is ignored rather than sent (the API would refuse it). */
function validDay(text: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)) ? text : "";
}
