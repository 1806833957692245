import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import {
  claimOutboxBatch,
  deleteOutbox,
  enqueueOutbox,
  OUTBOX_CHANNEL,
  type OutboxMessage,
} from "./outbox.repository.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

function message(index: number): OutboxMessage {
  return {
    messageId: `msg-${index}`,
    topic: "orchestrator-events",
    properties: { type: "phase-due" },
    body: [{ phaseExecutionId: index }],
  };
}

async function drainOutbox(): Promise<void> {
  await db.deleteFrom("outbox").execute();
}

describe("outbox", () => {
  it("stores messages as written and deletes what was published", async () => {
    await drainOutbox();
    const deliverAt = new Date("2030-01-01T00:00:30Z");
    const ids = await enqueueOutbox(db, [message(1), { ...message(2), deliverAt }]);
    expect(ids).toHaveLength(2);
    const rows = await db.transaction().execute((trx) => claimOutboxBatch(trx, 10));
    expect(rows.map((row) => [row.id, row.messageId, row.properties, row.body, row.deliverAt])).toEqual([
      [ids[0], "msg-1", { type: "phase-due" }, [{ phaseExecutionId: 1 }], null],
      [ids[1], "msg-2", { type: "phase-due" }, [{ phaseExecutionId: 2 }], deliverAt],
    ]);
    expect(await deleteOutbox(db, ids)).toBe(2);
    expect(await db.transaction().execute((trx) => claimOutboxBatch(trx, 10))).toEqual([]);
  });

  it("never hands the same row to two concurrent claimers", async () => {
    await drainOutbox();
    const ids = await enqueueOutbox(db, [message(1), message(2), message(3)]);
    let releaseFirst = () => {};
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let claimedByFirst: number[] = [];
    let firstClaimed = () => {};
    const firstHasClaimed = new Promise<void>((resolve) => (firstClaimed = resolve));
    const first = db.transaction().execute(async (trx) => {
      claimedByFirst = (await claimOutboxBatch(trx, 2)).map((row) => row.id);
      firstClaimed();
      await firstHolds;
    });
    await firstHasClaimed;
    const claimedBySecond = await db
      .transaction()
      .execute(async (trx) => (await claimOutboxBatch(trx, 10)).map((row) => row.id));
    releaseFirst();
    await first;
    expect(claimedByFirst).toEqual(ids.slice(0, 2));
    expect(claimedBySecond).toEqual(ids.slice(2));
  });

  it("wakes a listening relay when the enqueuing transaction commits, and not for a rollback", async () => {
    await drainOutbox();
    const listener = new pg.Client({ connectionString: testDb.url });
    await listener.connect();
    try {
      const notified: string[] = [];
      listener.on("notification", (notification) => notified.push(notification.channel));
      await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
      await expect(
        db.transaction().execute(async (trx) => {
          await enqueueOutbox(trx, [message(1)]);
          throw new Error("rolled back");
        }),
      ).rejects.toThrow("rolled back");
      await db.transaction().execute((trx) => enqueueOutbox(trx, [message(2), message(3)]));
      await expect.poll(() => notified, { timeout: 15_000 }).toEqual([OUTBOX_CHANNEL]);
      const rows = await db.selectFrom("outbox").select("messageId").orderBy("id").execute();
      expect(rows.map((row) => row.messageId)).toEqual(["msg-2", "msg-3"]);
    } finally {
      await listener.end();
    }
  });
});
