import { MatoolkitError, RetryAfterError } from "@matoolkit/domain";
import { abortableDelay } from "./abortable-delay.ts";

/**
 * 000 "Throttle Handling": the worker retries throttled calls itself, with exponential back-off
 * and jitter, honouring Retry-After, and reports throttling as a failure only once its retries
 * are exhausted. Doing it here, around every function, spares each function its own loop.
 * Transient outages (`*.unavailable`: network errors, HTTP 5xx) get the same in-process retries:
 * they usually pass within seconds, and a failed step would cost an orchestrator retry.
 */
export interface ThrottleRetryPolicy {
  /** Invocations in total, the first included; 1 disables retrying. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const defaultThrottleRetryPolicy: ThrottleRetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 2_000,
  maxDelayMs: 60_000,
};

export type AttemptOutcome<T> =
  | { readonly ok: true; readonly value: T; readonly attempts: number }
  | { readonly ok: false; readonly error: unknown; readonly attempts: number };

/** Throttling is signalled by a reason code ending in `.throttled` (worker., graph., …). */
export function isThrottlingError(error: unknown): error is MatoolkitError {
  return error instanceof MatoolkitError && error.reason.endsWith(".throttled");
}

/**
 * Retried inside the worker: throttling, or a service that could not be reached or answered 5xx
 * (a reason code ending in `.unavailable`). Only throttling is reported as `IsThrottled`.
 */
export function isTransientError(error: unknown): error is MatoolkitError {
  return (
    error instanceof MatoolkitError &&
    error.retriable &&
    (error.reason.endsWith(".throttled") || error.reason.endsWith(".unavailable"))
  );
}

/** Never throws: the outcome says how many invocations were made, reported as Error.Attempts. */
export async function invokeWithThrottleRetry<T>(
  invoke: (attempt: number) => Promise<T>,
  policy: ThrottleRetryPolicy,
  signal: AbortSignal,
  random: () => number = Math.random,
): Promise<AttemptOutcome<T>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { ok: true, value: await invoke(attempt), attempts: attempt };
    } catch (error) {
      if (!isTransientError(error) || attempt >= policy.maxAttempts || signal.aborted) {
        return { ok: false, error, attempts: attempt };
      }
      try {
        await abortableDelay(backoffMs(error, attempt, policy, random), signal);
      } catch (abortReason) {
        return { ok: false, error: abortReason, attempts: attempt };
      }
    }
  }
}

function backoffMs(
  error: MatoolkitError,
  attempt: number,
  policy: ThrottleRetryPolicy,
  random: () => number,
): number {
  // The service said how long to wait: waiting less only earns another 429.
  if (error instanceof RetryAfterError) return error.retryAfterSeconds * 1000;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  // "Equal jitter": at least half the back-off, so retries spread out without collapsing to 0.
  return ceiling / 2 + random() * (ceiling / 2);
}
