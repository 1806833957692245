import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeMessageBusContract } from "../../test/contract/message-bus.contract.ts";
import {
  embeddedBusesOfEachTest,
  openEmbeddedBus,
  uniqueSubscription,
  waitUntil,
} from "../../test/embedded/open-embedded-bus.ts";
import type { Delivery } from "../ports/index.ts";
import { fetchJobsStatement, takeJobsStatement } from "./take-jobs.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

// Each call is "another process": its own pg-boss, pool and LISTEN connection on the same database.
describeMessageBusContract("embedded (pg-boss)", async () => {
  const { bus, close } = await openEmbeddedBus(database);
  return { bus, cleanup: close };
});

describe("embedded bus: batching", () => {
  const { open, opened } = embeddedBusesOfEachTest(() => database);
  const unique = uniqueSubscription;

  it("group-commits concurrent publishes: every caller resolves and every message is delivered once", async () => {
    const bus = await open();
    const deliveries: Delivery[] = [];
    await bus.subscribe(
      { topic: topics.workerResults, name: unique("group"), concurrency: 8 },
      async (delivery) => void deliveries.push(delivery),
    );

    const ids = Array.from({ length: 60 }, () => randomUUID());
    await Promise.all(
      ids.map((id) => bus.publish({ id, topic: topics.workerResults, properties: {}, body: { id } })),
    );

    await waitUntil(() => expect(deliveries).toHaveLength(ids.length));
    expect(deliveries.map((delivery) => delivery.id).sort()).toEqual([...ids].sort());
    expect(deliveries.every((delivery) => delivery.deliveryCount === 1)).toBe(true);
  });

  it("publishes inside the caller's transaction: delivered after its commit, never after a rollback", async () => {
    const bus = await open();
    const deliveries: Delivery[] = [];
    await bus.subscribe({ topic: topics.workerResults, name: unique("in-trx") }, async (delivery) => {
      deliveries.push(delivery);
    });
    const message = (id: string) => ({ id, topic: topics.workerResults, properties: {}, body: { id } });
    const [committed, rolledBack] = [randomUUID(), randomUUID()];

    let seenBeforeCommit = -1;
    await database.db.transaction().execute(async (trx) => {
      await bus.publishInTransaction!(trx, [message(committed)]);
      // Not visible to the consumers (their own connections) while the transaction is open.
      await new Promise((resolve) => setTimeout(resolve, 600));
      seenBeforeCommit = deliveries.length;
    });
    expect(seenBeforeCommit).toBe(0);
    await waitUntil(() => expect(deliveries.map((delivery) => delivery.id)).toEqual([committed]));

    await expect(
      database.db.transaction().execute(async (trx) => {
        await bus.publishInTransaction!(trx, [message(rolledBack)]);
        throw new Error("the handler failed after publishing");
      }),
    ).rejects.toThrow(/handler failed/);
    // The rollback took its dedupe key too: publishing it again (the redelivered handler) goes out.
    await bus.publishInTransaction!(database.db, [message(rolledBack), message(committed)]);
    await waitUntil(() => expect(deliveries.map((delivery) => delivery.id)).toEqual([committed, rolledBack]));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(deliveries).toHaveLength(2);
  });

  it("writes no dedupe key for a message published once by its transaction, and drops nothing of its id", async () => {
    const bus = await open();
    const deliveries: Delivery[] = [];
    await bus.subscribe({ topic: topics.workerResults, name: unique("once") }, async (delivery) => {
      deliveries.push(delivery);
    });
    const [once, deduped] = [randomUUID(), randomUUID()];
    const message = (id: string, onceByTransaction?: boolean) => ({
      id,
      topic: topics.workerResults,
      properties: {},
      body: { id },
      ...(onceByTransaction === undefined ? {} : { onceByTransaction }),
    });
    await database.db
      .transaction()
      .execute((trx) => bus.publishInTransaction!(trx, [message(once, true), message(deduped)]));
    const keys = await sql<{ message_id: string }>`
      SELECT message_id FROM matoolkit_bus.dedupe_keys WHERE message_id IN (${once}, ${deduped})`.execute(
      database.db,
    );
    expect(keys.rows.map((row) => row.message_id)).toEqual([deduped]);
    await waitUntil(() =>
      expect(deliveries.map((delivery) => delivery.id).sort()).toEqual([once, deduped].sort()),
    );
    // Nothing remembers its id: a publish of it again goes out (a takeover's second result does,
    // and its consumer ignores it), while the deduplicated one is still dropped.
    await bus.publishMany([message(once), message(deduped)]);
    await waitUntil(() => expect(deliveries.filter((delivery) => delivery.id === once)).toHaveLength(2));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(deliveries.filter((delivery) => delivery.id === deduped)).toHaveLength(1);
  });

  it("fails only the publish of a malformed message, not the publishes grouped with it", async () => {
    const bus = await open();
    const deliveries: Delivery[] = [];
    await bus.subscribe({ topic: topics.workerResults, name: unique("malformed") }, async (delivery) => {
      deliveries.push(delivery);
    });

    const good = [randomUUID(), randomUUID()];
    const outcomes = await Promise.allSettled([
      bus.publish({ id: good[0]!, topic: topics.workerResults, properties: {}, body: {} }),
      bus.publish({ id: "", topic: topics.workerResults, properties: {}, body: {} }),
      bus.publish({ id: good[1]!, topic: topics.workerResults, properties: {}, body: {} }),
    ]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    await waitUntil(() => expect(deliveries.map((delivery) => delivery.id).sort()).toEqual([...good].sort()));
  });

  it("fails only the publish whose body PostgreSQL cannot store, not the publishes grouped with it", async () => {
    const bus = await open();
    const deliveries: Delivery[] = [];
    await bus.subscribe({ topic: topics.workerResults, name: unique("nul") }, async (delivery) => {
      deliveries.push(delivery);
    });

    // jsonb has no \u0000: a function result quoting a NUL byte is refused by the server itself.
    const ids = Array.from({ length: 6 }, () => randomUUID());
    const outcomes = await Promise.allSettled(
      ids.map((id, i) =>
        bus.publish({
          id,
          topic: topics.workerResults,
          properties: {},
          body: { text: i === 3 ? "a\u0000b" : "ok" },
        }),
      ),
    );

    expect(outcomes.map((outcome) => outcome.status)).toEqual(
      ids.map((_, i) => (i === 3 ? "rejected" : "fulfilled")),
    );
    const good = ids.filter((_, i) => i !== 3);
    await waitUntil(() => expect(deliveries.map((delivery) => delivery.id).sort()).toEqual([...good].sort()));
  });

  it("writes each job row as pg-boss's own insert writes it into the same queue", async () => {
    const bus = await open();
    const [first, second] = [unique("rows-a"), unique("rows-b")];
    await bus.declareSubscription({ topic: topics.workerResults, name: first });
    await bus.declareSubscription({ topic: topics.workerResults, name: second });
    const deliverAt = new Date(Date.now() + 3_600_000);
    await bus.publishMany([
      { id: "now", topic: topics.workerResults, properties: { A: "1" }, body: { n: 1 } },
      { id: "later", topic: topics.workerResults, properties: {}, body: null, deliverAt },
    ]);
    const reference = opened[0]!.boss;
    const queue = `${topics.workerResults}.${first}`;
    await reference.insert([{ name: queue, data: { reference: true } }]);

    const rows = (
      await sql<Record<string, unknown>>`
        SELECT id, name, data, priority, state, retry_limit, retry_delay, retry_backoff, expire_in,
               keep_until - start_after AS keep_for, dead_letter, policy, singleton_key, singleton_on,
               start_after > now() + interval '50 minutes' AS delayed
        FROM pgboss.job WHERE name IN (${queue}, ${`${topics.workerResults}.${second}`})
        ORDER BY created_on, id`.execute(database.db)
    ).rows;
    const ours = rows.filter((row) => (row.data as { reference?: boolean }).reference !== true);
    const theirs = rows.find((row) => (row.data as { reference?: boolean }).reference === true)!;
    expect(ours).toHaveLength(4);
    const settings = ({
      id: _id,
      name: _name,
      data: _data,
      delayed: _delayed,
      ...rest
    }: Record<string, unknown>) => rest;
    for (const row of ours.filter((row) => row.name === queue))
      expect(settings(row)).toEqual(settings(theirs));
    // One job per subscription; a message's jobs share its id (pg-boss's key is name and id).
    const byMessage = (id: string) => ours.filter((row) => (row.data as { id: string }).id === id);
    expect(new Set(byMessage("now").map((row) => row.id)).size).toBe(1);
    expect(byMessage("later").every((row) => row.delayed === true)).toBe(true);
    expect(byMessage("now")[0]!.data).toEqual({
      id: "now",
      topic: topics.workerResults,
      properties: { A: "1" },
      body: { n: 1 },
    });
  });

  it("fetches and takes from a long queue through the due-order index, also in a queue created after the install", async () => {
    const bus = await open();
    const name = unique("long-queue");
    await bus.declareSubscription({ topic: topics.workerResults, name });
    // One publish: the 3,000 jobs share their start_after and created_on.
    await bus.publishMany(
      Array.from({ length: 3000 }, () => ({
        id: randomUUID(),
        topic: topics.workerResults,
        properties: {},
        body: {},
      })),
    );
    const queue = `${topics.workerResults}.${name}`;
    await sql`ANALYZE pgboss.job`.execute(database.db);
    const only = { property: "MessageType", values: ["retry-check"] };
    // (A take of `only` some kind reads the same index where that kind is common, as checks are
    // in their queue; here, where none is, the planner rightly reads the table instead.)
    for (const statement of [
      fetchJobsStatement(queue, 16),
      fetchJobsStatement(queue, 16, only),
      takeJobsStatement(queue, 16),
    ]) {
      const plan = await database.db.transaction().execute(async (trx) => {
        const explained = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${statement}`.execute(trx);
        return explained.rows.map((row) => row["QUERY PLAN"]).join("\n");
      });
      // Walks the index in the fetch's order (matoolkit_job_due_order, on the partition under a
      // name PostgreSQL derives from its columns) and stops after 16 rows, instead of reading and
      // sorting all 3,000 (pg-boss's index on (name, start_after) orders none of them apart).
      expect(plan).toMatch(/Index Scan using \S*_name_start_after_created_on_\S* on /u);
      expect(plan).not.toMatch(/Sort Key: job\./u);
    }
    // pg-boss's own fetch index is gone from the subscription's table: nothing reads it there.
    const { rows } = await sql<{ indexes: string[] }>`
      SELECT array_agg(i.relname::text ORDER BY i.relname) AS indexes
      FROM pgboss.queue q JOIN pg_catalog.pg_class t ON t.relname = q.partition_name
      JOIN pg_catalog.pg_index x ON x.indrelid = t.oid JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
      WHERE q.name = ${queue}`.execute(database.db);
    expect(rows[0]!.indexes.some((index) => index.endsWith("_i5"))).toBe(false);
    expect(rows[0]!.indexes.some((index) => index.includes("_name_start_after_created_on_"))).toBe(true);
  });

  it("delivers the messages of one publishMany in call order to a one-at-a-time subscription", async () => {
    const bus = await open();
    const deliveries: Delivery[] = [];
    const ids = Array.from({ length: 30 }, () => randomUUID());
    const orderedName = unique("ordered");
    await bus.declareSubscription({ topic: topics.workerResults, name: orderedName });
    await bus.publishMany(ids.map((id) => ({ id, topic: topics.workerResults, properties: {}, body: {} })));
    await bus.subscribe(
      { topic: topics.workerResults, name: orderedName, concurrency: 1 },
      async (delivery) => {
        deliveries.push(delivery);
      },
    );

    await waitUntil(() => expect(deliveries.map((delivery) => delivery.id)).toEqual(ids));
  });

  it("removes every delivered job when many finish at once (nothing left to redeliver)", async () => {
    const bus = await open();
    const name = unique("completions");
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    await bus.subscribe({ topic: topics.workerResults, name, concurrency: 16 }, async (delivery) => {
      started.push(delivery.id);
      await released;
    });

    const ids = Array.from({ length: 16 }, () => randomUUID());
    await bus.publishMany(ids.map((id) => ({ id, topic: topics.workerResults, properties: {}, body: {} })));
    await waitUntil(() => expect(started).toHaveLength(ids.length));
    // A done job is deleted (queue-consumer.ts), not kept as `completed`: while they run, all 16
    // are there (active); once their handlers have returned, none is left in any state.
    const queue = `${topics.workerResults}.${name}`;
    const jobStates = async () =>
      (
        await sql<{ state: string; count: number }>`
          SELECT state, count(*)::int AS count FROM pgboss.job WHERE name = ${queue} GROUP BY state`.execute(
          database.db,
        )
      ).rows;
    expect(await jobStates()).toEqual([{ state: "active", count: ids.length }]);
    release();

    await waitUntil(async () => expect(await jobStates()).toEqual([]));
    expect(started.sort()).toEqual([...ids].sort());
  });
});
