import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedBatch, stepRow, stepThrough } from "../test/test-fixtures.ts";
import type { Db } from "./connection.ts";
import {
  dispatchSteps,
  listStepsOfMemberPhases,
  skipSteps,
  succeedSteps,
} from "./step-progression.repository.ts";
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

describe("succeedSteps with two results of one step in one call", () => {
  it("moves the step by the result of its current job, whichever comes first; the stale one changes nothing", async () => {
    const seeded = await seedBatch(db, 2);
    await insertSteps(
      db,
      seeded.members.map((member) => stepRow(seeded, member, 0)),
    );
    const [a, b] = await listStepsByPhase(db, seeded.phase.id);
    const dispatchedAt = new Date();
    for (const step of [a!, b!]) {
      await dispatchSteps(db, [
        {
          id: step.id,
          jobId: `step-${step.id}-poll-1`,
          functionName: "Set-Thing",
          paramsJson: {},
          dispatchedAt,
        },
      ]);
    }
    const completedAt = new Date();
    const stale = (id: number) => ({ id, jobId: `step-${id}`, result: { from: "stale" }, completedAt });
    const current = (id: number) => ({
      id,
      jobId: `step-${id}-poll-1`,
      result: { from: "current" },
      completedAt,
    });

    // A stale job's result first for a, last for b: both steps succeed with the current result.
    const moved = await succeedSteps(db, [stale(a!.id), current(a!.id), current(b!.id), stale(b!.id)]);

    expect(moved.map((step) => [step.id, step.status, step.resultJson])).toEqual([
      [a!.id, "succeeded", { from: "current" }],
      [b!.id, "succeeded", { from: "current" }],
    ]);
    const events = await db
      .selectFrom("events")
      .select(["entityId", "fromStatus", "toStatus"])
      .where("entity", "=", "step")
      .where("toStatus", "=", "succeeded")
      .where("batchId", "=", seeded.batch.id)
      .orderBy("entityId")
      .execute();
    expect(events).toEqual([
      { entityId: a!.id, fromStatus: "dispatched", toStatus: "succeeded" },
      { entityId: b!.id, fromStatus: "dispatched", toStatus: "succeeded" },
    ]);
    // Given again (a redelivery), neither result moves it a second time.
    expect(await succeedSteps(db, [current(a!.id), stale(a!.id)])).toEqual([]);
  });
});

describe("listStepsOfMemberPhases", () => {
  it("reads every column of a member's chain but the steps' results and dates, in chain order", async () => {
    const seeded = await seedBatch(db, 2);
    const [first, second] = seeded.members;
    await insertSteps(db, [
      stepRow(seeded, first!, 1),
      stepRow(seeded, first!, 0),
      stepRow(seeded, second!, 0),
    ]);
    const pair = { memberId: first!.id, phaseExecutionId: seeded.phase.id };

    const chain = await listStepsOfMemberPhases(db, [pair, pair]);

    const stored = await db
      .selectFrom("stepExecutions")
      .selectAll()
      .where("batchMemberId", "=", first!.id)
      .orderBy("stepIndex")
      .execute();
    // Each column of the table, whatever a later migration adds, but the result and the dates
    // nothing deciding the next step reads.
    expect(chain).toEqual(
      stored.map(
        ({
          resultJson: _r,
          dispatchedAt: _d,
          completedAt: _c,
          pollStartedAt: _p,
          lastPolledAt: _l,
          createdAt: _a,
          ...rest
        }) => rest,
      ),
    );
    expect(chain.map((step) => step.stepIndex)).toEqual([0, 1]);
  });
});
