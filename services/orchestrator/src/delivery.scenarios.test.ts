import { transitionPhase } from "@matoolkit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deliverEvent,
  deliverResult,
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
import {
  batchStatus,
  findStep,
  memberStatuses,
  phaseStatuses,
  stepOf,
  stepsOf,
  transitionsOf,
} from "../test/test-queries.ts";

/**
 * 000 "Race Condition Safety" and "Per-Member Progression" on the real stack: duplicate and
 * concurrent deliveries, independent members, phase/batch completion, stale and late results.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

const twoEchoSteps = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: first
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
      - name: second
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`);

/** Each step created once, dispatched once (one worker call, job `step-{id}`), one event per transition. */
async function expectEveryStepRanOnce(batch: SeededBatch, memberCount: number): Promise<void> {
  await eventually(
    () => batchStatus(h.db, batch.batchId),
    (status) => status === "completed",
    "batch to complete",
  );
  const steps = await stepsOf(h.db, batch.batchId);
  expect(steps).toHaveLength(memberCount * 2);
  expect(steps.every((step) => step.status === "succeeded")).toBe(true);
  for (const step of steps) {
    expect(await transitionsOf(h.db, "step", step.id)).toEqual([
      "pending→dispatched",
      "dispatched→succeeded",
    ]);
  }
  const stepIds = new Set(steps.map((step) => step.id));
  const jobs = h.calls.filter((call) => !call.isInitStep && stepIds.has(call.stepExecutionId));
  expect(jobs.map((call) => call.jobId).sort()).toEqual(steps.map((step) => `step-${step.id}`).sort());
  const phase = batch.phases[0]!;
  expect(await transitionsOf(h.db, "phase", phase.id)).toEqual([
    "pending→dispatched",
    "dispatched→completed",
  ]);
  expect(await transitionsOf(h.db, "batch", batch.batchId)).toEqual([
    "∅→detected",
    "detected→active",
    "active→completed",
  ]);
}

describe("duplicate and concurrent phase-due", () => {
  it("a phase-due published twice (different message ids) creates and dispatches each step once", async () => {
    const batch = await seedBatch(h.db, twoEchoSteps, membersWith(5));
    const body = phaseDueBody(batch, 0);
    await Promise.all([
      publishEvent(h.bus, "phase-due", body, `phase-due:${batch.phases[0]!.id}`),
      publishEvent(h.bus, "phase-due", body, `phase-due:${batch.phases[0]!.id}:resent`),
    ]);
    await expectEveryStepRanOnce(batch, 5);
  });

  it("three deliveries handled in parallel for a pending phase (scheduler path) create no duplicate", async () => {
    const batch = await seedBatch(h.db, twoEchoSteps, membersWith(8));
    const body = phaseDueBody(batch, 0);
    await Promise.all(
      [1, 2, 3].map((n) => deliverEvent(h.orchestrator, "phase-due", body, `parallel-pending-${n}`)),
    );
    await expectEveryStepRanOnce(batch, 8);
  });

  it("three deliveries handled in parallel for a phase already dispatched (admin API path) create no duplicate", async () => {
    const batch = await seedBatch(h.db, twoEchoSteps, membersWith(8));
    // advanceBatchCommand marks the phase dispatched before it publishes phase-due.
    await transitionPhase(h.db, batch.phases[0]!.id, "dispatch", { reason: "advanced by operator" });
    const body = phaseDueBody(batch, 0);
    await Promise.all(
      [1, 2, 3].map((n) => deliverEvent(h.orchestrator, "phase-due", body, `parallel-dispatched-${n}`)),
    );
    await expectEveryStepRanOnce(batch, 8);
  });
});

describe("per-member progression", () => {
  it("members reach step 1 without waiting for a slow member's step 0", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: maybe-slow
        worker_id: worker-01
        function: Test-Sleep
        params:
          Seconds: "{{Sleep}}"
      - name: after
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(3, (index) => ({ Sleep: index === 0 ? 4 : 0 })),
    );
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);

    const whileSlow = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) =>
        ["m1@contoso.test", "m2@contoso.test"].every(
          (key) => findStep(steps, key, 1)?.status === "succeeded",
        ),
      "fast members to finish step 1",
    );
    expect(stepOf(whileSlow, "m0@contoso.test", 0).status).toBe("dispatched");
    expect(stepOf(whileSlow, "m0@contoso.test", 1).status).toBe("pending");
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["dispatched"]);

    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    const steps = await stepsOf(h.db, batch.batchId);
    expect(steps.every((step) => step.status === "succeeded")).toBe(true);
    const slowStep1 = stepOf(steps, "m0@contoso.test", 1);
    // Still sequential for the slow member itself: step 1 only after its own step 0.
    expect(slowStep1.dispatchedAt!.getTime()).toBeGreaterThanOrEqual(
      stepOf(steps, "m0@contoso.test", 0).completedAt!.getTime(),
    );
  });
});

