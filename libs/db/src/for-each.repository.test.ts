import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedBatch, stepRow, stepThrough } from "../test/test-fixtures.ts";
import type { Db } from "./connection.ts";
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
});
