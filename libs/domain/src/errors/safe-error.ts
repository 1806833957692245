import { z } from "zod";
import { MatoolkitError } from "./matoolkit-error.ts";
import { reasonCodes } from "./reason-codes.ts";
import type { ReasonCode } from "./reason-codes.ts";
import { sanitizeErrorMessage } from "./sanitize.ts";

/** What may be persisted (error columns, events) and returned to API callers for a failure. */
export interface SafeError {
  readonly reason: ReasonCode;
  readonly message: string;
  readonly retriable: boolean;
}

/**
 * Reduces anything thrown to a reason code, a sanitized message and a retry decision. Only the
 * error's own message is used, never its cause or stack, which may hold secrets or member data.
 */
export function toSafeError(error: unknown): SafeError {
  if (error instanceof MatoolkitError) {
    // Sanitized again: `message` is a writable property and may have been changed after construction.
    return { reason: error.reason, message: sanitizeErrorMessage(error.message), retriable: error.retriable };
  }
  if (error instanceof z.ZodError) {
    // Issue messages name paths and expected types, never the rejected values.
    return { reason: reasonCodes.validationInvalidInput, message: describeZodError(error), retriable: false };
  }
  return { reason: reasonCodes.unexpectedException, message: describeUnknown(error), retriable: true };
}

function describeZodError(error: z.ZodError): string {
  const issues = error.issues.map((issue) =>
    issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message,
  );
  return sanitizeErrorMessage(`Invalid input: ${issues.join("; ")}`);
}

function describeUnknown(error: unknown): string {
  if (error instanceof Error) {
    // The class name (TypeError, AbortError…) tells operators where to look.
    return sanitizeErrorMessage(
      error.message.trim().length > 0 ? `${error.name}: ${error.message}` : error.name,
    );
  }
  if (typeof error === "string" && error.trim().length > 0) return sanitizeErrorMessage(error);
  return "Unexpected error";
}
