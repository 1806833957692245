import type { DataSourceError } from "../datasource-error.ts";
import { sleep } from "../deadline.ts";

/** How throttled or briefly unavailable Databricks calls are retried (within the query deadline). */
export interface RetryPolicy {
  /** Attempts after the first, per call. */
  readonly maxRetries: number;
  /** First backoff when the answer names no Retry-After; doubles per attempt, with jitter. */
  readonly baseDelayMs: number;
  /** Longest single wait, a server's Retry-After included. */
  readonly maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxRetries: 5, baseDelayMs: 500, maxDelayMs: 30_000 };

/**
 * Throttling (429), an overloaded or restarting service (503) and the API's own
 * TEMPORARILY_UNAVAILABLE error code pass on their own; any other 4xx is a request that will
 * never succeed, and other 5xx are reported rather than hammered.
 */
export function isTransient(status: number, errorCode: string | undefined): boolean {
  return status === 429 || status === 503 || errorCode === "TEMPORARILY_UNAVAILABLE";
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); else undefined. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  const text = value?.trim() ?? "";
  if (text === "") return undefined;
  if (/^\d+(?:\.\d+)?$/u.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The wait before retry number `retry` (0-based): the server's word, capped, else backoff. */
export function retryDelayMs(
  retry: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  // Half fixed, half random: many schedulers throttled together do not come back in step.
  return backoff / 2 + (random() * backoff) / 2;
}

/** One attempt's outcome: a value, or a failure worth another attempt (after `retryAfterMs`). */
export type Attempt<T> =
  { readonly value: T } | { readonly transient: DataSourceError; readonly retryAfterMs?: number };

/**
 * Runs `attempt` until it yields a value, at most `policy.maxRetries` more times; the last
 * transient failure is thrown. Every wait ends with the deadline (`signal`), so retries never
 * outlive the query.
 */
export async function withRetries<T>(
  attempt: () => Promise<Attempt<T>>,
  policy: RetryPolicy,
  signal: AbortSignal,
): Promise<T> {
  for (let retry = 0; ; retry++) {
    const outcome = await attempt();
    if ("value" in outcome) return outcome.value;
    if (retry >= policy.maxRetries) throw outcome.transient;
    await sleep(retryDelayMs(retry, outcome.retryAfterMs, policy), signal);
  }
}
