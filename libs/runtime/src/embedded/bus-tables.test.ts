import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bossSchema, busSchema, installBusTables } from "./bus-tables.ts";

// Cloned from the test template, on which global-setup.ts ran installBusSchema: as a database
// whose processes started before.
let database: TestDatabase;
beforeAll(async () => (database = await createTestDatabase()));
afterAll(() => database.drop());

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return client;
}

/** [our due-order index on pg-boss's job table, our dedupe keys' expiry index, the retired fetch-order index]. */
async function indexesPresent(client: pg.Client): Promise<boolean[]> {
  const { rows } = await client.query<{ dueOrder: boolean; expiry: boolean; retired: boolean }>(
    `SELECT to_regclass($1) IS NOT NULL AS "dueOrder", to_regclass($2) IS NOT NULL AS expiry,
            to_regclass($3) IS NOT NULL AS retired`,
    [
      `${bossSchema}.matoolkit_job_due_order`,
      `${busSchema}.dedupe_keys_expires_at`,
      `${bossSchema}.matoolkit_job_fetch_order`,
    ],
  );
  return [rows[0]!.dueOrder, rows[0]!.expiry, rows[0]!.retired];
}

/** The index on pg-boss's job table that versions before issue 29's due-order fetch created. */
const createRetiredIndex = `CREATE INDEX matoolkit_job_fetch_order ON ${bossSchema}.job
  (name, priority DESC, created_on, id) WHERE state < 'active'`;

describe("installBusTables", () => {
  it("starts beside a publish in flight without waiting for it: what exists takes no lock", async () => {
    // A running process mid-publish: its transaction writes pg-boss's job table and our dedupe
    // keys. `CREATE INDEX IF NOT EXISTS` takes a share lock on its table before it looks, so a
    // starting process waited for this transaction at every start, and deadlocked with it when it
    // held one table's lock while waiting for the other's (the malformed-messages drill).
    const running = await connect();
    const starting = await connect();
    try {
      await running.query("BEGIN");
      await running.query(`LOCK TABLE ${bossSchema}.job IN ROW EXCLUSIVE MODE`);
      await running.query(
        `INSERT INTO ${busSchema}.dedupe_keys (topic, message_id, expires_at) VALUES ('worker-jobs', 'in-flight', now() + interval '10 minutes')`,
      );
      // Waiting at all is the failure: without this it would hang until the test's timeout.
      await starting.query("SET lock_timeout = '2s'");
      await expect(installBusTables(starting)).resolves.toBeUndefined();
      await running.query("COMMIT");
    } finally {
      await running.query("ROLLBACK").catch(() => undefined);
      await Promise.all([running.end(), starting.end()]);
    }
  });

  it("creates what is missing and drops what an earlier version left, each in a transaction of its own", async () => {
    const client = await connect();
    try {
      await client.query(`DROP INDEX ${bossSchema}.matoolkit_job_due_order`);
      await client.query(`DROP INDEX ${busSchema}.dedupe_keys_expires_at`);
      await client.query(createRetiredIndex);
      expect(await indexesPresent(client)).toEqual([false, false, true]);

      await installBusTables(client);

      expect(await indexesPresent(client)).toEqual([true, true, false]);
      // The index is the fetches' due order, whole (ties of one publish included), partial on the
      // jobs not yet handed out.
      const { rows } = await client.query<{ definition: string }>(
        `SELECT pg_get_indexdef(to_regclass($1)) AS definition`,
        [`${bossSchema}.matoolkit_job_due_order`],
      );
      expect(rows[0]!.definition).toContain("(name, start_after, created_on, id)");
      expect(rows[0]!.definition).toContain("WHERE (state < 'active'::pgboss.job_state)");
      // Nothing left open on the connection.
      const { rows: state } = await client.query<{ inTransaction: boolean }>(
        `SELECT now() <> statement_timestamp() AS "inTransaction"`,
      );
      expect(state[0]!.inTransaction).toBe(false);
    } finally {
      await client.end();
    }
  });

  it("leaves the retired index while the job table is busy, and drops it at a quieter start", async () => {
    // Dropping an index of pg-boss's partitioned job table locks it whole: while a publish holds
    // it, the drop waits its lock timeout (1 s) and gives up, rather than stall every publish and
    // fetch queued behind it, or fail the start.
    const running = await connect();
    const starting = await connect();
    try {
      await starting.query(createRetiredIndex);
      await running.query("BEGIN");
      await running.query(`LOCK TABLE ${bossSchema}.job IN ROW EXCLUSIVE MODE`);

      await expect(installBusTables(starting)).resolves.toBeUndefined();
      expect(await indexesPresent(starting)).toEqual([true, true, true]);

      await running.query("COMMIT");
      await installBusTables(starting);
      expect(await indexesPresent(starting)).toEqual([true, true, false]);
    } finally {
      await running.query("ROLLBACK").catch(() => undefined);
      await Promise.all([running.end(), starting.end()]);
    }
  });

  it("installs into an empty database, and a second run changes nothing", async () => {
    const empty = await createTestDatabase();
    const client = new pg.Client({ connectionString: empty.url });
    await client.connect();
    try {
      // pg-boss's schema stays (installBusSchema starts pg-boss first): the due-order index is
      // on its table; ours goes, with everything in it.
      await client.query(`DROP INDEX ${bossSchema}.matoolkit_job_due_order`);
      await client.query(`DROP SCHEMA ${busSchema} CASCADE`);
      expect(
        (await client.query(`SELECT to_regnamespace($1) IS NULL AS gone`, [busSchema])).rows[0].gone,
      ).toBe(true);
      await installBusTables(client);
      const tables = await client.query<{ name: string }>(
        `SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY 1`,
        [busSchema],
      );
      expect(tables.rows.map((row) => row.name)).toEqual(["dedupe_keys", "subscriptions"]);
      expect(await indexesPresent(client)).toEqual([true, true, false]);
      await expect(installBusTables(client)).resolves.toBeUndefined();
    } finally {
      await client.end();
      await empty.drop();
    }
  });
});
