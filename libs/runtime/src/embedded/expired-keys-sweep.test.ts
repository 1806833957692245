import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installBusSchema } from "./install-bus-schema.ts";
import { busSchema } from "./bus-tables.ts";
import { deleteExpiredKeys } from "./expired-keys-sweep.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await installBusSchema(database.url);
});
afterAll(async () => {
  await database.drop();
});

const idempotencyKeys = async () =>
  (await sql<{ key: string }>`SELECT key FROM idempotency_keys ORDER BY key`.execute(database.db)).rows.map(
    (row) => row.key,
  );
const dedupeKeys = async () =>
  (
    await sql<{ message_id: string }>`
      SELECT message_id FROM ${sql.table(`${busSchema}.dedupe_keys`)} ORDER BY message_id`.execute(
      database.db,
    )
  ).rows.map((row) => row.message_id);

describe("deleteExpiredKeys", () => {
  it("deletes every expired idempotency key and dedupe key, chunk after chunk, and nothing still remembered", async () => {
    await sql`
      INSERT INTO idempotency_keys (key, state, value, expires_at)
      SELECT 'old-' || lpad(n::text, 2, '0'), 'completed', '{"Result":{"Upn":"a@contoso.test"}}'::jsonb, now() - interval '1 minute'
      FROM generate_series(1, 11) AS n
      UNION ALL
      SELECT 'live-' || n, 'completed', '{}'::jsonb, now() + interval '7 days' FROM generate_series(1, 2) AS n`.execute(
      database.db,
    );
    await sql`
      INSERT INTO ${sql.table(`${busSchema}.dedupe_keys`)} (topic, message_id, expires_at)
      SELECT 'worker-results', 'old-' || n, now() - interval '1 second' FROM generate_series(1, 7) AS n
      UNION ALL
      SELECT 'worker-results', 'live-1', now() + interval '10 minutes'`.execute(database.db);

    // Chunks of 4: 11 expired keys take three statements, not one pass per interval each.
    expect(await deleteExpiredKeys(database.db, "idempotency", { chunkRows: 4 })).toBe(11);
    expect(await idempotencyKeys()).toEqual(["live-1", "live-2"]);
    expect(await deleteExpiredKeys(database.db, "dedupe", { chunkRows: 4 })).toBe(7);
    expect(await dedupeKeys()).toEqual(["live-1"]);
    expect(await deleteExpiredKeys(database.db, "idempotency")).toBe(0);
  });

  it.each(["idempotency", "dedupe"] as const)(
    "leaves a %s key alone that was claimed again while the sweep chose it (re-checked on the committed row)",
    async (keys) => {
      const table =
        keys === "idempotency" ? sql.table("idempotency_keys") : sql.table(`${busSchema}.dedupe_keys`);
      const where =
        keys === "idempotency"
          ? sql`key = 'reclaimed'`
          : sql`topic = 'worker-jobs' AND message_id = 'reclaimed'`;
      if (keys === "idempotency") {
        await sql`INSERT INTO idempotency_keys (key, state, expires_at)
          VALUES ('reclaimed', 'completed', now() - interval '1 minute')`.execute(database.db);
      } else {
        await sql`INSERT INTO ${table} (topic, message_id, expires_at)
          VALUES ('worker-jobs', 'reclaimed', now() - interval '1 minute')`.execute(database.db);
      }
      // A claim renews the expired key and has not committed yet when the sweep runs.
      let sweeping: Promise<number> | undefined;
      await database.db.transaction().execute(async (trx) => {
        await sql`UPDATE ${table} SET expires_at = now() + interval '10 minutes' WHERE ${where}`.execute(trx);
        sweeping = deleteExpiredKeys(database.db, keys);
        // The sweep waits on the claim's row lock.
        await new Promise((resolve) => setTimeout(resolve, 300));
      });
      expect(await sweeping).toBe(0);
      const remaining = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`.execute(database.db);
      expect(remaining.rows[0]!.n).toBe(1);
    },
  );
});
