/**
 * Batch start times from a data source's batch_time_column. Drivers return a Date (PostgreSQL
 * timestamptz, SQL Server datetime2) or text (CSV, Databricks JSON results), so both are read;
 * text must be ISO 8601. A time without a zone is UTC: 000's columns are UTC DATETIME2, and
 * reading it as the scheduler host's local time would move batches when the host moves.
 */
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/iu;

/** The instant a cell names, or undefined when it is empty or not a date/time. */
export function parseBatchTime(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value !== "string") return undefined;
  const match = ISO_DATE_TIME.exec(value.trim());
  if (match === null) return undefined;
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "", zone] = match;
  if (
    !isCalendarTime(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second))
  ) {
    return undefined;
  }
  const millis = fraction.padEnd(3, "0").slice(0, 3);
  const parsed = new Date(
    `${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}${normalizeZone(zone)}`,
  );
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

/** Date silently rolls 2025-02-30 over to March: the parts are checked against the calendar first. */
function isCalendarTime(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
) {
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return (
    month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour < 24 && minute < 60 && second < 60
  );
}

function normalizeZone(zone: string | undefined): string {
  if (zone === undefined || /^z$/iu.test(zone)) return "Z";
  const digits = zone.replace(":", "");
  return digits.length === 3 ? `${digits}:00` : `${digits.slice(0, 3)}:${digits.slice(3)}`;
}

const FIVE_MINUTES_MS = 5 * 60 * 1000;

/** 000 immediate batching: "current UTC rounded to the nearest 5-minute interval". */
export function roundToFiveMinutes(instant: Date): Date {
  return new Date(Math.round(instant.getTime() / FIVE_MINUTES_MS) * FIVE_MINUTES_MS);
}
