import { defaultRetryPolicy, type RetryPolicy } from "./retry-policy.ts";

/** Status polling and retries of the Databricks client. */
export interface DatabricksTiming {
  /** Status polls: quick at first (short queries), doubling up to `maxPollDelayMs`. */
  readonly firstPollDelayMs: number;
  readonly maxPollDelayMs: number;
  readonly retry: RetryPolicy;
}

export const defaultWarehouseStartTimeoutMs = 10 * 60_000;

export function databricksTiming(overrides: Partial<DatabricksTiming> = {}): DatabricksTiming {
  return {
    firstPollDelayMs: overrides.firstPollDelayMs ?? 100,
    maxPollDelayMs: overrides.maxPollDelayMs ?? 5_000,
    retry: { ...defaultRetryPolicy, ...overrides.retry },
  };
}
