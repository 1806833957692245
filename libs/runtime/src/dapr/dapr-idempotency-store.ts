import type { ClaimOutcome, IdempotencyStore } from "../ports/index.ts";
import type { DaprStateStore } from "./dapr-state-store.ts";

type ClaimRecord =
  | { readonly status: "in_progress"; readonly claimedAt: string }
  | { readonly status: "completed"; readonly value: unknown };

/**
 * IdempotencyStore on a Dapr state store: the claim is a first-write of the key (only one writer
 * can create it, whichever replica or process), completion overwrites it with the outcome, and the
 * TTL is the state store's logical expiry (dapr-state-store.ts), so an abandoned or completed
 * claim frees itself: once expired it reads as absent and the next claim takes it over.
 */
export function createDaprIdempotencyStore(state: DaprStateStore): IdempotencyStore {
  return {
    async claim(key, ttlSeconds): Promise<ClaimOutcome> {
      // More than one round: a key can expire or be released between our failed create and our read.
      for (let round = 0; round < 3; round += 1) {
        const record: ClaimRecord = { status: "in_progress", claimedAt: new Date().toISOString() };
        if (await state.create(key, record, ttlSeconds)) return { status: "claimed" };
        const existing = await state.get<ClaimRecord>(key);
        if (existing === undefined) continue;
        const stored = existing.value;
        switch (stored.status) {
          case "completed":
            return { status: "completed", value: stored.value };
          case "in_progress":
            return { status: "in_progress", claimedAt: new Date(stored.claimedAt) };
          default: {
            const unknown: never = stored;
            throw new Error(`Unreadable idempotency record for a key: ${JSON.stringify(unknown)}`);
          }
        }
      }
      // Also where a key the store hides still refuses first writes (logged as state.key_blocked).
      throw new Error("Could not claim an idempotency key: it keeps appearing and expiring");
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
