import { nextCronTime, parseCron, type CronExpression } from "./cron.ts";
import { parseGoDuration } from "./go-duration.ts";

/**
 * Job timing as the Dapr jobs API documents it:
 * - `schedule`: `@every <Go duration>`, the `@yearly/@annually/@monthly/@weekly/@daily/@midnight/@hourly`
 *   period strings, or a 6-field cron expression;
 * - `dueTime` / `ttl`: an RFC 3339 point in time, a Go duration counted from job creation, or a
 *   non-repeating ISO 8601 duration (`P1DT2H`, `PT30S`).
 */

export type JobSchedule =
  | { readonly kind: "every"; readonly source: string; readonly intervalMs: number }
  | { readonly kind: "cron"; readonly source: string; readonly cron: CronExpression };

export class ScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScheduleError";
  }
}

const PERIOD_MACROS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 0 1 1 *",
  "@annually": "0 0 0 1 1 *",
  "@monthly": "0 0 0 1 * *",
  "@weekly": "0 0 0 * * 0",
  "@daily": "0 0 0 * * *",
  "@midnight": "0 0 0 * * *",
  "@hourly": "0 0 * * * *",
};

export function parseSchedule(source: string): JobSchedule {
  const trimmed = source.trim();
  if (trimmed.startsWith("@every ")) {
    const durationText = trimmed.slice("@every ".length).trim();
    let intervalMs: number;
    try {
      intervalMs = parseGoDuration(durationText);
    } catch (error) {
      throw new ScheduleError(`unsupported schedule "${source}": ${(error as Error).message}`);
    }
    if (intervalMs <= 0)
      throw new ScheduleError(`unsupported schedule "${source}": @every needs a positive duration`);
    return { kind: "every", source, intervalMs };
  }
  const macro = PERIOD_MACROS[trimmed];
  if (macro !== undefined) return { kind: "cron", source, cron: parseCron(macro) };
  if (trimmed.startsWith("@")) {
    throw new ScheduleError(
      `unsupported schedule "${source}": known period strings are @every <duration>, ${Object.keys(PERIOD_MACROS).join(", ")}`,
    );
  }
  try {
    return { kind: "cron", source, cron: parseCron(trimmed) };
  } catch (error) {
    throw new ScheduleError(`unsupported schedule "${source}": ${(error as Error).message}`);
  }
}

/** Next trigger strictly after `after`. */
export function nextScheduledTime(schedule: JobSchedule, after: Date): Date | undefined {
  switch (schedule.kind) {
    case "every":
      return new Date(after.getTime() + schedule.intervalMs);
    case "cron":
      return nextCronTime(schedule.cron, after);
    default:
      return assertNever(schedule);
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const ISO8601_DURATION =
  /^P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Resolves a `dueTime`/`ttl` value to an absolute instant, relative ones counted from `createdAt`. */
export function resolvePointInTime(field: string, value: string, createdAt: Date): Date {
  if (RFC3339.test(value)) {
    const parsed = Date.parse(value);
    if (!Number.isNaN(parsed)) return new Date(parsed);
  }
  const iso = ISO8601_DURATION.exec(value);
  if (iso && value !== "P" && !value.endsWith("T")) {
    const [, years, months, weeks, days, hours, minutes, seconds] = iso.map((part) => Number(part ?? 0));
    const at = new Date(createdAt.getTime());
    at.setFullYear(
      at.getFullYear() + (years ?? 0),
      at.getMonth() + (months ?? 0),
      at.getDate() + (days ?? 0) + 7 * (weeks ?? 0),
    );
    return new Date(at.getTime() + ((hours ?? 0) * 3600 + (minutes ?? 0) * 60 + (seconds ?? 0)) * 1000);
  }
  try {
    return new Date(createdAt.getTime() + parseGoDuration(value));
  } catch {
    throw new ScheduleError(
      `unsupported ${field} "${value}": expected an RFC 3339 time, a Go duration (e.g. 30s, 1m30s) or an ISO 8601 duration (e.g. PT30S)`,
    );
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected schedule ${JSON.stringify(value)}`);
}
