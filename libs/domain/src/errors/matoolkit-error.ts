import type { ReasonCode } from "./reason-codes.ts";
import { sanitizeErrorMessage } from "./sanitize.ts";

export interface MatoolkitErrorOptions {
  /** Defaults to true: like inngest, an error is retried unless it says otherwise. */
  readonly retriable?: boolean;
  /**
   * The original error, for logs and debuggers only: it may hold secrets or PII, so it is never
   * persisted or returned to callers (see toSafeError).
   */
  readonly cause?: unknown;
}

/**
 * Base of the errors that carry a reason code and a retry decision. The message is sanitized on
 * construction, so `error.message` is always safe to persist and show to operators (FR-013).
 * Prefer the subclasses, whose names state the retry policy at the throw site.
 */
export class MatoolkitError extends Error {
  readonly reason: ReasonCode;
  readonly retriable: boolean;

  constructor(reason: ReasonCode, message: string, options: MatoolkitErrorOptions = {}) {
    super(sanitizeErrorMessage(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.reason = reason;
    this.retriable = options.retriable ?? true;
  }
}

/** Retrying cannot help (bad input, missing permission, unknown function): fail the step now. */
export class NonRetriableError extends MatoolkitError {
  constructor(reason: ReasonCode, message: string, options: Omit<MatoolkitErrorOptions, "retriable"> = {}) {
    super(reason, message, { ...options, retriable: false });
  }
}

/** Retrying will help, but not before `retryAfterSeconds` (e.g. an HTTP 429 `Retry-After`). */
export class RetryAfterError extends MatoolkitError {
  readonly retryAfterSeconds: number;

  constructor(
    reason: ReasonCode,
    message: string,
    retryAfterSeconds: number,
    options: Omit<MatoolkitErrorOptions, "retriable"> = {},
  ) {
    if (!Number.isFinite(retryAfterSeconds) || retryAfterSeconds < 0) {
      throw new RangeError(`retryAfterSeconds must be a non-negative number, got ${retryAfterSeconds}`);
    }
    super(reason, message, { ...options, retriable: true });
    // Whole seconds, rounded up: waiting a little longer than asked is always safe.
    this.retryAfterSeconds = Math.ceil(retryAfterSeconds);
  }
}
