import { z } from "zod";
import { isSmtpAddress } from "./addresses.ts";

/**
 * Parameter schemas shared by the Exchange functions. Runbook templates resolve to strings, so
 * booleans are accepted as text too. Messages describe what was expected, never the value.
 */
export const identity = z.string().trim().min(1, "must be a non-empty recipient identity");

export const smtpAddress = z.string().trim().refine(isSmtpAddress, "must be an SMTP address (name@domain)");

export const guid = z
  .string()
  .trim()
  .regex(
    /^\{?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\}?$/,
    "must be a GUID",
  )
  .transform((value) => value.replace(/[{}]/g, "").toLowerCase());

export const flag = z.union([
  z.boolean(),
  z
    .enum(["true", "false", "True", "False", "TRUE", "FALSE"])
    .transform((value) => value.toLowerCase() === "true"),
]);

/**
 * For optional parameters fed by templates: a member without the value (no archive, say) resolves
 * to an empty string, which means "not given" rather than a malformed value.
 */
export function blankAsMissing<T extends z.ZodType>(schema: T) {
  return z.preprocess(
    (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
    schema,
  );
}
