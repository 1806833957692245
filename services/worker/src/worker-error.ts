import { MatoolkitError, reasonCodes, sanitizeErrorMessage, type WorkerError } from "@matoolkit/domain";
import { isThrottlingError } from "./throttle-retry.ts";

/**
 * The `Error` object of a failed result (000 message 8). The message is persisted and shown to
 * operators, so it is sanitized (no emails, tokens) and short; `Type` is the thrown error's
 * reason code, or `worker.error` for errors that carry none (a plain `throw new Error(...)`).
 */
export function workerErrorFrom(error: unknown, attempts: number): WorkerError {
  const type = error instanceof MatoolkitError ? error.reason : reasonCodes.workerError;
  return {
    Message: sanitizeErrorMessage(rawMessage(error)) || type,
    Type: type,
    IsThrottled: isThrottlingError(error),
    Attempts: attempts,
  };
}

function rawMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  // A thrown object may be a whole API response full of member data: say only what it was.
  return `Function threw a non-Error value (${error === null ? "null" : typeof error})`;
}
