import { MatoolkitError, topics } from "@matoolkit/domain";
import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  embeddedBusesOfEachTest,
  openEmbeddedBus,
  uniqueSubscription,
  waitUntil,
} from "../../test/embedded/open-embedded-bus.ts";
import type { AnyKysely } from "../any-kysely.ts";
import { createLogger } from "../logger.ts";
import { createBoss } from "./create-boss.ts";
import { createPgBossMessageBus } from "./pg-boss-message-bus.ts";
import type { Delivery, MessageBus, TakeDeliveries } from "../ports/index.ts";
import { MAX_DELIVERY_ATTEMPTS } from "../ports/index.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** MessageBus.consumeInTransaction on the embedded bus (take-jobs.ts, transactional-consumer.ts). */
describe("embedded bus: consumeInTransaction", () => {
  const { open } = embeddedBusesOfEachTest(() => database);
  const unique = uniqueSubscription;
  const message = (id: string, body: unknown = { id }) => ({
    id,
    topic: topics.workerResults,
    properties: {},
    body,
  });
  /** Rows of the subscription's queue still in pg-boss's job table, by state. */
  const queued = async (name: string) => {
    const { rows } = await sql<{ state: string; n: number }>`
      SELECT state, count(*)::int AS n FROM pgboss.job
      WHERE name = ${`${topics.workerResults}.${name}`} GROUP BY state`.execute(database.db);
    return Object.fromEntries(rows.map((row) => [row.state, row.n]));
  };
  /** Notes the deliveries in `table` (its primary key refuses a message handled twice). */
  const recordIn = async (table: string, trx: AnyKysely, deliveries: readonly Delivery[]) => {
    for (const delivery of deliveries) {
      await sql`INSERT INTO ${sql.table(table)} (id, delivery_count) VALUES (${delivery.id}, ${delivery.deliveryCount})`.execute(
        trx,
      );
    }
  };
  /** A batch handler that takes, records what it took in a table of its own, and commits. */
  const recordingBatches = (table: string, batches: string[][]) => async (take: TakeDeliveries) => {
    await database.db.transaction().execute(async (trx) => {
      const deliveries = await take(trx);
      if (deliveries.length === 0) return;
      batches.push(deliveries.map((delivery) => delivery.id));
      await recordIn(table, trx, deliveries);
    });
  };
  const recordTable = async () => {
    const table = unique("handled").replace(/-/g, "_");
    await sql`CREATE TABLE ${sql.table(table)} (id text PRIMARY KEY, delivery_count int NOT NULL)`.execute(
      database.db,
    );
    return table;
  };
  const handledIn = async (table: string) =>
    (await sql<{ id: string }>`SELECT id FROM ${sql.table(table)} ORDER BY id`.execute(database.db)).rows.map(
      (row) => row.id,
    );
  const neverFallback = async (delivery: Delivery) => {
    throw new Error(`unexpected fallback delivery ${delivery.id}`);
  };

  it("hands messages out in batches inside the handler's transaction: consumed at its commit, each once, in publish order", async () => {
    const bus = await open();
    const name = unique("trx");
    const table = await recordTable();
    const batches: string[][] = [];
    await bus.consumeInTransaction!(
      { topic: topics.workerResults, name, batchSize: 8 },
      recordingBatches(table, batches),
      neverFallback,
    );
    const ids = Array.from({ length: 30 }, (_, index) => `m-${String(index).padStart(2, "0")}`);
    await bus.publishMany(ids.map((id) => message(id)));

    await waitUntil(async () => expect(await handledIn(table)).toEqual(ids));
    expect(batches.flat()).toEqual(ids);
    expect(batches.every((batch) => batch.length <= 8)).toBe(true);
    expect(batches.some((batch) => batch.length > 1)).toBe(true);
    // Nothing left in the queue: no job was marked active, completed or kept.
    await waitUntil(async () => expect(await queued(name)).toEqual({}));
  });

  it("leaves every message of a rolled-back batch queued; each then goes one by one to the fallback, the bad one dead-lettered alone", async () => {
    const bus = await open();
    const name = unique("rollback");
    const table = await recordTable();
    const fallbackDeliveries: Delivery[] = [];
    let batchesTried = 0;
    await bus.consumeInTransaction!(
      { topic: topics.workerResults, name, batchSize: 10 },
      async (take) => {
        await database.db.transaction().execute(async (trx) => {
          const deliveries = await take(trx);
          if (deliveries.length === 0) return;
          batchesTried += 1;
          await recordIn(table, trx, deliveries);
          if (deliveries.some((delivery) => (delivery.body as { bad?: boolean }).bad === true)) {
            throw new Error("one message of the batch cannot be handled");
          }
        });
      },
      async (delivery) => {
        fallbackDeliveries.push(delivery);
        if ((delivery.body as { bad?: boolean }).bad === true) {
          throw new MatoolkitError("message.invalid", "bad message", { retriable: false });
        }
      },
    );
    await bus.publishMany([message("a"), message("bad", { bad: true }), message("c")]);

    await waitUntil(async () =>
      expect((await bus.deadLetters({ topic: topics.workerResults, name })).length).toBe(1),
    );
    const [deadLetter] = await bus.deadLetters({ topic: topics.workerResults, name });
    expect(deadLetter).toMatchObject({ id: "bad", error: expect.stringContaining("message.invalid") });
    // The failed batch wrote nothing (rolled back) and counted no delivery: the one-by-one path
    // delivered each message once, as a first delivery.
    expect(batchesTried).toBe(1);
    expect(await handledIn(table)).toEqual([]);
    expect(fallbackDeliveries.map((delivery) => [delivery.id, delivery.deliveryCount]).sort()).toEqual([
      ["a", 1],
      ["bad", 1],
      ["c", 1],
    ]);
    // Nothing left to deliver: pg-boss keeps the failed job's row (its copy is the dead letter).
    await waitUntil(async () => expect(await queued(name)).toEqual({ failed: 1 }));
  });

  it("redelivers a message whose fallback delivery fails, through later batches, then dead-letters it after the attempts", async () => {
    const bus = await open();
    const name = unique("retry");
    const seen: number[] = [];
    await bus.consumeInTransaction!(
      { topic: topics.workerResults, name, batchSize: 4 },
      async (take) => {
        await database.db.transaction().execute(async (trx) => {
          const deliveries = await take(trx);
          for (const delivery of deliveries) seen.push(delivery.deliveryCount);
          if (deliveries.length > 0) throw new Error("the batch fails every time");
        });
      },
      async (delivery) => {
        seen.push(delivery.deliveryCount);
        throw new Error("and so does the message alone");
      },
    );
    await bus.publish(message("doomed"));

    await waitUntil(async () =>
      expect((await bus.deadLetters({ topic: topics.workerResults, name })).length).toBe(1),
    );
    // Taken by a batch (delivery n), rolled back, then delivered alone as delivery n (pg-boss's
    // retry counts the one-by-one deliveries, not the rolled-back batches), until the limit.
    const expected = Array.from({ length: MAX_DELIVERY_ATTEMPTS }, (_, index) => [
      index + 1,
      index + 1,
    ]).flat();
    expect(seen).toEqual(expected);
    expect(await queued(name)).toEqual({ failed: 1 });
  });

  it("takes only messages that are due: a delayed one waits for its time", async () => {
    const bus = await open();
    const name = unique("delayed");
    const table = await recordTable();
    const batches: string[][] = [];
    await bus.consumeInTransaction!(
      { topic: topics.workerResults, name, batchSize: 8 },
      recordingBatches(table, batches),
      neverFallback,
    );
    const deliverAt = new Date(Date.now() + 1500);
    await bus.publishMany([{ ...message("later"), deliverAt }, message("now")]);

    await waitUntil(async () => expect(await handledIn(table)).toEqual(["now"]));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await handledIn(table)).toEqual(["now"]);
    await waitUntil(async () => expect(await handledIn(table)).toEqual(["later", "now"]));
    expect(Date.now()).toBeGreaterThanOrEqual(deliverAt.getTime());
  });

  it("shares a queue between consumers in several processes: every message handled exactly once", async () => {
    const buses: MessageBus[] = [await open(), await open(), await open()];
    const name = unique("shared");
    const table = await recordTable();
    const batchesOf = buses.map(() => [] as string[][]);
    for (const [index, bus] of buses.entries()) {
      await bus.consumeInTransaction!(
        { topic: topics.workerResults, name, batchSize: 5 },
        // The primary key of the table refuses a second handling of a message.
        recordingBatches(table, batchesOf[index]!),
        neverFallback,
      );
    }
    const ids = Array.from({ length: 200 }, (_, index) => `s-${String(index).padStart(3, "0")}`);
    for (let start = 0; start < ids.length; start += 20) {
      await buses[start % 3]!.publishMany(ids.slice(start, start + 20).map((id) => message(id)));
    }

    await waitUntil(async () => expect(await handledIn(table)).toEqual(ids));
    expect(batchesOf.flat(2).sort()).toEqual(ids);
    expect(batchesOf.filter((batches) => batches.length > 0).length).toBeGreaterThan(1);
  });

  it("stops between batches: a batch in flight finishes, nothing is taken after stop", async () => {
    const opening = await openEmbeddedBus(database);
    const name = unique("stop");
    const table = await recordTable();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let taking = 0;
    await opening.bus.consumeInTransaction!(
      { topic: topics.workerResults, name, batchSize: 2 },
      async (take) => {
        await database.db.transaction().execute(async (trx) => {
          const deliveries = await take(trx);
          if (deliveries.length === 0) return;
          taking += 1;
          await held;
          await recordIn(table, trx, deliveries);
        });
      },
      neverFallback,
    );
    await opening.bus.publishMany([message("x1"), message("x2"), message("x3")]);
    await waitUntil(() => expect(taking).toBe(1));

    const stopping = opening.close();
    release();
    await stopping;
    expect(await handledIn(table)).toEqual(["x1", "x2"]);
    expect(await queued(name)).toEqual({ created: 1 });
  });

  it("with `only`, takes just the messages it names, in the order they fell due, and the subscription's fetching consumer leaves them to it", async () => {
    const bus = await open();
    const name = unique("only");
    const table = await recordTable();
    const batches: string[][] = [];
    const fetched: string[] = [];
    const subscription = { topic: topics.workerResults, name };
    const kind = (id: string, value: string, deliverAt?: Date) => ({
      ...message(id),
      properties: { Kind: value },
      ...(deliverAt === undefined ? {} : { deliverAt }),
    });
    const soon = (ms: number) => new Date(Date.now() + ms);
    // Ids of their own: the bus drops an id another test of this file published (its dedupe).
    // Queued before any consumer runs. Published first, due last: in publish order a take
    // would hand "check-late" out first.
    await bus.declareSubscription(subscription);
    await bus.publishMany([
      kind("check-late", "check", soon(600)),
      kind("check-early", "check", soon(300)),
      kind("check-now", "check"),
    ]);
    await bus.publishMany([kind("event-a1", "event"), message("no-kind-a"), kind("event-a2", "event")]);
    await new Promise((resolve) => setTimeout(resolve, 800));

    await bus.consumeInTransaction!(
      { ...subscription, batchSize: 10, only: { property: "Kind", values: ["check", "poll"] } },
      recordingBatches(table, batches),
      neverFallback,
    );
    await bus.subscribe({ ...subscription, concurrency: 4 }, async (delivery) => {
      fetched.push(delivery.id);
    });

    await waitUntil(async () =>
      expect(await handledIn(table)).toEqual(["check-early", "check-late", "check-now"]),
    );
    expect(batches).toEqual([["check-now", "check-early", "check-late"]]);
    await waitUntil(() => expect([...fetched].sort()).toEqual(["event-a1", "event-a2", "no-kind-a"]));
    // Published while both consume: a check still goes to the transactional consumer only.
    await bus.publishMany([kind("check-after", "check"), kind("event-a3", "event")]);
    await waitUntil(async () => expect(await handledIn(table)).toContain("check-after"));
    await waitUntil(() => expect(fetched).toContain("event-a3"));
    expect(fetched).not.toContain("check-after");
    await waitUntil(async () => expect(await queued(name)).toEqual({}));
  });

  it("with `only`, wakes just the transactional consumer when a delayed message it takes falls due: the fetching consumer makes no empty fetch", async () => {
    // A bus whose statements are counted, polling far beyond the test: only wake-ups fetch.
    const fetchesOf = new Map<string, number>();
    const pool = new pg.Pool({ connectionString: database.url, max: 3 });
    const counted = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool }),
      log(event) {
        // pg-boss's fetch, as the fetching consumer runs it (take-jobs.ts): marks jobs active.
        if (event.level !== "query" || !event.query.sql.includes("state = 'active'")) return;
        for (const parameter of event.query.parameters)
          if (typeof parameter === "string") fetchesOf.set(parameter, (fetchesOf.get(parameter) ?? 0) + 1);
      },
    });
    const boss = createBoss({ connectionString: database.url, maxConnections: 2, maintenance: false });
    boss.on("error", () => {});
    await boss.start();
    const bus = await createPgBossMessageBus({
      boss,
      db: counted,
      connectionString: database.url,
      logger: createLogger({ level: "silent", name: "bus-test" }),
      pollingIntervalSeconds: 60,
    });
    try {
      const name = unique("due-taker");
      const queue = `${topics.workerResults}.${name}`;
      const subscription = { topic: topics.workerResults, name };
      const taken: { id: string; at: number }[] = [];
      const fetched: string[] = [];
      await bus.consumeInTransaction!(
        { ...subscription, batchSize: 10, only: { property: "Kind", values: ["check"] } },
        async (take) => {
          await counted.transaction().execute(async (trx) => {
            for (const delivery of await take(trx)) taken.push({ id: delivery.id, at: Date.now() });
          });
        },
        neverFallback,
      );
      await bus.subscribe({ ...subscription, concurrency: 2 }, async (delivery) => {
        fetched.push(delivery.id);
      });
      // Both consumers' first fetches (at start) have come back empty.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const fetchesBefore = fetchesOf.get(queue) ?? 0;
      const dueAt = new Date(Date.now() + 700);
      await bus.publish({ ...message("due-check"), properties: { Kind: "check" }, deliverAt: dueAt });

      await waitUntil(() => expect(taken.map((t) => t.id)).toEqual(["due-check"]));
      expect(taken[0]!.at).toBeGreaterThanOrEqual(dueAt.getTime() - 50);
      // Well before the 60 s poll, with room for a loaded machine.
      expect(taken[0]!.at - dueAt.getTime()).toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(fetchesOf.get(queue) ?? 0).toBe(fetchesBefore);

      // A delayed message the transactional consumer does not take still wakes the fetching one.
      const otherDue = new Date(Date.now() + 500);
      await bus.publish({ ...message("due-event"), properties: { Kind: "event" }, deliverAt: otherDue });
      await waitUntil(() => expect(fetched).toEqual(["due-event"]));
      expect(fetchesOf.get(queue) ?? 0).toBeGreaterThan(fetchesBefore);
    } finally {
      await bus.stop();
      await boss.stop({ graceful: false });
      await counted.destroy();
    }
  });

  it("with batchesAtOnce, works a backlog in batches side by side, and a wake on an idle queue starts one batch", async () => {
    const bus = await open();
    const name = unique("at-once");
    const table = await recordTable();
    let running = 0;
    let mostAtOnce = 0;
    const sizes: number[] = [];
    const subscription = { topic: topics.workerResults, name };
    await bus.declareSubscription(subscription);
    const ids = Array.from({ length: 40 }, (_, index) => `at-once-${String(index).padStart(2, "0")}`);
    await bus.publishMany(ids.map((id) => message(id)));
    await bus.consumeInTransaction!(
      { ...subscription, batchSize: 4, batchesAtOnce: 3 },
      async (take) => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        try {
          await database.db.transaction().execute(async (trx) => {
            const deliveries = await take(trx);
            sizes.push(deliveries.length);
            await recordIn(table, trx, deliveries);
            await new Promise((resolve) => setTimeout(resolve, 50));
          });
        } finally {
          running -= 1;
        }
      },
      neverFallback,
    );
    await waitUntil(async () => expect(await handledIn(table)).toEqual(ids));
    expect(mostAtOnce).toBe(3);

    // Drained: one more message is one batch, not one per slot.
    await waitUntil(() => expect(running).toBe(0));
    mostAtOnce = 0;
    sizes.length = 0;
    await bus.publish(message("at-once-late"));
    await waitUntil(async () => expect(await handledIn(table)).toContain("at-once-late"));
    await waitUntil(() => expect(running).toBe(0));
    expect(mostAtOnce).toBe(1);
    expect(sizes.filter((size) => size > 0)).toEqual([1]);
  });

  it("with commitAsynchronously, that subscription's batch transactions alone commit without the flush, set by the take itself", async () => {
    const bus = await open();
    // One connection: every batch transaction, and the check after them, on the same session.
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    const setting = async (on: AnyKysely) =>
      (await sql<{ value: string }>`SELECT current_setting('synchronous_commit') AS value`.execute(on))
        .rows[0]!.value;
    try {
      const seen: { consumer: string; ids: string[]; before: string; after: string }[] = [];
      const batchesOf = (consumer: string) => async (take: TakeDeliveries) => {
        await db.transaction().execute(async (trx) => {
          const before = await setting(trx);
          const deliveries = await take(trx);
          if (deliveries.length > 0)
            seen.push({ consumer, ids: deliveries.map((d) => d.id), before, after: await setting(trx) });
        });
      };
      const asynchronous = unique("async-commit");
      const synchronous = unique("sync-commit");
      await bus.consumeInTransaction!(
        { topic: topics.workerResults, name: asynchronous, batchSize: 8, commitAsynchronously: true },
        batchesOf("asynchronous"),
        neverFallback,
      );
      await bus.consumeInTransaction!(
        { topic: topics.workerResults, name: synchronous, batchSize: 8 },
        batchesOf("synchronous"),
        neverFallback,
      );
      await bus.publishMany(["c-1", "c-2", "c-3"].map((id) => message(id)));

      const idsOf = (consumer: string) =>
        seen.filter((batch) => batch.consumer === consumer).flatMap((b) => b.ids);
      await waitUntil(() => expect(idsOf("asynchronous")).toEqual(["c-1", "c-2", "c-3"]));
      await waitUntil(() => expect(idsOf("synchronous")).toEqual(["c-1", "c-2", "c-3"]));
      for (const batch of seen) {
        expect(batch.before).toBe("on");
        expect(batch.after).toBe(batch.consumer === "asynchronous" ? "off" : "on");
      }
      // For that transaction alone: the pooled session it ran on commits synchronously again.
      expect(await setting(db)).toBe("on");
      await waitUntil(async () => expect(await queued(asynchronous)).toEqual({}));
    } finally {
      await db.destroy();
    }
  });

  it("refuses a commitAsynchronously that is not a boolean, saying which field is wrong", async () => {
    const bus = await open();
    await expect(
      bus.consumeInTransaction!(
        {
          topic: topics.workerResults,
          name: unique("async-wrong"),
          batchSize: 4,
          commitAsynchronously: "yes" as unknown as boolean,
        },
        async () => {},
        neverFallback,
      ),
    ).rejects.toThrow(/boolean/);
  });

  it("refuses an `only` that names no value, saying which field is wrong", async () => {
    const bus = await open();
    await expect(
      bus.consumeInTransaction!(
        {
          topic: topics.workerResults,
          name: unique("only-empty"),
          batchSize: 4,
          only: { property: "Kind", values: [] },
        },
        async () => {},
        neverFallback,
      ),
    ).rejects.toThrow(/values/);
  });
});
