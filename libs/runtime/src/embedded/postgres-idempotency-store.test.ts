import { createTestDatabase } from "@matoolkit/testing";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { describeIdempotencyStoreContract } from "../../test/contract/idempotency-store.contract.ts";
import { claimKeys, completeKeys } from "./idempotency-key-statements.ts";
import { createPostgresIdempotencyStore } from "./postgres-idempotency-store.ts";

describeIdempotencyStoreContract("PostgreSQL idempotency_keys", async () => {
  const database = await createTestDatabase();
  return { store: createPostgresIdempotencyStore(database.db), cleanup: () => database.drop() };
});

describe("PostgreSQL idempotency_keys: completions recorded together", () => {
  it("refuses only the completion whose value PostgreSQL cannot store; the others in its group are recorded", async () => {
    const database = await createTestDatabase();
    try {
      const store = createPostgresIdempotencyStore(database.db);
      const options = { owner: "worker-a", ttlSeconds: 60, leaseSeconds: 60 };
      const keys = Array.from({ length: 12 }, (_, i) => `worker-job:step-${i}`);
      await Promise.all(keys.map((key) => store.claim(key, options)));
      // jsonb has no \u0000: a function result quoting a NUL byte is refused by the server.
      const outcomes = await Promise.allSettled(
        keys.map((key, i) => store.complete(key, i === 5 ? { text: "a\u0000b" } : { n: i }, 60)),
      );
      expect(outcomes.map((outcome) => outcome.status)).toEqual(
        keys.map((_, i) => (i === 5 ? "rejected" : "fulfilled")),
      );
      const after = await Promise.all(keys.map((key) => store.claim(key, { ...options, owner: "worker-b" })));
      after.forEach((outcome, i) =>
        expect(outcome).toEqual(
          i === 5
            ? expect.objectContaining({ status: "in_progress" })
            : { status: "completed", value: { n: i } },
        ),
      );
    } finally {
      await database.drop();
    }
  });
});

describe("PostgreSQL idempotency_keys: a completion rewrites no index (migration 0023)", () => {
  const week = 7 * 24 * 60 * 60;

  it("records a prompt job's outcome as a HOT update that keeps its claim's expiry; a late one moves the expiry", async () => {
    const database = await createTestDatabase();
    try {
      const { db } = database;
      const expiry = async (keys: string[]) =>
        (
          await sql<{ expiresAt: Date }>`
            SELECT expires_at AS "expiresAt" FROM idempotency_keys WHERE key = ANY(${keys}) ORDER BY key`.execute(
            db,
          )
        ).rows.map((row) => row.expiresAt.getTime());
      const claimsAndCompletion = async (
        claims: string[],
        completionTtl: number,
        completed = claims.length,
      ) => {
        // Claimed in a transaction of their own, as the worker does (now() is a transaction's start).
        await claimKeys(
          db,
          claims.map((key) => ({ key, owner: "worker-a", ttlSeconds: week, leaseSeconds: 60 })),
        );
        const keys = claims.slice(0, completed);
        const claimed = await expiry(keys);
        await sleep(20);
        const counted = await db.transaction().execute(async (trx) => {
          // pg_stat_xact_*: this transaction's own counts, so the difference is the completion's.
          const counts = async () => {
            const { rows } = await sql<{ updated: string; hot: string }>`
              SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_xact_user_tables
              WHERE relid = 'idempotency_keys'::regclass`.execute(trx);
            return { updated: Number(rows[0]!.updated), hot: Number(rows[0]!.hot) };
          };
          const before = await counts();
          await completeKeys(
            trx,
            keys.map((key, i) => ({ key, value: { result: i }, ttlSeconds: completionTtl })),
          );
          const after = await counts();
          return { updated: after.updated - before.updated, hot: after.hot - before.hot };
        });
        return { claimed, completed: await expiry(keys), ...counted };
      };

      // A group of completions on the first page that a group of 200 claims filled: without the
      // room the fill factor keeps, the new versions would not fit beside the old ones (not HOT).
      const prompt = await claimsAndCompletion(
        Array.from({ length: 200 }, (_, i) => `worker-job:prompt-${String(i).padStart(3, "0")}`),
        week,
        20,
      );
      expect(prompt).toMatchObject({ updated: 20, hot: 20 });
      expect(prompt.completed).toEqual(prompt.claimed);

      // Remembered a day longer than the claim asked: more than 1 % of the memory, so the expiry
      // moves to the completion's (an index key changes: not HOT).
      const longer = await claimsAndCompletion(["worker-job:longer"], week + 24 * 60 * 60);
      expect(longer).toMatchObject({ updated: 1, hot: 0 });
      expect(longer.completed[0]! - longer.claimed[0]!).toBeGreaterThan(23 * 60 * 60 * 1000);
    } finally {
      await database.drop();
    }
  });
});
