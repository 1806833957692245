import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedBatch, stepRow } from "../test/test-fixtures.ts";
import { lockBatchesWithPhasesOfStepsForShare } from "./batch-pause.repository.ts";
import { createDb, type Db } from "./connection.ts";
import { insertPhases } from "./phases.repository.ts";
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

/** Two batches; the first with two phases, each phase one step per member. */
async function twoBatches() {
  const first = await seedBatch(db, 2);
  const [secondPhase] = await insertPhases(db, first.batch.id, [
    {
      phaseName: "cutover",
      sequence: 1,
      offsetMinutes: 0,
      dueAt: null,
      runbookVersion: first.runbook.version,
    },
  ]);
  const second = await seedBatch(db, 1);
  await insertSteps(db, [
    ...first.members.map((member) => stepRow(first, member, 0)),
    ...first.members.map((member) => stepRow(first, member, 1, { phaseExecutionId: secondPhase!.id })),
    ...second.members.map((member) => stepRow(second, member, 0)),
  ]);
  return {
    first,
    second,
    secondPhase: secondPhase!,
    stepsOf: async (phaseId: number) => (await listStepsByPhase(db, phaseId)).map((step) => step.id),
  };
}

describe("lockBatchesWithPhasesOfStepsForShare", () => {
  it("returns the steps' batches once each, in id order, with their runbook's name, and every phase of the steps", async () => {
    const { first, second, secondPhase, stepsOf } = await twoBatches();
    const stepIds = [
      ...(await stepsOf(second.phase.id)),
      ...(await stepsOf(secondPhase.id)),
      ...(await stepsOf(first.phase.id)),
    ];

    const read = await lockBatchesWithPhasesOfStepsForShare(db, [...stepIds, ...stepIds]);

    expect(read.batches).toEqual([
      {
        id: first.batch.id,
        status: first.batch.status,
        runbookName: first.runbook.name,
        batchStartTime: first.batch.batchStartTime,
      },
      {
        id: second.batch.id,
        status: second.batch.status,
        runbookName: second.runbook.name,
        batchStartTime: second.batch.batchStartTime,
      },
    ]);
    // The rows as the phase table has them (what getPhasesByIds returns), nothing of the batch mixed in.
    expect(read.phases).toEqual([first.phase, secondPhase, second.phase]);
    expect(await lockBatchesWithPhasesOfStepsForShare(db, [])).toEqual({ batches: [], phases: [] });
    expect(await lockBatchesWithPhasesOfStepsForShare(db, [-1])).toEqual({ batches: [], phases: [] });
  });

  it("holds the batch rows FOR SHARE until the transaction ends: a pause's update waits, another reader does not", async () => {
    const { first, stepsOf } = await twoBatches();
    const other = createDb({ connectionString: testDb.url, maxConnections: 1 });
    try {
      await db.transaction().execute(async (trx) => {
        await lockBatchesWithPhasesOfStepsForShare(trx, await stepsOf(first.phase.id));
        await other.transaction().execute(async (otherTrx) => {
          await sql`SET LOCAL lock_timeout = '300ms'`.execute(otherTrx);
          // A second share lock (another result transaction) is granted at once.
          await lockBatchesWithPhasesOfStepsForShare(otherTrx, await stepsOf(first.phase.id));
        });
        await expect(
          other.transaction().execute(async (otherTrx) => {
            await sql`SET LOCAL lock_timeout = '300ms'`.execute(otherTrx);
            // What a pause's status change locks (FOR NO KEY UPDATE of the batch row).
            await sql`UPDATE batches SET status = 'paused' WHERE id = ${first.batch.id}`.execute(otherTrx);
          }),
        ).rejects.toThrow(/lock timeout/);
      });
    } finally {
      await other.destroy();
    }
  });
});
