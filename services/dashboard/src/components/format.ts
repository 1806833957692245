/** Dates as the browser's locale writes them, to the minute; "—" for none. */
export function formatTime(value: string | null | undefined): string {
  if (value === null || value === undefined) return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function formatCount(value: number): string {
  return value.toLocaleString();
}
