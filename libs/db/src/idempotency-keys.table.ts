import type { Insertable, Selectable, Updateable } from "kysely";
import type { CreatedAt, JsonColumn, Timestamp } from "./column-types.ts";

export type IdempotencyKeyState = "in_progress" | "completed";

/** Backs the embedded IdempotencyStore (libs/runtime): first writer of a key wins. */
export interface IdempotencyKeysTable {
  key: string;
  state: IdempotencyKeyState;
  /** The stored outcome once completed. */
  value: JsonColumn<unknown>;
  claimedAt: CreatedAt;
  expiresAt: Timestamp;
  /** The process holding an unfinished claim (migration 0005); null when completed. */
  owner: string | null;
  /** Until when that owner's claim holds without a renewal; past it the claim is lost. */
  leaseExpiresAt: Timestamp | null;
}

export type IdempotencyKey = Selectable<IdempotencyKeysTable>;
export type NewIdempotencyKey = Insertable<IdempotencyKeysTable>;
export type IdempotencyKeyUpdate = Updateable<IdempotencyKeysTable>;
