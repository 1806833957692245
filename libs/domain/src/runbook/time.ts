import { NonRetriableError, reasonCodes } from "../errors/index.ts";

/**
 * 000 "phases" offsets (`T-5d`) and the durations used by poll, retry and step timeouts (`30s`).
 * Both end up in INT columns (offset_minutes, poll_interval_sec, …), so values beyond INT range are
 * rejected here rather than failing later at insert time.
 */
const MAX_SQL_INT = 2_147_483_647;

const UNIT_SECONDS = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
type Unit = keyof typeof UNIT_SECONDS;

export const OFFSET_FORM = "T-<n><d|h|m|s> or T-0";
export const DURATION_FORM = "<n><d|h|m|s> with n a positive integer (e.g. 30s, 15m, 24h, 7d)";

export type TimeExpressionKind = "offset" | "duration";

/** Thrown for a malformed offset or duration; the value is runbook text (never member data). */
export class InvalidTimeExpressionError extends NonRetriableError {
  constructor(
    readonly kind: TimeExpressionKind,
    readonly value: string,
    detail?: string,
  ) {
    const form = kind === "offset" ? OFFSET_FORM : DURATION_FORM;
    super(
      reasonCodes.runbookInvalid,
      `invalid ${kind} ${JSON.stringify(value)}: ${detail ?? `expected ${form}`}`,
    );
  }
}

const OFFSET_PATTERN = /^T-(\d+)([dhms])$/;
const DURATION_PATTERN = /^(\d+)([dhms])$/;

/** `T-5d` → 7200; seconds round up to whole minutes (`T-90s` → 2), as the original's Math.Ceiling. */
export function parseOffset(text: string): number {
  if (text === "T-0") return 0;
  const match = OFFSET_PATTERN.exec(text);
  if (!match) throw new InvalidTimeExpressionError("offset", text);
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] as Unit];
  const minutes = Math.ceil(seconds / 60);
  if (!Number.isSafeInteger(seconds) || minutes > MAX_SQL_INT) {
    throw new InvalidTimeExpressionError("offset", text, `offset is too large (max ${MAX_SQL_INT} minutes)`);
  }
  return minutes;
}

/** `15m` → 900 seconds. Zero is rejected: a zero poll interval or retry interval would spin. */
export function parseDuration(text: string): number {
  const match = DURATION_PATTERN.exec(text);
  if (!match) throw new InvalidTimeExpressionError("duration", text);
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] as Unit];
  if (seconds === 0) {
    throw new InvalidTimeExpressionError(
      "duration",
      text,
      `duration must be positive; expected ${DURATION_FORM}`,
    );
  }
  if (!Number.isSafeInteger(seconds) || seconds > MAX_SQL_INT) {
    throw new InvalidTimeExpressionError(
      "duration",
      text,
      `duration is too large (max ${MAX_SQL_INT} seconds)`,
    );
  }
  return seconds;
}
