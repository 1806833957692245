import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deliverEvent,
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
  memberStatuses,
  phaseStatuses,
  stepOf,
  stepsOf,
  transitionsOf,
} from "../test/test-queries.ts";

/** 000 "Polling Protocol" and "Retry Protocol" with the worker's diagnostic functions. */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.stop();
});

async function runPhase(batch: SeededBatch, until: (status: string) => boolean): Promise<void> {
  await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
  await eventually(() => batchStatus(h.db, batch.batchId), until, "batch to end");
}

/** The step's own jobs (rollback jobs carry the step's id in their correlation too). */
const jobIdsOf = (stepId: number): string[] =>
  h.calls
    .filter((call) => !call.isInitStep && call.stepExecutionId === stepId)
    .map((call) => call.jobId)
    .filter((jobId) => jobId === `step-${stepId}` || jobId.startsWith(`step-${stepId}-`));

const rollback = `
rollbacks:
  undo:
    - name: undo
      worker_id: worker-01
      function: Test-Echo
      params:
        Undo: "{{Upn}}"
`;

describe("polling", () => {
  it("goes dispatched → polling → succeeded, re-dispatching with a new job id per poll", async () => {
    const yaml = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: move-mailbox
        worker_id: worker-01
        function: Test-Poll
        params:
          PendingTimes: 2
        poll:
          interval: 1s
          timeout: 1m
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await runPhase(batch, (status) => status === "completed");

    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(step).toMatchObject({ status: "succeeded", pollCount: 2, jobId: `step-${step.id}-poll-2` });
    expect(step.resultJson).toEqual({ complete: true, data: { Polls: 3 } });
    expect(await transitionsOf(h.db, "step", step.id)).toEqual([
      "pending→dispatched",
      "dispatched→polling",
      "polling→succeeded",
    ]);
    expect(jobIdsOf(step.id)).toEqual([
      `step-${step.id}`,
      `step-${step.id}-poll-1`,
      `step-${step.id}-poll-2`,
    ]);
  });

  it("times out as poll_timeout: never retried, rollback sent, member failed, others unaffected", async () => {
    const yaml = runbookYaml(`
retry:
  max_retries: 2
  interval: 1s
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: move-mailbox
        worker_id: worker-01
        function: Test-Poll
        params:
          PendingTimes: "{{Pending}}"
        poll:
          interval: 1s
          timeout: 3s
        retry:
          max_retries: 2
          interval: 1s
        on_failure: undo
      - name: after-move
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
${rollback}`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Pending: index === 0 ? 1000 : 0 })),
    );
    await runPhase(batch, (status) => status === "completed");

    const steps = await stepsOf(h.db, batch.batchId);
    const timedOut = stepOf(steps, "m0@contoso.test", 0);
    expect(timedOut).toMatchObject({ status: "poll_timeout", errorCode: "poll.timeout", retryCount: 0 });
    // Polled (how often within its 3 s depends on the machine's load: once was seen under the
    // full suite), then timed out.
    expect(timedOut.pollCount).toBeGreaterThanOrEqual(1);
    expect(await transitionsOf(h.db, "step", timedOut.id)).toEqual([
      "pending→dispatched",
      "dispatched→polling",
      "polling→poll_timeout",
    ]);
    // One worker call per dispatch and per poll, none after the timeout and no retry job.
    expect(jobIdsOf(timedOut.id)).toHaveLength(timedOut.pollCount + 1);
    expect(jobIdsOf(timedOut.id).some((jobId) => jobId.includes("retry"))).toBe(false);

    const rollbackJob = `rollback-step-${timedOut.id}-0-0`;
    const rollbackCall = await eventually(
      async () => h.calls.find((call) => call.jobId === rollbackJob),
      (call) => call !== undefined,
      "the rollback to reach the worker",
    );
    expect(rollbackCall).toMatchObject({ functionName: "Test-Echo", params: { Undo: "m0@contoso.test" } });

    expect(stepOf(steps, "m0@contoso.test", 1).status).toBe("cancelled");
    expect(steps.filter((s) => s.memberKey === "m1@contoso.test").map((s) => s.status)).toEqual([
      "succeeded",
      "succeeded",
    ]);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "failed",
      "m1@contoso.test": "active",
    });
    expect(await phaseStatuses(h.db, batch.batchId)).toEqual(["completed"]);
  });
});

