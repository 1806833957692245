import type { Insertable, Selectable } from "kysely";
import type { CreatedAt, JsonColumn, Timestamp } from "./column-types.ts";

/**
 * The admin API's Idempotency-Key store (migration 0011): per caller and key, the request it was
 * first used for and, once that request succeeded, the answer a retry gets again.
 */
export interface ApiIdempotencyKeysTable {
  /** The caller's token `sub`. */
  subject: string;
  key: string;
  method: string;
  path: string;
  /** sha256 (hex) of the query string and the body. */
  fingerprint: string;
  /** The claim that owns the row (only it may store the answer or release the key). */
  claimId: string;
  /** Null while the first request is still in flight. */
  status: number | null;
  responseBody: JsonColumn<unknown>;
  responseHeaders: JsonColumn<Record<string, string> | null>;
  createdAt: CreatedAt;
  expiresAt: Timestamp;
}

export type ApiIdempotencyKey = Selectable<ApiIdempotencyKeysTable>;
export type NewApiIdempotencyKey = Insertable<ApiIdempotencyKeysTable>;
