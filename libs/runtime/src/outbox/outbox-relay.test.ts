import { randomUUID } from "node:crypto";
import { topics } from "@matoolkit/domain";
import { enqueueOutbox } from "@matoolkit/db";
import type { OutboxMessage } from "@matoolkit/db";
import { createTestDatabase } from "@matoolkit/testing";
import type { TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import type { MessageBus, OutgoingMessage } from "../ports/index.ts";
import { startOutboxRelay } from "./outbox-relay.ts";
import type { OutboxRelay } from "./outbox-relay.ts";

const logger = createLogger({ level: "silent", name: "outbox-test" });

/**
 * The relay is tested against the port: what it hands to the bus, not what a broker does with it.
 * A call containing an id of `failFor` fails as a whole (publishMany is all or nothing), until the
 * test removes the id: a background pass may run at any time, so a failure must last, not happen once.
 */
function recordingBus(failFor: Set<string> = new Set()) {
  const published: OutgoingMessage[] = [];
  const calls: number[] = [];
  const bus: MessageBus = {
    async publish(message) {
      await bus.publishMany([message]);
    },
    async publishMany(messages) {
      const failing = messages.filter((message) => failFor.has(message.id));
      if (failing.length > 0) throw new Error("broker unavailable");
      calls.push(messages.length);
      published.push(...messages);
    },
    subscribe: async () => {},
    declareSubscription: async () => {},
    deadLetters: async () => [],
    stop: async () => {},
  };
  return { bus, published, calls };
}

function messages(count: number): OutboxMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    messageId: `msg-${randomUUID()}`,
    topic: topics.workerJobs,
    properties: { WorkerId: "worker-01" },
    body: { JobId: `step-${index}-attempt-1` },
  }));
}

