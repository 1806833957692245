import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import { insertInits, listInitsByBatch, listStuckInits, transitionInit } from "./inits.repository.ts";
import { insertSteps, listStepsByPhase, listStuckSteps, transitionStep } from "./steps.repository.ts";
import { seedBatch, stepRow } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

const dispatchedAt = new Date("2030-01-01T10:00:00Z");
const at = (seconds: number) => new Date(dispatchedAt.getTime() + seconds * 1000);
const options = { defaultTimeoutSec: 3600, limit: 100 };

describe("listStuckSteps / listStuckInits", () => {
  it("finds dispatched executions past their own timeout, or the default when they have none", async () => {
    const seeded = await seedBatch(db, 4);
    const [m0, m1, m2, m3] = seeded.members;
    await insertSteps(db, [
      stepRow(seeded, m0!, 0, { timeoutSec: 60 }),
      stepRow(seeded, m1!, 0),
      stepRow(seeded, m2!, 0, { timeoutSec: 60 }),
      stepRow(seeded, m3!, 0, { timeoutSec: 60 }),
    ]);
    const [short, byDefault, polling] = await listStepsByPhase(db, seeded.phase.id);
    await transitionStep(db, short!.id, "dispatch", { set: { dispatchedAt: at(1) } });
    await transitionStep(db, byDefault!.id, "dispatch", { set: { dispatchedAt } });
    // Polling has its own timeout (poll.timeout); a pending step was never sent.
    await transitionStep(db, polling!.id, "dispatch", { set: { dispatchedAt } });
    await transitionStep(db, polling!.id, "start_polling");

    const ids = async (now: Date, limit = 100) =>
      (await listStuckSteps(db, now, { ...options, limit })).map((step) => step.id);
    expect(await ids(at(61))).toEqual([]);
    expect(await ids(at(62))).toEqual([short!.id]);
    expect(await ids(at(3600))).toEqual([short!.id]);
    // Oldest dispatch first.
    expect(await ids(at(3601))).toEqual([byDefault!.id, short!.id]);
    expect(await ids(at(3601), 1)).toEqual([byDefault!.id]);
  });

  it("covers init steps the same way", async () => {
    const seeded = await seedBatch(db, 0);
    await insertInits(db, [
      {
        batchId: seeded.batch.id,
        runbookVersion: 1,
        stepIndex: 0,
        stepName: "g",
        workerId: "w",
        functionName: "F",
        timeoutSec: 10,
      },
    ]);
    const [init] = await listInitsByBatch(db, seeded.batch.id);
    await transitionInit(db, init!.id, "dispatch", { set: { dispatchedAt } });
    const stuck = async (now: Date) =>
      (await listStuckInits(db, now, options))
        .filter((row) => row.batchId === seeded.batch.id)
        .map((row) => row.id);
    expect(await stuck(at(10))).toEqual([]);
    expect(await stuck(at(11))).toEqual([init!.id]);
  });
});
