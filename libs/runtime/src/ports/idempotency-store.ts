/**
 * Idempotency port: remembers that a unit of work (a worker job id) was started or finished, so a
 * redelivered message never runs a side effect twice (a double-sent email is an incident). In
 * Dapr mode a state store with first-write-wins; embedded, a PostgreSQL table.
 */
export type ClaimOutcome =
  /** First claim: do the work, then call complete(). */
  | { readonly status: "claimed" }
  /** Someone claimed it and has not finished (still running, or crashed before finishing). */
  | { readonly status: "in_progress"; readonly claimedAt: Date }
  /** Already done: the stored outcome, e.g. the result message to publish again. */
  | { readonly status: "completed"; readonly value: unknown };

export interface IdempotencyStore {
  claim(key: string, ttlSeconds: number): Promise<ClaimOutcome>;
  complete(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** Forget a claim whose work failed before any side effect, so a redelivery may try again. */
  release(key: string): Promise<void>;
}
