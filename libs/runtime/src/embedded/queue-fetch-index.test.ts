import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openEmbeddedBus } from "../../test/embedded/open-embedded-bus.ts";
import { dropPgBossFetchIndex } from "./queue-fetch-index.ts";
import { deadLetterQueue, subscriptionQueue } from "./queue-names.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** The queue's partition of pgboss.job, and whether pg-boss's fetch index is on it. */
async function fetchIndexOf(queue: string): Promise<{ table: string; present: boolean }> {
  const { rows } = await sql<{ table: string; present: boolean }>`
    SELECT q.partition_name AS "table", to_regclass('pgboss.' || q.partition_name || '_i5') IS NOT NULL AS present
    FROM pgboss.queue q WHERE q.name = ${queue}`.execute(database.db);
  return rows[0]!;
}

describe("pg-boss's fetch index on a subscription queue", () => {
  it("is dropped when the subscription is declared; other queues keep theirs", async () => {
    const { bus, close } = await openEmbeddedBus(database);
    try {
      const name = `fetch-index-${randomUUID().slice(0, 8)}`;
      await bus.declareSubscription({ topic: topics.workerResults, name });
      expect((await fetchIndexOf(subscriptionQueue(topics.workerResults, name))).present).toBe(false);
      // Its dead-letter queue is pg-boss's to read: untouched.
      expect((await fetchIndexOf(deadLetterQueue(topics.workerResults, name))).present).toBe(true);
    } finally {
      await close();
    }
  });

  it("stays while the queue's table is busy (the declaration does not wait long), and goes at the next", async () => {
    const { bus, close } = await openEmbeddedBus(database);
    const publishing = new pg.Client({ connectionString: database.url });
    await publishing.connect();
    try {
      const name = `fetch-index-${randomUUID().slice(0, 8)}`;
      const queue = subscriptionQueue(topics.workerResults, name);
      await bus.declareSubscription({ topic: topics.workerResults, name });
      // As an earlier version left it.
      const { table } = await fetchIndexOf(queue);
      await sql`CREATE INDEX ${sql.id(`${table}_i5`)} ON ${sql.table(`pgboss.${table}`)} (name, start_after)
        INCLUDE (priority, created_on, id) WHERE state < 'active'`.execute(database.db);
      // A publish in flight holds the queue's table.
      await publishing.query("BEGIN");
      await publishing.query(`LOCK TABLE pgboss.${table} IN ROW EXCLUSIVE MODE`);

      await expect(dropPgBossFetchIndex(database.db, queue)).resolves.toBeUndefined();
      expect((await fetchIndexOf(queue)).present).toBe(true);

      await publishing.query("COMMIT");
      await dropPgBossFetchIndex(database.db, queue);
      expect((await fetchIndexOf(queue)).present).toBe(false);
    } finally {
      await publishing.query("ROLLBACK").catch(() => undefined);
      await publishing.end();
      await close();
    }
  });
});
