import { UNKNOWN_OWNER, type ClaimOutcome, type IdempotencyStore } from "../ports/index.ts";
import type { DaprStateStore, StoredState } from "./dapr-state-store.ts";

type ClaimRecord =
  | {
      readonly status: "in_progress";
      readonly claimedAt: string;
      /** Absent on a claim written before leases: it reads as lost. */
      readonly owner?: string;
      readonly leaseExpiresAt?: string;
      /**
       * End of the key's memory. Read only for a claim without `rememberSeconds` (written by an
       * earlier release, whose renewals keep this end); still written for such a release's readers.
       */
      readonly rememberUntil?: string;
      /** The claim's TTL: a renewal remembers the claim that long from then (see `complete`). */
      readonly rememberSeconds?: number;
    }
  /** Written into the claim's own key before the done key existed: still read as completed. */
  | { readonly status: "completed"; readonly value: unknown };

/** The outcome `complete` records, in a key of its own (`<key>|done`). */
interface DoneRecord {
  readonly status: "completed";
  readonly value: unknown;
}

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
 *
 * The outcome is a key of its own, `<key>|done`, written with one first-write: overwriting the
 * claim cost two sidecar calls (a read for the ETag, then the conditional write: Dapr's save
 * answers no ETag, and components-contrib's state.redis refuses a plain write to a key first
 * written with first-write concurrency), at the end of every job, between its last side effect
 * and its result (issue 29). So a claim that finds its key taken reads the done key first, and a
 * takeover reads it again once it won (an owner completing meanwhile leaves the claim untouched).
 * The done key is remembered `ttlSeconds` from completion, the claim `ttlSeconds` from its
 * creation or last renewal: the claim can end first by at most the time since the last renewal
 * (a lease, or a short job's run) — a delivery arriving in that moment, a week on, would find the
 * key free.
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
    rememberSeconds: ttlSeconds,
  });
  const doneKey = (key: string) => `${key}|done`;
  const readDone = async (key: string): Promise<DoneRecord | undefined> =>
    (await state.get<DoneRecord>(doneKey(key)))?.value;
  const leaseLive = (record: ClaimRecord & { status: "in_progress" }): boolean =>
    record.leaseExpiresAt !== undefined && Date.parse(record.leaseExpiresAt) > now();

  return {
    async claim(key, { ttlSeconds, leaseSeconds, owner }): Promise<ClaimOutcome> {
      // More than one round: a key can expire, be released or lose its lease between our writes and reads.
      for (let round = 0; round < 3; round += 1) {
        if (await state.create(key, inProgress(owner, ttlSeconds, leaseSeconds), ttlSeconds)) {
          return { status: "claimed" };
        }
        const done = await readDone(key);
        if (done !== undefined) return { status: "completed", value: done.value };
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
              // The owner may have completed after our read of the done key: then it is done.
              const late = await readDone(key);
              if (late !== undefined) return { status: "completed", value: late.value };
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
      if ((await readDone(key)) !== undefined) return false;
      // Remembered its TTL from now (so it outlives a done key written within the lease); a claim
      // written before that was recorded keeps the end it was given, or a lease's worth at least.
      const rememberMs =
        stored.rememberSeconds !== undefined
          ? stored.rememberSeconds * 1000
          : stored.rememberUntil === undefined
            ? leaseSeconds * 1000
            : Date.parse(stored.rememberUntil) - now();
      const renewed: ClaimRecord = {
        ...stored,
        leaseExpiresAt: new Date(now() + leaseSeconds * 1000).toISOString(),
        rememberUntil: new Date(now() + Math.max(leaseSeconds * 1000, rememberMs)).toISOString(),
      };
      return state.replace(key, renewed, existing.etag, Math.max(leaseSeconds, rememberMs / 1000));
    },
    async complete(key, value, ttlSeconds) {
      const record: DoneRecord = { status: "completed", value };
      if (await state.create(doneKey(key), record, ttlSeconds)) return;
      // Recorded before (a completion retried after a lost answer, or another owner's): the last
      // record wins, as when the outcome overwrote the claim.
      await state.put(doneKey(key), record, ttlSeconds);
    },
    async release(key) {
      // All of the key's memory: a released key is claimable, whatever was recorded.
      await state.delete(doneKey(key));
      await state.delete(key);
    },
  };
}
