import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openEmbeddedBus } from "../../test/embedded/open-embedded-bus.ts";
import type { MessageBus } from "../ports/index.ts";
import { subscriptionQueue } from "./queue-names.ts";
import { QUEUE_FILL_FACTOR, setQueueFillFactor } from "./queue-fill-factor.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** The page each of the queue's jobs is on (ctid's block), by job id. */
async function pagesOf(queue: string): Promise<Map<string, string>> {
  const { rows } = await sql<{ id: string; page: string }>`
    SELECT id::text, (ctid::text::point)[0]::text AS page FROM pgboss.job WHERE name = ${queue}`.execute(
    database.db,
  );
  return new Map(rows.map((row) => [row.id, row.page]));
}

/** Declares a subscription of its own (no consumer) and returns its queue. */
async function declareNewQueue(bus: MessageBus): Promise<string> {
  const name = `fill-${randomUUID().slice(0, 8)}`;
  await bus.declareSubscription({ topic: topics.orchestratorEvents, name });
  return subscriptionQueue(topics.orchestratorEvents, name);
}

describe("embedded bus: a subscription queue's table", () => {
  it("keeps room on each page, so a fetch's update of a job stays on its page (logged as a small delta)", async () => {
    const { bus, close } = await openEmbeddedBus(database);
    try {
      const queue = await declareNewQueue(bus);
      // Rows of the size a worker job has (~750 bytes): several pages of them.
      const padding = "x".repeat(600);
      await bus.publishMany(
        Array.from({ length: 60 }, () => ({
          id: randomUUID(),
          topic: topics.orchestratorEvents,
          properties: { MessageType: "fill" },
          body: { padding },
        })),
      );
      const before = await pagesOf(queue);
      expect(new Set(before.values()).size).toBeGreaterThan(3);
      // What pg-boss's fetch writes to each job it hands out (plans.js fetchNextJob).
      await sql`UPDATE pgboss.job SET state = 'active', started_on = now() WHERE name = ${queue}`.execute(
        database.db,
      );
      const after = await pagesOf(queue);
      expect(after.size).toBe(60);
      for (const [id, page] of after) expect(page).toBe(before.get(id));
    } finally {
      await close();
    }
  });

  it("is altered only when its fill factor differs (every process declares its subscriptions at start)", async () => {
    const { bus, close } = await openEmbeddedBus(database);
    try {
      const queue = await declareNewQueue(bus);
      const options = sql<{ reloptions: string[] | null }>`
        SELECT c.reloptions FROM pgboss.queue q JOIN pg_class c ON c.relname = q.partition_name WHERE q.name = ${queue}`;
      expect((await options.execute(database.db)).rows[0]?.reloptions).toEqual([
        `fillfactor=${QUEUE_FILL_FACTOR}`,
      ]);
      // A lock the ALTER would wait for (a VACUUM's): the declaration of an aligned queue goes on.
      const table = (
        await sql<{
          table: string;
        }>`SELECT partition_name AS "table" FROM pgboss.queue WHERE name = ${queue}`.execute(database.db)
      ).rows[0]!.table;
      await database.db.transaction().execute(async (trx) => {
        await sql`LOCK TABLE ${sql.table(`pgboss.${table}`)} IN SHARE UPDATE EXCLUSIVE MODE`.execute(trx);
        const blocked = new Promise((_, reject) =>
          setTimeout(
            () => reject(new Error("the declaration waited for the lock: it altered the table")),
            2000,
          ),
        );
        await Promise.race([setQueueFillFactor(database.db, queue), blocked]);
      });
    } finally {
      await close();
    }
  });
});
