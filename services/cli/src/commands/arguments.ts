import { InvalidArgumentError } from "commander";

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