describe("outbox relay", () => {
  let database: TestDatabase;
  const relays: OutboxRelay[] = [];
  const start = async (options: Omit<Parameters<typeof startOutboxRelay>[0], "db" | "logger">) => {
    const relay = await startOutboxRelay({ db: database.db, logger, ...options });
    relays.push(relay);
    return relay;
  };
  const outboxCount = async () =>
    (await sql<{ count: number }>`SELECT count(*)::int AS count FROM outbox`.execute(database.db)).rows[0]
      ?.count;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.stop()));
  });
  afterAll(async () => {
    await database.drop();
  });

  it("publishes rows of committed transactions exactly once, even with two relays, and never rolled-back ones", async () => {
    const { bus, published } = recordingBus();
    const committed = messages(20);
    const rolledBack = messages(3);
    await database.db.transaction().execute((trx) => enqueueOutbox(trx, committed));
    await expect(
      database.db.transaction().execute(async (trx) => {
        await enqueueOutbox(trx, rolledBack);
        throw new Error("business rule failed");
      }),
    ).rejects.toThrow("business rule failed");

    const relayA = await start({ bus, pollIntervalMs: 20, batchSize: 5 });
    const relayB = await start({ bus, pollIntervalMs: 20, batchSize: 5 });
    await Promise.all([relayA.flush(), relayB.flush()]);

    expect(published.map((message) => message.id).sort()).toEqual(
      committed.map((message) => message.messageId).sort(),
    );
    expect(published[0]).toMatchObject({ topic: topics.workerJobs, properties: { WorkerId: "worker-01" } });
    expect(await outboxCount()).toBe(0);
  });

  it("publishes a pass's rows in one publishMany, and leaves them all for the next pass when it fails", async () => {
    const rows = messages(3);
    const failFor = new Set([rows[1]!.messageId]);
    const { bus, published, calls } = recordingBus(failFor);
    const relay = await start({ bus, pollIntervalMs: 60_000 });
    await database.db.transaction().execute((trx) => enqueueOutbox(trx, rows));

    await expect(relay.flush()).rejects.toThrow("broker unavailable");
    expect(published).toEqual([]);
    expect(await outboxCount()).toBe(3);

    failFor.clear();
    await relay.flush();
    expect(published.map((message) => message.id)).toEqual(rows.map((row) => row.messageId));
    expect(calls).toEqual([3]);
    expect(await outboxCount()).toBe(0);
  });

  it("splits a large outbox into passes of batchSize rows, in id order", async () => {
    const rows = messages(12);
    const { bus, published, calls } = recordingBus();
    const relay = await start({ bus, pollIntervalMs: 60_000, batchSize: 5 });
    await database.db.transaction().execute((trx) => enqueueOutbox(trx, rows));

    await relay.flush();
    expect(calls).toEqual([5, 5, 2]);
    expect(published.map((message) => message.id)).toEqual(rows.map((row) => row.messageId));
    expect(await outboxCount()).toBe(0);
  });

  it("leaves an unreadable row in the table for an operator and publishes the rest of its batch, at every pass", async () => {
    const rows = messages(3);
    const { bus, published, calls } = recordingBus();
    const relay = await start({ bus, pollIntervalMs: 60_000 });
    await database.db.transaction().execute((trx) => enqueueOutbox(trx, rows));
    // A topic no bus knows: the row can never be published.
    const { rows: inserted } = await sql<{ id: string }>`
      INSERT INTO outbox (message_id, topic, properties, body)
      VALUES (${`msg-${randomUUID()}`}, 'no.such.topic', '{}'::jsonb, '{}'::jsonb) RETURNING id`.execute(
      database.db,
    );

    await relay.flush();
    expect(published.map((message) => message.id)).toEqual(rows.map((row) => row.messageId));
    const left = await sql<{ id: string }>`SELECT id FROM outbox`.execute(database.db);
    expect(left.rows.map((row) => String(row.id))).toEqual([String(inserted[0]!.id)]);

    // Still skipped, never blocking what comes after it.
    const later = messages(2);
    await database.db.transaction().execute((trx) => enqueueOutbox(trx, later));
    await relay.flush();
    expect(published.map((message) => message.id)).toEqual([...rows, ...later].map((row) => row.messageId));
    expect(calls).toEqual([3, 2]);
    expect(await outboxCount()).toBe(1);
    // As an operator would, once it is looked at (the other tests share this database).
    await sql`DELETE FROM outbox WHERE id = ${inserted[0]!.id}`.execute(database.db);
  });

  it("drains less than a batch in one statement on the outbox: no claim before the delete, no empty pass after", async () => {
    const rows = messages(4);
    const { bus, published } = recordingBus();
    const relay = await start({ bus, pollIntervalMs: 60_000, batchSize: 5 });
    await database.db.transaction().execute((trx) => enqueueOutbox(trx, rows));
    const statements: string[] = [];
    const original = pg.Client.prototype.query;
    const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const text =
        typeof args[0] === "string" ? args[0] : ((args[0] as { text?: string } | null)?.text ?? "");
      if (/\boutbox\b/u.test(text)) statements.push(text.replace(/\s+/gu, " ").trim().slice(0, 30));
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original);
    try {
      await relay.flush();
    } finally {
      spy.mockRestore();
    }
    expect(published.map((message) => message.id)).toEqual(rows.map((row) => row.messageId));
    expect(statements).toEqual(["DELETE FROM outbox WHERE id IN"]);
    expect(await outboxCount()).toBe(0);
  });

  it("passes deliverAt on to the bus", async () => {
    const { bus, published } = recordingBus();
    const relay = await start({ bus, pollIntervalMs: 60_000 });
    const deliverAt = new Date(Date.now() + 60_000);
    await enqueueOutbox(database.db, [{ ...messages(1)[0]!, deliverAt }]);

    await relay.flush();
    expect(published[0]?.deliverAt?.toISOString()).toBe(deliverAt.toISOString());
  });

  it("wakes on the enqueue's NOTIFY without waiting for its poll", async () => {
    const { bus, published } = recordingBus();
    await start({ bus, pollIntervalMs: 60_000, connectionString: database.url });
    const [message] = messages(1);
    await database.db.transaction().execute((trx) => enqueueOutbox(trx, [message!]));

    await vi.waitFor(() => expect(published.map((entry) => entry.id)).toEqual([message!.messageId]), {
      timeout: 15_000,
    });
  });
  it("publishes nothing before publishAfter resolves (the sidecar subscribed), then everything waiting", async () => {
    const { bus, published } = recordingBus();
    let subscribed!: () => void;
    const publishAfter = new Promise<void>((resolve) => (subscribed = resolve));
    const relay = await start({ bus, pollIntervalMs: 20, connectionString: database.url, publishAfter });
    const waiting = messages(2);
    await database.db.transaction().execute((trx) => enqueueOutbox(trx, waiting));
    // Several polls and the NOTIFY have come and gone: the rows wait in the table.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(published).toEqual([]);
    expect(await outboxCount()).toBe(2);

    subscribed();
    await relay.flush();
    expect(published.map((entry) => entry.id).sort()).toEqual(waiting.map((m) => m.messageId).sort());
    expect(await outboxCount()).toBe(0);
  });

  it("stops at once while still waiting for publishAfter, publishing nothing", async () => {
    const { bus, published } = recordingBus();
    const relay = await start({ bus, pollIntervalMs: 20, publishAfter: new Promise(() => undefined) });
    await enqueueOutbox(database.db, messages(1));
    await relay.stop();
    expect(published).toEqual([]);
    await sql`DELETE FROM outbox`.execute(database.db);
  });
});
