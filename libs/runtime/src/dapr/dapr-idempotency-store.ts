import { UNKNOWN_OWNER, type ClaimOutcome, type IdempotencyStore } from "../ports/index.ts";
import type { DaprStateStore, StoredState } from "./dapr-state-store.ts";

type ClaimRecord =
  | {
      readonly status: "in_progress";
      readonly claimedAt: string;
      /** Absent on a claim written before leases: it reads as lost. */
      readonly owner?: string;
      readonly leaseExpiresAt?: string;
      /** End of the key's memory, so a renewal keeps the TTL the claim was given. */
      readonly rememberUntil?: string;
    }
  | { readonly status: "completed"; readonly value: unknown };

export interface DaprIdempotencyStoreOptions {
  /** Clock of the leases, ms since the epoch (tests). Owners on several hosts compare their clocks. */
  readonly now?: () => number;
}

/**
 * IdempotencyStore on a Dapr state store: the claim is a first-write of the key (only one writer
 * can create it, whichever replica or process), completion overwrites it with the outcome, and the
 * TTL is the state store's logical expiry (dapr-state-store.ts), so an abandoned or completed
 * claim frees itself: once expired it reads as absent and the next claim takes it over.
 *
 * Leases live in the record: a claim past `leaseExpiresAt` is taken over, and a renewal moves it,
 * both by an ETag-guarded replace, so of a renewal and a takeover (or of several takeovers) only
 * one write wins. Lease times are the claimers' clocks: keep them synchronised (NTP) well within
 * the lease (30 s by default).
 */
export function createDaprIdempotencyStore(
  state: DaprStateStore,
  options: DaprIdempotencyStoreOptions = {},
): IdempotencyStore {
  const now = options.now ?? Date.now;
  const inProgress = (owner: string, ttlSeconds: number, leaseSeconds: number): ClaimRecord => ({
    status: "in_progress",
    claimedAt: new Date(now()).toISOString(),
    owner,
    leaseExpiresAt: new Date(now() + leaseSeconds * 1000).toISOString(),
    rememberUntil: new Date(now() + ttlSeconds * 1000).toISOString(),
  });
  const leaseLive = (record: ClaimRecord & { status: "in_progress" }): boolean =>
    record.leaseExpiresAt !== undefined && Date.parse(record.leaseExpiresAt) > now();

  return {
    async claim(key, { ttlSeconds, leaseSeconds, owner }): Promise<ClaimOutcome> {
      // More than one round: a key can expire, be released or lose its lease between our writes and reads.
      for (let round = 0; round < 3; round += 1) {
        if (await state.create(key, inProgress(owner, ttlSeconds, leaseSeconds), ttlSeconds)) {
          return { status: "claimed" };
        }
        const existing = await state.get<ClaimRecord>(key);
        if (existing === undefined) continue;
        const stored = existing.value;
        switch (stored.status) {
          case "completed":
            return { status: "completed", value: stored.value };
          case "in_progress": {
            if (leaseLive(stored) && stored.leaseExpiresAt !== undefined) {
              return {
                status: "in_progress",
                claimedAt: new Date(stored.claimedAt),
                owner: stored.owner ?? UNKNOWN_OWNER,
                leaseExpiresAt: new Date(stored.leaseExpiresAt),
              };
            }
            // The owner stopped renewing: take the claim over. Only one ETag match can win.
            const record = inProgress(owner, ttlSeconds, leaseSeconds);
            if (await state.replace(key, record, existing.etag, ttlSeconds)) {
              return {
                status: "lost",
                previousOwner: stored.owner ?? UNKNOWN_OWNER,
                claimedAt: new Date(stored.claimedAt),
              };
            }
            continue;
          }
          default: {
            const unknown: never = stored;
            throw new Error(`Unreadable idempotency record for a key: ${JSON.stringify(unknown)}`);
          }
        }
      }
      // Also where a key the store hides still refuses first writes (logged as state.key_blocked).
      throw new Error("Could not claim an idempotency key: it keeps appearing and expiring");
    },
    async renew(key, owner, leaseSeconds) {
      const existing: StoredState<ClaimRecord> | undefined = await state.get<ClaimRecord>(key);
      const stored = existing?.value;
      if (existing === undefined || stored?.status !== "in_progress" || stored.owner !== owner) return false;
      // Keep the memory the claim was given; a record without one keeps a lease's worth at least.
      const rememberMs =
        stored.rememberUntil === undefined ? leaseSeconds * 1000 : Date.parse(stored.rememberUntil) - now();
      const renewed: ClaimRecord = {
        ...stored,
        leaseExpiresAt: new Date(now() + leaseSeconds * 1000).toISOString(),
      };
      return state.replace(key, renewed, existing.etag, Math.max(leaseSeconds, rememberMs / 1000));
    },
    async complete(key, value, ttlSeconds) {
      const record: ClaimRecord = { status: "completed", value };
      await state.put(key, record, ttlSeconds);
    },
    async release(key) {
      await state.delete(key);
    },
  };
}
