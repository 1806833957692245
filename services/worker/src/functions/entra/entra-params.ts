import { z } from "zod";

/**
 * Parameter schemas shared by the Entra functions. Runbook templates resolve to strings, so
 * booleans are also accepted as text ("true"/"False"), as in functions/diagnostics.ts.
 */
export const flag = z.union([
  z.boolean(),
  z
    .enum(["true", "false", "True", "False", "TRUE", "FALSE"])
    .transform((value) => value.toLowerCase() === "true"),
]);

/** A non-empty string, trimmed: an empty template value is a missing parameter, not a value. */
export const text = z.string().trim().min(1);

/** An object id or a UPN (every user parameter accepts both, as Graph's /users/{id | upn} does). */
export const userReference = text;

/** A UPN: `local@domain`, checked loosely (Graph has the final word on what it accepts). */
export const userPrincipalName = text.regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, "expected local@domain");

/** An optional text parameter; an empty string counts as absent (an unset runbook column). */
export const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value === "" ? undefined : value));
