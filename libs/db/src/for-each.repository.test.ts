import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedBatch, stepRow, stepThrough } from "../test/test-fixtures.ts";
import type { Db } from "./connection.ts";
import { readBatchGridPage, readMemberFinishes } from "./batch-grid.repository.ts";
import { readBatchReportPage } from "./batch-report.repository.ts";
import { listNamedEvents } from "./events.repository.ts";
import { expandSteps } from "./for-each.repository.ts";
import { insertSteps, listStepsByPhase } from "./steps.repository.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

describe("expandSteps (issue 30, for_each:)", () => {
  it("gives the step's row its first value and inserts one pending copy per other value, exactly once", async () => {
    const seeded = await seedBatch(db, 2);
    await insertSteps(
      db,
      seeded.members.flatMap((member) => [stepRow(seeded, member, 0), stepRow(seeded, member, 1)]),
    );
    const before = await listStepsByPhase(db, seeded.phase.id);
    const [first, second] = before.filter((step) => step.stepIndex === 1);

    const rows = await expandSteps(db, [
      { id: first!.id, items: ["Sales", { id: "g-2" }, "All Staff"] },
      { id: second!.id, items: ["Solo"] },
    ]);
    expect(
      rows.map((row) => [row.batchMemberId, row.stepIndex, row.itemIndex, row.itemValue, row.itemCount]),
    ).toEqual([
      [first!.batchMemberId, 1, 0, "Sales", 3],
      [first!.batchMemberId, 1, 1, { id: "g-2" }, 3],
      [first!.batchMemberId, 1, 2, "All Staff", 3],
      [second!.batchMemberId, 1, 0, "Solo", 1],
    ]);
    expect(rows[0]!.id).toBe(first!.id);
    // The copies are the step as created, nothing of a run.
    for (const row of rows)
      expect(row).toMatchObject({
        status: "pending",
        stepName: first!.stepName,
        functionName: first!.functionName,
        workerId: first!.workerId,
        maxRetries: first!.maxRetries,
        jobId: null,
        retryCount: 0,
      });

    // A second delivery (or a redelivered result) expands nothing again, even with other values.
    expect(await expandSteps(db, [{ id: first!.id, items: ["Other", "Values"] }])).toEqual([]);
    expect((await listStepsByPhase(db, seeded.phase.id)).length).toBe(before.length + 2);
    expect(await expandSteps(db, [])).toEqual([]);
  });

  it("claims only a pending row (a cancelled step is not expanded) and takes 1,000 values in one statement", async () => {
    const seeded = await seedBatch(db, 2);
    await insertSteps(
      db,
      seeded.members.map((member) => stepRow(seeded, member, 0)),
    );
    const [a, b] = await listStepsByPhase(db, seeded.phase.id);
    await stepThrough(db, b!.id, ["cancel"]);
    const values = Array.from({ length: 1000 }, (_, index) => `g${index}`);
    const rows = await expandSteps(db, [
      { id: a!.id, items: values },
      { id: b!.id, items: ["x", "y"] },
    ]);
    expect(rows.length).toBe(1000);
    expect(rows.map((row) => row.itemValue)).toEqual(values);
    expect(new Set(rows.map((row) => row.batchMemberId))).toEqual(new Set([a!.batchMemberId]));
    expect((await listStepsByPhase(db, seeded.phase.id)).filter((row) => row.id === b!.id)).toMatchObject([
      { status: "cancelled", itemValue: null, itemCount: null },
    ]);
  });

  it("read models: a cell shows the value that matters with the values done, events name each value, a member finishes with its last value", async () => {
    const seeded = await seedBatch(db, 1);
    const [member] = seeded.members;
    await insertSteps(db, [stepRow(seeded, member!, 0)]);
    const [step] = await listStepsByPhase(db, seeded.phase.id);
    const [a, b, c] = await expandSteps(db, [{ id: step!.id, items: ["x", "y", "z"] }]);
    await stepThrough(db, a!.id, ["dispatch", "succeed"]);
    await stepThrough(db, b!.id, ["dispatch"]);
    await stepThrough(db, c!.id, ["dispatch", "succeed"]);

    const cellOf = async () =>
      (await readBatchGridPage(db, seeded.batch.id, { offset: 0, limit: 10 }))[0]!.steps;
    expect(await cellOf()).toMatchObject([{ id: b!.id, status: "dispatched", itemCount: 3, itemsDone: 2 }]);
    expect(await readMemberFinishes(db, seeded.batch.id, 1)).toEqual([]);
    const report = await readBatchReportPage(db, seeded.batch.id, { afterMemberId: 0, limit: 10 });
    expect(report[0]!.steps).toMatchObject([{ stepName: "step-0", status: "dispatched" }]);

    await stepThrough(db, b!.id, ["succeed"]);
    expect(await cellOf()).toMatchObject([{ status: "succeeded", itemCount: 3, itemsDone: 3 }]);
    expect((await readMemberFinishes(db, seeded.batch.id, 1)).map((bucket) => bucket.succeeded)).toEqual([1]);

    const events = await listNamedEvents(db, seeded.batch.id, { limit: 100 });
    expect(
      events
        .filter((event) => event.entity === "step" && event.toStatus === "succeeded")
        .map((e) => e.stepName),
    ).toEqual(["step-0 [1/3]", "step-0 [3/3]", "step-0 [2/3]"]);
  });
});
