import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import { listEvents } from "./events.repository.ts";
import {
  getInit,
  insertInits,
  listInitsByBatch,
  listPollingInitsDue,
  recordInitPollDispatch,
  transitionInit,
} from "./inits.repository.ts";
import type { NewInitExecution } from "./inits.table.ts";
import { seedBatch } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

function initRow(batchId: number, runbookVersion: number, stepIndex: number): NewInitExecution {
  return {
    batchId,
    runbookVersion,
    stepIndex,
    stepName: `init-${stepIndex}`,
    workerId: "worker-01",
    functionName: "New-Group",
    paramsJson: { Name: "Batch group" },
    isPollStep: true,
    pollIntervalSec: 30,
  };
}

describe("init executions", () => {
  it("creates init steps once per batch and version, listed in step order", async () => {
    const { batch } = await seedBatch(db, 0);
    const rows = [initRow(batch.id, 1, 1), initRow(batch.id, 1, 0), initRow(batch.id, 2, 0)];
    expect(await insertInits(db, rows)).toBe(3);
    expect(await insertInits(db, rows)).toBe(0);
    const versionOne = await listInitsByBatch(db, batch.id, 1);
    expect(versionOne.map((init) => [init.runbookVersion, init.stepIndex])).toEqual([
      [1, 0],
      [1, 1],
    ]);
    expect(await listInitsByBatch(db, batch.id)).toHaveLength(3);
  });

  it("shares the execution machine and polling bookkeeping with steps", async () => {
    const { batch } = await seedBatch(db, 0);
    await insertInits(db, [initRow(batch.id, 1, 0)]);
    const [init] = await listInitsByBatch(db, batch.id, 1);
    const polledAt = new Date("2030-03-01T00:00:00Z");
    await transitionInit(db, init!.id, "dispatch", { set: { jobId: `init-${init!.id}` } });
    expect(await transitionInit(db, init!.id, "dispatch")).toBeUndefined();
    await transitionInit(db, init!.id, "start_polling", {
      set: { pollStartedAt: polledAt, lastPolledAt: polledAt },
    });

    const dueIds = async (now: Date) => (await listPollingInitsDue(db, now)).map((due) => due.id);
    expect(await dueIds(new Date(polledAt.getTime() + 29_000))).not.toContain(init!.id);
    expect(await dueIds(new Date(polledAt.getTime() + 30_000))).toContain(init!.id);
    const nextPoll = new Date(polledAt.getTime() + 30_000);
    const polled = await recordInitPollDispatch(db, init!.id, {
      jobId: "init-poll-1",
      lastPolledAt: nextPoll,
    });
    expect(polled).toMatchObject({ pollCount: 1, lastPolledAt: nextPoll, jobId: "init-poll-1" });
    expect(await dueIds(new Date(polledAt.getTime() + 30_000))).not.toContain(init!.id);

    await transitionInit(db, init!.id, "succeed", { set: { resultJson: { GroupId: "g-1" } } });
    expect(await getInit(db, init!.id)).toMatchObject({
      status: "succeeded",
      resultJson: { GroupId: "g-1" },
    });
    const events = (await listEvents(db, batch.id, { limit: 10 })).filter((event) => event.entity === "init");
    expect(events.map((event) => event.toStatus)).toEqual(["dispatched", "polling", "succeeded"]);
  });
});
