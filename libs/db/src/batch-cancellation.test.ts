import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cancelBatch } from "./batch-cancellation.ts";
import { getBatch, transitionBatch } from "./batches.repository.ts";
import type { Db } from "./connection.ts";
import { listEvents } from "./events.repository.ts";
import { insertInits, listInitsByBatch, transitionInit } from "./inits.repository.ts";
import { insertPhases, listPhases, transitionPhase } from "./phases.repository.ts";
import { insertSteps, listStepsByBatch } from "./steps.repository.ts";
import { seedBatch, stepRow, stepThrough } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

/** A batch mid-run: one phase running, one completed, one still pending; steps and inits in every state. */
async function batchMidRun() {
  const seeded = await seedBatch(db, 2);
  await transitionBatch(db, seeded.batch.id, "activate");
  const [done, later] = await insertPhases(db, seeded.batch.id, [
    { phaseName: "done", sequence: 1, offsetMinutes: 0, dueAt: null, runbookVersion: 1 },
    { phaseName: "later", sequence: 2, offsetMinutes: 0, dueAt: null, runbookVersion: 1 },
  ]);
  await transitionPhase(db, seeded.phase.id, "dispatch");
  await transitionPhase(db, done!.id, "dispatch");
  await transitionPhase(db, done!.id, "complete");
  const [m0, m1] = seeded.members;
  await insertSteps(
    db,
    [0, 1].flatMap((index) => [stepRow(seeded, m0!, index), stepRow(seeded, m1!, index)]),
  );
  const steps = await listStepsByBatch(db, seeded.batch.id, { limit: 10, offset: 0 });
  const step = (member: number, index: number) =>
    steps.find((s) => s.batchMemberId === seeded.members[member]!.id && s.stepIndex === index)!;
  await stepThrough(db, step(0, 0).id, ["dispatch", "succeed"]);
  await stepThrough(db, step(0, 1).id, ["dispatch"]);
  await stepThrough(db, step(1, 0).id, ["dispatch", "start_polling"]);
  await insertInits(
    db,
    [0, 1].map((stepIndex) => ({
      batchId: seeded.batch.id,
      runbookVersion: 1,
      stepIndex,
      stepName: `init-${stepIndex}`,
      workerId: "worker-01",
      functionName: "New-Group",
    })),
  );
  const [init0] = await listInitsByBatch(db, seeded.batch.id);
  await transitionInit(db, init0!.id, "dispatch");
  await transitionInit(db, init0!.id, "succeed");
  return { seeded, step, done: done!, later: later! };
}

describe("cancelBatch", () => {
  it("ends the batch, its pending and dispatched phases and its open steps and inits, with events", async () => {
    const { seeded, step, later } = await batchMidRun();
    const cancelled = await cancelBatch(db, seeded.batch.id, "batch.cancelled");

    expect(cancelled?.batch.status).toBe("cancelled");
    expect(cancelled?.phaseIds).toEqual([seeded.phase.id, later.id]);
    expect(cancelled?.stepIds).toEqual([step(0, 1).id, step(1, 0).id, step(1, 1).id].sort((a, b) => a - b));
    expect(cancelled?.initIds).toHaveLength(1);
    expect((await listPhases(db, seeded.batch.id)).map((p) => [p.phaseName, p.status])).toEqual([
      ["migrate", "cancelled"],
      ["done", "completed"],
      ["later", "cancelled"],
    ]);
    const steps = await listStepsByBatch(db, seeded.batch.id, { limit: 10, offset: 0 });
    expect(steps.map((s) => s.status).sort()).toEqual(["cancelled", "cancelled", "cancelled", "succeeded"]);
    expect((await listInitsByBatch(db, seeded.batch.id)).map((i) => i.status)).toEqual([
      "succeeded",
      "cancelled",
    ]);

    const events = (await listEvents(db, seeded.batch.id, { limit: 100 })).filter(
      (event) => event.reason === "batch.cancelled",
    );
    expect(events.map((e) => `${e.entity}:${e.fromStatus}→${e.toStatus}`)).toEqual([
      "batch:active→cancelled",
      "phase:dispatched→cancelled",
      "phase:pending→cancelled",
      // In step id order: m1's first step, then m0's and m1's second.
      "step:polling→cancelled",
      "step:dispatched→cancelled",
      "step:pending→cancelled",
      "init:pending→cancelled",
    ]);
  });

  it("does nothing to a batch that was cancelled already or has ended", async () => {
    const { seeded } = await batchMidRun();
    expect(await cancelBatch(db, seeded.batch.id, "batch.cancelled")).toBeDefined();
    const eventCount = (await listEvents(db, seeded.batch.id, { limit: 1000 })).length;
    expect(await cancelBatch(db, seeded.batch.id, "batch.cancelled")).toBeUndefined();
    expect(await listEvents(db, seeded.batch.id, { limit: 1000 })).toHaveLength(eventCount);

    const ended = await seedBatch(db, 1);
    await transitionBatch(db, ended.batch.id, "fail", { reason: "init failed" });
    expect(await cancelBatch(db, ended.batch.id, "batch.cancelled")).toBeUndefined();
    expect((await getBatch(db, ended.batch.id))?.status).toBe("failed");
  });

  it("runs in the caller's transaction: rolled back with it, nothing is cancelled", async () => {
    const { seeded } = await batchMidRun();
    await expect(
      db.transaction().execute(async (trx) => {
        await cancelBatch(trx, seeded.batch.id, "batch.cancelled");
        throw new Error("caller failed after cancelling");
      }),
    ).rejects.toThrow("caller failed");
    expect((await getBatch(db, seeded.batch.id))?.status).toBe("active");
    expect((await listPhases(db, seeded.batch.id)).map((p) => p.status)).toEqual([
      "dispatched",
      "completed",
      "pending",
    ]);
  });
});
