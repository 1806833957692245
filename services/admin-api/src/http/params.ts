import { z } from "zod";

/**
 * Path and query parameters arrive as strings (a repeated query parameter as an array). These
 * schemas parse them and describe them in the OpenAPI document as what they mean (an integer in
 * a range). Messages are phrased to follow the parameter's quoted name: validate-request.ts
 * turns them into "'limit' must be between 1 and 1000".
 */

/**
 * Ids and versions are PostgreSQL `integer` columns: a larger number would reach SQL and fail
 * there ("out of range for type integer", a 500), so it is refused here as bad input.
 */
export const MAX_SQL_INTEGER = 2_147_483_647;

/** One value: `?status=a&status=b` is refused rather than silently taking one of them. */
export const singleValue = z.string({
  error: (issue) => (issue.input === undefined ? "is required" : "must be given once"),
});

/**
 * Text PostgreSQL can hold: it refuses U+0000 in `text` (SQLSTATE 22021, a 500 once it reached
 * SQL), and a lone surrogate (from JSON's `\ud800`) has no UTF-8 encoding. `%00` in a URL decodes
 * to U+0000, so every free-text path or query parameter is checked here, at the boundary.
 */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** With the `u` flag a surrogate pair is one code point: only a lone surrogate matches the range. */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what must be found
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

export const STORABLE_TEXT_MESSAGE = "must not contain NUL (U+0000) or unpaired surrogate characters";

/** A free-text parameter (a runbook name in the path, a problem code). */
export const textParam = singleValue.refine(isStorableText, STORABLE_TEXT_MESSAGE);

/** A non-empty text parameter, e.g. a runbook name in the query string. */
export const nonEmptyText = textParam.min(1, "must be a non-empty string");

/** Digits only: no `1e3`, `0x10`, `+1` or `1.0`, which Number() would accept. */
function integerInRange(min: number, max: number, messages: { format: string; range: string }) {
  return singleValue
    .regex(/^\d+$/, messages.format)
    .transform(Number)
    .pipe(z.int(messages.format).min(min, messages.range).max(max, messages.range));
}

/** A path id or version: 1 … 2^31-1. */
export const positiveId = integerInRange(1, MAX_SQL_INTEGER, {
  format: `must be a positive integer (at most ${MAX_SQL_INTEGER})`,
  range: `must be a positive integer (at most ${MAX_SQL_INTEGER})`,
});

/** A whole-number query parameter between `min` and `max`. */
export function wholeNumber(min: number, max: number) {
  const range =
    max === Number.MAX_SAFE_INTEGER ? `must be ${min} or more` : `must be between ${min} and ${max}`;
  // Safe integers only: 1e20 passes /^\d+$/ and would overflow PostgreSQL's bigint (a 500).
  return integerInRange(min, max, { format: "must be a whole number", range });
}

/** `limit` and `offset` of a listing. */
export function pageQuery(defaults: { readonly limit: number; readonly max: number }) {
  return {
    limit: wholeNumber(1, defaults.max).default(defaults.limit).meta({ description: "How many to return" }),
    offset: wholeNumber(0, Number.MAX_SAFE_INTEGER).default(0).meta({ description: "How many to skip" }),
  };
}

/** An enum-valued query parameter whose error lists the allowed values. */
export function oneOf<const T extends string>(values: readonly T[]) {
  return singleValue.pipe(z.enum(values as [T, ...T[]], `must be one of ${values.join(", ")}`));
}

/**
 * A point in time in a query (`createdAfter=2030-01-31T00:00:00Z`): ISO 8601 with a time zone
 * (`Z` or `+02:00`), so the same URL means the same instant wherever it is sent from. It stays
 * the checked text (the OpenAPI document shows a date-time string); the handler makes the Date.
 */
export const timestampParam = singleValue.pipe(
  z.iso.datetime({
    offset: true,
    error: "must be an ISO 8601 timestamp with a time zone, e.g. 2030-01-31T00:00:00Z",
  }),
);
