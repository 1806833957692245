import { sql } from "kysely";
import { z } from "zod";
import type { ClaimOutcome, IdempotencyStore } from "../ports/index.ts";
import type { AnyKysely } from "../any-kysely.ts";

const keySchema = z.string().min(1).max(500);
const ttlSchema = z.number().positive();

const rowSchema = z.discriminatedUnion("state", [
  z.object({ state: z.literal("in_progress"), claimedAt: z.date() }),
  z.object({ state: z.literal("completed"), value: z.unknown() }),
]);

/**
 * IdempotencyStore on the `idempotency_keys` table (libs/db migration):
 * key PK, state 'in_progress' | 'completed', value jsonb, claimed_at, expires_at.
 * An expired row, whatever its state, is as good as absent: the next claim takes it over.
 */
export function createPostgresIdempotencyStore(db: AnyKysely): IdempotencyStore {
  return {
    async claim(key, ttlSeconds) {
      keySchema.parse(key);
      ttlSchema.parse(ttlSeconds);
      // Two rounds at most: the row we conflicted with may expire or be released in between.
      for (let round = 0; round < 2; round++) {
        // One statement decides the winner: concurrent claims serialize on the key's row lock,
        // and only an expired row is overwritten.
        const claimed = await sql<{ key: string }>`
          INSERT INTO idempotency_keys AS k (key, state, value, claimed_at, expires_at)
          VALUES (${key}, 'in_progress', NULL, now(), now() + make_interval(secs => ${ttlSeconds}))
          ON CONFLICT (key) DO UPDATE
            SET state = 'in_progress', value = NULL, claimed_at = now(), expires_at = EXCLUDED.expires_at
            WHERE k.expires_at <= now()
          RETURNING key`.execute(db);
        if (claimed.rows.length === 1) return { status: "claimed" };

        // camelCase aliases: the service's Kysely may run CamelCasePlugin over result rows.
        const existing = await sql<{ state: string; value: unknown; claimedAt: Date }>`
          SELECT state, value, claimed_at AS "claimedAt" FROM idempotency_keys WHERE key = ${key} AND expires_at > now()`.execute(
          db,
        );
        const row = existing.rows[0];
        if (row !== undefined) return toOutcome(row);
      }
      throw new Error("Idempotency key kept changing while being claimed");
    },

    async complete(key, value, ttlSeconds) {
      keySchema.parse(key);
      ttlSchema.parse(ttlSeconds);
      // An upsert: the claim may have expired (and even been taken over) while the work ran;
      // the finished outcome is what later deliveries must see.
      await sql`
        INSERT INTO idempotency_keys AS k (key, state, value, claimed_at, expires_at)
        VALUES (${key}, 'completed', ${JSON.stringify(value ?? null)}::jsonb, now(), now() + make_interval(secs => ${ttlSeconds}))
        ON CONFLICT (key) DO UPDATE
          SET state = 'completed', value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`.execute(db);
    },

    async release(key) {
      keySchema.parse(key);
      // Only an unfinished claim: releasing must never make finished work run again.
      await sql`DELETE FROM idempotency_keys WHERE key = ${key} AND state = 'in_progress'`.execute(db);
    },
  };
}

function toOutcome(row: unknown): ClaimOutcome {
  const parsed = rowSchema.parse(row);
  return parsed.state === "in_progress"
    ? { status: "in_progress", claimedAt: parsed.claimedAt }
    : { status: "completed", value: parsed.value };
}
