import { sql } from "kysely";
import { z } from "zod";
import { UNKNOWN_OWNER, type ClaimOutcome, type IdempotencyStore } from "../ports/index.ts";
import type { AnyKysely } from "../any-kysely.ts";
import { createBatchedStatement } from "./batched-statement.ts";
import {
  claimKeys,
  completeKeys,
  type ClaimAnswer,
  type ClaimRequest,
  type CompletionRecord,
} from "./idempotency-key-statements.ts";

/** Keys claimed or completed in one statement at most. */
const maxKeysPerStatement = 200;

const keySchema = z.string().min(1).max(500);
const secondsSchema = z.number().positive();
const claimOptionsSchema = z.object({
  ttlSeconds: secondsSchema,
  leaseSeconds: secondsSchema,
  owner: z.string().min(1).max(200),
});

const rowSchema = z.discriminatedUnion("state", [
  z.object({
    state: z.literal("in_progress"),
    claimedAt: z.date(),
    owner: z.string().nullable(),
    leaseExpiresAt: z.date().nullable(),
    leaseLive: z.boolean(),
  }),
  z.object({ state: z.literal("completed"), value: z.unknown() }),
]);

/**
 * IdempotencyStore on the `idempotency_keys` table (libs/db migrations 0001, 0005):
 * key PK, state 'in_progress' | 'completed', value jsonb, claimed_at, expires_at, and for an
 * unfinished claim its owner and lease_expires_at (NULL: a claim from before leases, lost).
 * An expired row, whatever its state, is as good as absent: the next claim takes it over.
 * Times are the database's clock, so owners on several hosts agree on when a lease ran out.
 */
export function createPostgresIdempotencyStore(db: AnyKysely): IdempotencyStore {
  // A worker's concurrent jobs share these two statements (one per group, not one per job).
  const claimOne = createBatchedStatement<ClaimRequest, ClaimAnswer>({
    maxBatch: maxKeysPerStatement,
    keyOf: (request) => request.key,
    many: (requests) => claimKeys(db, requests),
    one: async (request) => (await claimKeys(db, [request]))[0] as ClaimAnswer,
  });
  const completeOne = createBatchedStatement<CompletionRecord, void>({
    maxBatch: maxKeysPerStatement,
    keyOf: (record) => record.key,
    many: async (records) => {
      await completeKeys(db, records);
      return records.map(() => undefined);
    },
    one: (record) => completeKeys(db, [record]),
  });
  return {
    async claim(key, options): Promise<ClaimOutcome> {
      keySchema.parse(key);
      const { ttlSeconds, leaseSeconds, owner } = claimOptionsSchema.parse(options);
      // More than one round: the row we conflicted with may expire, be released or lose its lease in between.
      for (let round = 0; round < 3; round++) {
        const claimed = await claimOne({ key, owner, ttlSeconds, leaseSeconds });
        if (claimed.won) {
          // Taking over a remembered, unfinished claim means its owner died mid-work.
          const lostFromOwner =
            claimed.previousState === "in_progress" && claimed.previousRemembered === true;
          if (!lostFromOwner) return { status: "claimed" };
          return {
            status: "lost",
            previousOwner: claimed.previousOwner ?? UNKNOWN_OWNER,
            claimedAt: claimed.previousClaimedAt ?? new Date(0),
          };
        }

        const existing = await sql`
          SELECT state, value, claimed_at AS "claimedAt", owner, lease_expires_at AS "leaseExpiresAt",
                 coalesce(lease_expires_at > now(), false) AS "leaseLive"
          FROM idempotency_keys WHERE key = ${key} AND expires_at > now()`.execute(db);
        const row = existing.rows[0];
        if (row === undefined) continue;
        const parsed = rowSchema.parse(row);
        if (parsed.state === "completed") return { status: "completed", value: parsed.value };
        // A lease that ran out since our insert: claim again, now it can be taken over.
        if (!parsed.leaseLive || parsed.leaseExpiresAt === null) continue;
        return {
          status: "in_progress",
          claimedAt: parsed.claimedAt,
          owner: parsed.owner ?? UNKNOWN_OWNER,
          leaseExpiresAt: parsed.leaseExpiresAt,
        };
      }
      throw new Error("Idempotency key kept changing while being claimed");
    },

    async renew(key, owner, leaseSeconds) {
      keySchema.parse(key);
      secondsSchema.parse(leaseSeconds);
      // Also after the lease ran out, as long as nobody took the claim over: the owner is alive
      // (a slow database made it late), and the work is still its own.
      const renewed = await sql`
        UPDATE idempotency_keys SET lease_expires_at = now() + make_interval(secs => ${leaseSeconds})
        WHERE key = ${key} AND state = 'in_progress' AND owner = ${owner} AND expires_at > now()
        RETURNING key`.execute(db);
      return renewed.rows.length === 1;
    },

    async complete(key, value, ttlSeconds) {
      keySchema.parse(key);
      secondsSchema.parse(ttlSeconds);
      await completeOne({ key, value, ttlSeconds });
    },

    async release(key) {
      keySchema.parse(key);
      // Only an unfinished claim: releasing must never make finished work run again.
      await sql`DELETE FROM idempotency_keys WHERE key = ${key} AND state = 'in_progress'`.execute(db);
    },
  };
}
