import {
  insertBatch,
  insertMembers,
  insertPhases,
  insertSteps,
  listStepsByPhase,
  publishRunbook,
  transitionBatch,
  transitionMember,
  transitionPhase,
  transitionStep,
  type Db,
  type PhaseExecution,
} from "@matoolkit/db";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDED_BATCH_COUNTS_TTL_MS, readBatchCounts } from "./batch-counts.ts";

/** When the member counts of GET /api/batches/{id} (and …/phases) are read again and when kept. */
let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

let runbooks = 0;

/** An active batch of `size` members with one step each in one dispatched phase. */
async function runningBatch(size: number) {
  runbooks += 1;
  const runbook = await publishRunbook(db, {
    name: `counts-${runbooks}`,
    yamlContent: "name: counts\n",
    overdueBehavior: "rerun",
    rerunInit: false,
  });
  const batch = await insertBatch(db, {
    runbookId: runbook.id,
    batchStartTime: null,
    isManual: true,
    createdBy: null,
  });
  await transitionBatch(db, batch.id, "activate");
  const members = await insertMembers(
    db,
    batch.id,
    Array.from({ length: size }, (_, index) => ({ memberKey: `m${index}`, data: {} })),
  );
  const [phase] = (await insertPhases(db, batch.id, [
    { phaseName: "only", sequence: 0, offsetMinutes: 0, dueAt: null, runbookVersion: 1 },
  ])) as [PhaseExecution];
  await transitionPhase(db, phase.id, "dispatch");
  await insertSteps(
    db,
    members.map((member) => ({
      batchId: batch.id,
      phaseExecutionId: phase.id,
      batchMemberId: member.id,
      stepName: "step-0",
      stepIndex: 0,
      workerId: "worker-01",
      functionName: "Test-Echo",
    })),
  );
  const steps = await listStepsByPhase(db, phase.id);
  return { batch, members, phase, steps };
}

describe("readBatchCounts", () => {
  it("reads a running batch's counts again on every call", async () => {
    const { batch, phase, steps } = await runningBatch(2);
    expect((await readBatchCounts(db, batch.id))?.phases.get(phase.id)).toEqual({
      succeeded: 0,
      skipped: 0,
      failed: 0,
      cancelled: 0,
      running: 2,
    });
    await transitionStep(db, steps[0]!.id, "dispatch");
    await transitionStep(db, steps[0]!.id, "succeed");
    expect((await readBatchCounts(db, batch.id))?.phases.get(phase.id)).toEqual({
      succeeded: 1,
      skipped: 0,
      failed: 0,
      cancelled: 0,
      running: 1,
    });
  });

  it("keeps an ended batch's phase counts for a while, and reads its members by status every time", async () => {
    const { batch, members, phase, steps } = await runningBatch(2);
    for (const step of steps) {
      await transitionStep(db, step.id, "dispatch");
      await transitionStep(db, step.id, "succeed");
    }
    await transitionPhase(db, phase.id, "complete");
    await transitionBatch(db, batch.id, "complete");
    let clock = 1_000_000;
    const now = () => clock;
    const ended = await readBatchCounts(db, batch.id, now);
    expect(ended?.phases.get(phase.id)).toEqual({
      succeeded: 2,
      skipped: 0,
      failed: 0,
      cancelled: 0,
      running: 0,
    });
    expect(ended?.members).toEqual({ active: 2, failed: 0, removed: 0 });

    // Nothing moves a step of an ended batch; were something to, the kept counts would show it
    // once their time is up. A member-removed delivered late shows at once.
    await sql`UPDATE step_executions SET status = 'failed' WHERE id = ${steps[0]!.id}`.execute(db);
    await transitionMember(db, members[1]!.id, "remove");
    const kept = await readBatchCounts(db, batch.id, now);
    expect(kept?.phases.get(phase.id)).toEqual({
      succeeded: 2,
      skipped: 0,
      failed: 0,
      cancelled: 0,
      running: 0,
    });
    expect(kept?.members).toEqual({ active: 1, failed: 0, removed: 1 });

    clock += ENDED_BATCH_COUNTS_TTL_MS + 1;
    expect((await readBatchCounts(db, batch.id, now))?.phases.get(phase.id)).toEqual({
      succeeded: 1,
      skipped: 0,
      failed: 1,
      cancelled: 0,
      running: 0,
    });
  });

  it("answers undefined for a batch that does not exist", async () => {
    expect(await readBatchCounts(db, 987_654)).toBeUndefined();
  });
});
