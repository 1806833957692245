import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedBatch, stepRow, stepThrough } from "../test/test-fixtures.ts";
import type { Db } from "./connection.ts";
import { skipSteps } from "./step-progression.repository.ts";
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

describe("skipSteps (issue 30)", () => {
  it("moves pending steps to skipped with one event each naming its clause; others stay as they are", async () => {
    const seeded = await seedBatch(db, 3);
    await insertSteps(
      db,
      seeded.members.map((member) => stepRow(seeded, member, 0)),
    );
    const [a, b, c] = await listStepsByPhase(db, seeded.phase.id);
    await stepThrough(db, c!.id, ["dispatch"]); // another delivery dispatched it first

    const moved = await skipSteps(db, [
      { id: a!.id, reason: "when: {{Kind}} == 'user' is false" },
      { id: b!.id, reason: "phase when: {{HasMailbox}} == 'true' is false" },
      { id: c!.id, reason: "when: {{Kind}} == 'user' is false" },
    ]);

    // In reason order (the phase's clause sorts first), so compared by id.
    expect(moved.map((step) => [step.id, step.status]).sort(([x], [y]) => Number(x) - Number(y))).toEqual([
      [a!.id, "skipped"],
      [b!.id, "skipped"],
    ]);
    expect(moved.every((step) => step.completedAt !== null && step.jobId === null)).toBe(true);
    const events = await db
      .selectFrom("events")
      .select(["entityId", "fromStatus", "toStatus", "reason"])
      .where("entity", "=", "step")
      .where("toStatus", "=", "skipped")
      .where("batchId", "=", seeded.batch.id)
      .orderBy("entityId")
      .execute();
    expect(events).toEqual([
      {
        entityId: a!.id,
        fromStatus: "pending",
        toStatus: "skipped",
        reason: "when: {{Kind}} == 'user' is false",
      },
      {
        entityId: b!.id,
        fromStatus: "pending",
        toStatus: "skipped",
        reason: "phase when: {{HasMailbox}} == 'true' is false",
      },
    ]);
    expect((await listStepsByPhase(db, seeded.phase.id)).map((step) => step.status)).toEqual([
      "skipped",
      "skipped",
      "dispatched",
    ]);
    // A second delivery skips nothing again.
    expect(await skipSteps(db, [{ id: a!.id, reason: "again" }])).toEqual([]);
    expect(await skipSteps(db, [])).toEqual([]);
  });
});
