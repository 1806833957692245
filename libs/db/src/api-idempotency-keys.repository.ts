import { sql } from "kysely";
import type { ApiIdempotencyKey } from "./api-idempotency-keys.table.ts";
import type { Db } from "./connection.ts";
import { jsonb } from "./json.ts";

export interface ApiIdempotencyClaim {
  readonly subject: string;
  readonly key: string;
  readonly method: string;
  readonly path: string;
  readonly fingerprint: string;
  /** A fresh uuid per attempt: names this request as the row's owner. */
  readonly claimId: string;
  /** How long the key (and the stored answer) lives. */
  readonly ttlSeconds: number;
  /**
   * An unfinished claim older than this is taken to be abandoned (its process died between acting
   * and storing the answer) and may be claimed again.
   */
  readonly abandonedAfterSeconds: number;
}

/**
 * Claims (subject, key) for a request. Returns `{claimed: true}` when this request now owns the
 * key: no row, an expired one, or an abandoned claim. Otherwise `{claimed: false, existing}` with
 * the committed row (in flight or completed), or `existing: undefined` when it vanished between
 * the two statements (its request failed and released it: try again). Runs as single statements
 * outside the request's own transaction, so a second request sees the claim at once.
 */
export async function claimApiIdempotencyKey(
  db: Db,
  claim: ApiIdempotencyClaim,
): Promise<{ claimed: true } | { claimed: false; existing: ApiIdempotencyKey | undefined }> {
  // The caller's expired keys go first: the table holds at most a day of each caller's keys.
  await sql`DELETE FROM api_idempotency_keys WHERE subject = ${claim.subject} AND expires_at <= now()`.execute(
    db,
  );
  const inserted = await sql`
    INSERT INTO api_idempotency_keys AS current
      (subject, key, method, path, fingerprint, claim_id, expires_at)
    VALUES (${claim.subject}, ${claim.key}, ${claim.method}, ${claim.path}, ${claim.fingerprint},
      ${claim.claimId}::uuid, now() + make_interval(secs => ${claim.ttlSeconds}))
    ON CONFLICT (subject, key) DO UPDATE SET
      method = excluded.method, path = excluded.path, fingerprint = excluded.fingerprint,
      claim_id = excluded.claim_id, status = NULL, response_body = NULL, response_headers = NULL,
      created_at = now(), expires_at = excluded.expires_at
    WHERE current.expires_at <= now()
      OR (current.status IS NULL AND current.created_at <= now() - make_interval(secs => ${claim.abandonedAfterSeconds}))
    RETURNING 1
  `.execute(db);
  if (inserted.rows.length > 0) return { claimed: true };
  const existing = await db
    .selectFrom("apiIdempotencyKeys")
    .selectAll()
    .where("subject", "=", claim.subject)
    .where("key", "=", claim.key)
    .executeTakeFirst();
  return { claimed: false, existing };
}

/** Stores the answer of the request that owns the claim; false when it no longer owns it. */
export async function completeApiIdempotencyKey(
  db: Db,
  owner: { readonly subject: string; readonly key: string; readonly claimId: string },
  response: { readonly status: number; readonly body: unknown; readonly headers: Record<string, string> },
): Promise<boolean> {
  const result = await sql`
    UPDATE api_idempotency_keys
    SET status = ${response.status}, response_body = ${jsonb(response.body ?? null)},
      response_headers = ${jsonb(response.headers)}
    WHERE subject = ${owner.subject} AND key = ${owner.key} AND claim_id = ${owner.claimId}::uuid
  `.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** The request failed: its key is free again, so a retry acts (only the owner's claim is deleted). */
export async function releaseApiIdempotencyKey(
  db: Db,
  owner: { readonly subject: string; readonly key: string; readonly claimId: string },
): Promise<void> {
  await sql`
    DELETE FROM api_idempotency_keys
    WHERE subject = ${owner.subject} AND key = ${owner.key} AND claim_id = ${owner.claimId}::uuid
      AND status IS NULL
  `.execute(db);
}

/** For tests and a maintenance sweep: rows past their expiry. */
export async function deleteExpiredApiIdempotencyKeys(db: Db): Promise<number> {
  const result = await sql`DELETE FROM api_idempotency_keys WHERE expires_at <= now()`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