describe("concurrent checks", () => {
  it("two poll-checks for the same attempt handled at once re-dispatch the poll once", async () => {
    const yaml = runbookYaml(`
phases:
  - name: cutover
    offset: T-0
    steps:
      - name: move-mailbox
        worker_id: worker-01
        function: Test-Poll
        params:
          PendingTimes: 1000
        poll:
          interval: 1m
          timeout: 1h
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    const [polling] = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps[0]?.status === "polling",
      "the step to start polling",
    );
    // The scheduler's sweep and the orchestrator's own timer both firing for the same attempt
    // (beyond the bus's dedupe window), two minutes later when the interval has elapsed.
    const later = { ...h.orchestrator, now: () => new Date(Date.now() + 120_000) };
    const check = { StepExecutionId: polling!.id, IsInitStep: false };
    await Promise.all([
      deliverEvent(later, "poll-check", check, "sweep-poll-check"),
      deliverEvent(later, "poll-check", check, "timer-poll-check"),
    ]);

    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(step).toMatchObject({ status: "polling", pollCount: 1, jobId: `step-${step.id}-poll-1` });
    await eventually(
      async () => jobIdsOf(step.id),
      (jobIds) => jobIds.length === 2,
      "the poll to reach the worker",
    );
    expect(jobIdsOf(step.id)).toEqual([`step-${step.id}`, `step-${step.id}-poll-1`]);
  });

  it("two retry-checks handled at once dispatch the retry once", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: flaky
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: 1
        retry:
          max_retries: 1
          interval: 1m
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await publishEvent(h.bus, "phase-due", phaseDueBody(batch, 0), `phase-due:${batch.phases[0]!.id}`);
    const [pending] = await eventually(
      () => stepsOf(h.db, batch.batchId),
      (steps) => steps[0]?.status === "pending" && steps[0].retryCount === 1,
      "the step to wait for its retry",
    );
    const check = { StepExecutionId: pending!.id, IsInitStep: false };
    await Promise.all([
      deliverEvent(h.orchestrator, "retry-check", check, "retry-check-a"),
      deliverEvent(h.orchestrator, "retry-check", check, "retry-check-b"),
    ]);
    await eventually(
      () => batchStatus(h.db, batch.batchId),
      (status) => status === "completed",
      "batch to complete",
    );
    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(jobIdsOf(step.id)).toEqual([`step-${step.id}`, `step-${step.id}-retry-1`]);
    expect(await transitionsOf(h.db, "step", step.id)).toEqual([
      "pending→dispatched",
      "dispatched→failed",
      "failed→pending",
      "pending→dispatched",
      "dispatched→succeeded",
    ]);
  });
});

describe("retry", () => {
  it("retries a failed step after the interval with job id step-{id}-retry-1, then succeeds", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: flaky
        worker_id: worker-01
        function: Test-Flaky
        params:
          FailTimes: 1
        retry:
          max_retries: 2
          interval: 1s
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await runPhase(batch, (status) => status === "completed");

    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(step).toMatchObject({ status: "succeeded", retryCount: 1, jobId: `step-${step.id}-retry-1` });
    expect(jobIdsOf(step.id)).toEqual([`step-${step.id}`, `step-${step.id}-retry-1`]);
    expect(await transitionsOf(h.db, "step", step.id)).toEqual([
      "pending→dispatched",
      "dispatched→failed",
      "failed→pending",
      "pending→dispatched",
      "dispatched→succeeded",
    ]);
    // It answers as succeeded, with no error; the failed attempt's code stays in its event.
    expect(step).toMatchObject({ errorCode: null, errorMessage: null });
    const failedEvent = await h.db
      .selectFrom("events")
      .select("reason")
      .where("entity", "=", "step")
      .where("entityId", "=", step.id)
      .where("toStatus", "=", "failed")
      .executeTakeFirstOrThrow();
    expect(failedEvent.reason).toBe("worker.error");
    const [first, retry] = h.calls.filter((call) => jobIdsOf(step.id).includes(call.jobId));
    // The retry waited for its interval (1 s), give or take the clocks of two processes' timers.
    expect(retry!.at.getTime() - first!.at.getTime()).toBeGreaterThanOrEqual(900);
  });

  it("does not retry a step with max_retries 0, even with a global retry", async () => {
    const yaml = runbookYaml(`
retry:
  max_retries: 2
  interval: 1s
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: no-retry
        worker_id: worker-01
        function: Test-Fail
        params:
          Message: "not retriable here"
        retry:
          max_retries: 0
`);
    const batch = await seedBatch(h.db, yaml, membersWith(1));
    await runPhase(batch, (status) => status === "failed");

    const step = stepOf(await stepsOf(h.db, batch.batchId), "m0@contoso.test", 0);
    expect(step).toMatchObject({ status: "failed", retryCount: 0, maxRetries: 0 });
    expect(jobIdsOf(step.id)).toEqual([`step-${step.id}`]);
    expect(await transitionsOf(h.db, "step", step.id)).toEqual(["pending→dispatched", "dispatched→failed"]);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({ "m0@contoso.test": "failed" });
  });

  it("fails the member once retries are exhausted and cancels its other steps", async () => {
    const yaml = runbookYaml(`
phases:
  - name: migrate
    offset: T-0
    steps:
      - name: maybe-fails
        worker_id: worker-01
        function: "Test-{{Outcome}}"
        params:
          Message: "target mailbox missing"
        retry:
          max_retries: 1
          interval: 1s
        on_failure: undo
      - name: next
        worker_id: worker-01
        function: Test-Echo
        params:
          Upn: "{{Upn}}"
${rollback}`);
    const batch = await seedBatch(
      h.db,
      yaml,
      membersWith(2, (index) => ({ Outcome: index === 0 ? "Fail" : "Echo" })),
    );
    await runPhase(batch, (status) => status === "completed");

    const steps = await stepsOf(h.db, batch.batchId);
    const failed = stepOf(steps, "m0@contoso.test", 0);
    expect(failed).toMatchObject({
      status: "failed",
      retryCount: 1,
      errorMessage: "target mailbox missing",
      functionName: "Test-Fail",
    });
    expect(jobIdsOf(failed.id)).toEqual([`step-${failed.id}`, `step-${failed.id}-retry-1`]);
    expect(stepOf(steps, "m0@contoso.test", 1).status).toBe("cancelled");
    expect(await transitionsOf(h.db, "step", stepOf(steps, "m0@contoso.test", 1).id)).toEqual([
      "pending→cancelled",
    ]);
    expect(steps.filter((s) => s.memberKey === "m1@contoso.test").map((s) => s.status)).toEqual([
      "succeeded",
      "succeeded",
    ]);
    expect(await memberStatuses(h.db, batch.batchId)).toEqual({
      "m0@contoso.test": "failed",
      "m1@contoso.test": "active",
    });
    // Rolled back once, for the final attempt only.
    await eventually(
      async () => h.calls.filter((call) => call.jobId.startsWith(`rollback-step-${failed.id}-`)),
      (calls) => calls.length > 0,
      "the rollback to reach the worker",
    );
    expect(
      h.calls.filter((call) => call.jobId.startsWith(`rollback-step-${failed.id}-`)).map((c) => c.jobId),
    ).toEqual([`rollback-step-${failed.id}-1-0`]);
  });
});
