import { InvalidArgumentError } from "commander";
import { z } from "zod";

/** Ids and versions are PostgreSQL integers on the server; refuse anything else before sending. */
const MAX_ID = 2_147_483_647;

export function positiveId(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || number > MAX_ID) {
    throw new InvalidArgumentError(`must be a positive whole number (at most ${MAX_ID}).`);
  }
  return number;
}

export function wholeNumber(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number)) {
    throw new InvalidArgumentError("must be a whole number (0 or more).");
  }
  return number;
}

/** Seconds, fractions allowed (`--interval 0.5`), at least 0.1 so a typo cannot flood the API. */
export function intervalSeconds(value: string): number {
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || number < 0.1 || number > 3600) {
    throw new InvalidArgumentError("must be a number of seconds between 0.1 and 3600.");
  }
  return number;
}

/**
 * An instant for a filter (`--created-after 2030-01-31T00:00:00Z`): ISO 8601 with a time zone, as
 * the API takes it, refused here so the message names the flag rather than the query parameter.
 */
export function isoTimestamp(value: string): string {
  if (!ISO_WITH_ZONE.safeParse(value).success) {
    throw new InvalidArgumentError(
      "must be an ISO 8601 timestamp with a time zone, e.g. 2030-01-31T00:00:00Z.",
    );
  }
  return value;
}
const ISO_WITH_ZONE = z.iso.datetime({ offset: true });
