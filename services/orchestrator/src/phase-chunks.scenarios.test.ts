import { getPhase } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deliverEvent,
  eventually,
  membersWith,
  phaseDueBody,
  runbookYaml,
  seedBatch,
  startHarness,
  type Harness,
} from "../test/test-harness.ts";
import { batchStatus, stepsOf, transitionsOf } from "../test/test-queries.ts";

/**
 * phase-due creates and starts a phase's members in chunks (the harness uses 2 per transaction):
 * every member gets its steps once, the phase is marked complete-able only after the last chunk,
 * and a duplicate phase-due changes nothing.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  h.open("phase-chunks");
  await h?.stop();
});

describe("a phase started in chunks", () => {
  it("gives every member its steps once, stamps the phase after the last chunk, and ignores a second phase-due", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: held
        worker_id: worker-01
        function: Hold
        params:
          Gate: phase-chunks
      - name: after
        worker_id: worker-01
        function: Test-Echo
`);
    const batch = await seedBatch(h.db, yaml, membersWith(5));
    const phaseId = batch.phases[0]!.id;
    const body = phaseDueBody(batch, 0);
    // Delivered on this process: the call returns once every chunk has committed.
    await deliverEvent(h.orchestrator, "phase-due", body, `phase-due:${phaseId}`);
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps).toHaveLength(10);
    expect(steps.filter((step) => step.stepIndex === 0).every((step) => step.status === "dispatched")).toBe(
      true,
    );
    expect((await getPhase(h.db, phaseId))?.stepsCreatedAt).toBeInstanceOf(Date);

    await deliverEvent(h.orchestrator, "phase-due", body, `phase-due:${phaseId}:again`);
    const again = await stepsOf(h.db, batch.batchId);
    expect(again.map((step) => [step.id, step.status, step.jobId])).toEqual(
      steps.map((step) => [step.id, step.status, step.jobId]),
    );

    h.open("phase-chunks");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "the batch to complete",
    );
    for (const step of await stepsOf(h.db, batch.batchId)) {
      expect(await transitionsOf(h.db, "step", step.id)).toEqual([
        "pending→dispatched",
        "dispatched→succeeded",
      ]);
    }
    expect(await transitionsOf(h.db, "phase", phaseId)).toEqual([
      "pending→dispatched",
      "dispatched→completed",
    ]);
  });
});
