/**
 * Idempotency port: remembers that a unit of work (a worker job id) was started or finished, so a
 * redelivered message never runs a side effect twice (a double-sent email is an incident). In
 * Dapr mode a state store with first-write-wins; embedded, a PostgreSQL table.
 *
 * A claim is held by an owner (one process) under a lease the owner renews while it works. A
 * claim whose lease ran out without renewal belongs to a dead owner: the next claim takes it over
 * and learns it was `lost`, so the caller decides what a half-done unit of work means (fail it as
 * `worker.lost`, or run it again when that is known to be harmless). Without leases a crashed
 * owner's claim blocked its job until the key's whole memory expired (issue 11).
 */
export interface ClaimOptions {
  /** How long the key is remembered, claimed or completed (redeliveries within it are recognised). */
  readonly ttlSeconds: number;
  /** How long the claim holds without a renewal; past it the owner is presumed dead. */
  readonly leaseSeconds: number;
  /** Who claims: one running process (not a pool), so a restarted process is a new owner. */
  readonly owner: string;
}

export type ClaimOutcome =
  /** First claim (or the key's memory had expired): do the work, then call complete(). */
  | { readonly status: "claimed" }
  /** Another owner holds a live lease: it is (as far as anyone can tell) still working. */
  | {
      readonly status: "in_progress";
      readonly claimedAt: Date;
      readonly owner: string;
      readonly leaseExpiresAt: Date;
    }
  /**
   * The previous owner's lease had expired: the claim is now the caller's (atomically: of several
   * concurrent claimers exactly one hears `lost`), and the work may be half done.
   */
  | { readonly status: "lost"; readonly previousOwner: string; readonly claimedAt: Date }
  /** Already done: the stored outcome, e.g. the result message to publish again. */
  | { readonly status: "completed"; readonly value: unknown };

export interface IdempotencyStore {
  claim(key: string, options: ClaimOptions): Promise<ClaimOutcome>;
  /**
   * Extends the owner's lease by `leaseSeconds` from now. False when the key is not (or no
   * longer) an unfinished claim of this owner: taken over, completed, released or forgotten.
   */
  renew(key: string, owner: string, leaseSeconds: number): Promise<boolean>;
  complete(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** Forget a claim whose work failed before any side effect, so a redelivery may try again. */
  release(key: string): Promise<void>;
}

/** What an owner that never recorded one reads as (claims written before leases existed). */
export const UNKNOWN_OWNER = "unknown";