describe("phase and batch completion", () => {
  const failing = `
      - name: always-fails
        worker_id: worker-01
        function: Test-Fail
        params:
          Message: "mailbox is on hold"`;

  it("a phase where no member succeeded fails; a batch with one completed phase completes", async () => {
    const yaml = runbookYaml(`
phases:
  - name: ok
    offset: T-1d
    steps:
      - name: echo
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
  - name: bad
    offset: T-0
    steps:${failing}
`);
    const batch = await seedBatch(h.db, yaml, membersWith(2));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    await eventually(
      () => phaseStatuses(h.db, batch.batchId),
      (statuses) => statuses[0] === "completed",
      "phase ok to complete",
    );
    expect(await batchStatus(h.db, batch.batchId)).toBe("active");

    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 1), `phase-due:${batch.phases[1]!.id}`);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed", "failed"]);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "failed",
      "m1@contoso.test": "failed",
    });
    const bad = await stepsOf(h.db, batch.batchId).then((steps) =>
      steps.filter((s) => s.phaseName === "bad"),
    );
    expect(bad.map((step) => [step.status, step.errorMessage])).toEqual([
      ["failed", "mailbox is on hold"],
      ["failed", "mailbox is on hold"],
    ]);
  });

  it("a batch whose only phase failed fails", async () => {
    const yaml = runbookYaml(`
phases:
  - name: bad
    offset: T-0
    steps:${failing}
`);
    const batch = await seedBatch(h.db, yaml, membersWith(2));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "failed",
      "batch to fail",
    );
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["failed"]);
    expect(await transitionsOf(h.db, "phase", batch.phases[0]!.id)).toEqual([
      "pending→dispatched",
      "dispatched→failed",
    ]);
  });

  it("ignores a result for an earlier attempt and a result for a terminal step", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: held
        worker_id: worker-01
        function: Hold
        params:
          Gate: stale-results
          FailTimes: 1
        retry:
          max_retries: 1
          interval: 1s
        on_failure: undo
rollbacks:
  undo:
    - name: undo
      worker_id: worker-01
      function: Test-Echo
      params:
        Undo: "{{Upn}}"
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    const [step] = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps[0]?.jobId === `step-${steps[0]?.id}-retry-1`,
      "the retry to be dispatched",
    );
    const id = step!.id;
    await eventually(
      async () => h.calls.some((call) => call.jobId === `step-${id}-retry-1`),
      (called) => called,
      "the retry to reach the worker",
    );
    const correlation = {
      StepExecutionId: id,
      IsInitStep: false,
      RunbookName: batch.runbookName,
      RunbookVersion: batch.runbookVersion,
    };
    const eventsBefore = await transitionsOf(h.db, "step", id);

    // The first attempt answering late (success or failure) must not decide the retry's fate.
    for (const Status of ["Success", "Failure"] as const) {
      await deliverResult(h.orchestrator, {
        JobId: `step-${id}`,
        Status,
        Result: { complete: true, data: {} },
        Error: Status === "Failure" ? { Message: "late failure" } : null,
        CorrelationData: correlation,
      });
    }
    const afterStale = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(afterStale).toMatchObject({ status: "dispatched", jobId: `step-${id}-retry-1`, retryCount: 1 });
    expect(await transitionsOf(h.db, "step", id)).toEqual(eventsBefore);

    h.open("stale-results");
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    const eventsDone = await transitionsOf(h.db, "step", id);
    expect(eventsDone).toEqual([
      "pending→dispatched",
      "dispatched→failed",
      "failed→pending",
      "pending→dispatched",
      "dispatched→succeeded",
    ]);

    // A redelivered failure for the current job of a step that already succeeded changes nothing.
    await deliverResult(h.orchestrator, {
      JobId: `step-${id}-retry-1`,
      Status: "Failure",
      Error: { Message: "duplicate failure" },
      CorrelationData: correlation,
    });
    expect(stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0).status).toBe("succeeded");
    expect(await transitionsOf(h.db, "step", id)).toEqual(eventsDone);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({ "m0@contoso.test": "active" });
    expect(h.calls.filter((call) => call.jobId.startsWith(`rollback-step-${id}-`))).toEqual([]);
  });
});
