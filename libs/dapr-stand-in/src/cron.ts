/**
 * The 6-field, systemd-timer-style cron Dapr's scheduler accepts:
 * `seconds minutes hours day-of-month month day-of-week`, evaluated in the server's local time
 * (the jobs API reference: "If no timezone is provided, the server's local time is used").
 * Supports `*`, `?`, numbers, `a-b`, lists, `/step`, month (jan-dec) and weekday (sun-sat) names.
 * Day-of-month and day-of-week combine with OR when both are restricted (robfig/cron semantics).
 */

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
  { name: "seconds", min: 0, max: 59 },
  { name: "minutes", min: 0, max: 59 },
  { name: "hours", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  {
    name: "month",
    min: 1,
    max: 12,
    names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  },
  // 7 is accepted as Sunday, as several cron dialects (and an older Dapr docs page) do.
  { name: "day of week", min: 0, max: 7, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] },
];

export interface CronExpression {
  readonly source: string;
  readonly seconds: ReadonlySet<number>;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly daysOfWeek: ReadonlySet<number>;
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
}

export class CronSyntaxError extends Error {
  constructor(source: string, reason: string) {
    super(`invalid cron expression "${source}": ${reason}`);
    this.name = "CronSyntaxError";
  }
}

export function parseCron(source: string): CronExpression {
  const parts = source.trim().split(/\s+/);
  if (parts.length !== 6) {
    throw new CronSyntaxError(
      source,
      `expected 6 fields (seconds minutes hours day-of-month month day-of-week), got ${parts.length}`,
    );
  }
  const sets = parts.map((part, index) => parseField(source, part, FIELDS[index] as FieldSpec));
  const daysOfWeek = new Set([...(sets[5] as Set<number>)].map((day) => (day === 7 ? 0 : day)));
  return {
    source,
    seconds: sets[0] as Set<number>,
    minutes: sets[1] as Set<number>,
    hours: sets[2] as Set<number>,
    daysOfMonth: sets[3] as Set<number>,
    months: sets[4] as Set<number>,
    daysOfWeek,
    dayOfMonthRestricted: !isWildcard(parts[3] as string),
    dayOfWeekRestricted: !isWildcard(parts[5] as string),
  };
}

function isWildcard(part: string): boolean {
  return part === "*" || part === "?";
}

function parseField(source: string, part: string, spec: FieldSpec): Set<number> {
  const values = new Set<number>();
  for (const item of part.split(",")) {
    const [rangePart, stepPart, ...extra] = item.split("/");
    if (extra.length > 0 || rangePart === undefined || rangePart === "") {
      throw new CronSyntaxError(source, `bad ${spec.name} item "${item}"`);
    }
    const step = stepPart === undefined ? 1 : Number(stepPart);
    if (!Number.isInteger(step) || step < 1) throw new CronSyntaxError(source, `bad step in "${item}"`);

    let low: number;
    let high: number;
    if (isWildcard(rangePart)) {
      low = spec.min;
      high = spec.max;
    } else if (rangePart.includes("-")) {
      const [from, to] = rangePart.split("-");
      low = parseValue(source, from ?? "", spec);
      high = parseValue(source, to ?? "", spec);
    } else {
      low = parseValue(source, rangePart, spec);
      // "5/15" means "from 5, every 15" up to the field maximum, as in robfig/cron.
      high = stepPart === undefined ? low : spec.max;
    }
    if (low > high) throw new CronSyntaxError(source, `empty range "${item}" in ${spec.name}`);
    for (let value = low; value <= high; value += step) values.add(value);
  }
  return values;
}

function parseValue(source: string, text: string, spec: FieldSpec): number {
  const byName = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  const value = byName >= 0 ? byName + (spec.name === "month" ? 1 : 0) : Number(text);
  if (!/^\w+$/.test(text) || !Number.isInteger(value) || value < spec.min || value > spec.max) {
    throw new CronSyntaxError(source, `${spec.name} value "${text}" is outside ${spec.min}-${spec.max}`);
  }
  return value;
}

/** First matching instant strictly after `after`, or undefined if none within ~5 years. */
export function nextCronTime(cron: CronExpression, after: Date): Date | undefined {
  const candidate = new Date(after.getTime());
  candidate.setMilliseconds(0);
  candidate.setSeconds(candidate.getSeconds() + 1);
  const giveUpAt = after.getTime() + 5 * 366 * 24 * 3_600_000;

  // Advance the coarsest mismatching field, resetting the finer ones, until everything matches.
  while (candidate.getTime() <= giveUpAt) {
    if (!cron.months.has(candidate.getMonth() + 1)) {
      candidate.setMonth(candidate.getMonth() + 1, 1);
      candidate.setHours(0, 0, 0, 0);
      continue;
    }
    if (!dayMatches(cron, candidate)) {
      candidate.setDate(candidate.getDate() + 1);
      candidate.setHours(0, 0, 0, 0);
      continue;
    }
    if (!cron.hours.has(candidate.getHours())) {
      candidate.setHours(candidate.getHours() + 1, 0, 0, 0);
      continue;
    }
    if (!cron.minutes.has(candidate.getMinutes())) {
      candidate.setMinutes(candidate.getMinutes() + 1, 0, 0);
      continue;
    }
    if (!cron.seconds.has(candidate.getSeconds())) {
      candidate.setSeconds(candidate.getSeconds() + 1, 0);
      continue;
    }
    return candidate;
  }
  return undefined;
}

function dayMatches(cron: CronExpression, date: Date): boolean {
  const domMatches = cron.daysOfMonth.has(date.getDate());
  const dowMatches = cron.daysOfWeek.has(date.getDay());
  if (cron.dayOfMonthRestricted && cron.dayOfWeekRestricted) return domMatches || dowMatches;
  return domMatches && dowMatches;
}
