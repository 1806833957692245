import { sql, type RawBuilder } from "kysely";
import { z } from "zod";
import type { AnyKysely } from "../any-kysely.ts";

/**
 * The two statements of the idempotency store that run once per worker job (a claim when the job
 * starts, a completion when it ends), written for many keys at once so that the jobs of one
 * worker share round trips (batched-statement.ts; issue 29). Keys within one call are distinct.
 */
export interface ClaimRequest {
  readonly key: string;
  readonly owner: string;
  readonly ttlSeconds: number;
  readonly leaseSeconds: number;
}

/** Whether the claim won, and what the key's row held before the statement. */
export const claimAnswerSchema = z.object({
  won: z.boolean(),
  previousState: z.string().nullable(),
  previousOwner: z.string().nullable(),
  previousClaimedAt: z.date().nullable(),
  previousRemembered: z.boolean().nullable(),
});
export type ClaimAnswer = z.infer<typeof claimAnswerSchema>;

/**
 * One statement decides each key's winner. `previous` locks the keys' existing rows, in key
 * order (concurrent claimers queue on them and then see the winner's row); only a forgotten row
 * or an unfinished claim past its lease is overwritten. `taken` reads `previous` in its own
 * source rows, so a key's previous row is read (and locked) before that key's insert: PostgreSQL
 * runs the sub-statements of a WITH in no set order, and a row locked after this very statement
 * updated it would read as absent, turning a takeover (`lost`) into a plain claim. camelCase
 * aliases: the service's Kysely may run CamelCasePlugin over result rows.
 */
export async function claimKeys(db: AnyKysely, requests: readonly ClaimRequest[]): Promise<ClaimAnswer[]> {
  const result = await sql<z.input<typeof claimAnswerSchema> & { key: string }>`
    WITH input AS (
      SELECT * FROM unnest(${requests.map((r) => r.key)}::text[], ${requests.map((r) => r.owner)}::text[],
                           ${requests.map((r) => r.ttlSeconds)}::float8[], ${requests.map((r) => r.leaseSeconds)}::float8[])
        AS i(key, owner, ttl, lease)
    ), previous AS (
      SELECT k.key, k.state, k.owner, k.claimed_at, k.expires_at > now() AS remembered
      FROM idempotency_keys k WHERE k.key IN (SELECT key FROM input) ORDER BY k.key FOR UPDATE
    ), taken AS (
      INSERT INTO idempotency_keys AS k (key, state, value, claimed_at, expires_at, owner, lease_expires_at)
      SELECT i.key, 'in_progress', NULL, now(), now() + make_interval(secs => i.ttl), i.owner,
             now() + make_interval(secs => i.lease)
      FROM input i LEFT JOIN previous p ON p.key = i.key
      ORDER BY i.key
      ON CONFLICT (key) DO UPDATE
        SET state = 'in_progress', value = NULL, claimed_at = now(), expires_at = EXCLUDED.expires_at,
            owner = EXCLUDED.owner, lease_expires_at = EXCLUDED.lease_expires_at
        WHERE k.expires_at <= now()
           OR (k.state = 'in_progress' AND (k.lease_expires_at IS NULL OR k.lease_expires_at <= now()))
      RETURNING k.key
    )
    SELECT i.key, t.key IS NOT NULL AS won,
           p.state AS "previousState", p.owner AS "previousOwner",
           p.claimed_at AS "previousClaimedAt", p.remembered AS "previousRemembered"
    FROM input i LEFT JOIN taken t ON t.key = i.key LEFT JOIN previous p ON p.key = i.key`.execute(db);
  const byKey = new Map(result.rows.map((row) => [row.key, row]));
  return requests.map((request) => claimAnswerSchema.parse(byKey.get(request.key)));
}

export interface CompletionRecord {
  readonly key: string;
  readonly value: unknown;
  readonly ttlSeconds: number;
}

/**
 * Records finished keys with their outcome. An upsert: a claim may have expired (and even been
 * taken over) while the work ran; the finished outcome is what later deliveries must see. Rows in
 * key order, as the claims lock them, so two groups never wait on each other crosswise.
 *
 * A key is remembered `ttlSeconds` from now, or until its claim's own expiry when that is at
 * most 1 % of `ttlSeconds` sooner (a job that ran for under 1 h 41 min of a 7-day memory) or
 * later: the row then changes no indexed column, and the update is HOT (migration
 * 0023_hot_idempotency_completion). A redelivery comes within minutes, not in a week's last hour.
 */
export async function completeKeys(db: AnyKysely, records: readonly CompletionRecord[]): Promise<void> {
  await completeKeysStatement(records).execute(db);
}

/** The statement of {@link completeKeys}, for a statement that records keys among other things (settle-deliveries.ts). */
export function completeKeysStatement(records: readonly CompletionRecord[]): RawBuilder<unknown> {
  return sql`
    INSERT INTO idempotency_keys AS k (key, state, value, claimed_at, expires_at)
    SELECT i.key, 'completed', i.value::jsonb, now(), now() + make_interval(secs => i.ttl)
    FROM unnest(${records.map((r) => r.key)}::text[], ${records.map((r) => JSON.stringify(r.value ?? null))}::text[],
                ${records.map((r) => r.ttlSeconds)}::float8[]) AS i(key, value, ttl)
    ORDER BY i.key
    ON CONFLICT (key) DO UPDATE
      SET state = 'completed', value = EXCLUDED.value,
          expires_at = CASE
            -- EXCLUDED.expires_at - now() is the ttl (ON CONFLICT sees only the row and EXCLUDED).
            WHEN k.expires_at >= EXCLUDED.expires_at - (EXCLUDED.expires_at - now()) / 100 THEN k.expires_at
            ELSE EXCLUDED.expires_at
          END,
          owner = NULL, lease_expires_at = NULL`;
}
