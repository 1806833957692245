import { z } from "zod";

/**
 * Building blocks of response schemas. Handlers return repository rows with `Date` values and
 * JSON carries ISO 8601 strings: `timestamp` is a codec, so the compiler checks a handler's Date
 * against it, the OpenAPI document describes the string (io "input"), and a test decoding a
 * real response checks the string.
 */
export const timestamp = z.codec(z.iso.datetime({ offset: true }), z.date(), {
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString(),
});
export const nullableTimestamp = timestamp.nullable();

export const id = z.int().min(1);
export const count = z.int().min(0);

/** A jsonb column read back as an object (a member's data row, a step's parameters). */
export const jsonObject = z.record(z.string(), z.unknown());
