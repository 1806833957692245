import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@matoolkit/db";
import {
  eventually,
  membersWith,
  phaseDueBody,
  publishEvent,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
  type SeededBatch,
} from "../test/test-harness.ts";
import { batchStatus } from "../test/test-queries.ts";

/**
 * Issue 12 outcomes: an ended phase or batch says how it went for its members (succeeded,
 * partially_succeeded, failed) with the counts, stamped with its terminal status.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

/** `Fails: 1` makes a member's step fail once; with no retries, the member fails. */
const twoPhases = runbookYaml(`
phases:
  - name: prepare
    offset: T-0
    steps:
      - name: stamp
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: "{{Fails}}"
  - name: cutover
    offset: T-0
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: "{{CutoverFails}}"
`);

async function outcomeOf(db: Db, table: "batches" | "phaseExecutions", id: number) {
  return db
    .selectFrom(table)
    .select(["status", "outcome", "succeededMembers", "failedMembers"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

async function runPhase(batch: SeededBatch, index: number): Promise<void> {
  const phase = batch.phases[index]!;
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, index), `phase-due:${phase.id}`);
  await eventually(
    () => outcomeOf(h.db, "phaseExecutions", phase.id),
    (row) => row.status === "completed" || row.status === "failed",
    `phase ${phase.phaseName} to end`,
  );
}

describe("phase and batch outcomes", () => {
  it("a phase where some members failed is completed and partially_succeeded, with its counts; so is its batch", async () => {
    const batch = await seedBatch(
      h.db,
      twoPhases,
      membersWith(3, (index) => ({ Fails: index === 1 ? 1 : 0, CutoverFails: 0 })),
    );
    await runPhase(batch, 0);
    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[0]!.id)).toEqual({
      status: "completed",
      outcome: "partially_succeeded",
      succeededMembers: 2,
      failedMembers: 1,
    });
    await runPhase(batch, 1);
    // The cutover ran for the two members left, and both went through.
    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[1]!.id)).toEqual({
      status: "completed",
      outcome: "succeeded",
      succeededMembers: 2,
      failedMembers: 0,
    });
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (s) => s === "completed",
      "batch to complete",
    );
    expect(await outcomeOf(h.db, "batches", batch.batchId)).toEqual({
      status: "completed",
      outcome: "partially_succeeded",
      succeededMembers: 2,
      failedMembers: 1,
    });
  });

  it("every member through every phase: succeeded, with no failed member", async () => {
    const batch = await seedBatch(
      h.db,
      twoPhases,
      membersWith(2, () => ({ Fails: 0, CutoverFails: 0 })),
    );
    await runPhase(batch, 0);
    await runPhase(batch, 1);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (s) => s === "completed",
      "batch to complete",
    );
    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[0]!.id)).toMatchObject({
      outcome: "succeeded",
      succeededMembers: 2,
      failedMembers: 0,
    });
    expect(await outcomeOf(h.db, "batches", batch.batchId)).toEqual({
      status: "completed",
      outcome: "succeeded",
      succeededMembers: 2,
      failedMembers: 0,
    });
  });

  it("no member through a phase: the phase fails with outcome failed; a batch whose phases all failed too", async () => {
    const yaml = runbookYaml(`
phases:
  - name: only
    offset: T-0
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Fail
`);
    const batch = await seedBatch(h.db, yaml, membersWith(2));
    await runPhase(batch, 0);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (s) => s === "failed",
      "batch to fail",
    );
    expect(await outcomeOf(h.db, "phaseExecutions", batch.phases[0]!.id)).toEqual({
      status: "failed",
      outcome: "failed",
      succeededMembers: 0,
      failedMembers: 2,
    });
    expect(await outcomeOf(h.db, "batches", batch.batchId)).toEqual({
      status: "failed",
      outcome: "failed",
      succeededMembers: 0,
      failedMembers: 2,
    });
  });

  it("a batch whose init fails ends failed with outcome failed and no member counted either way", async () => {
    const yaml = runbookYaml(`
init:
  - name: prepare
    worker_id: worker-01
    function: Test-Fail
phases:
  - name: only
    offset: T-0
    steps:
      - name: move
        worker_id: worker-01
        function: Test-Echo
`);
    const batch = await seedBatch(h.db, yaml, membersWith(2));
    await publishEvent(
      h.bus,
      "batch-init",
      { BatchId: batch.batchId, RunbookName: batch.runbookName, RunbookVersion: batch.runbookVersion },
      `batch-init:${batch.batchId}:${batch.runbookVersion}`,
    );
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (s) => s === "failed",
      "batch to fail",
    );
    expect(await outcomeOf(h.db, "batches", batch.batchId)).toEqual({
      status: "failed",
      outcome: "failed",
      succeededMembers: 0,
      failedMembers: 0,
    });
  });
});
